"""The views of the HTML report's other sections: one frozen dataclass per section.

The measures build their own sections (:meth:`anonaudit.measures.base.Measure.view`,
from the parts in :mod:`anonaudit.report.kit`); the verdict, the data audited,
the direct identifiers and the DP companion are built here. A view holds only text
ready to print: numbers formatted, quasi-identifier values redacted when asked, charts
drawn (:mod:`anonaudit.report.charts`), failing classes cut to the rows shown plus a
CSV ``data:`` link holding all of them. The templates under
``templates/`` print views and never compute; :mod:`anonaudit.report.html` lists the
sections and renders them. Nothing here computes a measure: sentences compare nothing
the results have not already judged (their ``passed`` and ``verdicts``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from anonaudit import __version__
from anonaudit.distances import DEFAULT, named
from anonaudit.measures import Measure, in_order
from anonaudit.measures.identifiers import SAMPLE_ROWS, Identifier
from anonaudit.report import charts
from anonaudit.report.charts import Chart
from anonaudit.report.criteria import criteria
from anonaudit.report.kit import (
    Fact,
    TableRow,
    VerdictRow,
    _count,
    _plural,
    _share,
    byte_size,
    join_names,
    nats,
    none_as_null,
    probability,
    real,
    signed,
    slugs,
)
from anonaudit.report.sections import analysis_section, section
from anonaudit.settings.names import REDACTED, SUPPRESSED, Judged
from anonaudit.sources.storage import is_url

if TYPE_CHECKING:
    from anonaudit.classtable import SourceStats
    from anonaudit.dp.companion import DPReport
    from anonaudit.dp.contrast import AttackerContrast, SensitiveContrast
    from anonaudit.dp.utility import Measures
    from anonaudit.report.reported import Reported

__all__ = [
    "REDACTED",
    "ColumnRow",
    "ContrastRow",
    "DPView",
    "DatasetView",
    "IdentifiersView",
    "SourceRow",
    "VerdictView",
    "audit_time",
    "contents_notice",
    "dataset_view",
    "describe_call",
    "dp_view",
    "identifiers_view",
    "section_anchor",
    "verdict_view",
]


@dataclass(frozen=True)
class CriterionRow:
    """One of WP216's three criteria: its status, what backs it, what was not assessed."""

    name: str
    question: str
    status: str
    backing: str
    gaps: tuple[str, ...]


@dataclass(frozen=True)
class VerdictView:
    """The verdict: ``status`` is ``"pass"``, ``"fail"`` or ``"none"`` (no threshold)."""

    status: str
    headline: str
    rows: tuple[VerdictRow, ...]
    criteria: tuple[CriterionRow, ...] = ()
    answer: str | None = None


@dataclass(frozen=True)
class SourceRow:
    """One input file or frame, with its SHA-256 (or why there is none)."""

    name: str
    format: str
    rows: str
    size: str
    sha256: str


@dataclass(frozen=True)
class ColumnRow:
    """One audited column: its role and its null count."""

    name: str
    role: str
    nulls: str


@dataclass(frozen=True)
class DatasetView:
    """The data audited and how to reproduce the audit.

    ``audited_at`` and ``version`` change on every run; the template prints each in an
    element of its own, on its own line, marked ``data-volatile``.
    """

    sources: tuple[SourceRow, ...]
    columns: tuple[ColumnRow, ...]
    facts: tuple[Fact, ...]
    command: str
    command_note: str
    audited_at: str
    audited_at_iso: str
    version: str


@dataclass(frozen=True)
class ContrastRow:
    """One SA: what the syntactic release lets an attacker believe beside ε-DP, in
    ``sentence``, and the prior-posterior ``chart``."""

    sensitive: str
    anchor: str
    sentence: str
    chart: Chart


@dataclass(frozen=True)
class DPView:
    """The differential-privacy companion (:class:`~anonaudit.dp.DPReport`).

    Attributes
    ----------
    release : tuple of Fact
        Mechanism, ε, δ, noise, neighbouring relation, privacy unit, combinations.
    guarantee, neighbours, keys : str
        What the guarantee, the neighbouring relation and the choice of released
        combinations (public domain, threshold or randomized response) mean.
    withheld : str or None
        Records left out of the release, if any.
    accounting : tuple of Fact
        The cost in every currency that applies.
    contrast : tuple of ContrastRow
        Per SA: the sentence and the chart.
    contrast_table : tuple of TableRow
        One row per figure, one cell per SA (in the order of ``contrast``).
    error : tuple of Fact
        Expected and observed error, groups hidden and fabricated.
    error_note : str
        Why the observed error differs from the expected one.
    reader : tuple of TableRow
        k, l and t of the data beside those of the release (two cells).
    loss : tuple of Fact
        The privacy loss random variable.
    profile : Chart or None
        δ(ε'), when there are points.
    """

    release: tuple[Fact, ...]
    guarantee: str
    neighbours: str
    keys: str
    withheld: str | None
    accounting: tuple[Fact, ...]
    contrast: tuple[ContrastRow, ...]
    contrast_table: tuple[TableRow, ...]
    error: tuple[Fact, ...]
    error_note: str
    reader: tuple[TableRow, ...]
    loss: tuple[Fact, ...]
    profile: Chart | None


@dataclass(frozen=True)
class IdentifiersView:
    """The columns that likely identify a person directly (:mod:`anonaudit.measures.identifiers`):
    a ``lead`` sentence, one row per column (its role and the reasons) and a ``note`` on
    how they were found."""

    lead: str
    rows: tuple[TableRow, ...]
    note: str


# -- builders ------------------------------------------------------------------------


def describe_call(report: Reported) -> str:
    """The :func:`anonaudit.audit` call that reproduces ``report``, as far as it records it.

    Hierarchy, order and matrix arguments are not kept in the report: the call names
    the ground distances and leaves their argument as ``...`` to fill in.

    Examples
    --------
    >>> import pandas as pd, anonaudit
    >>> r = anonaudit.audit(pd.DataFrame({"zip": ["1", "1"]}), anonaudit.Roles(["zip"]),
    ...                     anonaudit.AuditOptions(policy=anonaudit.Policy(k=2)))
    >>> describe_call(r)
    "anonaudit.audit('<pandas.DataFrame>', anonaudit.Roles(['zip']), \
anonaudit.AuditOptions(policy=anonaudit.Policy(k=2), nulls='value', risk_threshold=0.2))"
    """
    names = [source.name for source in report.sources]
    source = repr(names[0]) if len(names) == 1 else repr(names)
    roles = [repr(list(report.quasi_identifiers))]
    if report.sensitive:
        roles.append(repr(list(report.sensitive)))
    options = []
    thresholds = report.policy.active()
    if thresholds:
        policy = ", ".join(f"{name}={value!r}" for name, value in thresholds.items())
        options.append(f"policy=anonaudit.Policy({policy})")
    distances = {
        sa: f"anonaudit.{named(r.distance).__name__}"
        + ("(...)" if fields(named(r.distance)) else "()")
        for sa, r in report.t_closeness.items()
        if r.distance != DEFAULT
    }
    if distances:
        listed = ", ".join(f"{sa!r}: {call}" for sa, call in distances.items())
        options.append(f"distances={{{listed}}}")
    options.append(f"nulls={report.null_policy!r}")
    options.append(f"risk_threshold={report.risk.threshold!r}")
    return (
        f"anonaudit.audit({source}, anonaudit.Roles({', '.join(roles)}), "
        f"anonaudit.AuditOptions({', '.join(options)}))"
    )


def _identifiers_verdict(report: Reported) -> list[VerdictRow]:
    """The first verdict row: no column that looks like a direct identifier is left
    undeclared (:attr:`~anonaudit.results.AuditReport.undeclared_identifiers`)."""
    if not report.identifiers_checked:
        return []
    failing = [i.column for i in report.undeclared_identifiers]
    if failing:
        sentence = (
            f"{join_names(failing)} {'looks' if len(failing) == 1 else 'look'} like "
            f"{'a direct identifier' if len(failing) == 1 else 'direct identifiers'} and "
            f"{'is' if len(failing) == 1 else 'are'} neither a quasi-identifier nor sensitive: "
            "a value that names one person defeats every measure below. Drop such columns "
            "before the release, declare them, or release them knowingly "
            "(--allow-identifier)."
        )
    else:
        sentence = (
            "No column left undeclared looks like a direct identifier (by its name, its "
            "values or its number of distinct values)."
        )
    return [
        VerdictRow(
            Judged.DIRECT_IDENTIFIERS.value,
            "identifiers" if report.identifiers else "dataset",
            f"{_plural(len(failing), 'column')} undeclared" if failing else "none undeclared",
            "none undeclared",
            not failing,
            sentence,
        )
    ]


def verdict_view(report: Reported, answer: str | None = None) -> VerdictView:
    """Every threshold of the policy: measured value, bound, pass or fail, in words;
    ``answer``: the advice the page leads with, when a search ran
    (:func:`anonaudit.report.view_advice.answer`)."""
    rows = _identifiers_verdict(report) + [
        row
        for measure, sa in in_order(report.sensitive)
        for row in section(measure).verdict_rows(
            report.result(measure, sa), report, section_anchor(measure, sa, report.sensitive)
        )
    ]
    rows += [
        row
        for analysis, found in report.analysed()
        for row in analysis_section(analysis).verdict_rows(found, report)
    ]
    rows += _releases_verdicts(report)
    # Counted as the summary and the JSON report count them: one check per measure (and
    # SA), which may set several thresholds (one row each).
    checks = report.verdicts()
    failed = [v.name for v in checks if not v.passed]
    if report.passed is None:
        status = "none"
        headline = (
            "The policy sets no thresholds: nothing was judged, and the measures below are "
            "reported without a verdict."
        )
    elif failed:
        status = "fail"
        headline = (
            f"The data does not meet the policy: {len(failed)} of "
            f"{_plural(len(checks), 'check')} {'fails' if len(failed) == 1 else 'fail'} "
            f"({join_names(failed)})."
        )
    else:
        status = "pass"
        headline = f"The data meets the policy: all {_plural(len(checks), 'check')} pass."
    return VerdictView(
        status=status,
        headline=headline,
        rows=tuple(rows),
        criteria=tuple(
            CriterionRow(
                name=c.name,
                question=c.question,
                status="none" if c.passed is None else "pass" if c.passed else "fail",
                backing=join_names(list(c.measures)) if c.measures else "no measure",
                gaps=c.not_checked,
            )
            for c in criteria(report)
        ),
        answer=answer,
    )


def section_anchor(measure: Measure[Any], sensitive: str | None, names: Sequence[str]) -> str:
    """The id of ``measure``'s HTML section (of SA ``sensitive`` among the SAs ``names``)."""
    if sensitive is None:
        return section(measure).anchor
    return f"{section(measure).anchor}-{slugs(names)[list(names).index(sensitive)]}"


def _releases_verdicts(report: Reported) -> list[VerdictRow]:
    """The rows of the composition and differencing against earlier releases."""
    history = report.history
    if history is None:
        return []
    rows = []
    composed_with = history.composed_names
    for sa, composition in history.composition.items():
        rows.append(
            VerdictRow(
                f"composition of {sa}",
                "releases",
                f"{_count(composition.newly_disclosed_records)} disclosed",
                "none disclosed",
                composition.newly_disclosed_records == 0,
                f"An attacker holding this release and the earlier ones ({composed_with}) who "
                f"knows a person's quasi-identifiers intersects the {sa} values of their "
                f"classes: {_plural(composition.newly_disclosed_records, 'record')} end with "
                "one value that no release disclosed alone.",
            )
        )
    for sa, difference in history.differencing.items():
        rows.append(
            VerdictRow(
                f"differencing of {sa}",
                "releases",
                f"{_count(difference.disclosed_records)} disclosed",
                "none disclosed",
                difference.disclosed_records == 0,
                f"Subtracting release {history.differenced_name} from this one class by class: "
                f"{_plural(difference.disclosing_classes, 'class')} changed in one {sa} value "
                f"only, which discloses it for {_plural(difference.disclosed_records, 'record')} "
                "added or removed.",
            )
        )
    return rows


def dataset_view(report: Reported, command: str | None) -> DatasetView:
    """The inputs (with their SHA-256), the columns and how to reproduce the audit.

    ``command`` is the command line as typed; ``None`` describes the Python call.
    """
    roles = [(name, "quasi-identifier") for name in report.quasi_identifiers]
    roles += [(name, "sensitive") for name in report.sensitive]
    null_rule = (
        "a null quasi-identifier is a value of its own"
        if report.null_policy == "value"
        else f"records with a null quasi-identifier are left out ({report.dropped_records:,})"
    )
    if report.suppressed_records:
        null_rule += (
            f"; {report.suppressed_records:,} suppressed records (every quasi-identifier "
            f"{SUPPRESSED}) are in no class"
        )
    return DatasetView(
        sources=tuple(
            SourceRow(
                name=source.name,
                format=source.format,
                rows=f"{source.rows:,}",
                size="n/a" if source.size_bytes is None else byte_size(source.size_bytes),
                sha256=source_digest(source),
            )
            for source in report.sources
        ),
        columns=tuple(
            ColumnRow(name, role, f"{report.nulls.get(name, 0):,}") for name, role in roles
        ),
        facts=(
            Fact("records audited", f"{report.rows:,}"),
            Fact("equivalence classes", f"{report.k_anonymity.classes:,}"),
            Fact("nulls", null_rule),
        ),
        command=command or describe_call(report),
        command_note=(
            "The command that ran this audit, as typed (shell-quoted)."
            if command
            else "The Python call, rebuilt from the report: hierarchy, order and matrix "
            "files given to it are not recorded here."
        ),
        audited_at=audit_time(report),
        audited_at_iso=report.audited_at.isoformat(),
        version=__version__,
    )


def _identifier_role(report: Reported, found: Identifier) -> str:
    """How the audit treats a likely direct identifier: it fails the audit unless it is
    declared (QI, sensitive) or allowed."""
    if found in report.undeclared_identifiers:
        return "FAIL: not declared (drop it, or --allow-identifier)"
    if found.column in report.allowed_identifiers:
        return "allowed (--allow-identifier)"
    return found.declared_role


def identifiers_view(report: Reported) -> IdentifiersView:
    """The likely direct identifiers of ``report``: to drop before any release."""
    n = len(report.identifiers)
    return IdentifiersView(
        lead=f"{_plural(n, 'column')} {'looks' if n == 1 else 'look'} like "
        f"{'a direct identifier' if n == 1 else 'direct identifiers'}: a value that names "
        "one person defeats every measure below. Remove such columns before a release, "
        "or replace them (a random code is still an identifier if it is kept).",
        rows=tuple(
            TableRow(i.column, (_identifier_role(report, i), "; ".join(i.reasons)))
            for i in report.identifiers
        ),
        note="Found by the column's name (the 18 identifiers of the HIPAA Safe Harbor "
        "method, 45 CFR 164.514(b)(2)), by what its present values look like (people's "
        "names, e-mail addresses, telephone, national identification, IBAN and payment "
        "card numbers, postcodes, IP addresses, URLs, UUIDs, dates with their day or "
        "month), by free text containing names, e-mail addresses or telephone numbers, "
        "and by how many distinct values it takes per record; columns the audit did not "
        f"read were judged on the first {SAMPLE_ROWS:,} records. A column declared "
        "neither quasi-identifier nor sensitive, and not allowed (--allow-identifier), "
        "fails the audit; the others are warnings to judge.",
    )


# -- differential privacy -------------------------------------------------------------

MECHANISM_WORDS = {
    "discrete-laplace": "discrete Laplace noise (two-sided geometric) on each count",
    "discrete-gaussian": "discrete Gaussian noise on each count",
    "laplace": "Laplace noise on each count, then rounded",
    "gaussian": "Gaussian noise on each count, then rounded",
    "randomized-response": "randomized response on each record's value (local model)",
}


def dp_view(dp: DPReport) -> DPView:
    """The differential-privacy companion: the release, its cost, the contrast with the
    syntactic release per SA, the error of the noisy counts and the privacy loss."""
    r, a, u, loss = dp.release, dp.accounting, dp.utility, dp.privacy_loss
    rr = r.mechanism == "randomized-response"
    m = r.sensitivity.max_contributions
    if dp.privacy_unit is None:
        unit, units = "record", "one record (each record is taken to be a different person)"
    else:
        unit = "person"
        units = (
            f"one person: one value of {dp.privacy_unit}, with at most {_plural(m, 'record')} each"
        )
    additive = f", plus an additive δ = {probability(a.delta)}" * bool(a.delta)
    guarantee = (
        f"(ε, δ)-DP: whatever an attacker knew beforehand, including every other record, "
        f"the probability of any outcome of this release grows at most by a factor "
        f"e^ε = {real(math.exp(a.epsilon))} (ε = {real(a.epsilon)}){additive} when one "
        f"{unit} is {_CHANGE[r.sensitivity.neighbouring]}. It holds for every {unit}, "
        "including those in the smallest and most homogeneous groups."
    )
    if rr:
        neighbours = (
            f"Neighbouring datasets differ in the sensitive value of {units}: what each "
            "record says is protected, not whether it is in the data."
        )
    elif r.sensitivity.neighbouring == "add-remove":
        neighbours = (
            f"Neighbouring datasets differ by adding or removing {units}: whether someone "
            "is in the data at all is protected, and the number of records is not published."
        )
    else:
        neighbours = (
            f"Neighbouring datasets differ by replacing {units} with another: the number of "
            "records is treated as public; what each record says is protected."
        )
    columns = join_names([*r.original.quasi_identifiers, *r.original.sensitive])
    if rr:
        sa = r.original.sensitive[0]
        keys = (
            f"Randomized response: the quasi-identifier values and the size of every group "
            f"are published as they are; only each record's {sa} is replaced at random by "
            f"another value with a probability of {_share(r.noise_scale)}. It protects "
            f"{sa}, not whether someone is in the data or which group they are in."
        )
        kind = f"{_plural(r.cells, 'record')} randomized"
    elif r.domain == "public":
        keys = (
            f"Combinations from a public domain: every combination of the declared values of "
            f"{columns} was released ({_plural(r.cells, 'cell')}), empty ones included, so "
            "the release does not reveal which combinations occur in the data. That is what "
            "makes pure ε-DP possible."
        )
        kind = f"{_plural(r.cells, 'cell')} of the public domain"
    else:
        assert r.threshold is not None and r.keep_below is not None  # observed
        below = f"{r.threshold - 1}, kept then with a probability of {_share(r.keep_below)}"
        keys = (
            f"Combinations thresholded: no public list of values was declared for every "
            f"column, so only combinations that occur in the data could be released, and "
            f"which ones occur is itself private. Each was noised and released only when "
            f"its noisy count reached {r.threshold} (or was {below}, which spends all the δ "
            f"allowed); a combination that exists because of "
            f"one {unit} passes that threshold with a probability of at most "
            f"{probability(a.cost.delta)}. This is why the release is (ε, δ)-DP and not "
            f"pure ε-DP; {u.classes_hidden:,} of {_plural(u.classes, 'group')} fell below "
            "the threshold and do not appear in it. Declaring public values of every "
            "column (--public-domain) releases every combination instead, under pure ε-DP."
        )
        kind = (
            f"{_plural(r.cells, 'combination')} present in the data, each kept when its "
            f"noisy count is at least {r.threshold} (or is {below})"
        )
    withheld = None
    if r.outside_domain or dp.bounded_records:
        withheld = (
            f"Not released: {_plural(r.outside_domain, 'record')} whose values are not among "
            f"the declared ones, and {_plural(dp.bounded_records, 'record')} beyond "
            f"{_plural(m, 'record')} per person. These counts come from the real data: "
            "do not publish them."
        )
    noise = (
        Fact(
            "chance that a record reports another value than its own",
            _share(r.noise_scale),
        )
        if rr
        else Fact(
            "noise scale " + ("σ" if "gaussian" in r.mechanism else "b"),
            real(r.noise_scale)
            + ("" if u.expected_rmse is None else f" (standard deviation {real(u.expected_rmse)})"),
        )
    )
    release = (
        Fact("mechanism", MECHANISM_WORDS.get(r.mechanism, r.mechanism)),
        Fact("ε (epsilon), the privacy budget", real(r.epsilon)),
        Fact(
            "δ (delta), added to the e^ε bound on the probability of any outcome",
            probability(r.delta) if r.delta else "0 (pure ε-DP)",
        ),
        noise,
        Fact("neighbouring datasets", r.sensitivity.neighbouring),
        Fact("protected unit", units),
        Fact("combinations", kind),
        Fact(
            "released",
            f"{_plural(r.table.rows, 'record')} in {_plural(len(r.table), 'combination')}",
        ),
    )
    return DPView(
        release=release,
        guarantee=guarantee,
        neighbours=neighbours,
        keys=keys,
        withheld=withheld,
        accounting=_dp_accounting(dp),
        contrast=tuple(
            _contrast_row(dp, dp.contrast[sa], dp.attackers[sa], slug)
            for sa, slug in zip(dp.contrast, slugs(list(dp.contrast)), strict=True)
        ),
        contrast_table=_contrast_table(
            [(dp.contrast[sa], dp.attackers[sa]) for sa in dp.contrast], dp.release.value_failure
        ),
        error=_dp_error(dp),
        error_note=(
            "Randomized response changes values, not counts: the error is in each group's "
            "count of each value."
            if rr
            else "The observed error includes the threshold: a combination whose noisy count "
            f"falls below {r.threshold} (and was not kept by the coin one below it) is "
            "released as 0, so small counts lose all their records (a negative bias)."
            if r.domain == "observed"
            else "Counts are rounded and negatives set to 0, so empty cells can come out "
            "positive (a positive bias) and show groups that do not exist."
        ),
        reader=_reader_rows(dp.measures.original, dp.measures.released),
        loss=(
            Fact(
                "largest privacy loss",
                (
                    "unbounded (Gaussian noise: see δ)"
                    if math.isinf(loss.epsilon)
                    else nats(loss.epsilon)
                )
                + (
                    f" on the counts; infinite with probability {probability(dp.infinite_loss)}"
                    " (an output showing a combination one person's records alone make)"
                    if dp.infinite_loss
                    else ""
                ),
            ),
            Fact(
                "average privacy loss: KL divergence, the mutual-information DP figure",
                nats(loss.mean)
                + (
                    ""
                    if loss.kl_bound is None
                    else f" (at most ε·tanh(ε/2) = {real(loss.kl_bound)} at this ε)"
                ),
            ),
            Fact(
                f"chance the privacy loss exceeds ε = {real(a.epsilon)} "
                "(probabilistic DP), P[L > ε]",
                probability(min(1.0, loss.tail(a.epsilon) + dp.infinite_loss))
                + (" (the infinite loss included)" if dp.infinite_loss else ""),
            ),
        ),
        profile=charts.profile_chart(dp.profile, epsilon=a.epsilon, chart_id="dp-profile")
        if dp.profile
        else None,
    )


def _dp_accounting(dp: DPReport) -> tuple[Fact, ...]:
    a = dp.accounting
    at = f" at δ = {probability(a.delta)}" if a.delta else " (pure ε-DP)"
    facts = [Fact("total ε" + at, real(a.epsilon))]
    if a.cost.epsilon and a.rho is not None:
        facts.append(Fact("pure ε part (Laplace noise)", real(a.cost.epsilon)))
    if a.rho is not None:
        facts.append(Fact("ρ, zero-concentrated DP (zCDP) of the Gaussian noise", real(a.rho)))
    if a.cost.delta:
        facts.append(
            Fact(
                "δ spent on the threshold (a one-person combination released)",
                probability(a.cost.delta),
            )
        )
    if a.epsilon_exact_gaussian is not None:
        facts.append(
            Fact("ε at δ by the continuous Gaussian curve", real(a.epsilon_exact_gaussian))
        )
    if a.epsilon_pld is not None:
        facts.append(
            Fact("ε at δ by privacy-loss distributions (dp-accounting)", real(a.epsilon_pld))
        )
    r = dp.release
    facts.append(
        Fact(
            "ε to learn the value of a person who is in the data "
            f"({_CHANGE_STEPS[r.sensitivity.neighbouring]})"
            + (f" at δ = {probability(r.value_delta)}" if r.value_delta else ""),
            real(r.value_epsilon),
        )
    )
    facts.append(
        Fact(
            "Rényi DP: ε(α) at order α (the α-Rényi divergence of the outputs on neighbours)",
            ", ".join(f"α {alpha:g}: {real(e)}" for alpha, e in a.renyi),
        )
    )
    return tuple(facts)


#: What a neighbouring step does to one unit, in a sentence.
_CHANGE = {"add-remove": "added or removed", "replace": "replaced by another"}
#: The steps that change one present person's value, per relation of the stated ε.
_CHANGE_STEPS = {
    "add-remove": "a change of that person's value: two add-remove steps",
    "replace": "a change of that person's value: one replace step",
}


def _contrast_row(
    dp: DPReport, c: SensitiveContrast, a: AttackerContrast, slug: str
) -> ContrastRow:
    # The sentence evaluates the DP module's own bound at the most revealing prior.
    # Imported here: anonaudit.dp imports anonaudit.auditing, which imports this module.
    from anonaudit.dp.contrast import posterior_bound

    sa, eps = c.sensitive, real(c.epsilon)
    qi = join_names(dp.release.original.quasi_identifiers)
    if c.disclosed_classes:
        sentence = (
            f"Someone who knows a person's quasi-identifiers ({qi}) can be 100% sure of "
            f"their {sa} in {_plural(c.disclosed_classes, 'group')} "
            f"({_plural(c.disclosed_records, 'record')})."
        )
    else:
        sentence = (
            f"Someone who knows a person's quasi-identifiers ({qi}) can be at most "
            f"{_share(c.max_posterior)} sure of their {sa}."
        )
    sentence += (
        f" Someone who also knows every other record, the attacker differential privacy "
        f"is stated against, subtracts them from the group and is left with the person's "
        f"{sa}: after the syntactic release the median posterior on the true value is "
        f"{_share(a.informed.median)}, above 50% for {_share(a.informed.share_above_half)} "
        f"of records, whatever k, l or t. To learn the {sa} of a person who is in the data "
        f"({_CHANGE_STEPS[a.neighbouring]}) the DP release gives ε = {eps}"
        + (f" with δ = {probability(a.delta)}" if a.delta else "")
        + f": nobody's {sa} can be believed above {_share(c.dp_posterior_bound)}"
        + (
            f", except with probability {probability(dp.release.value_failure)} (the chance "
            "this release's privacy loss for that change exceeds ε, which δ does not bound)"
            if dp.release.value_failure
            else ""
        )
        + f". Simulated on this release, that attacker's posterior on the true value has a "
        f"median of {_share(a.dp_informed.median)} and a maximum of "
        f"{_share(a.dp_informed.max)}; {_share(a.dp_informed.share_above_bound)} of records "
        "are above the bound."
    )
    points = c.scatter
    if len(points.prior):
        prior, posterior = float(points.prior[0]), float(points.posterior[0])
        value = none_as_null(points.values[0])
        sentence += (
            f" In the most revealing group ({_plural(int(points.size[0]), 'record')}), "
            f"“{value}” goes from {_share(prior)} of the whole table to {_share(posterior)} "
            f"of the group: a leakage of {nats(c.max_pml)}, where an ε = {eps} release allows "
            f"at most {nats(c.epsilon)} and raises a {_share(prior)} prior to at most "
            f"{_share(float(posterior_bound(prior, c.epsilon)))}."
        )
    if c.classes_above_bound:
        sentence += (
            f" In {_plural(c.classes_above_bound, 'group')} "
            f"({_plural(c.records_above_bound, 'record')}) even the attacker who knows only "
            "the quasi-identifiers believes more than that."
        )
    sentence += (
        " For the attacker differential privacy is stated against, who knows every other "
        f"record, the exact table amounts to ε = ∞: it gives each present person's {sa}, "
        f"a leakage of up to {nats(a.informed_leakage)}, where the DP release allows at "
        f"most {nats(a.epsilon)}."
    )
    sentence += (
        " For the attacker who knows only the quasi-identifiers, the syntactic release "
        f"amounts to ε = {real(a.max_equivalent_epsilon)}"
    )
    if a.equal_gain is None:
        sentence += (
            f" ({_plural(a.infinite_classes, 'group')} give certainty, which no DP "
            "release allows): no DP release matches its attacker gain."
            if a.infinite_classes
            else ": it teaches the attacker nothing a prior did not."
        )
    else:
        g = a.equal_gain
        sentence += "; a DP release with the same mechanism allowing no more would " + (
            f"flip each record's value with a probability of {_share(g.noise_scale)}."
            if g.within is None
            else f"add noise of scale {real(g.noise_scale)}, each count within "
            f"±{g.within:,} with {g.confidence:.0%} probability."
        )
    d, e = a.syntactic_disclosure, a.dp_disclosure
    sentence += (
        f" Over every prior within a factor {real(a.prior_factor)} of the table's, the "
        f"syntactic release leaks up to {nats(a.max_pml_family)}. A leakage below "
        f"ε* = ln(1 / (1 − p_min)) = {real(d.epsilon_star)} discloses nothing about {sa}; "
        f"the syntactic release leaks {nats(d.leakage)} to the attacker who knows the "
        f"quasi-identifiers ({nats(a.informed_leakage)} to the one who knows every other "
        "record) and the DP release at most "
        f"{nats(e.leakage)}"
        + (
            f", so whether a person's {sa} is {_values(e.features)} may be disclosed even "
            "by the DP release."
            if e.features
            else ", below it."
        )
    )
    return ContrastRow(
        sensitive=sa,
        anchor=f"dp-{slug}",
        sentence=sentence,
        chart=charts.posterior_chart(
            dp.curve,
            points,
            sensitive=sa,
            classes=len(c.posterior),
            chart_id=f"dp-{slug}-posterior",
        ),
    )


def _equal_gain_cell(a: AttackerContrast) -> str:
    g = a.equal_gain
    if g is None:
        return "none: no DP release allows certainty" if a.infinite_classes else "none needed"
    if g.within is None:
        return f"{_share(g.noise_scale)} of values flipped"
    return f"{real(g.noise_scale)} (±{g.within:,})"


def _values(values: Sequence[str | None], shown: int = 5) -> str:
    """Values as a list in a sentence, the first ``shown`` of them."""
    named = [f"“{none_as_null(v)}”" for v in values[:shown]]
    more = f" or one of {len(values) - shown:,} other values" if len(values) > shown else ""
    return " or ".join(named) + more


def _dp_error(dp: DPReport) -> tuple[Fact, ...]:
    r, u = dp.release, dp.utility
    facts = [Fact("counts released", f"{u.cells:,}")]
    if u.expected_within is not None:
        facts.append(
            Fact(
                "noise the mechanism adds to one count",
                f"within ±{u.expected_within:,} with {u.confidence:.0%} probability; "
                f"{real(u.expected_mean_absolute_error)} on average",
            )
        )
    facts.append(
        Fact(
            "observed error",
            f"{real(u.mean_absolute_error)} on average (root mean square "
            f"{real(u.rmse)}), at most {u.max_absolute_error:,}",
        )
    )
    if u.expected_within is not None:
        facts.append(
            Fact(
                f"counts of this release within ±{u.expected_within:,} of the truth (after "
                "the threshold, rounding and clamping: a count kept back reads 0)",
                _share(u.share_within),
            )
        )
    facts += [
        Fact("bias (released minus true count, on average)", signed(u.bias)),
        Fact("groups in the data", f"{u.classes:,}"),
        Fact("groups of the data with a released count", f"{u.classes_released:,}"),
        Fact("groups hidden (records in the data, none released)", f"{u.classes_hidden:,}"),
        Fact(
            "groups fabricated (released, none in the data)",
            f"{u.classes_fabricated:,}"
            + (" (impossible without a public domain)" if r.domain == "observed" else ""),
        ),
    ]
    return tuple(facts)


def _reader_rows(data: Measures, release: Measures | None) -> tuple[TableRow, ...]:
    """Each measure of the data beside the value on the released table."""
    rows: list[tuple[str, Callable[[Measures], str]]] = [
        ("k (smallest group)", lambda m: f"{m.k:,}"),
        ("groups", lambda m: f"{m.classes:,}"),
    ]
    for sa in data.distinct_l:
        rows += _sensitive_measures(sa, data.distances.get(sa, "equal"))
    return tuple(
        TableRow(label, (show(data), "nothing released" if release is None else show(release)))
        for label, show in rows
    )


def _sensitive_measures(sa: str, distance: str) -> list[tuple[str, Callable[[Measures], str]]]:
    return [
        (f"distinct l of {sa}", lambda m: f"{m.distinct_l[sa]:,}"),
        (f"entropy l of {sa}", lambda m: real(m.entropy_l[sa])),
        (f"t of {sa} ({distance} ground distance)", lambda m: real(m.t[sa])),
    ]


def _contrast_table(
    contrasts: Sequence[tuple[SensitiveContrast, AttackerContrast]], failure: float
) -> tuple[TableRow, ...]:
    """One row per figure of the contrast, one cell per SA: the two attackers against the
    syntactic release, then against the DP release, then the leakages."""
    rows: list[tuple[str, Callable[[SensitiveContrast, AttackerContrast], str]]] = [
        ("ε to learn a present person's value", lambda c, a: real(a.epsilon)),
        ("neighbouring relation of the stated ε", lambda c, a: a.neighbouring),
        (
            "knows the quasi-identifiers, syntactic release: median / largest posterior",
            lambda c, a: f"{_share(a.uninformed.median)} / {_share(a.uninformed.max)}",
        ),
        (
            "groups where it is 100%",
            lambda c, a: f"{c.disclosed_classes:,} ({_plural(c.disclosed_records, 'record')})",
        ),
        (
            "groups above the ε-DP bound",
            lambda c, a: f"{c.classes_above_bound:,} ({_plural(c.records_above_bound, 'record')})",
        ),
        (
            "knows every other record, syntactic release: median posterior, records above 50%",
            lambda c, a: f"{_share(a.informed.median)}, {_share(a.informed.share_above_half)}",
        ),
        ("largest posterior an ε-DP release allows", lambda c, a: _share(c.dp_posterior_bound)),
        *(
            [
                (
                    "chance an output breaks that bound (its privacy loss exceeds ε)",
                    lambda c, a: probability(failure),
                )
            ]
            if failure
            else []
        ),
        (
            "knows every other record, DP release: median / 90th / 99th percentile / largest",
            lambda c, a: " / ".join(
                _share(v)
                for v in (
                    a.dp_informed.median,
                    a.dp_informed.p90,
                    a.dp_informed.p99,
                    a.dp_informed.max,
                )
            ),
        ),
        (
            "DP release: records above 50%, records above the bound",
            lambda c, a: (
                f"{_share(a.dp_informed.share_above_half)}, "
                f"{_share(a.dp_informed.share_above_bound)}"
            ),
        ),
        (
            "syntactic release as an ε, attacker who knows the QIs (largest over groups)",
            lambda c, a: real(a.max_equivalent_epsilon),
        ),
        ("syntactic release as an ε, attacker who knows every other record", lambda c, a: "∞"),
        (
            "its leakage to that attacker, ln(1 / p_min), in nats",
            lambda c, a: real(a.informed_leakage),
        ),
        ("DP noise at equal attacker gain (95% error bound)", lambda c, a: _equal_gain_cell(a)),
        ("largest leakage, ln(posterior / prior), in nats", lambda c, a: real(c.max_pml)),
        (
            "largest leakage over priors within a factor, in nats",
            lambda c, a: f"{real(a.max_pml_family)} (factor {real(a.prior_factor)})",
        ),
        (
            "ε* = ln(1 / (1 − p_min)): leakage below it discloses nothing",
            lambda c, a: real(a.syntactic_disclosure.epsilon_star),
        ),
    ]
    return tuple(TableRow(label, tuple(show(c, a) for c, a in contrasts)) for label, show in rows)


# -- failing classes ------------------------------------------------------------------


def contents_notice(
    rows: int, capped: int, max_classes: int | None, *, redacted: bool, elsewhere: int = 0
) -> str:
    """What a report holds from the data, in a sentence (the notice atop both reports):
    the rows of the listings, and ``elsewhere`` other places that show a class's or a
    value's data (chart legends, hierarchy examples).

    >>> contents_notice(120, 1, 100, redacted=False)  # doctest: +NORMALIZE_WHITESPACE
    'This report contains 120 rows of quasi-identifier values from the data
    (1 listing capped at 100 rows); redacted: no.'
    >>> contents_notice(3, 0, 100, redacted=False, elsewhere=4)  # doctest: +NORMALIZE_WHITESPACE
    'This report contains 3 rows of quasi-identifier values from the data, and shows data
    values in 4 other places (chart legends, hierarchy examples) (0 listings capped at 100
    rows); redacted: no.'
    >>> contents_notice(1, 0, None, redacted=True)  # doctest: +NORMALIZE_WHITESPACE
    'This report contains 1 row of classes whose quasi-identifier values are replaced by
    [redacted] (no listing capped); redacted: yes.'
    """
    cap = (
        "no listing capped"
        if max_classes is None
        else f"{_plural(capped, 'listing')} capped at {max_classes:,} rows"
    )
    noun = "row" if rows == 1 else "rows"
    what = (
        f"{noun} of classes whose quasi-identifier values are replaced by [redacted]"
        if redacted
        else f"{noun} of quasi-identifier values from the data"
    )
    if elsewhere:
        what += (
            f", and shows data values in {_plural(elsewhere, 'other place')} "
            "(chart legends, hierarchy examples)"
        )
    return f"This report contains {rows:,} {what} ({cap}); redacted: {'yes' if redacted else 'no'}."


# -- formatting -----------------------------------------------------------------------


#: Formats of inputs held in memory, which have no file to hash.
_FRAMES = frozenset({"pandas", "arrow", "spark", "counts"})
#: A dataset's files whose digests are written out, at most.
_LISTED_DIGESTS = 50


def source_digest(source: SourceStats) -> str:
    """What a report says of an input's SHA-256: only what the read recorded.

    The digest was taken while the audit read the file (:attr:`SourceStats.sha256`);
    nothing is read here. A dataset's files each have their own: one file's digest is
    given as the input's, several are listed by name.
    """
    if source.sha256 is not None:
        return source.sha256
    if source.format in _FRAMES:
        return "n/a (not a file)"
    if source.files:
        if len(source.files) == 1 and source.files[0].sha256 is not None:
            return source.files[0].sha256
        if all(file.sha256 is None for file in source.files):
            return _not_hashed(source)
        listed = [f"{file.name}: {source_digest(file)}" for file in source.files[:_LISTED_DIGESTS]]
        more = len(source.files) - _LISTED_DIGESTS
        if more > 0:
            listed.append(f"and {_plural(more, 'more file')} (not listed)")
        return "per file: " + "; ".join(listed)
    return _not_hashed(source)


def _not_hashed(source: SourceStats) -> str:
    """Why an input (or a dataset's files) has no digest."""
    if is_url(source.name):
        return "not hashed (a URL: files in object storage are not hashed)"
    return "not hashed (the reader did not record one)"


def audit_time(report: Reported) -> str:
    """When the audit ran, as printed."""
    return report.audited_at.strftime("%Y-%m-%d %H:%M:%S %Z").strip()
