"""Make the published tables of ``sample_data/tables/`` from the bundled microdata.

Each table is what an office exporting counts with a threshold rule of 10 would publish:
every combination of the dimensions with its margins (``Total``), the interior cells
from 1 to 9 suppressed (``x``), nothing else protected. ``anonaudit tables`` audits them.

* ``titanic_class_age_survived.csv``, ``titanic_class_sex_survived.csv``,
  ``titanic_sex_age_survived.csv``: three tables of the 2,201 people aboard the Titanic
  (``titanic.csv``), long, one row per cell;
* ``adult_education_race.csv`` (wide, as a spreadsheet exports it),
  ``adult_education_race_women.csv`` and ``adult_education_race_men.csv`` (long, with
  the ``sex`` they count): the UCI Adult extract (``adult/adult.csv``) by education and
  race, for everyone, for women and for men.

Run from the repository root: ``python sample_data/make_tables.py``.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "tables"
THRESHOLD = 10


def cells(frame: pd.DataFrame, dims: list[str], weight: str | None = None) -> pd.DataFrame:
    """Every combination of ``dims`` with its margins and its count, the interior cells
    under the threshold suppressed."""
    levels = [[*sorted(frame[d].unique()), "Total"] for d in dims]
    rows = []
    for combo in itertools.product(*levels):
        chosen = frame
        for dim, code in zip(dims, combo, strict=True):
            if code != "Total":
                chosen = chosen[chosen[dim] == code]
        count = int(chosen[weight].sum()) if weight else len(chosen)
        interior = "Total" not in combo
        shown = "x" if interior and 0 < count < THRESHOLD else str(count)
        rows.append({**dict(zip(dims, combo, strict=True)), "count": shown})
    return pd.DataFrame(rows)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    titanic = pd.read_csv(HERE / "titanic.csv")
    for dims in (
        ["Class", "Age", "Survived"],
        ["Class", "Sex", "Survived"],
        ["Sex", "Age", "Survived"],
    ):
        name = "titanic_" + "_".join(d.lower() for d in dims) + ".csv"
        cells(titanic, dims, weight="Freq").to_csv(OUT / name, index=False)
    adult = pd.read_csv(HERE / "adult" / "adult.csv", sep=";")
    everyone = cells(adult, ["education", "race"])
    wide = everyone.pivot(index="education", columns="race", values="count")
    order = [*sorted(adult["race"].unique()), "Total"]
    wide = wide.loc[[*sorted(adult["education"].unique()), "Total"], order]
    wide.index.name = "education \\ race"
    wide.columns.name = None
    wide.to_csv(OUT / "adult_education_race.csv")
    for sex, word in (("Female", "women"), ("Male", "men")):
        table = cells(adult[adult["sex"] == sex], ["education", "race"])
        table.insert(2, "sex", sex)
        table.to_csv(OUT / f"adult_education_race_{word}.csv", index=False)


if __name__ == "__main__":
    main()
