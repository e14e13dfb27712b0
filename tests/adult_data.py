"""The bundled Adult extract and the nine quasi-identifiers ARX's tests use with it.

Shared by the tests and the benchmarks (``sample_data/adult``, 30,162 records; see its
README for the source and licence). ARX's ``TestRiskMetrics`` and
``TestAnonymizationKAnonymity`` take these columns, in this order, as QIs.
"""

from __future__ import annotations

from pathlib import Path

ADULT_DIR = Path(__file__).resolve().parents[1] / "sample_data" / "adult"
ADULT_CSV = ADULT_DIR / "adult.csv"
ADULT_QIS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]
