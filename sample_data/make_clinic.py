"""Regenerate ``clinic.csv``: a small synthetic table for demos and tests.

It exercises what real exports contain: ZIP codes with leading zeros (read as text),
null QI values, a text SA with a hierarchy (``diagnosis``), a numeric SA (``income``,
thousands) with a null, and small classes. Run: ``python sample_data/make_clinic.py``.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).parent
DIAGNOSES = {
    "gastric ulcer": "stomach disease",
    "gastritis": "stomach disease",
    "stomach cancer": "stomach disease",
    "flu": "respiratory infection",
    "bronchitis": "respiratory infection",
    "pneumonia": "respiratory infection",
}


def main() -> None:
    rng = random.Random(20071)  # fixed so the file is reproducible, not for privacy
    zips = ["02134", "02138", "02139", "02141", "01002"]
    rows = []
    for _ in range(240):
        zip_code = rng.choice(zips)
        age = rng.choice(["20-29", "30-39", "40-49", "50-59", "60-69"])
        sex = rng.choice(["F", "M"])
        diagnosis = rng.choices(list(DIAGNOSES), weights=[3, 5, 1, 6, 4, 2])[0]
        income = str(rng.choice(range(20, 121, 5)))
        rows.append([zip_code, age, sex, diagnosis, income])
    rows[7][1] = ""  # a missing age
    rows[42][0] = ""  # a missing ZIP code
    rows[99][4] = ""  # a missing income
    rows.append(["02199", "90-99", "F", "stomach cancer", "300"])  # a sample unique
    with (HERE / "clinic.csv").open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["zip", "age", "sex", "diagnosis", "income"])
        writer.writerows(rows)
    with (HERE / "clinic_hierarchy_diagnosis.csv").open("w", newline="", encoding="utf-8") as s:
        writer = csv.writer(s, delimiter=";")
        for leaf, parent in DIAGNOSES.items():
            family = "digestive" if parent == "stomach disease" else "respiratory"
            writer.writerow([leaf, parent, family, "*"])


if __name__ == "__main__":
    main()
