"""What each measure means, protects and misses: the one text the reports and the docs share.

Every measure anonaudit computes has one :class:`Measure` here: its name, the anchor the
HTML report links to, a summary in plain words, the definition with its formula, the
references it rests on, what it protects and what it does not. The HTML report's section
"What the measures mean" (:func:`report_about`, rendered by ``about.html.j2``) and the
documentation's page per measure (``docs/hooks.py``, at build time) are both rendered
from these entries, so a change of wording is made once.

The prose fields (``summary``, ``misses``) use two marks, rendered by :func:`to_html`
and :func:`to_markdown`:

* ``*words*``: emphasis (a named attack, a variant of the measure);
* ``[@key]``: a citation of the :class:`Reference` with that ``key``, numbered in the
  HTML report (``[3]``), by author and year in the docs.

The other fields are plain text.

>>> K_ANONYMITY.anchor
'about-k'
>>> str(to_html("the *homogeneity attack* [@sweeney]", {"sweeney": 1}))
'the <em>homogeneity attack</em> <a href="#ref-sweeney" class="cite">[1]</a>'
>>> to_markdown("the *homogeneity attack* [@sweeney]")
'the *homogeneity attack* ([Sweeney 2002](#references))'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from anonaudit.distances import registered

__all__ = [
    "MEASURES",
    "REFERENCES",
    "About",
    "AboutEntry",
    "Measure",
    "Reference",
    "cited",
    "escape_markdown",
    "plain",
    "report_about",
    "to_html",
    "to_markdown",
]

_EMPHASIS = re.compile(r"\*([^*]+)\*")
_CITATION = re.compile(r"\[@([a-z0-9]+)\]")


@dataclass(frozen=True)
class Reference:
    """A publication a measure rests on.

    Attributes
    ----------
    key : str
        Identifier used in ``[@key]`` citations and in the anchor ``ref-<key>``.
    short : str
        Authors and year, as the docs cite it: ``"Sweeney 2002"``.
    lead : str
        Authors, year and title, up to the venue.
    venue : str
        The journal, proceedings or book (set in italics).
    tail : str
        What follows the venue: volume, issue, pages, final full stop.
    """

    key: str
    short: str
    lead: str
    venue: str
    tail: str

    @property
    def anchor(self) -> str:
        """The HTML id of the reference: ``ref-<key>``."""
        return f"ref-{self.key}"

    @property
    def text(self) -> str:
        """The full reference as plain text."""
        return f"{self.lead} {self.venue}{self.tail}"

    @property
    def html(self) -> Markup:
        """The full reference as HTML, the venue in ``<cite>``."""
        return Markup("{} <cite>{}</cite>{}").format(self.lead, self.venue, self.tail)

    @property
    def markdown(self) -> str:
        """The full reference as Markdown, the venue in italics."""
        return f"{escape_markdown(self.lead)} *{escape_markdown(self.venue)}*" + (
            escape_markdown(self.tail)
        )


@dataclass(frozen=True)
class Measure:
    """One measure, explained.

    Attributes
    ----------
    name : str
        The measure's name as a heading.
    anchor : str
        Its id in the HTML report's section "What the measures mean" (``about-k``);
        the report's measure sections link to it.
    slug : str
        Its page in the docs: ``docs/measures/<slug>.md``, generated at build time.
    summary : str
        What it is, in plain words, with citations (marked up; see the module).
    definition : str
        The definition with its formula, plain text.
    citations : tuple of Reference
        The publications that define it, in the order the report numbers them.
    protects : str
        What it protects against, plain text.
    misses : str
        What it does not protect against (marked up), continuing "Does not protect
        against:".
    short : str
        Its title in the docs' navigation, when shorter than ``name``.
    """

    name: str
    anchor: str
    slug: str
    summary: str
    definition: str
    citations: tuple[Reference, ...]
    protects: str
    misses: str
    short: str = ""

    @property
    def title(self) -> str:
        """Its title in the docs' navigation: ``short``, else ``name``."""
        return self.short or self.name

    @property
    def references(self) -> tuple[Reference, ...]:
        """Its citations followed by every other reference its text cites."""
        return _unique([*self.citations, *cited(self.summary), *cited(self.misses)])


@dataclass(frozen=True)
class AboutEntry:
    """One measure as the HTML report prints it: text ready for the template."""

    anchor: str
    name: str
    summary: Markup
    misses: Markup


@dataclass(frozen=True)
class About:
    """The HTML report's "What the measures mean" and its numbered references."""

    measures: tuple[AboutEntry, ...]
    references: tuple[Reference, ...]


def _ref(key: str, short: str, lead: str, venue: str, tail: str) -> Reference:
    return Reference(key=key, short=short, lead=lead, venue=venue, tail=tail)


SWEENEY = _ref(
    "sweeney",
    "Sweeney 2002",
    "Sweeney, L. (2002). k-anonymity: a model for protecting privacy.",
    "International Journal of Uncertainty, Fuzziness and Knowledge-Based Systems",
    ", 10(5), 557–570.",
)
MACHANAVAJJHALA = _ref(
    "machanavajjhala",
    "Machanavajjhala et al. 2007",
    "Machanavajjhala, A., Kifer, D., Gehrke, J., Venkitasubramaniam, M. (2007). "
    "ℓ-diversity: privacy beyond k-anonymity.",
    "ACM Transactions on Knowledge Discovery from Data",
    ", 1(1), article 3.",
)
LI = _ref(
    "li",
    "Li, Li & Venkatasubramanian 2007",
    "Li, N., Li, T., Venkatasubramanian, S. (2007). t-closeness: privacy beyond "
    "k-anonymity and ℓ-diversity.",
    "Proceedings of the 23rd IEEE International Conference on Data Engineering (ICDE)",
    ", 106–115.",
)
WONG = _ref(
    "wong",
    "Wong et al. 2006",
    "Wong, R. C.-W., Li, J., Fu, A. W.-C., Wang, K. (2006). (α, k)-anonymity: an enhanced "
    "k-anonymity model for privacy preserving data publishing.",
    "Proceedings of the 12th ACM SIGKDD International Conference on Knowledge Discovery "
    "and Data Mining",
    ", 754–759.",
)
CAO = _ref(
    "cao",
    "Cao & Karras 2012",
    "Cao, J., Karras, P. (2012). Publishing microdata with a robust privacy guarantee.",
    "Proceedings of the VLDB Endowment",
    ", 5(11), 1388–1399.",
)
BRICKELL = _ref(
    "brickell",
    "Brickell & Shmatikov 2008",
    "Brickell, J., Shmatikov, V. (2008). The cost of privacy: destruction of data-mining "
    "utility in anonymized data publishing.",
    "Proceedings of the 14th ACM SIGKDD International Conference on Knowledge Discovery "
    "and Data Mining",
    ", 70–78.",
)
EL_EMAM = _ref(
    "elemam",
    "El Emam & Dankar 2008",
    "El Emam, K., Dankar, F. K. (2008). Protecting privacy using k-anonymity.",
    "Journal of the American Medical Informatics Association",
    ", 15(5), 627–637.",
)
EL_EMAM_2013 = _ref(
    "elemam2013",
    "El Emam 2013",
    "El Emam, K. (2013).",
    "Guide to the De-Identification of Personal Health Information",
    ". CRC Press.",
)
PITMAN = _ref(
    "pitman",
    "Pitman 1996",
    "Pitman, J. (1996). Some developments of the Blackwell-MacQueen urn scheme. In "
    "Ferguson, T. S., Shapley, L. S., MacQueen, J. B. (eds.),",
    "Statistics, Probability and Game Theory: Papers in Honor of David Blackwell",
    ", IMS Lecture Notes–Monograph Series 30, 245–267.",
)
HOSHINO = _ref(
    "hoshino",
    "Hoshino 2001",
    "Hoshino, N. (2001). Applying Pitman’s sampling formula to microdata disclosure risk "
    "assessment.",
    "Journal of Official Statistics",
    ", 17(4), 499–520.",
)
ZAYATZ = _ref(
    "zayatz",
    "Zayatz 1991",
    "Zayatz, L. V. (1991). Estimation of the percent of unique population elements on a "
    "microdata file using the sample.",
    "US Bureau of the Census, Statistical Research Division Report Series",
    ", SRD Research Report 91/08.",
)
CHEN = _ref(
    "chen",
    "Chen & McNulty 1998",
    "Chen, G., McNulty, S. (1998). Estimation of sampling disclosure risk.",
    "Proceedings of the Section on Survey Research Methods, American Statistical Association",
    ".",
)
HAAS = _ref(
    "haas",
    "Haas et al. 1995",
    "Haas, P. J., Naughton, J. F., Seshadri, S., Stokes, L. (1995). Sampling-based "
    "estimation of the number of distinct values of an attribute.",
    "Proceedings of the 21st International Conference on Very Large Data Bases (VLDB)",
    ", 311–322.",
)
DANKAR = _ref(
    "dankar",
    "Dankar et al. 2012",
    "Dankar, F. K., El Emam, K., Neisa, A., Roffey, T. (2012). Estimating the "
    "re-identification risk of clinical data sets.",
    "BMC Medical Informatics and Decision Making",
    ", 12, 66.",
)
BENEDETTI = _ref(
    "benedetti",
    "Benedetti & Franconi 1998",
    "Benedetti, R., Franconi, L. (1998). Statistical and technological solutions for "
    "controlled data dissemination.",
    "Pre-proceedings of New Techniques and Technologies for Statistics (NTTS)",
    ".",
)
FRANCONI = _ref(
    "franconi",
    "Franconi & Polettini 2004",
    "Franconi, L., Polettini, S. (2004). Individual risk estimation in μ-Argus: a review.",
    "Privacy in Statistical Databases",
    ", Lecture Notes in Computer Science 3050, 262–272.",
)
TEMPL = _ref(
    "templ",
    "Templ, Kowarik & Meindl 2015",
    "Templ, M., Kowarik, A., Meindl, B. (2015). Statistical disclosure control for "
    "micro-data using the R package sdcMicro.",
    "Journal of Statistical Software",
    ", 67(4), 1–36.",
)
ELLIOT = _ref(
    "elliot",
    "Elliot, Manning & Ford 2002",
    "Elliot, M. J., Manning, A. M., Ford, R. W. (2002). A computational algorithm for "
    "handling the special uniques problem.",
    "International Journal of Uncertainty, Fuzziness and Knowledge-Based Systems",
    ", 10(5), 493–509.",
)
MANNING = _ref(
    "manning",
    "Manning, Haglin & Keane 2008",
    "Manning, A. M., Haglin, D. J., Keane, J. A. (2008). A recursive search algorithm for "
    "statistical disclosure assessment.",
    "Data Mining and Knowledge Discovery",
    ", 16(2), 165–196.",
)
SKINNER = _ref(
    "skinner",
    "Skinner & Elliot 2002",
    "Skinner, C. J., Elliot, M. J. (2002). A measure of disclosure risk for microdata.",
    "Journal of the Royal Statistical Society: Series B",
    ", 64(4), 855–867.",
)
MOTWANI = _ref(
    "motwani",
    "Motwani & Xu 2007",
    "Motwani, R., Xu, Y. (2007). Efficient algorithms for masking and finding quasi-identifiers.",
    "Proceedings of the Conference on Very Large Data Bases (VLDB), Secure Data "
    "Management workshop",
    ".",
)
DWORK = _ref(
    "dwork",
    "Dwork et al. 2006",
    "Dwork, C., McSherry, F., Nissim, K., Smith, A. (2006). Calibrating noise to "
    "sensitivity in private data analysis.",
    "Theory of Cryptography Conference (TCC)",
    ", Lecture Notes in Computer Science 3876, 265–284.",
)
DWORK_ROTH = _ref(
    "dworkroth",
    "Dwork & Roth 2014",
    "Dwork, C., Roth, A. (2014). The algorithmic foundations of differential privacy.",
    "Foundations and Trends in Theoretical Computer Science",
    ", 9(3–4), 211–407.",
)

NERGIZ = _ref(
    "nergiz",
    "Nergiz, Atzori & Clifton 2007",
    "Nergiz, M. E., Atzori, M., Clifton, C. (2007). Hiding the presence of individuals "
    "from shared databases.",
    "Proceedings of the 2007 ACM SIGMOD International Conference on Management of Data",
    ", 665–676.",
)
GANTA = _ref(
    "ganta",
    "Ganta, Kasiviswanathan & Smith 2008",
    "Ganta, S. R., Kasiviswanathan, S. P., Smith, A. (2008). Composition attacks and "
    "auxiliary information in data privacy.",
    "Proceedings of the 14th ACM SIGKDD International Conference on Knowledge Discovery "
    "and Data Mining",
    ", 265–273.",
)
XIAO_TAO = _ref(
    "xiaotao",
    "Xiao & Tao 2007",
    "Xiao, X., Tao, Y. (2007). m-Invariance: towards privacy preserving re-publication of "
    "dynamic datasets.",
    "Proceedings of the 2007 ACM SIGMOD International Conference on Management of Data",
    ", 689–700.",
)
BYUN = _ref(
    "byun",
    "Byun et al. 2006",
    "Byun, J.-W., Sohn, Y., Bertino, E., Li, N. (2006). Secure anonymization for "
    "incremental datasets.",
    "Secure Data Management (VLDB Workshop SDM)",
    ", Lecture Notes in Computer Science 4165, 48–63.",
)

#: Every reference, by key.
REFERENCES: Mapping[str, Reference] = {
    r.key: r
    for r in (
        SWEENEY,
        MACHANAVAJJHALA,
        LI,
        WONG,
        CAO,
        BRICKELL,
        EL_EMAM,
        EL_EMAM_2013,
        PITMAN,
        HOSHINO,
        ZAYATZ,
        CHEN,
        HAAS,
        DANKAR,
        BENEDETTI,
        FRANCONI,
        TEMPL,
        ELLIOT,
        MANNING,
        SKINNER,
        MOTWANI,
        DWORK,
        DWORK_ROTH,
        NERGIZ,
        GANTA,
        XIAO_TAO,
        BYUN,
    )
}

K_ANONYMITY = Measure(
    name="k-anonymity",
    anchor="about-k",
    slug="k-anonymity",
    summary=(
        "Every class holds at least k records, so a person known by their "
        "quasi-identifiers is hidden among at least k records [@sweeney]. The table’s k "
        "is its smallest class."
    ),
    definition=(
        "Records that share all their quasi-identifier values form an equivalence class. "
        "A table is k-anonymous when every class has at least k records: "
        "k = min over classes E of |E|."
    ),
    citations=(SWEENEY,),
    protects=(
        "Identity disclosure by linkage: an attacker who knows a person’s "
        "quasi-identifiers (from a voter list, say) and matches them against the table "
        "finds at least k candidate records, never one."
    ),
    misses=(
        "the *homogeneity attack*, when everyone in a class has the same sensitive value "
        "and learning the class reveals it; the *background-knowledge attack*, when an "
        "attacker rules out values they know not to apply to the person "
        "[@machanavajjhala]. k-anonymity looks only at the quasi-identifiers, never at "
        "the sensitive values."
    ),
)

L_DIVERSITY = Measure(
    name="l-diversity",
    anchor="about-l",
    slug="l-diversity",
    summary=(
        "Every class holds at least l “well-represented” sensitive values "
        "[@machanavajjhala]. *Distinct* l-diversity counts different values; *entropy* "
        "l-diversity asks that the entropy of each class be at least ln l (its entropy l "
        "is the number of equally common values the class is as mixed as); *recursive "
        "(c, l)*-diversity asks that the most common value be less than c times as "
        "frequent as the values after the l − 1 most common together."
    ),
    definition=(
        "Distinct: every class has at least l different sensitive values. "
        "Entropy: exp(min over classes of −Σ p ln p) ≥ l, with p the share of each value "
        "in the class. Recursive (c, l): r1 < c (r_l + … + r_m) in every class, with the "
        "class’s value counts r1 ≥ r2 ≥ … ≥ r_m sorted descending; anonaudit reports "
        "c* = max over classes of r1 / (r_l + … + r_m), and the table is (c, l)-diverse "
        "exactly when c > c*. Nulls in a sensitive attribute count as a value and are "
        "reported."
    ),
    citations=(MACHANAVAJJHALA,),
    protects=(
        "Attribute disclosure by homogeneity: learning a person’s class no longer "
        "reveals their sensitive value, since the class holds at least l of them."
    ),
    misses=(
        "the *skewness attack*, when a class is diverse yet its shares are far from the "
        "population’s (half the class has a rare disease that 1% of the table has); the "
        "*similarity attack*, when a class’s values are different but mean nearly the "
        "same (three kinds of stomach disease) [@li]. Nor does it account for an "
        "attacker’s background knowledge about the person."
    ),
)


def _t_closeness_definition() -> str:
    """The definition of t-closeness, with each ground distance's own sentence
    (:mod:`anonaudit.distances`), in the registry's order."""
    kinds = registered().values()
    nulls = [kind.name for kind in kinds if kind.nulls_left_out]
    listed = ", ".join(nulls[:-1]) + " and " + nulls[-1] if len(nulls) > 1 else "".join(nulls)
    return " ".join(
        [
            "t = max over classes of EMD(P_class, Q_table).",
            *(kind.definition for kind in kinds),
            f"Nulls have no place under the {listed} distances: they are left out of both "
            "distributions and counted.",
        ]
    )


T_CLOSENESS = Measure(
    name="t-closeness",
    anchor="about-t",
    slug="t-closeness",
    summary=(
        "The distribution of a sensitive attribute in every class is within distance t of "
        "its distribution in the whole table, measured by the earth mover’s distance "
        "(EMD) [@li]: 0 when a class looks like the table, 1 when it is as different as "
        "possible. The *ground distance* says how far apart two values are: all equally "
        "far (equal), by rank (ordered), by value (numeric), or by a generalization "
        "hierarchy, where values under the same parent are close; this is what addresses "
        "the similarity attack."
    ),
    definition=_t_closeness_definition(),
    citations=(LI,),
    protects=(
        "Skewness and similarity attacks: what an attacker learns from a person’s class "
        "is close to what the whole table already tells them, with closeness measured by "
        "the chosen ground distance."
    ),
    misses=(
        "inferences that hold for the whole table (they are allowed by design); "
        "distinctions the chosen ground distance does not measure; large relative gains "
        "on rare values, which the EMD weighs little (β-likeness addresses them "
        "[@cao]); an attacker’s background knowledge about the person. Only the worst "
        "class sets t."
    ),
)

DISCLOSURE = Measure(
    name="(α,k)-anonymity, β-likeness and δ-disclosure",
    short="(α,k), β-likeness, δ-disclosure",
    anchor="about-disclosure",
    slug="disclosure",
    summary=(
        "*(α,k)-anonymity* bounds the share of any one sensitive value within a class by "
        "α [@wong]. *Basic β-likeness* bounds the relative gain (class share − table "
        "share) / table share of any value that is more frequent in a class than in the "
        "table by β, which protects rare values [@cao]. *δ-disclosure privacy* asks that "
        "|ln(class share / table share)| be less than δ for every value, which also "
        "covers values a class lacks: δ is infinite when a class lacks a value the table "
        "has [@brickell]."
    ),
    definition=(
        "With p the share of a value in a class and q its share in the whole table: "
        "α = max over classes and values of p; "
        "β = max over classes and values with p > q of (p − q) / q; "
        "δ = max over classes and every value of the table of |ln(p / q)|, infinite when "
        "a class lacks a value (p = 0); a policy δ holds when it is below δ. Other tools "
        "take only the values present in a class: ARX’s δ-disclosure uses log base 2, "
        "δ_ARX = max |log2(p / q)|, and pycanon the natural log. Where every class holds "
        "every value of the table, δ here equals pycanon’s δ and ln 2 · δ_ARX, so a policy "
        "d moved from ARX is δ = ln 2 · d ≈ 0.693 d here (ARX’s d = 1 is δ = 0.693) and "
        "keeps ARX’s verdict; a class lacking a value fails here at any δ while ARX and "
        "pycanon ignore the missing value. Python reports their figures too: "
        "delta_present (pycanon’s) and delta_arx."
    ),
    citations=(WONG, CAO, BRICKELL),
    protects=(
        "Attribute disclosure, value by value: no class makes one sensitive value too "
        "likely (α), much more likely than in the table, even a rare one (β), or much "
        "more or less likely (δ)."
    ),
    misses=(
        "similarity attacks (these measures treat every value as unrelated to every "
        "other), background knowledge, and, for α alone, the disclosure of values a class "
        "lacks."
    ),
)

PROSECUTOR_RISK = Measure(
    name="Re-identification risk",
    anchor="about-risk",
    slug="re-identification-risk",
    summary=(
        "Under the *prosecutor* model the attacker knows that the person is in the data "
        "and knows their quasi-identifiers; picking a record of that class at random "
        "identifies them with probability 1 / (class size) [@elemam]. Sample uniques are "
        "records alone in their class."
    ),
    definition=(
        "A record in a class of size f has risk 1/f. Over the n records of a table with "
        "C classes: highest risk 1 / min f, average risk (1/n) Σ_records 1/f = C / n, "
        "lowest risk 1 / max f; records at risk are those whose risk exceeds a threshold "
        "(0.2 by default); sample uniques are records with f = 1."
    ),
    citations=(EL_EMAM,),
    protects=(
        "States how likely re-identification is for each record, for the strongest "
        "linkage attacker, and how many records are above an acceptable risk."
    ),
    misses=(
        "attackers who know more than the declared quasi-identifiers; it does not measure "
        "what is learned about sensitive values (attribute disclosure). Attackers who do "
        "not know whether the person is in the data (the journalist and marketer models) "
        "face a lower risk that depends on the population: population risk, estimated "
        "when a population size or sampling fraction is given."
    ),
)

POPULATION_RISK = Measure(
    name="Population uniqueness, journalist and marketer risk",
    short="Population risk",
    anchor="about-population",
    slug="population-risk",
    summary=(
        "The file is a sample of a larger population. A record alone in its class in the "
        "file (a *sample unique*) need not be alone in the population: *population "
        "uniqueness* estimates how many people are unique in the population from the "
        "class-size frequencies of the sample, by Pitman’s model [@pitman] [@hoshino], "
        "Zayatz’s [@zayatz] or the shifted negative binomial [@chen] [@haas], chosen by "
        "the rule of Dankar et al. [@dankar]. The *journalist* does not know whether the "
        "person is in the file; the *marketer* tries to re-identify everyone "
        "[@elemam2013]."
    ),
    definition=(
        "Sampling fraction π = n / N for n records sampled from N people; c_j classes of "
        "size j, u classes in all. Pitman: population uniques Γ(θ + 1) / Γ(θ + α) · N^α, "
        "(θ, α) fitted by maximum likelihood (Hoshino). Zayatz: the share of sample "
        "uniques that are population uniques is P(1) = (c_1/u) h_1 / Σ_j (c_j/u) h_j, "
        "with h_j the hypergeometric probability that a population class of size j shows "
        "one record in the sample; population uniques c_1 P(1) / π. SNB: population "
        "class sizes follow a shifted negative binomial (a, b) matched to c_1 and c_2, "
        "population uniques K b^a with K Shlosser’s estimate of the non-empty population "
        "classes. Dankar et al.: Pitman for π ≤ 0.1 (Zayatz if Pitman does not "
        "converge), else the smaller of Zayatz and SNB. Journalist risk of a record: 1/F "
        "with F its class’s size in the population; highest 1 / min F, average "
        "max(C / Σ F, (1/n) Σ f/F); marketer risk (1/n) Σ f/F. Without population class "
        "sizes anonaudit, like ARX, uses the sample class size f for F: an upper bound "
        "equal to the prosecutor figures."
    ),
    citations=(PITMAN, HOSHINO, ZAYATZ, CHEN, HAAS, DANKAR, EL_EMAM_2013),
    protects=(
        "Gives a population-aware figure for a file that is a sample: a sample unique "
        "that many people in the population share is hard to re-identify, and an attacker "
        "who is not sure the person is in the file faces a lower risk than the "
        "prosecutor."
    ),
    misses=(
        "files that are not a simple random sample of the stated population (every model "
        "assumes one); the estimates are model-based and can be far off for small or "
        "unusual files, and a model that does not converge gives no estimate; journalist "
        "and marketer risk without population class sizes are upper bounds; nothing is "
        "said about sensitive values."
    ),
)

INDIVIDUAL_RISK = Measure(
    name="Individual and global risk",
    short="Individual risk",
    anchor="about-individual",
    slug="individual-risk",
    summary=(
        "With survey weights, the sum of the weights of a class’s records, F_k, estimates "
        "how many people of the population share its quasi-identifiers. A record’s "
        "*individual risk* is the probability that an intruder who matches it to a "
        "person of the population picks the right one [@benedetti] [@franconi], as "
        "sdcMicro computes it [@templ]; the *global risk* is the expected number of "
        "re-identifications over the number of records."
    ),
    definition=(
        "With f_k the sample frequency of the record’s class, F_k its estimated "
        "population frequency and p = f_k / F_k: r = p/(1 − p) · ln(1/p) for f_k = 1; "
        "r = p/(1 − p) − (p/(1 − p))² · ln(1/p) for f_k = 2; r = p / (f_k − (1 − p)) for "
        "f_k > 2; r = 1/f_k when F_k = f_k. Expected re-identifications = Σ r over the "
        "records; global risk = that sum / n. Without weights, a population size N or "
        "sampling fraction gives every record the weight N/n. Under the wildcard null "
        "policy, f_k counts the records that agree wherever both are non-null "
        "(sdcMicro’s freqCalc)."
    ),
    citations=(BENEDETTI, FRANCONI, TEMPL),
    protects=(
        "Ranks records by how easily they can be re-identified in the population the "
        "weights describe, so that protection can go to the riskiest records, and gives "
        "one figure, the expected number of re-identifications, for the whole file."
    ),
    misses=(
        "attackers who know the person is in the file (their risk is 1/f_k, higher); "
        "weights that do not describe the population the attacker searches (weights "
        "below 1 fall outside the model, and such a class is treated as F_k = f_k); "
        "what is learned about sensitive values."
    ),
)

SUDA = Measure(
    name="Special uniques (SUDA)",
    short="SUDA",
    anchor="about-suda",
    slug="suda",
    summary=(
        "A *minimal sample unique* (MSU) of a record is a set of quasi-identifiers on "
        "which the record is the only one with its values, while it shares its values with "
        "another record on every smaller subset [@elliot]. Records with more and smaller "
        "MSUs are riskier: the *SUDA score* weighs each MSU by its size, as sdcMicro’s "
        "suda2 computes it [@manning], and the *DIS-SUDA score* spreads the file-level "
        "probability that a unique match is correct over the special uniques [@skinner]."
    ),
    definition=(
        "With ATT quasi-identifiers, each MSU of size k adds (ATT − k)! to its record’s "
        "SUDA score (sdcMicro’s default). DIS = U f / (U f + P (1 − f)), with U sample "
        "uniques, P records in classes of size 2 and f the sampling fraction (0.01 by "
        "default); Q = 1 + (8 − ATT) / 20 and A = Σ_j s_j^(−Q) over the records with a "
        "score s_j > 0; such a record’s DIS-SUDA score is "
        "1 / (1 + (U / DIS − U) / (s_i^Q · A)), a record without MSU scores 0. The "
        "attribute contribution of a quasi-identifier is the share of the total score "
        "carried by the MSUs that contain it."
    ),
    citations=(ELLIOT, MANNING, SKINNER),
    protects=(
        "Finds the records that are unique on few attributes, the easiest to "
        "re-identify even for an attacker who knows only some of the quasi-identifiers, "
        "and the quasi-identifiers that contribute most to uniqueness."
    ),
    misses=(
        "records that are not sample uniques (a record in a class of two still has "
        "prosecutor risk ½); scores rank records but are not probabilities, and DIS-SUDA "
        "is a heuristic; a search limited to a maximum MSU size gives lower bounds; "
        "sensitive values are not looked at."
    ),
)

QI_ANALYSIS = Measure(
    name="Quasi-identifier analysis",
    short="QI analysis",
    anchor="about-qi-analysis",
    slug="qi-analysis",
    summary=(
        "Which columns identify: for every subset of the quasi-identifiers, its "
        "*distinction* (the share of records it tells apart) and its *separation* (the "
        "share of record pairs that differ on it) [@motwani], as ARX reports them, and "
        "the k and the sample uniques left when each quasi-identifier is dropped in turn."
    ),
    definition=(
        "For a set S of attributes over n records, with f_g the number of records in each "
        "group g of records sharing their values on S: distinction = |groups| / n; "
        "separation = 1 − Σ_g f_g (f_g − 1) / (n (n − 1)), the share of the n (n − 1) / 2 "
        "record pairs that differ on at least one attribute of S. Both are 1 for a key."
    ),
    citations=(MOTWANI,),
    protects=(
        "Nothing by itself: it shows which columns, alone or together, make people "
        "unique, and so which to generalize or drop first."
    ),
    misses=(
        "any attack: it is a diagnostic, not a criterion, sets no threshold and bounds no "
        "risk; it considers only the declared quasi-identifiers."
    ),
)

DIFFERENTIAL_PRIVACY = Measure(
    name="Differential privacy",
    anchor="about-dp",
    slug="differential-privacy",
    summary=(
        "A randomized release is *ε-differentially private* when adding or removing one "
        "person’s records changes the probability of any output by at most a factor e^ε "
        "[@dwork]; *(ε, δ)-differential privacy* adds δ to that bound, and an attacker's "
        "posterior is bounded on every output whose privacy loss stays within ε, so that "
        "bound fails with the chance the loss exceeds ε, which δ does not bound "
        "[@dworkroth]. anonaudit’s companion releases the class table with noise under "
        "that guarantee and sets what an attacker may believe after the syntactic release "
        "beside what they could after an ε-DP one."
    ),
    definition=(
        "A mechanism M is (ε, δ)-differentially private when "
        "P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ for every pair of neighbouring tables D, D′ "
        "(one privacy unit added or removed, or replaced) and every set S of outputs; "
        "δ = 0 is pure ε-DP. For a sensitive value with prior p, an ε-DP release bounds "
        "an attacker’s posterior by p e^ε / (1 + p (e^ε − 1))."
    ),
    citations=(DWORK, DWORK_ROTH),
    protects=(
        "Any attacker, whatever they know beforehand, learns little more about one person "
        "from the release than they would if the person were not in it; the guarantee "
        "composes over releases (the epsilons add up) and survives any post-processing."
    ),
    misses=(
        "the syntactic release of the same data (publishing both spends more than ε); "
        "anything beyond the privacy unit (one row unless a column names the person); "
        "large epsilons (above about 1 to 2 the bound says little); releases of observed "
        "combinations, which are (ε, δ)-DP, not pure; under randomized response, "
        "membership (only the sensitive value is protected); inferences about groups, "
        "which are allowed by design."
    ),
)

POPULATION_LINKAGE = Measure(
    name="k-map, δ-presence and unique matches",
    short="k-map and δ-presence",
    anchor="about-k-map",
    slug="k-map",
    summary=(
        "Against the attacker's own identified table (a voter list, a census extract) in "
        "the release's coding: *k-map* asks that every class of the release match at least "
        "k people of that population table [@elemam]; *δ-presence* bounds, for each "
        "population class, the share of its people who are in the release [@nergiz]; a "
        "release record whose class matches exactly one person is a *unique match*, linked "
        "to a name."
    ),
    definition=(
        "With f_c the release's records in class c and F_c the population table's people "
        "in the same class: the release is k-map when F_c ≥ k for every class c of the "
        "release (k-map k = min_c F_c); δ-presence is the range [min_c f_c / F_c, "
        "max_c f_c / F_c] over the population's classes, a release being (δ_min, "
        "δ_max)-present when it lies within; unique matches are the records of classes with "
        "F_c = 1. These are ARX's definitions."
    ),
    citations=(EL_EMAM, NERGIZ),
    protects=(
        "Linking the release to the named people of a public table: each record then "
        "matches at least k people, and the presence of any one person in the release is "
        "uncertain to the degree δ allows."
    ),
    misses=(
        "an attacker who holds another table than the one given, or knows that the person "
        "is in the release (then k-anonymity applies); sensitive values (a class of k-map "
        "matches may still share one value); classes of the release absent from the "
        "population table, which are counted apart."
    ),
)

COMPOSITION = Measure(
    name="Composition across releases",
    short="Composition",
    anchor="about-composition",
    slug="composition",
    summary=(
        "Two releases of overlapping people, each k-anonymous and l-diverse on its own, "
        "can together disclose a value: an attacker who knows a person's quasi-identifiers "
        "finds the person's class in each release and keeps only the sensitive values "
        "present in all of them, often one [@ganta]. anonaudit joins the releases on the "
        "office's own record id to find, for every record in two or more releases, that "
        "*consistent set* and the attacker's posterior."
    ),
    definition=(
        "For a record in releases 1..r with classes c_1..c_r, its consistent set is "
        "∩_i S(c_i), where S(c) is the set of sensitive values in class c; the record is "
        "disclosed when the set holds one value, and disclosed by the composition alone "
        "when every S(c_i) holds two or more. The attacker's belief combines the classes "
        "as independent evidence: p(s | c_1..c_r) ∝ π(s) · Π_i p_i(s | c_i) / π_i(s), with "
        "π_i release i's distribution of the value and π the pooled one. The same "
        "releases made with ε-DP compose to r·ε (sequential composition), which bounds "
        "any posterior."
    ),
    citations=(GANTA, DWORK_ROTH),
    protects=(
        "Publishing a second table of the same people, or a second generalization of the "
        "same table: it shows what the two give away together that neither gives alone."
    ),
    misses=(
        "releases not given (or not recorded in the ledger with their record ids); an "
        "attacker who cannot tell that a person is in both releases; auxiliary knowledge "
        "other than the releases; the posterior is a model (naive Bayes over the "
        "classes), the consistent set is exact."
    ),
)

DIFFERENCING = Measure(
    name="Differencing between releases",
    short="Differencing",
    anchor="about-differencing",
    slug="differencing",
    summary=(
        "Successive releases of a growing table (monthly extracts) can be subtracted class "
        "by class: where a class's histogram of sensitive values changed in exactly one "
        "value, every record added to (or removed from) the class has that value, however "
        "large the class [@byun] [@xiaotao]. Anyone who knows that a person joined the "
        "class learns their value."
    ),
    definition=(
        "With n_old(c, s) and n_new(c, s) the records of class c with value s in the old "
        "and the new release, the change is Δ(c, s) = n_new(c, s) − n_old(c, s); a class "
        "discloses s when Δ(c, s) ≠ 0 for exactly one s, for |Δ(c, s)| records. Releases "
        "are compared when coded alike (the same quasi-identifiers and generalization)."
    ),
    citations=(BYUN, XIAO_TAO),
    protects=(
        "Publishing a new version of a table already published: it finds the classes whose "
        "change gives the newcomers' (or the leavers') values away."
    ),
    misses=(
        "changes spread over several values (which still narrow them down); releases coded "
        "differently (see composition); an attacker who does not know who joined or left; "
        "m-invariance, which would prevent the attack, is not enforced."
    ),
)

#: Every measure, in the order of the docs.
MEASURES: tuple[Measure, ...] = (
    K_ANONYMITY,
    L_DIVERSITY,
    T_CLOSENESS,
    DISCLOSURE,
    PROSECUTOR_RISK,
    POPULATION_RISK,
    INDIVIDUAL_RISK,
    SUDA,
    QI_ANALYSIS,
    POPULATION_LINKAGE,
    COMPOSITION,
    DIFFERENCING,
    DIFFERENTIAL_PRIVACY,
)


def _unique(references: Sequence[Reference]) -> tuple[Reference, ...]:
    return tuple(dict.fromkeys(references))


def cited(text: str) -> tuple[Reference, ...]:
    """The references ``text`` cites with ``[@key]``, in order of first citation.

    Raises
    ------
    KeyError
        A citation names no reference of :data:`REFERENCES`.

    >>> [r.short for r in cited("[@li] and [@cao], again [@li]")]
    ['Li, Li & Venkatasubramanian 2007', 'Cao & Karras 2012']
    """
    return _unique([REFERENCES[key] for key in _CITATION.findall(text)])


def to_html(text: str, numbers: Mapping[str, int], *, emphasis: str = "em") -> Markup:
    """Render marked-up ``text`` as HTML: escaped, emphasis in ``<em>``, citations numbered.

    Parameters
    ----------
    text : str
        Prose with ``*emphasis*`` and ``[@key]`` citations.
    numbers : mapping of str to int
        The number of each cited reference in the page's list of references.
    emphasis : str
        The element emphasis is set in.

    Returns
    -------
    Markup
        HTML safe to put in a template.

    Raises
    ------
    KeyError
        A citation is not in ``numbers``.
    """
    html = str(escape(text))
    html = _EMPHASIS.sub(lambda m: f"<{emphasis}>{m.group(1)}</{emphasis}>", html)
    html = _CITATION.sub(
        lambda m: f'<a href="#ref-{m.group(1)}" class="cite">[{numbers[m.group(1)]}]</a>', html
    )
    return Markup(html)


def to_markdown(text: str, *, references: str = "#references") -> str:
    """Render marked-up ``text`` as Markdown: citations by author and year.

    Parameters
    ----------
    text : str
        Prose with ``*emphasis*`` and ``[@key]`` citations.
    references : str
        Where each citation links: the page's list of references.

    Returns
    -------
    str
        Markdown; characters Markdown would read as markup are escaped.
    """
    parts = re.split(r"(\*[^*]+\*|\[@[a-z0-9]+\])", text)
    out = []
    for part in parts:
        if citation := _CITATION.fullmatch(part):
            out.append(f"([{REFERENCES[citation.group(1)].short}]({references}))")
        elif _EMPHASIS.fullmatch(part):
            out.append(f"*{escape_markdown(part[1:-1])}*")
        else:
            out.append(escape_markdown(part))
    return "".join(out)


def plain(text: str) -> str:
    """Marked-up ``text`` as plain text: emphasis dropped, citations by author and year.

    >>> plain("the *similarity attack* [@li]")
    'the similarity attack (Li, Li & Venkatasubramanian 2007)'
    """
    text = _EMPHASIS.sub(lambda m: m.group(1), text)
    return _CITATION.sub(lambda m: f"({REFERENCES[m.group(1)].short})", text)


def escape_markdown(text: str) -> str:
    """Plain ``text`` as Markdown: characters Markdown reads as markup are escaped.

    >>> print(escape_markdown("c* = max r1 / (r_l + ...)"))
    c\\* = max r1 / (r\\_l + ...)
    """
    return re.sub(r"([\\`*_\[\]|])", r"\\\1", text).replace("<", "&lt;")


def report_about(measures: Sequence[Measure]) -> About:
    """The HTML report's explanation of ``measures`` and its numbered references.

    References are numbered in the order of the measures' ``citations``; every
    reference a text cites must be among them.

    Raises
    ------
    KeyError
        A measure's text cites a reference no measure lists in its ``citations``.
    """
    references = _unique([r for m in measures for r in m.citations])
    numbers = {r.key: i for i, r in enumerate(references, start=1)}
    entries = tuple(
        AboutEntry(
            anchor=m.anchor,
            name=m.name,
            summary=to_html(m.summary, numbers),
            misses=to_html(m.misses, numbers),
        )
        for m in measures
    )
    return About(measures=entries, references=references)
