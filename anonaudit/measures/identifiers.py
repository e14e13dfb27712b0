r"""Likely direct identifiers: columns that name a person outright, not through a combination.

A syntactic audit measures what quasi-identifiers reveal together; a column that alone
singles a person out (a patient number, an e-mail address) defeats every measure and
should not be released at all. This module flags such columns, offline and
deterministically (patterns, a short list of common names and counts; no model, no
network), for four reasons:

- **by name** (:func:`by_name`): the column's name matches one of the 18 identifiers of
  the HIPAA Privacy Rule's Safe Harbor method, 45 CFR 164.514(b)(2)(i)(A)-(R);
- **by values** (:func:`by_values`, :func:`value_kind`): most values of a bounded sample
  are e-mail addresses, UUIDs (RFC 9562), URLs, IP addresses, national identification
  numbers (US social security, UK national insurance, Italian fiscal codes, Spanish
  DNI/NIE, Brazilian CPF), payment card numbers (13 to 19 digits passing the Luhn check,
  ISO/IEC 7812-1), IBANs (ISO 13616), postcodes of distinctive shapes (UK, Canadian,
  Dutch, ZIP+4, CEP), dates with their day or month (HIPAA's "all elements of dates
  (except year)", such as a date of birth), telephone numbers in the shapes of the
  world's numbering plans, or people's names;
- **by free text** (:func:`by_text`): a notable share of the values *contain* an e-mail
  address, a telephone number or a person's name ("Called Mrs. Jane Doe on
  555-123-4567");
- **by uniqueness** (:func:`by_uniqueness`): the column takes more than
  :data:`UNIQUE_SHARE` distinct values per record, so it identifies on its own (for a
  quasi-identifier, read from the class table: no second read); measurements, amounts
  and free text are not judged so.

Every judgement is on the values that say something (:func:`present`): nulls, empty
texts and null markers such as ``NA`` aside, so that a column 20% filled with e-mail
addresses is judged on its e-mail addresses. The patterns run vectorised
(``pyarrow.compute``, RE2 syntax) over the distinct values, weighted by their records.

:func:`find_identifiers` applies them to an audit: to the declared columns through the
class table, and to the columns the audit did not read (neither quasi-identifier nor
sensitive) through a bounded sample, the first :data:`SAMPLE_ROWS` records of the
inputs, read again (:func:`judge_column`). A flag is a warning for a person to judge,
not a measure: a ZIP code is a Safe Harbor identifier and a common quasi-identifier.
docs/identifiers.md gives the patterns, the thresholds and their precision and recall
on a labelled corpus (``benchmarks/bench_identifiers.py``).

References
----------
U.S. Department of Health and Human Services, 45 CFR 164.514(b)(2), "Implementation
specifications: requirements for de-identification of protected health information",
and "Guidance Regarding Methods for De-identification of Protected Health Information in
Accordance with the HIPAA Privacy Rule" (2012), section 3.
H. P. Luhn, "Computer for verifying numbers", US patent 2,950,048 (1960).
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from anonaudit.measures._common_names import GIVEN_NAMES, SURNAMES
from anonaudit.sources import is_spark_frame, open_inputs

if TYPE_CHECKING:
    from anonaudit.classtable import ClassTable
    from anonaudit.sources.base import Source

__all__ = [
    "HIPAA_IDENTIFIERS",
    "MATCH_SHARE",
    "NAME_KINDS",
    "NAME_LISTED_SHARE",
    "NULL_MARKERS",
    "PHONE_SHAPED_SHARE",
    "SAMPLE_ROWS",
    "TEXT_SHARE",
    "UNIQUE_SHARE",
    "Identifier",
    "Role",
    "by_name",
    "by_text",
    "by_uniqueness",
    "by_values",
    "find_identifiers",
    "judge_column",
    "luhn",
    "present",
    "sample_sources",
    "value_kind",
]

#: Records of the inputs read again to look at the columns the audit did not read.
SAMPLE_ROWS = 10_000
#: Distinct values per record above which a column identifies on its own.
UNIQUE_SHARE = 0.9
#: Fewer records than this and every column is nearly unique: uniqueness is not judged.
_MIN_ROWS = 100
#: Distinct values of a column looked at by :func:`by_values`.
_MAX_VALUES = 10_000
#: :func:`value_hashes` reads this many bytes of a value (and its length), and values
#: of about this many bytes at a time.
_HASHED_BYTES = 256
_HASH_BYTES = 1 << 20
_FNV_PRIME = 0x100000001B3
#: :func:`_matching` keeps its answers for calls on at most this many values, for the
#: values of at most :data:`_KEPT_LENGTH` characters, up to :data:`_MOST_KEPT` a pattern.
_FEW_VALUES = 256
_KEPT_LENGTH = 64
_MOST_KEPT = 10_000
#: For each regular expression, whether each value kept is matched (:func:`_matching`).
_MATCHED: dict[str, dict[str, bool]] = {}

#: How a column was declared in the audit.
Role = Literal["quasi-identifier", "sensitive", "not audited"]

#: The 18 identifiers of HIPAA Safe Harbor, 45 CFR 164.514(b)(2)(i)(A)-(R), with the
#: words of column names that name them (lower case, as tokens; several words: in order).
HIPAA_IDENTIFIERS: dict[str, tuple[str, ...]] = {
    "(A) names": (
        "name",
        "names",
        "surname",
        "forename",
        "first name",
        "last name",
        "firstname",
        "lastname",
        "fullname",
        "surnames",
        "maiden name",
    ),
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
        "postcodes",
        "neighborhood",
        "neighbourhood",
        "borough",
        "district",
        "town",
        "village",
        # "and their equivalent geocodes"
        "geocode",
        "latitude",
        "longitude",
        "lat",
        "lon",
        "lng",
        "coordinates",
        "gps",
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
    "(D) telephone numbers": ("phone", "telephone", "mobile", "tel", "cellphone"),
    "(E) fax numbers": ("fax",),
    "(F) electronic mail addresses": ("email", "e mail", "mail", "emails"),
    "(G) social security numbers": (
        "ssn",
        "social security",
        # Their equivalents elsewhere: national insurance (UK), social insurance (Canada),
        # personal identity and tax numbers.
        "nino",
        "national insurance",
        "social insurance",
        "national id",
        "national identity",
        "national identification",
        "personal number",
        "tax id",
        "tax number",
        "taxpayer",
        "bsn",
        "cpf",
        "dni",
        "nie",
        "codice fiscale",
    ),
    "(H) medical record numbers": (
        "mrn",
        "medical record",
        "patient number",
        "patient no",
        "patient nr",
        "case number",
        "nhs number",
        "nhs no",
        "chart number",
    ),
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
    kind : str or None
        What it holds, by the first reason that says: the kind of its values
        (:func:`value_kind`: ``"e-mail"``, ``"phone"``, ``"name"``, ...), ``"free
        text"`` (:func:`by_text`), the kind its name names (:data:`NAME_KINDS`), or
        ``"unique"`` (:func:`by_uniqueness` alone).
    """

    column: str
    reasons: tuple[str, ...]
    declared_role: Role
    kind: str | None = None


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


def _ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def present(values: pa.Array | pa.ChunkedArray | Iterable[str | None]) -> pa.Array:
    """The values of a column that say something: as text, trimmed, without nulls, empty
    texts and the markers of :data:`NULL_MARKERS` (whatever their case).

    A sample is read as text (``to_string_batch``), and a CSV file's ``NA`` is a value
    unless ``--na-values`` says otherwise: a column that is mostly ``"NA"`` is judged
    on its other values.

    Parameters
    ----------
    values : pyarrow.Array, pyarrow.ChunkedArray or iterable of str
        A column's values, of any type (turned into text).

    Returns
    -------
    pyarrow.Array
        Strings, in their order, none null.

    Examples
    --------
    >>> present(["a@b.org", None, "", " NA ", "n/a", "x "]).to_pylist()
    ['a@b.org', 'x']
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        values = pa.array(list(values), pa.string())
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if not pa.types.is_string(values.type):
        values = pc.cast(values, pa.string())
    values = pc.utf8_trim_whitespace(values.drop_null())
    return values.filter(pc.invert(pc.is_in(pc.utf8_lower(values), value_set=_NULL_ARRAY)))


#: Cell texts that stand for a missing value (compared in lower case, trimmed).
NULL_MARKERS: frozenset[str] = frozenset(
    {"", "na", "n/a", "n.a.", "nan", "null", "none", "nil", "-", "--", "?", "#n/a", "missing"}
)
_NULL_ARRAY = pa.array(sorted(NULL_MARKERS), pa.string())

# The patterns, RE2 syntax (pyarrow.compute), documented in docs/identifiers.md.
_YEAR = r"(?:1[89]|20)\d\d"
_MONTH = r"(?:0?[1-9]|1[0-2])"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_MONTH_NAME = (
    r"(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|"
    r"april|june|july|august|september|october|november|december)\.?"
)
_TIME = r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
#: A date with its day or its month (HIPAA's "elements of dates (except year)"): ISO
#: or day-month-year or month-day-year, with ``-``, ``/`` or ``.``, ``YYYYMMDD``, with
#: the month's name ("1 Jan 2000", "Jan 1, 2000", "March 2021"), or a month of a year
#: (``2021-03``, ``03/2021``; not with ``.``, which would take ``1999.05`` for May
#: 1999); a time of day may follow.
_DATE = (
    "(?:"
    + "|".join(
        f"{a}{sep}{b}{sep}{c}"
        for sep in ("-", "/", r"\.")
        for a, b, c in ((_YEAR, _MONTH, _DAY), (_DAY, _MONTH, _YEAR), (_MONTH, _DAY, _YEAR))
    )
    + rf"|{_YEAR}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
    + rf"|{_YEAR}[-/](?:0[1-9]|1[0-2])|(?:0?[1-9]|1[0-2])[-/]{_YEAR}|{_MONTH_NAME},? {_YEAR}"
    rf"|{_DAY}\.? {_MONTH_NAME},? {_YEAR}|{_MONTH_NAME} {_DAY},? {_YEAR}){_TIME}"
)
_SEP = r"[ .-]"
#: A telephone number, in the shapes of the numbering plans (ITU-T E.164 and the
#: national ones): North American ``(555) 123-4567``, ``555.123.4567``,
#: ``+1-555-123-4567``, ``001-555-123-4567``; international ``+44 20 7946 0958``,
#: ``+49 (0) 30 1234567``, ``0049 30 1234567``, ``(+358) 604876475``; national, with a
#: trunk prefix ``0171 123456``, ``(01632) 960391``, ``06 12 34 56 78``,
#: ``090-1234-5678``, ``8 604 876 47 59``, ``06-66/048 7647``, or digit groups
#: ``22 4978-6907``, ``609 141 777``; ``0`` and 8 to 11 digits unbroken. It must hold
#: 9 to 15 digits (:data:`_PHONE_DIGITS`; 8 on the terms of :data:`_SHORT_NOT_PHONE`),
#: besides an extension (``x123``, ``ext. 123``). Plain integers do not match (they
#: start with 1 to 9 and hold no separator), nor do dates, times, decimals, amounts or
#: version strings (groups of one digit).
_PHONE = (
    rf"(?:(?:\+?1{_SEP}?|001{_SEP}?)?(?:\(\d{{3}}\)|\d{{3}}){_SEP}?\d{{3}}{_SEP}\d{{4}}"
    rf"|(?:\+|00|\(\+)[1-9]\d{{0,2}}\)?{_SEP}?(?:\(0\){_SEP}?)?(?:\(\d{{1,5}}\){_SEP}?)?"
    rf"\d{{1,5}}(?:{_SEP}?\d{{1,5}}){{0,5}}"
    rf"|(?:\d[ -])?\(?\d{{2,5}}\)?(?:{_SEP}|\)|\){_SEP}|/)\d{{2,9}}(?:[ ./-]\d{{2,5}}){{0,4}}"
    r"|0\d{8,11})"
)
_EXTENSION = r"(?:\s*(?:x|ext\.?|extension|#)\s*\d{1,6})?"
#: A decimal number (``31.95376472``, ``-89.2345``): never a telephone number.
_DECIMAL = r"[-+]?\d*[.,]\d+(?:[eE][-+]?\d+)?"
#: A number written in thousands (``100 000 000``, ``1,234,567``): an amount, unless
#: most of its column are telephone numbers (``609 141 777``, :data:`_PLAIN_PHONE`).
_THOUSANDS = r"\d{1,3}(?:[ ,.\x{a0}]\d{3})+"
#: A US ZIP+4 code or a Brazilian CEP (``90210-1234``, ``01310-100``): a postcode.
_POSTAL = r"\d{5}-\d{3,4}"
#: Digits and dots, not starting with ``0``: a version (``10.100.1000``) or a decimal,
#: unless North American (``555.123.4567``); ``06.12.34.56.78`` is a telephone number.
_DOTTED = r"[1-9]\d*(?:\.\d+)+"
_DOTTED_NANP = r"(?:1\.)?\d{3}\.\d{3}\.\d{4}"
#: Of 8 digits, telephone numbers only when broken into groups that are not a date
#: (``01.02.2023``; nothing with ``/`` or ``.``, as versions ``10.10.1000``; nor
#: thousands, :data:`_THOUSANDS`) and do not start with a digit alone:
#: ``1565 9387``, ``960 48 764``, ``60 48 76 47`` (Nordic numbers have 8 digits).
_SHORT_NOT_PHONE = rf".*[/.].*|\d\D.*|{_DATE}"
#: Digits of a telephone number (its extension aside).
_PHONE_DIGITS = (9, 15)
#: Plain integers of 8 to 11 digits, and 9 digits in threes: telephone numbers
#: written unbroken or as numbers in thousands, counted as such
#: only in a column where :data:`PHONE_SHAPED_SHARE` of the values have a telephone
#: number's shape.
_PLAIN_PHONE = r"[1-9]\d{7,10}|\d{3}[ .]\d{3}[ .]\d{3}"
_HONORIFIC = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Herr|Frau|Mme|Mlle|Sr|Sra|Srta|Dott|Dhr|Mevr)"
_CAPITALISED = r"\p{Lu}[\p{L}'’-]*"
_PARTICLE = r"(?:van|von|der|den|de|da|di|del|della|dos|das|du|le|la|y|ten|ter|zu|bin|al)"
_SUFFIX = r"(?:Jr\.?|Sr\.?|II|III|IV|MD|DDS|DVM|PhD|Esq\.?)"
#: A person's name: up to four capitalised words (initials, hyphens and apostrophes,
#: particles such as "van der" between them), perhaps after an honorific and before a
#: suffix ("Dr. Jane van der Berg PhD"), or "Doe, Jane".
_NAME = (
    rf"(?:(?:{_HONORIFIC}\.?\s+)?{_CAPITALISED}\.?(?:\s+(?:{_PARTICLE}\s+)*{_CAPITALISED}\.?){{0,3}}"
    rf"(?:,?\s+{_SUFFIX})?|{_CAPITALISED},\s+{_CAPITALISED}(?:\s+{_CAPITALISED}\.?)?)"
)
#: A name written in Chinese characters, family name and given name apart ("山田 太郎",
#: also with kana or an ideographic space): taken for a name without the list.
_CJK_NAME = r"[\p{Han}\p{Katakana}]{1,4}[ \x{3000}][\p{Han}\p{Hiragana}\p{Katakana}]{1,4}"
_NAME_LIST = pa.array(sorted(GIVEN_NAMES | SURNAMES), pa.string())
_EMAIL = r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}"
_EMAIL_IN_TEXT = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}"
_BEFORE = r"(?:^|[^\p{L}\d+(])"
#: What may come before and after a telephone number in free text: not a digit, nor a
#: dot, dash, slash or colon that would make it part of a longer number (a version
#: string, a range, a time).
_BEFORE_PHONE = r"(?:^|[^\p{L}\d+(./:-])"
_AFTER_PHONE = r"(?:$|[^\w./:-]|[./:-](?:$|\s))"
#: A date that says only a year: the first of January, perhaps at midnight.
_NEW_YEAR = (
    rf"(?:{_YEAR}[-/.]0?1[-/.]0?1|0?1[-/.]0?1[-/.]{_YEAR}|(?i:jan)\.? 0?1,? {_YEAR})"
    r"(?:[ T]0?0:00(?::00(?:\.0+)?)?Z?)?"
)
#: A person's name in free text: an honorific and a capitalised word ("Dr. Smith",
#: "Mrs Jane Doe"); a common given name (:data:`anonaudit.measures._common_names.GIVEN_NAMES`)
#: and a capitalised word ("Patient John Miller reports", also at a sentence's start).
_NAME_IN_TEXT = (
    rf"(?:{_BEFORE}{_HONORIFIC}\.?\s+\p{{Lu}}\p{{Ll}}"
    rf"|{_BEFORE}(?:{'|'.join(sorted(n.capitalize() for n in GIVEN_NAMES))})\s+\p{{Lu}}\p{{Ll}})"
)


@dataclass(frozen=True)
class _Kind:
    """A kind of value that identifies: the reason's words, the short kind, the pattern
    a value matches whole, and a finer test of the values that match (a checksum)."""

    label: str
    kind: str
    pattern: str
    check: Callable[[str], bool] | None = None


#: What a value may look like. Order matters: the first kind that most values match is
#: the one reported (a date also looks like a telephone number).
_KINDS: tuple[_Kind, ...] = (
    _Kind("e-mail addresses", "e-mail", _EMAIL),
    _Kind(
        "UUIDs",
        "uuid",
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    ),
    _Kind("URLs", "url", r"(?:https?|ftp)://\S+|www\.\S+\.\S+"),
    _Kind(
        "IP addresses",
        "ip",
        r"(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:%\w+)?",
        _ip,
    ),
    _Kind("US social security numbers", "national id", r"\d{3}-\d{2}-\d{4}"),
    _Kind(
        "UK national insurance numbers",
        "national id",
        r"[A-CEGHJ-PR-TW-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]",
    ),
    _Kind(
        "Italian fiscal codes (codice fiscale)",
        "national id",
        r"[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z]",
    ),
    _Kind("Spanish identity numbers (DNI, NIE)", "national id", r"[XYZ]?\d{7,8}-?[A-Z]"),
    _Kind("Brazilian taxpayer numbers (CPF)", "national id", r"\d{3}\.\d{3}\.\d{3}-\d{2}"),
    _Kind("payment card numbers (Luhn check)", "card", r"\d(?:[ -]?\d){12,18}", _card),
    _Kind("IBANs (ISO 13616)", "iban", r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}"),
    _Kind(
        "postcodes (UK, Canadian, Dutch, ZIP+4, Brazilian CEP)",
        "address",
        r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}|[A-Z]\d[A-Z] ?\d[A-Z]\d|[1-9]\d{3} ?[A-Z]{2}"
        r"|\d{5}-\d{3,4}",
    ),
    _Kind("dates with their day or month (such as dates of birth)", "date", _DATE),
)
_PHONE_LABEL = "telephone numbers"
_NAME_LABEL = "people's names"

#: Share of a column's values that must match a kind for the column to be flagged.
MATCH_SHARE = 0.8
#: Share of the values that must have a telephone number's shape in a column of
#: telephone numbers (the others may be unbroken digits, :data:`_PLAIN_PHONE`).
PHONE_SHAPED_SHARE = 0.3
#: Share of the values that must hold a common given name or surname in a column of
#: people's names (the others must still look like names).
NAME_LISTED_SHARE = 0.1
#: Distinct values per record below which a column is not one of people's names, even
#: when some are common names (the sites "Morris" and "Waseca": categories).
_NAME_DISTINCT = 0.1
#: Share of the values of free text that must contain an e-mail address, a telephone
#: number or a person's name (any of them) for the column to be flagged.
TEXT_SHARE = 0.1
_TEXT_LABELS = {"e-mail": "e-mail addresses", "phone": "telephone numbers", "name": "names"}
#: Free text: values of this many words or more on average, ...
_TEXT_WORDS = 4.0
#: ... of which this share or more start with a lower-case letter.
_TEXT_LOWER = 0.4


def _share(mask: pa.Array, counts: pa.Array, total: int) -> float:
    """The share of the records whose value is selected by ``mask``."""
    if not total:
        return 0.0
    return float(pc.sum(counts.filter(mask)).as_py() or 0) / total


def _full(values: pa.Array, pattern: str) -> pa.Array:
    """Which of ``values`` ``pattern`` matches whole (null where a value is null)."""
    return _matching(values, f"^(?:{pattern})$")


def _matching(values: pa.Array, regex: str) -> pa.Array:
    """Which of ``values`` ``regex`` finds a match in (null where a value is null), as
    :func:`pyarrow.compute.match_substring_regex` says.

    RE2 compiles ``regex`` on every call, which takes longer than matching a few values
    (7 ms for :data:`_NAME`, about 0.1 ms for most), and an audit of many small files
    meets the same values again: up to :data:`_FEW_VALUES` values, the answer for each
    short one is kept (:data:`_MATCHED`), and only values not seen before are matched.
    """
    if len(values) > _FEW_VALUES:
        return pc.match_substring_regex(values, regex)
    texts = values.to_pylist()
    kept = _MATCHED.setdefault(regex, {})
    answers = {text: kept.get(text) for text in texts if text is not None}
    new = [text for text, answer in answers.items() if answer is None]
    if new:
        found = pc.match_substring_regex(pa.array(new, pa.string()), regex).to_pylist()
        answers.update(zip(new, found, strict=True))
        if len(kept) > _MOST_KEPT:
            kept.clear()
        kept.update(
            (text, answer)
            for text, answer in zip(new, found, strict=True)
            if len(text) <= _KEPT_LENGTH
        )
    return pa.array([None if text is None else answers[text] for text in texts], pa.bool_())


def _phones(values: pa.Array) -> pa.Array:
    """Which of ``values`` (text) are telephone numbers: the shape of :data:`_PHONE`, not
    a decimal number, a number in thousands (:data:`_THOUSANDS`), a postcode
    (:data:`_POSTAL`) nor a version (:data:`_DOTTED`), and 9 to
    15 digits, or 8 broken into groups (:data:`_SHORT_NOT_PHONE`)."""
    number = pc.replace_substring_regex(values, f"{_EXTENSION}$", "")
    shaped = pc.fill_null(_full(number, _PHONE), False)
    shaped = pc.and_(shaped, pc.invert(pc.fill_null(_full(number, _DECIMAL), False)))
    if not pc.any(shaped).as_py():
        return shaped
    shaped = pc.and_(shaped, pc.invert(_full(number, f"{_THOUSANDS}|{_POSTAL}")))
    dotted = pc.and_(_full(number, _DOTTED), pc.invert(_full(number, _DOTTED_NANP)))
    shaped = pc.and_(shaped, pc.invert(dotted))
    digits = pc.utf8_length(pc.replace_substring_regex(number, r"\D", ""))
    low, high = _PHONE_DIGITS
    counted = pc.and_(pc.greater_equal(digits, low), pc.less_equal(digits, high))
    short = pc.and_(
        pc.equal(digits, low - 1),  # 8 digits, broken, neither thousands nor a date
        pc.invert(pc.or_(_full(number, _SHORT_NOT_PHONE), _full(number, r"\d+"))),
    )
    return pc.and_(shaped, pc.or_(counted, short))


def _listed_names(values: pa.Array) -> pa.Array:
    """Which of ``values`` (names) hold a common given name or surname
    (:mod:`anonaudit.measures._common_names`) as one of their words."""
    words = pc.utf8_split_whitespace(values)
    flat = pc.utf8_trim(pc.utf8_lower(pc.list_flatten(words)), characters=",.")
    hit = pc.is_in(flat, value_set=_NAME_LIST).to_numpy(zero_copy_only=False)
    rows = np.zeros(len(values), dtype=bool)
    rows[pc.list_parent_indices(words).to_numpy()[hit]] = True
    return pa.array(rows)


def _value_kind(values: pa.Array, counts: pa.Array, total: int) -> tuple[str, str] | None:
    """The kind and label of the identifiers that the distinct ``values`` (each held by
    ``counts`` of ``total`` records) are, or ``None``."""
    for kind in _KINDS:
        mask = _full(values, kind.pattern)
        if _share(mask, counts, total) < MATCH_SHARE:
            continue
        if kind.kind == "date" and _share(_full(values, _NEW_YEAR), counts, total) >= 1.0:
            continue  # every date the first of January: years written as dates
        if kind.check is not None:
            candidates = values.filter(mask).to_pylist()
            passed = pa.array([kind.check(value) for value in candidates], pa.bool_())
            if _share(passed, counts.filter(mask), total) < MATCH_SHARE:
                continue
        return kind.kind, kind.label
    phones = _phones(values)
    if _share(phones, counts, total) >= PHONE_SHAPED_SHARE:
        loose = pc.or_(phones, _full(values, _PLAIN_PHONE))
        if _share(loose, counts, total) >= MATCH_SHARE:
            return "phone", _PHONE_LABEL
    if len(values) < _NAME_DISTINCT * total:
        return None
    initial = _matching(values, r"^\p{Lu}")  # cheaper than the whole test
    if _share(initial, counts, total) < MATCH_SHARE:
        if _share(_full(values, _CJK_NAME), counts, total) >= MATCH_SHARE:
            return "name", _NAME_LABEL
        return None
    shaped = _full(values, _NAME)
    if _share(shaped, counts, total) < MATCH_SHARE:
        return None
    if (
        _share(_listed_names(values.filter(shaped)), counts.filter(shaped), total)
        >= NAME_LISTED_SHARE
    ):
        return "name", _NAME_LABEL
    return None


def _counted(values: pa.Array) -> tuple[pa.Array, pa.Array, int]:
    """The distinct values of ``values``, how many records hold each, and the records."""
    counted = pc.value_counts(values)
    counts = counted.field("counts")
    return counted.field("values"), counts, len(values)


def by_values(name: str, values: pa.Array | Iterable[str | None]) -> str | None:
    """Why the values of column ``name`` look like direct identifiers, or ``None``.

    Judged on the values :func:`present` keeps (nulls, empty texts and null markers
    aside), at most the first 10,000: at least :data:`MATCH_SHARE` of them must be of
    one kind (e-mail addresses, UUIDs, URLs, IP addresses, national identification
    numbers, payment card numbers, IBANs, postcodes, dates with their day or month); of
    telephone numbers, :data:`MATCH_SHARE` must be telephone numbers or unbroken
    digits and :data:`PHONE_SHAPED_SHARE` have a telephone number's shape; of people's
    names, :data:`MATCH_SHARE` must look like names and :data:`NAME_LISTED_SHARE` hold
    a common given name or surname.

    Parameters
    ----------
    name : str
        The column's name (not judged here: :func:`by_name` does).
    values : pyarrow.Array or iterable of str
        Its values, one per record, or its distinct values.

    Returns
    -------
    str or None
        The reason, or ``None`` when no kind passes.

    Examples
    --------
    >>> by_values("contact", ["ann@example.org", "bob@example.com", None])
    'most of its values look like e-mail addresses'
    >>> by_values("card", ["4539 5787 6362 1486", "5555555555554444"])
    'most of its values look like payment card numbers (Luhn check)'
    >>> by_values("tel", ["+44 20 7946 0958", "(555) 123-4567", "555.123.4567 x12"])
    'most of its values look like telephone numbers'
    >>> by_values("age", ["34", "51"]) is None
    True
    """
    found = value_kind(values)
    return None if found is None else f"most of its values look like {found[1]}"


def value_kind(values: pa.Array | Iterable[str | None]) -> tuple[str, str] | None:
    """The kind of direct identifier that ``values`` are, and its label, or ``None``.

    As :func:`by_values`, which words the label as a reason.

    Parameters
    ----------
    values : pyarrow.Array or iterable of str
        A column's values, one per record, or its distinct values.

    Returns
    -------
    tuple of (str, str) or None
        The kind (``"e-mail"``, ``"uuid"``, ``"url"``, ``"ip"``, ``"national id"``,
        ``"card"``, ``"iban"``, ``"address"``, ``"date"``, ``"phone"``, ``"name"``)
        and the words
        for it (``"telephone numbers"``), or ``None``.

    Examples
    --------
    >>> value_kind(["Jane Doe", "Dr. John Miller", "Smith, Mary", None])
    ('name', "people's names")
    >>> value_kind(["2024", "1999", "12.50", "90210"]) is None
    True
    """
    text = present(values).slice(0, _MAX_VALUES)
    if not len(text):
        return None
    return _value_kind(*_counted(text))


def by_text(name: str, values: pa.Array | Iterable[str | None]) -> str | None:
    """Why the free text of column ``name`` holds direct identifiers, or ``None``.

    At least :data:`TEXT_SHARE` of the values :func:`present` keeps must *contain* an
    e-mail address, a telephone number (:data:`_PHONE`, dates and times aside) or a
    person's name (:data:`_NAME_IN_TEXT`: after an honorific, or a common given name
    before a capitalised word).

    Parameters
    ----------
    name : str
        The column's name (not judged here).
    values : pyarrow.Array or iterable of str
        Its values, one per record.

    Returns
    -------
    str or None
        ``"free text containing ..."`` with each kind found and its share of the
        values, or ``None``.

    Examples
    --------
    >>> by_text("notes", ["Called Mrs. Jane Doe on 555-123-4567", "no show", "ok"])
    'free text containing telephone numbers (33% of values), names (33% of values)'
    >>> by_text("notes", ["Seen in clinic on 2024-03-01.", "BP 120/80, dose 2.5 mg."]) is None
    True
    """
    text = present(values).slice(0, _MAX_VALUES)
    found = _text_kinds(*_counted(text)) if len(text) else {}
    if not found:
        return None
    listed = ", ".join(
        f"{_TEXT_LABELS[kind]} ({share:.0%} of values)" for kind, share in found.items()
    )
    return f"free text containing {listed}"


def _text_kinds(values: pa.Array, counts: pa.Array, total: int) -> dict[str, float]:
    """The kinds of identifier (``"e-mail"``, ``"phone"``, ``"name"``) that the values
    contain, with the share of the records that hold each, when at least
    :data:`TEXT_SHARE` of the records hold one of them; else nothing."""
    spaced = pc.match_substring(values, " ")  # no text to look into: not worth the regexes
    if _share(spaced, counts, total) < TEXT_SHARE:
        return {}
    emails = pc.match_substring_regex(values, _EMAIL_IN_TEXT)
    undated = pc.replace_substring_regex(values, _DATE, " ")
    pattern = rf"{_BEFORE_PHONE}(?P<phone>{_PHONE}){_EXTENSION}{_AFTER_PHONE}"
    candidates = pc.struct_field(pc.extract_regex(undated, pattern), [0])
    phones = pc.fill_null(_phones(candidates), False)
    names = pc.match_substring_regex(values, _NAME_IN_TEXT)
    if _share(pc.or_(emails, pc.or_(phones, names)), counts, total) < TEXT_SHARE:
        return {}
    shares = {
        kind: _share(mask, counts, total)
        for kind, mask in (("e-mail", emails), ("phone", phones), ("name", names))
    }
    return {kind: share for kind, share in shares.items() if share > 0}


def _free_text(values: pa.Array, counts: pa.Array) -> bool:
    """Whether the distinct ``values`` (held by ``counts`` records) read as free text:
    half of them or more end a sentence (``.``, ``!``, ``?``, ``。``), or they hold
    :data:`_TEXT_WORDS` words on average, :data:`_TEXT_LOWER` of them in lower case."""
    sentences = pc.match_substring_regex(values, r"\S{6,}[.!?。！？]$")
    if _share(sentences, counts, pc.sum(counts).as_py() or 0) >= 0.5:
        return True
    words = pc.utf8_split_whitespace(values)
    lengths = pc.list_value_length(words)
    total_words = pc.sum(pc.multiply(lengths, counts)).as_py() or 0
    records = pc.sum(counts).as_py() or 0
    if not records or total_words < _TEXT_WORDS * records:
        return False
    flat = pc.list_flatten(words)
    lower = pc.match_substring_regex(flat, r"^\p{Ll}")
    weights = counts.take(pc.list_parent_indices(words))
    lower_words = pc.sum(weights.filter(lower)).as_py() or 0
    return bool(lower_words >= _TEXT_LOWER * total_words)


#: A decimal number with a fractional part, a number written with separators of
#: thousands (``1 234 567``, ``1,234,567.89``, ``1.234.567,89``), or a ratio of small
#: numbers (``120/80``): a measurement or an amount, which does not identify even when
#: every record holds another.
_MEASURE = (
    rf"{_DECIMAL}"
    r"|[-+]?\d{1,3}(?:[ ,.\x{a0}]\d{3})+(?:[.,]\d+)?"
    r"|\d{1,4}/\d{1,4}"
)


def by_uniqueness(distinct: int, rows: int) -> str | None:
    """Why a column with ``distinct`` values over ``rows`` records identifies, or ``None``.

    Both counted without nulls (:func:`present`); fewer than 100 records are not
    judged.

    Parameters
    ----------
    distinct : int
        The column's distinct values.
    rows : int
        The records that hold one.

    Returns
    -------
    str or None
        The reason, or ``None``.

    Examples
    --------
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


#: The kind of identifier each Safe Harbor identifier is, as :attr:`Identifier.kind`
#: says it when the column's name alone tells.
NAME_KINDS: dict[str, str] = {
    "(A)": "name",
    "(B)": "address",
    "(C)": "date",
    "(D)": "phone",
    "(E)": "phone",
    "(F)": "e-mail",
    "(G)": "national id",
    "(H)": "record number",
    "(I)": "record number",
    "(J)": "account",
    "(K)": "licence",
    "(L)": "vehicle",
    "(M)": "device",
    "(N)": "url",
    "(O)": "ip",
    "(P)": "biometric",
    "(Q)": "photo",
    "(R)": "id",
}


def _name_kind(reason: str) -> str:
    """The kind a :func:`by_name` reason names."""
    letter = reason.rpartition(", ")[2][:3]
    return NAME_KINDS.get(letter, "id")


def _judge(
    column: str,
    role: Role,
    name_reason: str | None,
    values: pa.Array,
    unique: tuple[int, int] | None,
    *,
    in_record_order: bool,
) -> Identifier | None:
    """The :class:`Identifier` of ``column`` from its ``values`` (:func:`present`) and
    its distinct values and records (``None``: not judged), or ``None``.
    ``in_record_order``: the values are records in the order read (:func:`judge_column`),
    not a class table's distinct values (sorted, which would look like record numbers)."""
    reasons: list[str] = []
    kind: str | None = None
    counted = _counted(values.slice(0, _MAX_VALUES)) if len(values) else None
    found = _value_kind(*counted) if counted is not None else None
    text = None
    if found is not None:
        kind = found[0]
        reasons.append(f"most of its values look like {found[1]}")
    elif counted is not None:
        contained = _text_kinds(*counted)
        if contained:
            kind = "free text"
            text = ", ".join(
                f"{_TEXT_LABELS[k]} ({share:.0%} of values)" for k, share in contained.items()
            )
    if name_reason is not None:
        reasons.insert(0, name_reason)
        kind = kind or _name_kind(name_reason)
    if text is not None:
        reasons.append(f"free text containing {text}")
    reason = by_uniqueness(*unique) if unique is not None and counted is not None else None
    if reason is not None and counted is not None:
        rising = in_record_order and _in_record_order(values)
        if rising or not _unlike_identifiers(counted):
            reasons.append(reason)
            reasons += ["its whole numbers rise record by record, as record numbers do"] * rising
            kind = kind or "unique"
    if not reasons:
        return None
    return Identifier(column, tuple(reasons), role, kind)


def _unlike_identifiers(counted: tuple[pa.Array, pa.Array, int]) -> bool:
    """Whether values that differ in every record still do not identify: measurements
    (:data:`_MEASURE`), amounts and counts (:func:`_counts`) and free text
    (:func:`_free_text`; what it holds is judged by :func:`by_text`)."""
    values, counts, total = counted
    if _share(_full(values, _MEASURE), counts, total) >= MATCH_SHARE:
        return True
    return _counts(values) or _free_text(values, counts)


def _in_record_order(values: pa.Array) -> bool:
    """Whether ``values``, one per record in the order read, are whole numbers that rise
    (or fall) strictly from record to record: record numbers as a file lists them, gaps
    or steps between (``50002, 50005, 50009, ...``), which :func:`_counts` would take
    for amounts. Amounts and measurements of records in any other order do not run so.
    A sample of distinct values (not in record order) almost never does either."""
    numbers = _whole_numbers(values) if len(values) >= _MIN_ROWS else None
    if numbers is None:
        return False
    steps = np.diff(numbers.to_numpy())
    return bool((steps > 0).all() or (steps < 0).all())


def _whole_numbers(values: pa.Array) -> pa.Array | None:
    """``values`` as int64 when every one is a whole number of up to 18 digits (a sign
    allowed), else ``None``."""
    if not len(values) or not pc.all(_full(values, r"[-+]?\d{1,18}")).as_py():
        return None
    return pc.replace_substring_regex(values, r"^\+", "").cast(pa.int64())


def _counts(values: pa.Array) -> bool:
    """Whether the distinct ``values`` are integers that count or measure: not in
    sequence (they span more than twice as many numbers as they are), and of several
    lengths or, all of one length, spread over less than half the numbers of that
    length. An identifying number runs in sequence (``1`` to ``5190``), spreads over
    its whole width (``88213409``) or is padded with zeros (``00412345``)."""
    whole = _whole_numbers(values)
    if whole is None:
        return False
    if pc.any(_full(values, r"0\d+")).as_py():
        return False  # zeros in front: a code of fixed width (``00412345``)
    numbers = pc.min_max(whole)
    low, high = numbers["min"].as_py(), numbers["max"].as_py()
    if high - low + 1 <= 2 * len(values):
        return False
    lengths = pc.min_max(pc.utf8_length(pc.utf8_ltrim(values, "-+")))
    width = lengths["max"].as_py()
    if lengths["min"].as_py() != width:
        return True
    return bool(high - low < 0.5 * 9 * 10 ** (width - 1))


def judge_column(
    column: str,
    values: pa.Array | pa.ChunkedArray | Iterable[str | None],
    *,
    declared_role: Role = "not audited",
) -> Identifier | None:
    """Whether a column, from a sample of its records, likely identifies a person directly.

    Its name (:func:`by_name`), its values (:func:`by_values`), its free text
    (:func:`by_text`) and its distinct values per record (:func:`by_uniqueness`, not for
    measurements nor free text), all on the values :func:`present` keeps.

    Parameters
    ----------
    column : str
        The column's name.
    values : pyarrow.Array or iterable of str
        Its values in a sample of records, one per record.
    declared_role : {"quasi-identifier", "sensitive", "not audited"}
        How the audit declared it.

    Returns
    -------
    Identifier or None
        ``None`` when nothing says it identifies.

    Examples
    --------
    >>> found = judge_column("contact", ["ann@example.org"] + [None] * 400 + ["x@y.com"])
    >>> found.kind, found.reasons
    ('e-mail', ('most of its values look like e-mail addresses',))
    """
    text = present(values)
    unique = (len(pc.unique(text)), len(text))
    return _judge(
        column, declared_role, by_name([column]).get(column), text, unique, in_record_order=True
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
        The audited class table: its QI and SA columns are judged from it (their
        distinct values, or a sample of 10,000 chosen by the values alone:
        :func:`_table_distinct`; distinct values per record, for QIs only: an SA is
        expected to repeat), nulls and null markers (:data:`NULL_MARKERS`) aside.
    sources : sequence of Source
        The inputs (:func:`anonaudit.sources.open_inputs`); the first ``sample_rows``
        records of their other columns are read once more and judged on that sample
        (:func:`judge_column`).
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
    names = by_name(roles)
    found = []
    for column, role in roles.items():
        sample = _table_distinct(table, column, _MAX_VALUES)
        values = present(sample)
        unique = _table_unique(table, column, sample) if role == "quasi-identifier" else None
        judged = _judge(column, role, names.get(column), values, unique, in_record_order=False)
        if judged is not None:
            found.append(judged)
    others = [c for c in _columns(sources) if c not in roles and c not in ignore]
    for column, array in _sample(sources, others, sample_rows).items():
        judged = judge_column(column, array)
        if judged is not None:
            found.append(judged)
    return tuple(found)


def _table_unique(table: ClassTable, column: str, sample: pa.Array) -> tuple[int, int]:
    """The distinct values and the records of the class table's ``column``, without its
    nulls and null markers (:data:`NULL_MARKERS`; looked for in the whole column only
    when its ``sample`` of distinct values, :func:`_table_distinct`, holds one)."""
    distinct, rows = table.distinct(column), table.rows
    nulls = table.null_counts().get(column, 0)
    if nulls:
        distinct, rows = distinct - 1, rows - nulls
    sample = _as_string(sample).drop_null()
    if not pc.any(
        pc.is_in(pc.utf8_lower(pc.utf8_trim_whitespace(sample)), value_set=_NULL_ARRAY)
    ).as_py():
        return distinct, rows
    keys = _as_string(table.keys.column(column).combine_chunks())
    marked = pc.fill_null(
        pc.is_in(pc.utf8_lower(pc.utf8_trim_whitespace(keys)), value_set=_NULL_ARRAY), False
    )
    distinct -= len(pc.unique(keys.filter(marked)))
    rows -= int(table.counts[marked.to_numpy(zero_copy_only=False)].sum())
    return distinct, rows


def _as_string(array: pa.Array) -> pa.Array:
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array if pa.types.is_string(array.type) else pc.cast(array, pa.string())


def _table_distinct(table: ClassTable, column: str, n: int) -> pa.Array:
    """At most ``n`` distinct values of the class table's ``column``, chosen by the
    values alone: every one when there are at most ``n``, else the ``n`` of smallest
    :func:`value_hashes` (ties kept), in order of hash.

    Whatever built the table (CSV text grouped by DuckDB, a Parquet file or a small
    CSV file counted by codes, a memory limit), its rows' order differs but this sample
    does not: the first values in the table's order were a sample of the engine's (of
    the values that sort first, for a table counted by codes), and a column half of
    e-mail addresses was judged one of e-mail addresses on one path and not on another.

    Parameters
    ----------
    table : ClassTable
        The audited class table.
    column : str
        One of its columns.
    n : int
        How many distinct values are wanted (at least 1).

    Returns
    -------
    pyarrow.Array
        Distinct values, null included when it is one of them.
    """
    values = table._distinct_values(column)
    if len(values) > n:
        hashes = value_hashes(values)
        chosen = np.flatnonzero(hashes <= np.partition(hashes, n - 1)[n - 1])
        values = values.take(pa.array(chosen[np.argsort(hashes[chosen], kind="stable")]))
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def value_hashes(values: pa.Array | pa.ChunkedArray) -> NDArray[np.uint64]:
    """A 64-bit hash of each value's text that depends on the value alone: not on its
    position, the engine that read it or the run.

    A polynomial in the value's first :data:`_HASHED_BYTES` UTF-8 bytes (base the 64-bit
    FNV prime) modulo 2^64, plus its length in bytes times 2^64 / golden ratio, mixed by
    the finalizer of SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
    number generators", OOPSLA 2014). For sampling values evenly, not for security.
    Null hashes as the empty text; values of other types as their text.

    >>> h = value_hashes(pa.array(["a@b.org", "zz1", "a@b.org", None, ""]))
    >>> bool(h[0] == h[2]), bool(h[0] != h[1]), bool(h[3] == h[4])
    (True, True, True)
    """
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    hashes = [np.zeros(0, dtype=np.uint64)]
    for chunk in chunks:
        text = pc.fill_null(_as_string(chunk), "")
        length = pc.binary_length(text).to_numpy()
        head = text.cast(pa.binary())
        if len(length) and length.max() > _HASHED_BYTES:
            head = pc.binary_slice(head, 0, _HASHED_BYTES)
        offsets_buffer, data_buffer = head.buffers()[1:3]
        assert offsets_buffer is not None  # a binary array has offsets
        offsets = np.frombuffer(offsets_buffer, dtype=np.int32)
        offsets = offsets[head.offset : head.offset + len(head) + 1].astype(np.int64)
        data = np.zeros(0, np.uint8)
        if data_buffer is not None:
            data = np.frombuffer(data_buffer, dtype=np.uint8)
        # Values of at most _HASH_BYTES bytes at a time: the bytes' terms summed over the
        # batch, each value's sum taken back to its own first byte by the inverse of the
        # power there (the prime is odd: invertible modulo 2^64).
        ends = np.searchsorted(offsets, np.arange(0, offsets[-1], _HASH_BYTES)[1:], "right")
        bounds = np.unique(np.r_[0, ends - 1, len(head)])
        powers, inverses = _powers()
        for first, last in itertools.pairwise(bounds):
            at = offsets[first : last + 1] - offsets[first]
            sums = np.zeros(at[-1] + 1, dtype=np.uint64)  # wraps modulo 2^64
            terms = data[offsets[first] : offsets[last]] * powers[: at[-1]]
            np.cumsum(terms, out=sums[1:])
            polynomial = (sums[at[1:]] - sums[at[:-1]]) * inverses[at[:-1]]
            hashes.append(_mixed(polynomial, length[first:last]))
    return np.concatenate(hashes)


@functools.cache
def _powers() -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """The powers of the 64-bit FNV prime modulo 2^64, and of its inverse, from 0 to the
    bytes of a batch of :func:`value_hashes` (:data:`_HASH_BYTES`, and part of a value)."""
    powers = []
    for base in (_FNV_PRIME, pow(_FNV_PRIME, -1, 2**64)):
        factors = np.full(_HASH_BYTES + _HASHED_BYTES + 1, base, dtype=np.uint64)
        factors[0] = 1
        powers.append(np.cumprod(factors, dtype=np.uint64))
    return powers[0], powers[1]


def _mixed(polynomial: NDArray[np.uint64], length: NDArray[Any]) -> NDArray[np.uint64]:
    """SplitMix64's finalizer of ``polynomial + length * 0x9E3779B97F4A7C15`` (mod 2^64)."""
    z = polynomial + length.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    mixed: NDArray[np.uint64] = z ^ (z >> np.uint64(31))
    return mixed


def _columns(sources: Sequence[Source]) -> list[str]:
    """Every input's columns, in order, each once."""
    return list(dict.fromkeys(column for source in sources for column in source.columns))


def _sample(sources: Sequence[Source], columns: list[str], rows: int) -> Mapping[str, pa.Array]:
    """The first ``rows`` records of ``columns`` (as text) from the first input that has
    them all."""
    from anonaudit.classtable import to_string_batch

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
