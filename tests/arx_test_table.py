"""ARX's small test table (arx-deidentifier/arx ``data/test.csv``) and the rows of its
hierarchies ``test_hierarchy_{age,gender,zipcode}.csv`` that its seven records use,
copied so the tests run without ``../shared``."""

from __future__ import annotations

import pandas as pd

from anonaudit import ClassTable, Hierarchy

__all__ = ["ARX_HIERARCHIES", "ARX_TEST", "arx_table"]

# ARX data/test.csv (age;gender;zipcode).
ARX_TEST = [
    ("34", "male", "81667"),
    ("45", "female", "81675"),
    ("66", "male", "81925"),
    ("70", "female", "81931"),
    ("34", "female", "81931"),
    ("70", "male", "81931"),
    ("45", "male", "81931"),
]
ARX_HIERARCHIES = {
    "age": Hierarchy.from_rows(
        [["34", "<50", "*"], ["45", "<50", "*"], ["66", ">=50", "*"], ["70", ">=50", "*"]],
        name="test_hierarchy_age.csv",
    ),
    "gender": Hierarchy.from_rows([["male", "*"], ["female", "*"]], name="gender"),
    "zipcode": Hierarchy.from_rows(
        [
            [z, z[:4] + "*", z[:3] + "**", z[:2] + "***", z[:1] + "****", "*"]
            for z in ("81667", "81675", "81925", "81931")
        ],
        name="test_hierarchy_zipcode.csv",
    ),
}


def arx_table() -> ClassTable:
    frame = pd.DataFrame(ARX_TEST, columns=["age", "gender", "zipcode"]).assign(count=1)
    return ClassTable.from_frame(frame, quasi_identifiers=["age", "gender", "zipcode"])
