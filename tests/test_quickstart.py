"""The README's quick start runs as written and the committed reports are current."""

from __future__ import annotations

import difflib
import json
import math
import re
import shlex
from pathlib import Path

import pytest

from anonaudit.cli import main

ROOT = Path(__file__).resolve().parents[1]
VOLATILE = ("audited_at", "anonaudit_version")


def _quickstart_args() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"pip install \. && anonaudit (audit .+)", readme)
    assert command, "the README's quick start command was not found"
    return shlex.split(command.group(1))


def _output(args: list[str], option: str) -> str:
    assert option in args, f"the README's quick start should pass {option}"
    return args[args.index(option) + 1]


#: Figures of the DP section that depend on the noise drawn (a secure source, never
#: seeded): the released counts and what is computed from them.
NOISY = ("released", "utility", "dp_informed")


def _stable(report: dict[str, object]) -> dict[str, object]:
    """The report without the time, the version, how long the advice search took, and
    the figures of the DP release that depend on its noise (its parameters, accounting
    and the syntactic side of the contrast stay)."""
    stable = {key: value for key, value in report.items() if key not in VOLATILE}
    if isinstance(stable.get("search"), dict):
        stable["search"] = {k: v for k, v in stable["search"].items() if k != "seconds"}
    dp = stable.get("dp")
    if isinstance(dp, dict):
        internal = {k: v for k, v in dp["internal"].items() if k not in NOISY}
        internal["measures"] = {"original": internal["measures"]["original"]}
        internal["contrast"] = {
            sa: {**c, "attackers": {k: v for k, v in c["attackers"].items() if k not in NOISY}}
            for sa, c in internal["contrast"].items()
        }
        stable["dp"] = {**dp, "internal": internal}
    return stable


def _stable_html(text: str) -> str:
    """The page without its lines marked ``data-volatile`` (time of the audit, version),
    and with the numbers of the DP section masked (they depend on the noise drawn)."""
    start = text.find('<section id="dp"')
    if start >= 0:
        end = text.index("</section>", start)
        section = re.sub(r"\d+(\.\d+)?", "#", text[start:end])
        text = text[:start] + section + text[end:]
    return "\n".join(line for line in text.splitlines() if "data-volatile" not in line)


def _same(a: object, b: object) -> bool:
    """Equal, floats to 1e-12: the engine aggregates in parallel, so sums may differ
    in the last bit between runs."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run the quick start exactly as written, in a scratch folder holding the samples.

    The arguments are the README's, so the command printed in the HTML report is too.
    """
    folder = tmp_path_factory.mktemp("quickstart")
    (folder / "sample_data").symlink_to(ROOT / "sample_data")
    (folder / "reports").mkdir()  # as in a clone
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        assert main(_quickstart_args()) == 0
    return folder


def test_quickstart_regenerates_the_committed_json_report(fresh: Path) -> None:
    path = _output(_quickstart_args(), "--json")
    report = json.loads((fresh / path).read_text(encoding="utf-8"))
    assert report["k_anonymity"]["k"] == 1
    # the DP contrast at the epsilon of learning a present person's value: 2 x epsilon
    contrast = report["dp"]["internal"]["contrast"]["salary-class"]
    assert contrast["epsilon"] == 2.0 and contrast["neighbouring"] == "add-remove"
    current = json.loads((ROOT / path).read_text(encoding="utf-8"))
    assert _same(_stable(report), _stable(current)), (
        "reports/ is stale: rerun the README's quick start and commit the result"
    )


def test_quickstart_regenerates_the_committed_html_report(fresh: Path) -> None:
    path = _output(_quickstart_args(), "--html")
    page = (fresh / path).read_text(encoding="utf-8")
    assert "anonaudit audit --config sample_data/adult_policy.toml" in page
    current = (ROOT / path).read_text(encoding="utf-8")
    changed = list(
        difflib.unified_diff(
            _stable_html(current).splitlines(), _stable_html(page).splitlines(), n=0
        )
    )
    assert not changed, (
        "reports/ is stale: rerun the README's quick start and commit the result\n"
        + "\n".join(line[:200] for line in changed[:12])
    )
