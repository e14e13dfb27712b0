"""Every setting declared once (anonaudit/settings/catalog.py), and every shape made from it.

The catalog gives each setting its policy-file key, flag, kind, default, help and the
keyword of the option objects it becomes. The command line's options, a policy file's
check, the laying of options over a file and the settings table of the docs are made
from it; these tests hold each against the catalog, and give every setting the same
value through a policy file and through the command line.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from anonaudit.cli.app import _parser
from anonaudit.cli.commands import _override
from anonaudit.cli.config import AuditConfig, read_config
from anonaudit.errors import InputError, ParameterError
from anonaudit.settings.catalog import DP_OPTIONS, GROUPS, OPTIONS, Option, by_key, dp_flag
from anonaudit.settings.options import KEYWORDS


def _subparser(command: str) -> argparse.ArgumentParser:
    parser = _parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    found: argparse.ArgumentParser = commands.choices[command]
    return found


def test_keys_flags_and_keywords_are_each_declared_once() -> None:
    keys = [option.key for option in OPTIONS]
    assert len(keys) == len(set(keys))
    flags = [option.flag for option in OPTIONS if option.flag]
    assert len(flags) == len(set(flags))
    keywords = [option.keyword for option in OPTIONS if option.keyword]
    assert len(keywords) == len(set(keywords))
    assert set(keywords) <= set(KEYWORDS)  # every keyword reaches an option object
    assert {option.group for option in OPTIONS} <= set(GROUPS)
    for option in OPTIONS:
        assert option.replaces is None or by_key()[option.replaces].replaces == option.key


@pytest.mark.parametrize("command", ["audit", "advise", "dp"])
def test_the_command_line_takes_each_flag_declared_for_it(command: str) -> None:
    actions = {
        flag: action for action in _subparser(command)._actions for flag in action.option_strings
    }
    declared = [o for o in OPTIONS if o.flag is not None and command in o.commands]
    assert declared
    for option in declared:
        action = actions[option.flag or ""]
        assert action.dest == option.key
        assert action.help == option.help_for(command)
        assert action.choices in (None, option.choices)


def test_a_policy_file_knows_every_key_and_refuses_a_wrong_kind(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    for option in OPTIONS:
        if option.kind in ("table",):
            continue
        path.write_text(f"{option.key} = {{ not_a = {{ table = 1 }} }}\n", encoding="utf-8")
        with pytest.raises(InputError, match=f"wrong type for '{option.key}'"):
            read_config(path)
    path.write_text('sepp = ";"\n', encoding="utf-8")
    with pytest.raises(InputError, match="unknown key 'sepp'"):
        read_config(path)


# A value of each kind, as a policy file writes it and as the command line gives it, and
# the setting both make.
_SAMPLES: dict[str, tuple[str, list[str], Any]] = {
    "whole": ("7", ["7"], 7),
    "number": ("0.25", ["0.25"], 0.25),
    "boolean": ("true", [], True),
    "show": ("false", [], False),
    "size": ("3", ["3"], 3),
    "texts": ('["a", "b c"]', ["a", "b c"], ["a", "b c"]),
    "columns": ('["a", "b"]', ["a,b"], ["a", "b"]),
    "mapping": (
        '{ endpoint_url = "http://x" }',
        ["endpoint_url=http://x"],
        {"endpoint_url": "http://x"},
    ),
    "levels": ("{ age = 2 }", ["age=2"], {"age": 2}),
    "distance": ('"ordered"', ["ordered"], "ordered"),
}


def _sample(option: Option, tmp_path: Path) -> tuple[str, list[str], Any]:
    if option.choices:
        choice = option.choices[-1]
        return f'"{choice}"', [choice], choice
    if option.kind == "text":
        value = "name.txt" if option.path is None else str(tmp_path / "out.txt")
        return f'"{value}"', [value], value
    if option.kind == "paths":
        value = str(tmp_path / "h.csv")
        return f'{{ age = "{value}" }}', [f"age={value}"], {"age": value}
    return _SAMPLES[option.kind]


@pytest.mark.parametrize(
    "option",
    [o for o in OPTIONS if o.flag and "audit" in o.commands and o.kind != "table"],
    ids=lambda o: o.key,
)
def test_a_setting_is_the_same_from_a_file_and_from_the_command_line(
    option: Option, tmp_path: Path
) -> None:
    toml, argv, expected = _sample(option, tmp_path)
    path = tmp_path / "p.toml"
    path.write_text(f"{option.key} = {toml}\n", encoding="utf-8")
    from_file = getattr(read_config(path), option.key)
    args = _parser().parse_args(["audit", *_flagged(option, argv)])
    config = AuditConfig()
    _override(config, args)
    from_line = getattr(config, option.key)
    assert from_file == from_line == expected


def _flagged(option: Option, values: list[str]) -> list[str]:
    flag = option.flag or ""
    if option.kind in ("boolean", "show"):
        return [flag]
    if option.kind in ("texts", "columns", "mapping", "paths", "levels"):
        return [part for value in values for part in (flag, value)]
    return [flag, *values]


def test_a_setting_not_given_keeps_its_default() -> None:
    config = AuditConfig()
    _override(config, _parser().parse_args(["audit"]))
    for option in OPTIONS:
        default = option.default
        expected = list(default) if isinstance(default, tuple) else default
        assert getattr(config, option.key) == expected, option.key


def test_one_of_two_exclusive_settings_clears_the_other(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("population_size = 1000\n", encoding="utf-8")
    config = read_config(path)
    _override(config, _parser().parse_args(["audit", "--sampling-fraction", "0.5"]))
    assert (config.population_size, config.sampling_fraction) == (None, 0.5)
    with pytest.raises(SystemExit):
        _parser().parse_args(["audit", "--population-size", "5", "--sampling-fraction", "0.5"])


@pytest.mark.parametrize("command", ["audit", "dp"])
def test_the_dp_flags_are_made_from_the_catalog(command: str) -> None:
    actions = {
        flag: action for action in _subparser(command)._actions for flag in action.option_strings
    }
    for option in DP_OPTIONS:
        if command not in option.commands:
            continue
        action = actions[dp_flag(option, command)]
        assert action.dest == f"dp_{option.key}"
        assert action.choices in (None, option.choices)
    assert actions[dp_flag(DP_OPTIONS[0], command)].required == (command == "dp")
    assert "--dp-epsilon" in actions if command == "audit" else "--epsilon" in actions


def test_a_dp_table_value_and_its_flag_make_one_release(tmp_path: Path) -> None:
    from anonaudit.cli import dp as dp_cli

    table = {
        "epsilon": 0.5,
        "delta": 1e-7,
        "mechanism": "discrete-gaussian",
        "postprocess": "clamp",
    }
    from_file = dp_cli.options(_parser().parse_args(["audit"]), policy=table)
    argv = ["audit", "--dp-epsilon", "0.5", "--dp-delta", "1e-7"]
    argv += ["--dp-mechanism", "discrete-gaussian"]
    from_line = dp_cli.options(_parser().parse_args(argv))
    assert from_file == from_line
    with pytest.raises(ParameterError, match=r"\[dp\] epsilon"):
        dp_cli.options(_parser().parse_args(["audit"]), policy={"epsilon": -1.0})
    with pytest.raises(ParameterError, match="--dp-epsilon"):
        dp_cli.options(_parser().parse_args(["audit", "--dp-epsilon", "-1"]))
