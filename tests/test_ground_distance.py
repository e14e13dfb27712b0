"""Arbitrary ground distances (``--ground-distance``): the matrix file and its POT solve."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import anonaudit
from anonaudit import AuditOptions, MatrixDistance, Roles
from anonaudit.cli import main
from anonaudit.errors import HierarchyError

VALUES = ["flu", "bronchitis", "gastritis"]


def _write_matrix(path: Path, matrix: list[list[float]], values: list[str] = VALUES) -> Path:
    lines = [";" + ";".join(values)]
    lines += [
        f"{v};" + ";".join(str(x) for x in row) for v, row in zip(values, matrix, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _data(path: Path) -> Path:
    frame = pd.DataFrame(
        {
            "zip": ["1", "1", "1", "2", "2", "2"],
            "disease": ["flu", "flu", "bronchitis", "gastritis", "gastritis", "flu"],
        }
    )
    frame.to_csv(path, index=False)
    return path


def test_matrix_file_round_trip(tmp_path: Path) -> None:
    matrix = [[0, 0.5, 1], [0.5, 0, 1], [1, 1, 0]]
    ground = anonaudit.GroundDistance.from_csv(_write_matrix(tmp_path / "m.csv", matrix))
    assert ground.values == tuple(VALUES)
    assert np.array_equal(ground.matrix, np.array(matrix, dtype=float))
    assert ground.submatrix(["gastritis", "flu"]).tolist() == [[0, 1], [1, 0]]


def test_matrix_distance_by_hand(tmp_path: Path) -> None:
    # Q = (flu 1/2, bronchitis 1/6, gastritis 1/3). Class zip=1: P = (2/3, 1/3, 0).
    # Move 1/3 of mass out of gastritis: 1/6 from flu (d=1) and 1/6 from bronchitis
    # (d=1) -> EMD = 1/3 whichever way, the respiratory values being at 1 from gastritis.
    # Class zip=2: P = (1/3, 0, 2/3): surplus 1/3 on gastritis must go 1/6 to flu and
    # 1/6 to bronchitis: 1/6 * 1 + 1/6 * 1 = 1/3.
    matrix = [[0, 0.5, 1], [0.5, 0, 1], [1, 1, 0]]
    report = anonaudit.audit(
        _data(tmp_path / "d.csv"),
        Roles(["zip"], ["disease"]),
        AuditOptions(
            distances={"disease": MatrixDistance(_write_matrix(tmp_path / "m.csv", matrix))}
        ),
    )
    result = report.t_closeness["disease"]
    assert result.distance == "matrix"
    assert sorted(result.per_class.tolist()) == pytest.approx([1 / 3, 1 / 3])


def test_matrix_of_ones_equals_the_equal_distance(tmp_path: Path) -> None:
    ones = [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    data = _data(tmp_path / "d.csv")
    by_matrix = anonaudit.audit(
        data,
        Roles(["zip"], ["disease"]),
        AuditOptions(
            distances={"disease": MatrixDistance(_write_matrix(tmp_path / "m.csv", ones))}
        ),
    )
    equal = anonaudit.audit(data, Roles(["zip"], ["disease"]))
    assert by_matrix.t_closeness["disease"].t == pytest.approx(equal.t_closeness["disease"].t)


def test_cli_ground_distance_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ones = [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    matrix = _write_matrix(tmp_path / "m.csv", ones)
    argv = [str(_data(tmp_path / "d.csv")), "--qi", "zip", "--sensitive", "disease"]
    code = main(["audit", *argv, "--ground-distance", f"disease={matrix}", "--json", "-"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["t_closeness"]["disease"]["distance"] == "matrix"


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        ([[0, 1, 1], [1, 0, 1], [1, 1, 0.5]], "zero diagonal"),
        ([[0, 2, 1], [2, 0, 1], [1, 1, 0]], r"\[0, 1\]"),
        ([[0, -1, 1], [1, 0, 1], [1, 1, 0]], ">= 0"),
    ],
)
def test_bad_matrices_are_refused(tmp_path: Path, matrix: list[list[float]], message: str) -> None:
    with pytest.raises(HierarchyError, match=message):
        anonaudit.GroundDistance.from_csv(_write_matrix(tmp_path / "m.csv", matrix))


def test_value_missing_from_the_matrix_is_named(tmp_path: Path) -> None:
    two = _write_matrix(tmp_path / "m.csv", [[0, 1], [1, 0]], ["flu", "bronchitis"])
    with pytest.raises(HierarchyError, match="'gastritis'"):
        anonaudit.audit(
            _data(tmp_path / "d.csv"),
            Roles(["zip"], ["disease"]),
            AuditOptions(distances={"disease": MatrixDistance(two)}),
        )


def test_rows_must_follow_the_header(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text(";a;b\nb;0;1\na;1;0\n", encoding="utf-8")
    with pytest.raises(HierarchyError, match="first column"):
        anonaudit.GroundDistance.from_csv(path)
