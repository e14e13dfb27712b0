"""Precision and recall of direct-identifier detection on a labelled corpus.

``python benchmarks/bench_identifiers.py`` builds the corpus of
``benchmarks/identifier_corpus.py`` (the tables shipped in ``vega_datasets``, labelled by
hand, and columns generated with Faker in nine locales), judges every column with
:func:`anonaudit.measures.identifiers.judge_column` (its name, values, free text and uniqueness,
as an audit judges the columns it did not read), and prints recall per labelled kind,
precision per detected kind, overall precision and recall, the columns it got wrong, and
the time taken. Offline and deterministic; ``--rows`` sets the generated columns' length.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from identifier_corpus import LabelledColumn, build

from anonaudit.measures.identifiers import Identifier, judge_column


@dataclass(frozen=True)
class Scores:
    """The corpus's columns, what each was found to be, and the scores."""

    columns: list[LabelledColumn]
    found: list[Identifier | None]
    seconds: float

    def recall(self) -> dict[str, tuple[int, int]]:
        """Per labelled kind: positives flagged, positives."""
        hits: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for column, found in zip(self.columns, self.found, strict=True):
            if column.kind is not None:
                total[column.kind] += 1
                hits[column.kind] += found is not None
        return {kind: (hits[kind], total[kind]) for kind in sorted(total)}

    def precision(self) -> dict[str, tuple[int, int]]:
        """Per detected kind (:attr:`Identifier.kind`): flags on positives, flags."""
        right: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for column, found in zip(self.columns, self.found, strict=True):
            if found is not None:
                kind = found.kind or "?"
                total[kind] += 1
                right[kind] += column.kind is not None
        return {kind: (right[kind], total[kind]) for kind in sorted(total)}

    def overall(self) -> tuple[float, float]:
        """Precision and recall over every column."""
        tp = sum(c.kind is not None and f is not None for c, f in self.zipped())
        fp = sum(c.kind is None and f is not None for c, f in self.zipped())
        fn = sum(c.kind is not None and f is None for c, f in self.zipped())
        return tp / max(tp + fp, 1), tp / max(tp + fn, 1)

    def zipped(self) -> list[tuple[LabelledColumn, Identifier | None]]:
        return list(zip(self.columns, self.found, strict=True))

    def wrong(self) -> list[tuple[LabelledColumn, Identifier | None]]:
        """The false positives and false negatives."""
        return [(c, f) for c, f in self.zipped() if (c.kind is None) != (f is None)]


def measure(columns: list[LabelledColumn]) -> Scores:
    """Judge every column of ``columns``."""
    start = time.perf_counter()
    found = [judge_column(column.name, column.values) for column in columns]
    return Scores(columns, found, time.perf_counter() - start)


def _ratio(pair: tuple[int, int]) -> str:
    return f"{pair[0] / pair[1]:.3f} ({pair[0]}/{pair[1]})" if pair[1] else "-"


def report(scores: Scores) -> str:
    """The scores as a Markdown table and lists."""
    positives = sum(c.kind is not None for c in scores.columns)
    sources = Counter(c.source.split("/")[0] for c in scores.columns)
    lines = [
        f"{len(scores.columns)} columns: {positives} positives, "
        f"{len(scores.columns) - positives} negatives; "
        + ", ".join(f"{n} from {s}" for s, n in sorted(sources.items())),
        "",
        "| kind | recall (labelled kind) | precision (detected kind) |",
        "| --- | --- | --- |",
    ]
    recall, precision = scores.recall(), scores.precision()
    for kind in sorted(set(recall) | set(precision)):
        lines.append(
            f"| {kind} | {_ratio(recall.get(kind, (0, 0)))} "
            f"| {_ratio(precision.get(kind, (0, 0)))} |"
        )
    p, r = scores.overall()
    lines += [f"| **overall** | **{r:.3f}** | **{p:.3f}** |", "", "Misclassified:"]
    for column, found in scores.wrong():
        if found is None:
            lines.append(f"- missed {column.source} {column.name!r} ({column.what}, {column.kind})")
        else:
            lines.append(
                f"- flagged {column.source} {column.name!r} ({column.what}) as {found.kind}: "
                f"{'; '.join(found.reasons)}"
            )
    lines.append("")
    lines.append(f"judged in {scores.seconds:.2f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=600, help="records per generated column")
    options = parser.parse_args(argv)
    start = time.perf_counter()
    columns = build(options.rows)
    built = time.perf_counter() - start
    print(report(measure(columns)))
    print(f"corpus built in {built:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
