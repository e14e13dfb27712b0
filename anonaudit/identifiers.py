r"""Likely direct identifiers: columns that name a person outright, not through a combination.

A syntactic audit measures what quasi-identifiers reveal together; a column that alone
singles a person out (a patient number, an e-mail address) defeats every measure and
should not be released at all. This module flags such columns, offline and
deterministically (patterns and counts, no model, no network), for three reasons:

- **by name** (:func:`by_name`): the column's name matches one of the 18 identifiers of
  the HIPAA Privacy Rule's Safe Harbor method, 45 CFR 164.514(b)(2)(i)(A)-(R);
- **by values** (:func:`by_values`): most values of a bounded sample look like e-mail
  addresses, telephone numbers, national identification numbers (US social security,
  UK national insurance), payment card numbers (13 to 19 digits passing the Luhn check,
  ISO/IEC 7812-1), IP addresses, URLs, UUIDs (RFC 9562) or full dates (HIPAA's "all
  elements of dates (except year)", such as a date of birth);
- **by uniqueness** (:func:`by_uniqueness`): the column takes more than
  :data:`UNIQUE_SHARE` distinct values per record, so it identifies on its own (for a
  quasi-identifier, read from the class table: no second read).

:func:`find_identifiers` applies them to an audit: to the declared columns through the
class table, and to the columns the audit did not read (neither quasi-identifier nor
sensitive) through a bounded sample, the first :data:`SAMPLE_ROWS` records of the
inputs, read again. A flag is a warning for a person to judge, not a measure: a ZIP code
is a Safe Harbor identifier and a common quasi-identifier.

References
----------
U.S. Department of Health and Human Services, 45 CFR 164.514(b)(2), "Implementation
specifications: requirements for de-identification of protected health information",
and "Guidance Regarding Methods for De-identification of Protected Health Information in
Accordance with the HIPAA Privacy Rule" (2012), section 3.
H. P. Luhn, "Computer for verifying numbers", US patent 2,950,048 (1960).
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
import math
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from anonaudit.sources import is_spark_frame, open_inputs

if TYPE_CHECKING:
    from anonaudit.classtable import ClassTable
    from anonaudit.sources.base import Source

__all__ = [
    "HIPAA_IDENTIFIERS",
    "SAMPLE_ROWS",
    "UNIQUE_SHARE",
    "Identifier",
    "Role",
    "by_name",
    "by_uniqueness",
    "by_values",
    "find_identifiers",
    "luhn",
    "sample_sources",
]

#: Records of the inputs read again to look at the columns the audit did not read.
SAMPLE_ROWS = 10_000
#: Distinct values per record above which a column identifies on its own.
UNIQUE_SHARE = 0.9
#: Fewer records than this and every column is nearly unique: uniqueness is not judged.
_MIN_ROWS = 100
#: Share of a sample's non-null values that must match a pattern for the column to be flagged.
_MATCH_SHARE = 0.8
#: Distinct values of a column looked at by :func:`by_values`.
_MAX_VALUES = 10_000

#: How a column was declared in the audit.
Role = Literal["quasi-identifier", "sensitive", "not audited"]

#: The 18 identifiers of HIPAA Safe Harbor, 45 CFR 164.514(b)(2)(i)(A)-(R), with the
#: words of column names that name them (lower case, as tokens; several words: in order).
HIPAA_IDENTIFIERS: dict[str, tuple[str, ...]] = {
    "(A) names": ("name", "names", "surname", "forename", "first name", "last name"),
    "(B) geographic subdivisions smaller than a state": (
        "address",
        "street",
        "city",
        "county",
        "precinct",
        "zip",
        "zipcode",
        "postcode",
        "postal code",
    ),
    "(C) elements of dates (except year) related to an individual": (
        "dob",
        "birthdate",
        "birthday",
        "birth date",
        "date of birth",
        "admission date",
        "discharge date",
        "date of death",
        "death date",
    ),
    "(D) telephone numbers": ("phone", "telephone", "mobile", "tel"),
    "(E) fax numbers": ("fax",),
    "(F) electronic mail addresses": ("email", "e mail", "mail"),
    "(G) social security numbers": ("ssn", "social security"),
    "(H) medical record numbers": ("mrn", "medical record"),
    "(I) health plan beneficiary numbers": ("beneficiary", "health plan", "member id"),
    "(J) account numbers": ("account", "iban"),
    "(K) certificate/license numbers": ("license", "licence", "certificate", "passport"),
    "(L) vehicle identifiers and serial numbers, including license plates": (
        "vin",
        "plate",
    ),
    "(M) device identifiers and serial numbers": ("serial", "imei", "device id", "mac address"),
    "(N) web universal resource locators (URLs)": ("url", "website"),
    "(O) internet protocol (IP) addresses": ("ip", "ip address"),
    "(P) biometric identifiers, including finger and voice prints": (
        "biometric",
        "fingerprint",
        "voiceprint",
    ),
    "(Q) full-face photographs": ("photo", "photograph", "face image"),
    "(R) any other unique identifying number, characteristic or code": (
        "id",
        "uuid",
        "guid",
        "identifier",
    ),
}


@dataclass(frozen=True)
class Identifier:
    """A column that likely identifies a person directly.

    Attributes
    ----------
    column : str
        The column's name.
    reasons : tuple of str
        Why, one sentence each (name, values, uniqueness).
    declared_role : {"quasi-identifier", "sensitive", "not audited"}
        How the audit declared it; ``"not audited"``: neither, so an
        ``anonaudit advise --out`` leaves it out unless ``--keep`` names it.
    """

    column: str
    reasons: tuple[str, ...]
    declared_role: Role


def _tokens(name: str) -> list[str]:
    """The words of a column name: ``"DateOfBirth"`` and ``"date_of_birth"`` alike."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [word for word in re.split(r"[^a-z0-9]+", spaced.lower()) if word]


def by_name(columns: Iterable[str]) -> dict[str, str]:
    """The columns whose names name a HIPAA Safe Harbor identifier, with the reason.

    >>> by_name(["patient_id", "DateOfBirth", "age", "zip"])  # doctest: +NORMALIZE_WHITESPACE
    {'patient_id': 'its name names a HIPAA Safe Harbor identifier, (R) any other unique
    identifying number, characteristic or code',
     'DateOfBirth': 'its name names a HIPAA Safe Harbor identifier, (C) elements of dates
     (except year) related to an individual',
     'zip': 'its name names a HIPAA Safe Harbor identifier, (B) geographic subdivisions
     smaller than a state'}
    """
    found = {}
    for column in columns:
        words = _tokens(column)
        for identifier, phrases in HIPAA_IDENTIFIERS.items():
            if any(_contains(words, phrase.split()) for phrase in phrases):
                found[column] = f"its name names a HIPAA Safe Harbor identifier, {identifier}"
                break
    return found


def _contains(words: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return any(list(words[i : i + n]) == list(phrase) for i in range(len(words) - n + 1))


def luhn(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (payment cards, ISO/IEC 7812-1).

    >>> luhn("4539578763621486"), luhn("4539578763621487")
    (True, False)
    """
    total = 0
    for position, digit in enumerate(reversed(digits)):
        value = int(digit) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _card(value: str) -> bool:
    digits = re.sub(r"[ -]", "", value)
    return digits.isdigit() and 13 <= len(digits) <= 19 and luhn(digits)


_IP_SHAPE = re.compile(r"[0-9A-Fa-f:.%a-z]+")


def _ip(value: str) -> bool:
    if ("." not in value and ":" not in value) or not _IP_SHAPE.fullmatch(value):
        return False  # no address: not worth the parser's time
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


_DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%Y%m%d")
#: What any of them looks like; only values of this shape are parsed (strptime is slow).
_DATE_SHAPE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{4}|\d{8}")


def _date(value: str) -> bool:
    if not _DATE_SHAPE.fullmatch(value):
        return False
    for layout in _DATE_FORMATS:
        try:
            _dt.datetime.strptime(value, layout)
        except ValueError:
            continue
        return True
    return False


def _pattern(regex: str) -> Callable[[str], bool]:
    compiled = re.compile(regex)
    return lambda value: compiled.fullmatch(value) is not None


#: What a value may look like, and the test. Order matters: the first kind that most
#: values match is the one reported (a date also looks like a telephone number).
_KINDS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("e-mail addresses", _pattern(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")),
    (
        "UUIDs",
        _pattern(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    ),
    ("URLs", _pattern(r"(?:https?|ftp)://\S+|www\.\S+\.\S+")),
    ("IP addresses", _ip),
    ("US social security numbers", _pattern(r"\d{3}-\d{2}-\d{4}")),
    (
        "UK national insurance numbers",
        _pattern(r"[A-CEGHJ-PR-TW-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]"),
    ),
    ("payment card numbers (Luhn check)", _card),
    ("full dates (such as dates of birth)", _date),
    (
        "telephone numbers",
        _pattern(r"\+?\d{0,3}[ .-]?\(?\d{2,4}\)?[ .-]\d{2,4}[ .-]?\d{2,4}(?:[ .-]?\d{2,4})?"),
    ),
)


def by_values(name: str, values: Iterable[str | None]) -> str | None:
    """Why the values of column ``name`` look like direct identifiers, or ``None``.

    At least :data:`_MATCH_SHARE` of the non-null values (the first 10,000) must look
    alike.

    >>> by_values("contact", ["ann@example.org", "bob@example.com", None])
    'most of its values look like e-mail addresses'
    >>> by_values("card", ["4539 5787 6362 1486", "5555555555554444"])
    'most of its values look like payment card numbers (Luhn check)'
    >>> by_values("age", ["34", "51"]) is None
    True
    """
    sample = [value.strip() for value in values if value is not None and value.strip()]
    sample = sample[:_MAX_VALUES]
    if not sample:
        return None
    allowed = len(sample) - math.ceil(_MATCH_SHARE * len(sample))  # misses that still pass
    for kind, test in _KINDS:
        misses = 0
        for value in sample:
            misses += not test(value)
            if misses > allowed:
                break
        else:
            return f"most of its values look like {kind}"
    return None


def by_uniqueness(distinct: int, rows: int) -> str | None:
    """Why a column with ``distinct`` values over ``rows`` records identifies, or ``None``.

    >>> by_uniqueness(999, 1000)
    'it takes 999 distinct values in 1,000 records (99.9%): it identifies on its own'
    >>> by_uniqueness(5, 5) is None  # too few records to judge
    True
    """
    if rows < _MIN_ROWS or distinct <= UNIQUE_SHARE * rows:
        return None
    share = distinct / rows
    return (
        f"it takes {distinct:,} distinct values in {rows:,} records ({share:.1%}): "
        "it identifies on its own"
    )


def find_identifiers(
    table: ClassTable,
    sources: Sequence[Source] = (),
    *,
    sample_rows: int = SAMPLE_ROWS,
    ignore: Sequence[str] = (),
) -> tuple[Identifier, ...]:
    """The likely direct identifiers among the audit's columns and the inputs' others.

    Parameters
    ----------
    table : ClassTable
        The audited class table: its QI and SA columns are judged from it (distinct
        values per record, for QIs only: an SA is expected to repeat).
    sources : sequence of Source
        The inputs (:func:`anonaudit.sources.open_inputs`); the first ``sample_rows``
        records of their other columns are read once more and judged on that sample.
    sample_rows : int
        Records read again from the inputs.
    ignore : sequence of str
        Other columns known not to describe a person (survey weights, row counts).

    Returns
    -------
    tuple of Identifier
        In the order of the columns: QIs, SAs, then the inputs' other columns.
    """
    roles: dict[str, Role] = {qi: "quasi-identifier" for qi in table.quasi_identifiers}
    roles |= {sa: "sensitive" for sa in table.sensitive}
    values: dict[str, pa.Array] = {
        column: _table_distinct(table, column, _MAX_VALUES) for column in roles
    }
    distinct = {qi: table.distinct(qi) for qi in table.quasi_identifiers}
    rows = {qi: table.rows for qi in table.quasi_identifiers}
    others = [c for c in _columns(sources) if c not in roles and c not in ignore]
    sample = _sample(sources, others, sample_rows)
    for column, array in sample.items():
        roles[column] = "not audited"
        values[column] = array
        distinct[column] = len(pc.unique(array.drop_null()))
        rows[column] = len(array)
    names = by_name(roles)
    found = []
    for column, role in roles.items():
        reasons = [
            reason
            for reason in (
                names.get(column),
                by_values(column, values[column].to_pylist()),
                by_uniqueness(distinct[column], rows[column]) if column in distinct else None,
            )
            if reason is not None
        ]
        if reasons:
            found.append(Identifier(column, tuple(reasons), role))
    return tuple(found)


def _table_distinct(table: ClassTable, column: str, n: int) -> pa.Array:
    """The first ``n`` distinct values of the class table's ``column``, as
    :func:`_first_distinct` finds them, but taken at the rows where they first appear
    when the table knows the column's codes already (its classes or SA distributions
    were computed with them): then the column is not hashed at all.

    Parameters
    ----------
    table : ClassTable
        The audited class table.
    column : str
        One of its columns.
    n : int
        How many distinct values to return, at most.

    Returns
    -------
    pyarrow.Array
        ``pc.unique(table.keys.column(column))[:n]``: nulls included, in order of first
        appearance.
    """
    rows = table._first_appearances(column, n)
    values = table.keys.column(column)
    if rows is None:
        return _first_distinct(values, n)
    return values.take(pa.array(rows)).combine_chunks()


def _first_distinct(column: pa.ChunkedArray, n: int) -> pa.Array:
    """The first ``n`` distinct values of ``column`` (nulls included), in order of first
    appearance: ``pc.unique(column)[:n]``, from a prefix of ``2 n`` rows when it holds
    them (a column of millions of distinct values is not hashed whole), else from the
    whole column (hashed once more, not in growing prefixes).

    >>> _first_distinct(pa.chunked_array([["a", "b", "a", None, "c"]]), 3).to_pylist()
    ['a', 'b', None]
    """
    rows = len(column)
    if rows > 2 * n:
        found = pc.unique(column.slice(0, 2 * n))
        if len(found) >= n:
            return found.slice(0, n)
    return pc.unique(column).slice(0, n)


def _columns(sources: Sequence[Source]) -> list[str]:
    """Every input's columns, in order, each once."""
    return list(dict.fromkeys(column for source in sources for column in source.columns))


def _sample(sources: Sequence[Source], columns: list[str], rows: int) -> Mapping[str, pa.Array]:
    """The first ``rows`` records of ``columns`` (as text) from the first input that has
    them all."""
    from anonaudit.sources.base import to_string_batch

    source = next((s for s in sources if set(columns) <= set(s.columns)), None)
    if not columns or source is None:
        return {}
    batches: list[Any] = []
    read = 0
    for batch in source.batches(columns):
        batches.append(to_string_batch(batch, columns).slice(0, rows - read))
        read += batches[-1].num_rows
        if read >= rows:
            break
    if not batches:
        return {}
    sampled = pa.Table.from_batches(batches)
    return {column: sampled.column(column).combine_chunks() for column in columns}


def sample_sources(source: Any, **reading: Any) -> list[Source]:
    """The inputs of an audit opened to read again (:func:`anonaudit.sources.open_inputs`,
    with the audit's ``reading`` options), without those that cannot be: a class
    table, a Spark frame, a pipe or a device (read once already)."""
    from anonaudit.classtable import ClassTable

    items = list(source) if isinstance(source, (list, tuple)) else [source]
    kept = [
        item
        for item in items
        if not isinstance(item, ClassTable) and not is_spark_frame(item) and _rereadable(item)
    ]
    return open_inputs(kept, **reading)


def _rereadable(item: Any) -> bool:
    """Whether ``item`` is not a path to a pipe or a device."""
    if not isinstance(item, (str, os.PathLike)) or not os.path.exists(item):
        return True
    mode = os.stat(item).st_mode
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)
