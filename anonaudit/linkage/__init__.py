"""Linkability: attacks that combine a release with other releases or tables.

The Article 29 Working Party (Opinion 05/2014 on anonymisation techniques, WP216) asks
three questions of an anonymised release: singling out, linkability, inference. This
package answers the linkability ones, as pure functions of class tables:

* :mod:`~anonaudit.linkage.composition`: the composition (intersection) attack across
  independent releases of overlapping records (Ganta, Kasiviswanathan & Smith 2008), and
  what the same releases made with differential privacy would allow; the releases are
  files, or generalizations of one input (:func:`generalized_releases`);
* :mod:`~anonaudit.linkage.differencing`: the differencing attack between successive
  releases;
* :mod:`~anonaudit.measures.linkage`: k-map, δ-presence and unique matches against an
  identified population table;
* :mod:`~anonaudit.linkage.ledger`: the release ledger, what was released to whom and
  what it spent.
"""

from anonaudit.linkage.composition import (
    COMBINATION_RULE,
    Composition,
    DPComposition,
    ReleaseDiversity,
    Releases,
    compose,
    dp_composition,
    generalized_releases,
    read_releases,
)
from anonaudit.linkage.differencing import Differencing, difference
from anonaudit.linkage.ledger import LEDGER_NOTE, Ledger, LedgerEntry
from anonaudit.measures.linkage import (
    DeltaPresenceResult,
    KMapResult,
    PopulationLinkage,
    UniqueMatchResult,
    delta_presence,
    k_map,
    population_linkage,
    unique_matches,
)

__all__ = [
    "COMBINATION_RULE",
    "LEDGER_NOTE",
    "Composition",
    "DPComposition",
    "DeltaPresenceResult",
    "Differencing",
    "KMapResult",
    "Ledger",
    "LedgerEntry",
    "PopulationLinkage",
    "ReleaseDiversity",
    "Releases",
    "UniqueMatchResult",
    "compose",
    "delta_presence",
    "difference",
    "dp_composition",
    "generalized_releases",
    "k_map",
    "population_linkage",
    "read_releases",
    "unique_matches",
]
