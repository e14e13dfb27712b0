"""The thresholds an audit checks: a :class:`Policy`."""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields
from typing import Any, Literal, TypeAlias

from anonaudit.errors import OptionError, ParameterError

__all__ = ["Policy", "ThresholdKind", "threshold_fields"]

#: The kind of value a threshold takes: a whole number, a number, or a pair ``(c, l)``
#: of a number and a whole number (``C,L`` on the command line, ``[c, l]`` in a file).
ThresholdKind: TypeAlias = Literal["whole", "number", "pair"]


def _threshold(flag: str, kind: ThresholdKind, help: str) -> Any:
    """A threshold of the policy: unset by default, with its command-line ``flag``, the
    ``kind`` of its value and its ``help``, from which the command line and the policy
    files take their options and keys (:func:`threshold_fields`)."""
    return field(default=None, metadata={"flag": flag, "kind": kind, "help": help})


@dataclass(frozen=True, kw_only=True)
class Policy:
    """Thresholds for an audit; ``None`` means "measure, do not judge".

    Attributes
    ----------
    k : int, optional
        Smallest class size (k-anonymity).
    l : int, optional
        Distinct SA values per class (distinct l-diversity), for every SA.
    entropy_l : float, optional
        Entropy l-diversity, for every SA.
    recursive : tuple of (float, int), optional
        ``(c, l)`` of recursive (c,l)-diversity, for every SA.
    t : float, optional
        Largest EMD between a class and the table (t-closeness), for every SA.
    alpha : float, optional
        Largest within-class share of one SA value ((alpha,k)-anonymity).
    beta : float, optional
        Largest relative gain of an SA value in a class (basic beta-likeness).
    delta : float, optional
        Bound on ``|ln(p_class/p)|`` (delta-disclosure privacy).
    max_risk : float, optional
        Largest prosecutor re-identification risk of any record.

    Examples
    --------
    >>> Policy(k=5, t=0.2).active()
    {'k': 5, 't': 0.2}
    """

    k: int | None = _threshold("-k", "whole", "smallest class size (k-anonymity)")
    l: int | None = _threshold("-l", "whole", "distinct sensitive values per class (l-diversity)")
    entropy_l: float | None = _threshold("--entropy-l", "number", "entropy l-diversity")
    recursive: tuple[float, int] | None = _threshold(
        "--recursive", "pair", "recursive (c,l)-diversity"
    )
    t: float | None = _threshold("-t", "number", "t-closeness: largest EMD between class and table")
    alpha: float | None = _threshold("--alpha", "number", "largest share of one value in a class")
    beta: float | None = _threshold("--beta", "number", "basic beta-likeness")
    delta: float | None = _threshold(
        "--delta",
        "number",
        "delta-disclosure privacy (Brickell & Shmatikov): |ln(class share / table share)| "
        "< DELTA for every value of the table, so a class lacking a value fails (its delta "
        "is inf). ARX's d is log2 and pycanon's delta ln, both over the values a class "
        "holds: give DELTA = ln(2) * d = 0.693 d for ARX's d, pycanon's delta as is",
    )
    max_risk: float | None = _threshold(
        "--max-risk", "number", "largest prosecutor risk of a record"
    )

    def __post_init__(self) -> None:
        if self.k is not None and not self.k >= 1:
            raise OptionError("k", self.k, requirement="be at least 1")
        if self.t is not None and not 0 <= self.t <= 1:
            raise OptionError("t", self.t, requirement="lie between 0 and 1")
        if self.recursive is not None:
            c, l = self.recursive
            if not c > 0 or int(l) != l or l < 1:
                raise ParameterError(
                    f"recursive (c,l) needs c > 0 and a whole l >= 1 (got {self.recursive!r})"
                )

    def active(self) -> dict[str, Any]:
        """The thresholds that are set, by name."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


def threshold_fields() -> tuple[Field[Any], ...]:
    """The thresholds of :class:`Policy`, each with its ``metadata``: ``flag`` (the
    command-line option), ``kind`` (:data:`ThresholdKind`) and ``help``.

    >>> flags = [f.metadata["flag"] for f in threshold_fields()]
    >>> flags[:3]
    ['-k', '-l', '--entropy-l']
    """
    return fields(Policy)
