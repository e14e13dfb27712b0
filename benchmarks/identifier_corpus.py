"""A labelled corpus of columns for measuring direct-identifier detection.

Offline and deterministic. Two sources:

- **real tables** shipped inside the ``vega_datasets`` wheel (its ``_data`` folder:
  airports, cars, the 1992 Los Angeles riots' deaths, weather and stock series...), read
  from the installed package's files, never from the network. Each column keeps its
  real name and is labelled by hand in :data:`REAL_LABELS` (reviewed: every column not
  listed there is a negative);
- **generated columns** (``Faker``, seeded) in nine locales: positives (names, e-mail
  addresses, telephone numbers, addresses, dates of birth in the locale's writing,
  national identification numbers, IBANs, UUIDs, IP addresses, URLs, free text with
  names, telephone numbers or e-mail addresses embedded, first names alone, postcodes)
  and negatives (ages, amounts, counts, years, categories, codes, version strings, lab
  values, times, job titles, company names, free text without identifiers), and sparse
  versions of some positives (70 to 85% missing, as nulls, empty texts and ``NA``).
  They are named ``c001``, ``c002``... so that their values are judged, not their name.

Labelling rules (docs/identifiers.md): a column is labelled by what its values are, as
if each row were a person's record (the detector cannot know what a row is): a full
date, a month of a year, a city, a neighbourhood, a postcode or a geocode (latitude,
longitude) is a HIPAA Safe Harbor identifier; a year, a date that only says a year
(``1970-01-01`` for 1970), a name of an airport, a car or a company is not.

``python benchmarks/bench_identifiers.py`` measures
:func:`anonaudit.measures.identifiers.judge_column`
on it.
"""

from __future__ import annotations

import importlib.resources
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa

from anonaudit.classtable import to_string_batch

__all__ = ["KINDS", "LOCALES", "REAL_LABELS", "LabelledColumn", "build", "generated", "real"]

#: The Faker locales the generated columns are drawn in.
LOCALES = (
    "en_US",
    "en_GB",
    "de_DE",
    "fr_FR",
    "es_ES",
    "it_IT",
    "nl_NL",
    "pt_BR",
    "ja_JP",
)

#: The kinds of identifier a column may be labelled with (``None``: not an identifier).
KINDS = (
    "name",
    "e-mail",
    "phone",
    "address",
    "date",
    "national id",
    "iban",
    "card",
    "uuid",
    "ip",
    "url",
    "free text",
)

#: The positive columns of the real tables, by file and column, with their kind; every
#: other column of those files is a negative (reviewed by hand, column by column).
REAL_LABELS: dict[tuple[str, str], str] = {
    ("airports.csv", "city"): "address",  # HIPAA (B): a city
    ("airports.csv", "latitude"): "address",  # (B): a geocode
    ("airports.csv", "longitude"): "address",
    ("la-riots.csv", "first_name"): "name",  # the people who died: (A)
    ("la-riots.csv", "last_name"): "name",
    ("la-riots.csv", "death_date"): "date",  # (C): a date of death
    ("la-riots.csv", "address"): "address",  # (B): a street address
    ("la-riots.csv", "neighborhood"): "address",  # (B): smaller than a state
    ("la-riots.csv", "longitude"): "address",
    ("la-riots.csv", "latitude"): "address",
    ("crimea.json", "date"): "date",  # months of 1854-1856: (C) a month
    ("ohlc.json", "date"): "date",  # days
    ("seattle-temps.csv", "date"): "date",  # hours
    ("seattle-weather.csv", "date"): "date",  # days
    ("sf-temps.csv", "date"): "date",  # hours
    ("stocks.csv", "date"): "date",  # months ("Jan 1 2000")
    ("us-employment.csv", "month"): "date",  # months
    # Not labelled (negatives): cars.json "Year" and iowa-electricity.csv "year" are
    # years written as January 1st; airports.csv "name" names airports, cars.json
    # "Name" cars; airports.csv "iata" codes airports, not people.
}


@dataclass(frozen=True)
class LabelledColumn:
    """A column of the corpus.

    Attributes
    ----------
    name : str
        The column's name, as judged.
    values : list of str or None
        Its values, as text (as an audit's sample reads them).
    kind : str or None
        What identifier it is (one of :data:`KINDS`), or ``None``: not an identifier.
    source : str
        Where it comes from: ``"vega_datasets/airports.csv"``, ``"faker/de_DE"``.
    what : str
        What it holds (``"phone"``, ``"sparse e-mail"``, ``"amount"``...).
    """

    name: str
    values: list[str | None]
    kind: str | None
    source: str
    what: str


def real() -> list[LabelledColumn]:
    """The columns of the tables shipped inside the ``vega_datasets`` package, labelled."""
    folder = importlib.resources.files("vega_datasets") / "_data"
    columns = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        with importlib.resources.as_file(entry) as path:
            if entry.name.endswith(".csv"):
                frame = pd.read_csv(path, dtype=str, keep_default_na=False)
            else:
                frame = pd.DataFrame(json.loads(path.read_text(encoding="utf-8")))
        table = pa.Table.from_pandas(frame, preserve_index=False)
        text = to_string_batch(table, list(frame.columns))
        for name in frame.columns:
            kind = REAL_LABELS.get((entry.name, name))
            columns.append(
                LabelledColumn(
                    name,
                    text.column(name).to_pylist(),
                    kind,
                    f"vega_datasets/{entry.name}",
                    kind or "negative",
                )
            )
    return columns


_NOTES = (
    "Patient reports mild headache, advised rest and fluids.",
    "Follow up in two weeks; BP 120/80, HR 72.",
    "Prescribed amoxicillin 500 mg three times daily for 7 days.",
    "No show. Rescheduled for next month.",
    "Lab results within normal range, HbA1c 6.1%.",
    "Seen in clinic on 2024-03-01 for knee pain after a fall.",
    "Dose 2.5 mg once daily, review at 3 months.",
    "Referred to physiotherapy, 6 sessions.",
    "Wound healing well, dressing changed.",
    "Discussed diet and exercise; weight 82.4 kg.",
    "Allergy to penicillin noted in the chart.",
    "Telephone consultation, symptoms improving.",
    "Vaccination given, batch 4417, next dose due in 12 months.",
    "MRI booked at the General Hospital radiology unit.",
    "Patient declined the flu vaccine this year.",
)


def _with_identifier(fake: Any, kinds: tuple[str, ...], rng: random.Random) -> str:
    """A clinical note that names a person, a telephone number or an e-mail address."""
    kind = rng.choice(kinds)
    if kind == "name":
        template = rng.choice(
            (
                "Called {prefix} {last} about the results.",
                "Seen by Dr. {last}; {note}",
                "Patient {first} {last} reports improvement.",
                "{first} {last} attended with her daughter.",
                "{note} Discussed with {prefix} {first} {last}.",
            )
        )
    elif kind == "phone":
        template = rng.choice(
            (
                "Call back on {phone}.",
                "{note} Contact number {phone}",
                "Left a message at {phone} (mobile).",
            )
        )
    else:
        template = rng.choice(("Results sent to {email}.", "{note} Email: {email}"))
    return template.format(
        prefix=rng.choice(("Mr", "Mrs.", "Ms", "Mr.")),
        first=fake.first_name(),
        last=fake.last_name(),
        note=rng.choice(_NOTES),
        phone=fake.phone_number(),
        email=fake.email(),
    )


def _dates(fake: Any, locale: str, rows: int) -> list[str | None]:
    layout = {
        "en_US": "%m/%d/%Y",
        "en_GB": "%d/%m/%Y",
        "de_DE": "%d.%m.%Y",
        "fr_FR": "%d/%m/%Y",
        "nl_NL": "%d-%m-%Y",
        "ja_JP": "%Y/%m/%d",
        "es_ES": "%d/%m/%Y",
        "it_IT": "%d/%m/%Y",
        "pt_BR": "%d/%m/%Y",
    }[locale]
    return [
        fake.date_of_birth(minimum_age=0, maximum_age=100).strftime(layout) for _ in range(rows)
    ]


def _sparse(values: list[str | None], rng: random.Random, missing: float) -> list[str | None]:
    """``values`` with a share ``missing`` of them gone, as nulls, empty texts or ``NA``."""
    return [
        rng.choice((None, None, "", "NA")) if rng.random() < missing else value for value in values
    ]


def generated(
    rows: int = 600, locales: tuple[str, ...] = LOCALES, seed: int = 23
) -> list[LabelledColumn]:
    """Columns generated with Faker, seeded: the same every time for the same arguments."""
    from faker import Faker

    columns: list[LabelledColumn] = []

    def add(what: str, kind: str | None, locale: str, values: list[str | None]) -> None:
        columns.append(
            LabelledColumn(f"c{len(columns) + 1:03d}", values, kind, f"faker/{locale}", what)
        )

    for index, locale in enumerate(locales):
        fake = Faker(locale)
        fake.seed_instance(seed + index)
        rng = random.Random(seed * 100 + index)

        def many(make: Callable[[], Any], fake: Any = fake) -> list[str | None]:
            return [str(make()) for _ in range(rows)]

        names = many(fake.name)
        emails = many(fake.email)
        phones = many(fake.phone_number)
        add("name", "name", locale, names)
        add("first name", "name", locale, many(fake.first_name))
        add("last name", "name", locale, many(fake.last_name))
        add("e-mail", "e-mail", locale, emails)
        add("phone", "phone", locale, phones)
        add("address", "address", locale, many(fake.address))
        add("street address", "address", locale, many(fake.street_address))
        add("date of birth", "date", locale, _dates(fake, locale, rows))
        add("national id", "national id", locale, many(fake.ssn))
        add("iban", "iban", locale, many(fake.iban))
        pool = [fake.postcode() for _ in range(40)]
        add("postcode", "address", locale, [rng.choice(pool) for _ in range(rows)])
        add("sparse e-mail", "e-mail", locale, _sparse(emails, rng, 0.8))
        add("sparse phone", "phone", locale, _sparse(phones, rng, 0.85))
        add("sparse name", "name", locale, _sparse(names, rng, 0.75))
        share = (0.15, 0.3, 0.6)[index % 3]
        add(
            "free text with names, phones, e-mails",
            "free text",
            locale,
            [
                _with_identifier(fake, ("name", "phone", "email"), rng)
                if rng.random() < share
                else rng.choice(_NOTES)
                for _ in range(rows)
            ],
        )
        add(
            "free text with names",
            "free text",
            locale,
            [
                _with_identifier(fake, ("name",), rng)
                if rng.random() < 0.25
                else rng.choice(_NOTES)
                for _ in range(rows)
            ],
        )
        add("sentence", None, locale, many(fake.sentence))
        add("paragraph", None, locale, many(fake.paragraph))
        add("job", None, locale, many(fake.job))
        add("company", None, locale, many(fake.company))
        add("country", None, locale, many(fake.country))
        add("age", None, locale, [str(rng.randint(0, 99)) for _ in range(rows)])
        add("year", None, locale, [str(rng.randint(1930, 2024)) for _ in range(rows)])
        add("amount", None, locale, [f"{rng.uniform(1, 5000):.2f}" for _ in range(rows)])
        add("count", None, locale, [str(rng.randint(0, 30)) for _ in range(rows)])
        add(
            "sparse notes",
            None,
            locale,
            _sparse([rng.choice(_NOTES) for _ in range(rows)], rng, 0.8),
        )
    # Kinds that do not depend on the locale, once each.
    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    add("uuid", "uuid", "en_US", [fake.uuid4() for _ in range(rows)])
    add("ipv4", "ip", "en_US", [fake.ipv4() for _ in range(rows)])
    add("ipv6", "ip", "en_US", [fake.ipv6() for _ in range(rows)])
    add("url", "url", "en_US", [fake.url() + fake.uri_path() for _ in range(rows)])
    add(
        "month of year",
        "date",
        "en_US",
        [f"{rng.randint(1990, 2024)}-{rng.randint(1, 12):02d}" for _ in range(rows)],
    )
    add("sparse ipv4", "ip", "en_US", _sparse([fake.ipv4() for _ in range(rows)], rng, 0.7))
    add("payment card", "card", "en_US", [fake.credit_card_number() for _ in range(rows)])
    negatives: dict[str, Callable[[], str]] = {
        "version": lambda: f"{rng.randint(0, 12)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}",
        "long version": lambda: f"10.0.{rng.randint(10000, 22000)}.{rng.randint(1, 2000)}",
        "lab value": lambda: f"{rng.gauss(5.5, 1.2):.1f}",
        "time": lambda: f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}",
        "blood pressure": lambda: f"{rng.randint(90, 180)}/{rng.randint(50, 110)}",
        "percentage": lambda: f"{rng.randint(0, 100)}%",
        "icd-10 code": lambda: rng.choice(("J45.909", "E11.9", "I10", "M54.5", "F32.A")),
        "category": lambda: rng.choice(("A", "B", "C", "D")),
        "boolean": lambda: rng.choice(("true", "false")),
        "colour": lambda: fake.color_name(),
        "large amount with spaces": lambda: f"{rng.randint(1, 999)} {rng.randint(0, 999):03d}",
        "integer amount": lambda: str(rng.randint(100, 99999)),
        "weight in grams": lambda: str(rng.randint(500, 5000)),
        "decimal measure": lambda: f"{rng.uniform(0, 1):.6f}",
        "scientific": lambda: f"{rng.uniform(0, 1):.3e}",
        "room": lambda: f"{rng.choice('ABCD')}-{rng.randint(100, 450)}",
        "grade": lambda: rng.choice(("low", "medium", "high")),
        "heart rate": lambda: str(rng.randint(50, 120)),
        "dose": lambda: f"{rng.choice((0.5, 1, 2.5, 5, 10))} mg",
    }
    for what, make in negatives.items():
        add(what, None, "en_US", [make() for _ in range(rows)])
    return columns


def build(
    rows: int = 600, locales: tuple[str, ...] = LOCALES, seed: int = 23
) -> list[LabelledColumn]:
    """The whole corpus: the real tables' columns, then the generated ones."""
    return real() + generated(rows, locales, seed)
