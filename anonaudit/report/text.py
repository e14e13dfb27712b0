"""The short human summary the command line prints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anonaudit.engines.local import FileStats
from anonaudit.measures import in_order
from anonaudit.report.criteria import criteria
from anonaudit.report.kit import Options, _fmt, _mark
from anonaudit.report.sections import analysis_section, section
from anonaudit.report.view_advice import answer, suppression_sentence
from anonaudit.report.view_releases import recording

if TYPE_CHECKING:
    from anonaudit.advice.lattice import Advice
    from anonaudit.dp.companion import DPReport
    from anonaudit.dp.contrast import AttackerContrast
    from anonaudit.dp.selfaudit import SelfAudit
    from anonaudit.report.reported import Reported

__all__ = ["advice_summary", "dp_summary", "summary"]


def summary(report: Reported) -> str:
    """A few lines per measure, with pass/fail marks where the policy sets a threshold."""
    lines = [
        f"anonaudit: {report.rows:,} records, {len(report.table.classes):,} equivalence "
        "classes over "
        f"{', '.join(report.quasi_identifiers)}",
    ]
    lines.extend(identifier_lines(report))
    lead = answer(report, Options(redact=True, max_rows=0))
    if lead is not None:  # an advice search leads with its answer
        lines.append(f"answer: {lead}")
    if report.suppressed_records:
        lines.append(
            f"  {report.suppressed_records:,} suppressed records (every QI *) are in no class"
        )
    if report.dropped_records:
        lines.append(f"  {report.dropped_records:,} records with a null QI were left out")
    lines += [
        f"  {part.name}: no column {', '.join(part.null_columns)}; read as null "
        "(--missing-columns null)"
        for source in report.sources
        for part in source.files
        if isinstance(part, FileStats) and part.null_columns
    ]
    shown: str | None = None
    for measure, sa in in_order(report.sensitive):
        if sa != shown:
            lines.extend(_nulls_of(report, shown))
            shown = sa
            if sa is not None:
                lines.append(f"{sa}:")
        lines += section(measure).summary(report.result(measure, sa))
    lines.extend(_nulls_of(report, shown))
    lines += _analysed(report, extending=True)
    lines.extend(_history(report))
    if report.null_policy == "wildcard":
        lines.append(
            "  nulls as wildcards: class sizes count every record a null could match "
            "(k-anonymity and risk; l, t and disclosure keep nulls as a value)"
        )
    lines += _analysed(report, extending=False)
    lines.extend(_advice(report))
    if report.advice is not None:
        lines.append(advice_summary(report.advice))
    for criterion in criteria(report):
        judged = (
            "not judged" if criterion.passed is None else "pass" if criterion.passed else "FAIL"
        )
        backed = ", ".join(criterion.measures) or "no measure"
        lines.append(f"{criterion.name} (WP216): {judged}; from {backed}")
        lines += [f"  not assessed: {gap}" for gap in criterion.not_checked]
    verdict = report.passed
    if verdict is None:
        lines.append("no threshold set: nothing was judged (measures only)")
    else:
        failed = [v.name for v in report.verdicts() if not v.passed]
        lines.append("PASS: every threshold is met" if verdict else "FAIL: " + "; ".join(failed))
    if report.dp is not None:
        lines.append(dp_summary(report.dp))
    return "\n".join(lines)


def _nulls_of(report: Reported, sensitive: str | None) -> list[str]:
    """The line closing an SA's measures: its null values, if any."""
    if sensitive is None:
        return []
    nulls = report.table.sensitive_counts(sensitive).nulls
    return [f"  records with a null {sensitive}: {nulls:,}"] if nulls else []


def identifier_lines(report: Reported) -> list[str]:
    """A line per column that likely identifies a person directly: a failure for those
    declared neither QI nor sensitive and not allowed, a warning for the others."""
    failing = {i.column for i in report.undeclared_identifiers}
    lines = []
    for i in report.identifiers:
        reasons = "; ".join(i.reasons)
        if i.column in failing:
            lines.append(
                f"FAIL direct identifier: {i.column} may identify a person directly "
                f"({reasons}); drop the column before release, declare it with --qi or "
                f"--sensitive, or release it knowingly with --allow-identifier {i.column}"
            )
        else:
            role = "allowed" if i.column in report.allowed_identifiers else i.declared_role
            lines.append(f"warning: {i.column} ({role}) may identify a person directly: {reasons}")
    return lines


def _advice(report: Reported) -> list[str]:
    """The generalization, information loss and suppression advice lines."""
    g, loss = report.generalization, report.utility
    lines = []
    if g is not None and g.height():
        levels = ", ".join(f"{qi} level {n}" for qi, n in g.levels.items() if n)
        lines.append(f"generalized: {levels} (height {g.height()})")
    lines.append(
        f"information loss: discernibility DM {_fmt(loss.discernibility)}, "
        + (
            f"records per class / k (C_AVG, k = {loss.k}) {_fmt(loss.average_class_size)}"
            if loss.k is not None
            else f"records per class (C_AVG) {_fmt(loss.average_class_size)}"
        )
        + f", precision {_fmt(loss.precision)}"
    )
    sentence = suppression_sentence(report)
    if sentence is not None:
        lines.append(f"suppression: {sentence}")
    return lines


def _analysed(report: Reported, *, extending: bool) -> list[str]:
    """The lines of the optional analyses that ran: of those extending a measure's entry
    (which follow the measures), or of the others."""
    return [
        line
        for analysis, found in report.analysed()
        if (analysis_section(analysis).extends is not None) == extending
        for line in analysis_section(analysis).summary(found, report)
    ]


def dp_summary(report: DPReport) -> str:
    """The DP companion in a few lines: the publishable facts, then the internal figures.

    The publishable part is what the sidecar of :mod:`anonaudit.report.dp` states; the
    internal part is computed from the exact data and is labelled not for publication.
    """
    from anonaudit.report.dp import postprocessing  # anonaudit.dp imports this package

    r, a, u = report.release, report.accounting, report.utility
    if r.mechanism == "randomized-response":
        cells = f"{r.cells:,} records randomized (QI values and class sizes released as they are)"
    elif r.domain == "public":
        cells = f"{r.cells:,} cells of the public domain"
    else:
        assert r.threshold is not None and r.keep_below is not None  # observed
        cells = (
            f"the observed combinations whose noisy count reaches threshold {r.threshold} "
            f"(or is {r.threshold - 1}: kept then with probability {r.keep_below:.4g})"
        )
    if r.domain == "local":
        cost = (
            f"epsilon {_fmt(a.epsilon)} for each record's {r.original.sensitive[0]} only, in "
            "the local model (QI combinations and class sizes are released exactly, "
            "unprotected)"
        )
    else:
        cost = f"epsilon {_fmt(a.epsilon)}" + (f" at delta {a.delta:g}" if a.delta else " (pure)")
    if a.rho is not None:
        cost += f"; zCDP rho {_fmt(a.rho)}"
    if a.epsilon_exact_gaussian is not None:
        cost += f"; continuous Gaussian curve epsilon {_fmt(a.epsilon_exact_gaussian)}"
    if a.epsilon_pld is not None:
        cost += f"; PLD epsilon {_fmt(a.epsilon_pld)}"
    post = postprocessing(report)
    lines = [
        f"dp: {r.mechanism} release",
        "  Publishable:",
        f"    {r.sensitivity.neighbouring} neighbours, at most "
        f"{r.sensitivity.max_contributions} record(s) per unit"
        + (f" of {report.privacy_unit!r}" if report.privacy_unit else "")
        + f", noise scale {_fmt(r.noise_scale)}, over {cells}",
        f"    cost: {cost}",
    ]
    if u.expected_within is not None:
        lines.append(
            f"    error: the noise the mechanism adds to each count is within "
            f"+-{u.expected_within} with {u.confidence:.0%} probability"
        )
    lines += [
        f"    post-processing: {post['name']} ({post['description']})",
        "  Internal (do not publish):",
    ]
    if r.domain == "observed":
        lines.append(f"    {r.cells:,} observed combinations noised")
    if u.expected_within is not None:
        lines.append(
            f"    error measured on this release: {u.share_within:.1%} of the {u.cells:,} "
            f"counts within +-{u.expected_within} of the truth after the threshold, rounding "
            f"and clamping (a count kept back reads 0); mean |error| "
            f"{_fmt(u.mean_absolute_error)}, bias {_fmt(u.bias)}"
        )
    lines.append(
        f"    classes: {u.classes:,} in the data, {u.classes_released:,} of them with a "
        f"released count, {u.classes_hidden:,} with none, {u.classes_fabricated:,} "
        "fabricated by noise"
    )
    before, after = report.measures.original, report.measures.released
    if after is not None:
        lines.append(f"    a reader of the release computes k = {after.k} (data: {before.k})")
        for sa, value in after.distinct_l.items():
            lines.append(
                f"    {sa}: distinct l {value} (data: {before.distinct_l[sa]}), "
                f"t {_fmt(after.t[sa])} (data: {_fmt(before.t[sa])})"
            )
    for sa, c in report.contrast.items():
        att = report.attackers[sa]
        eq = att.max_equivalent_epsilon
        lines += [
            f"    {sa}: to learn the value of a person who is in the data ({_change(att)}) "
            f"the DP release gives epsilon {_fmt(att.epsilon)}"
            + (f" at delta {att.delta:g}" if att.delta else "")
            + f": no posterior above {_fmt(c.dp_posterior_bound)}"
            + (
                f" except with probability {report.release.value_failure:.3g}"
                if report.release.value_failure
                else ""
            ),
            f"      attacker who knows the QIs: largest posterior {_fmt(c.max_posterior)} "
            f"after the syntactic release ({c.disclosed_classes:,} classes disclose a value); "
            f"leakage {_fmt(c.max_pml)} nats",
            f"      attacker who knows every other record: after the syntactic release "
            f"median posterior {_fmt(att.informed.median)}, "
            f"{att.informed.share_above_half:.0%} of records above 1/2; after the DP release "
            f"median {_fmt(att.dp_informed.median)}, max {_fmt(att.dp_informed.max)}, "
            f"{att.dp_informed.share_above_bound:.1%} above the bound",
            f"      syntactic release as epsilon, to the attacker who knows the QIs: {_fmt(eq)}"
            + (
                f" ({att.infinite_classes:,} classes certain: no DP release matches)"
                if att.equal_gain is None
                else f" (DP noise at equal gain {_fmt(att.equal_gain.noise_scale)})"
            )
            + f"; PML over priors within x{_fmt(att.prior_factor)} {_fmt(att.max_pml_family)} "
            f"nats, disclosure threshold epsilon* {_fmt(att.syntactic_disclosure.epsilon_star)}",
            f"      syntactic release as epsilon, to the attacker who knows every other record "
            f"(whom DP is stated against): inf (the exact table gives each present person's "
            f"value); leakage up to {_fmt(att.informed_leakage)} nats, where the DP release "
            f"allows at most {_fmt(att.epsilon)}",
        ]
    if r.outside_domain or report.bounded_records:
        lines.append(
            f"    not released: {r.outside_domain:,} records outside the public domain, "
            f"{report.bounded_records:,} beyond the contribution bound"
        )
    if report.self_audit is not None:
        lines += _self_audit(report.self_audit)
    return "\n".join(lines)


def _self_audit(audit: SelfAudit) -> list[str]:
    """The self-audit's lower bounds beside the claim, and the events that gave them."""
    epsilon, delta = audit.epsilon_lower, audit.delta_lower
    lines = [
        f"  Self-audit (the release code run on worst-case neighbours, {audit.samples:,} "
        "releases of each; a lower bound, not a proof):",
        f"    epsilon >= {_fmt(epsilon.value)} (claimed {_fmt(audit.epsilon)}), delta >= "
        f"{delta.value:.3g} at epsilon {_fmt(audit.epsilon)} (claimed {audit.delta:g}), each "
        f"with {audit.confidence:.0%} confidence",
    ]
    for name, bound in (("epsilon", epsilon), ("delta", delta)):
        if bound.value:
            lines.append(
                f"    {name} from: {bound.event} ({bound.hits:,} against "
                f"{bound.hits_other:,} of {bound.trials:,})"
            )
    lines.append(
        "    REFUTED: the release is less private than it states"
        if audit.refuted
        else "    not refuted"
    )
    return lines


def _change(a: AttackerContrast) -> str:
    """The neighbouring step that changes one present person's value, in words."""
    if a.neighbouring == "replace":
        return "a change of that person's value, one replace step"
    return "a change of that person's value, two add-remove steps"


def advice_summary(advice: Advice) -> str:
    """How the lattice was searched, then the listed transformations as a table."""
    heights = ", ".join(f"{qi} {h}" for qi, h in advice.hierarchies.items())
    lines = [
        f"anonaudit advise: {advice.nodes:,} transformations (hierarchy heights: {heights}), "
        f"suppression limit {advice.suppression_limit:.4g}",
        f"searched in {advice.seconds:.2f} s: {advice.evaluated:,} evaluated, "
        f"{advice.pruned:,} inferred by monotonicity"
        + ("" if advice.monotone else " (none: the policy is not monotone here)")
        + (f", {advice.measured:,} measured for the front" if advice.measured else "")
        + f"; {advice.passing:,} pass",
    ]
    if not advice.passed:
        if advice.blocked_by:
            lines.append(
                "FAIL: no transformation passes, and none can: these thresholds fail even "
                "with every record in one class; relax them"
            )
            lines.extend(f"  {b.measure}: {b.reason}" for b in advice.blocked_by)
        else:
            lines.append(
                "FAIL: no transformation passes, even the most general, though every "
                "threshold holds with every record in one class; raise the suppression "
                "limit, add hierarchies (reaching *) for more QIs or relax the policy"
            )
        return "\n".join(lines)
    lines.append(
        f"Pareto front on DM, records per class / k, height and suppressed records: "
        f"{advice.front:,} transformation(s), {len(advice.transformations)} listed"
    )
    header = ("#", "DM", "C_AVG", "height", "precision", "suppressed", "k", "levels")
    rows = []
    for number, t in enumerate(advice.transformations, start=1):
        loss = t.information_loss
        levels = " ".join(f"{qi}={n}" for qi, n in t.levels.items() if n) or "(none)"
        rows.append(
            (
                str(number),
                _fmt(loss.discernibility),
                _fmt(loss.average_class_size),
                str(t.height),
                _fmt(loss.precision),
                f"{t.suppressed:,}",
                str(t.report.k_anonymity.k),
                levels,
            )
        )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        cells = [cell.rjust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  " + "  ".join([*cells, row[-1]]))
    return "\n".join(lines)


def _history(report: Reported) -> list[str]:
    """The release against the earlier releases of its dataset in the ledger."""
    history = report.history
    if history is None:
        return []
    lines = [
        f"releases of {history.dataset!r} (ledger): {len(history.earlier)} earlier exact "
        f"release(s); this one {recording(history, report)}"
    ]
    for sa, result in history.composition.items():
        lines.append(
            f"  composition of {sa} with {history.composed_names}: {result.records:,} records "
            f"in several releases, {result.disclosed_records:,} disclosed (one consistent value), "
            f"{result.newly_disclosed_records:,} of them by the composition alone; largest "
            f"posterior {_fmt(result.max_posterior)}{_mark(result.newly_disclosed_records == 0)}"
        )
    for sa, difference in history.differencing.items():
        lines.append(
            f"  differencing of {sa} against {history.differenced_name}: "
            f"{difference.classes_changed:,} of {difference.classes:,} classes changed, "
            f"{difference.disclosing_classes:,} in one value only, disclosing it for "
            f"{difference.disclosed_records:,} records"
            f"{_mark(difference.disclosed_records == 0)}"
        )
    return lines
