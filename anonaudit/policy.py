"""The thresholds an audit checks: a :class:`Policy`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from anonaudit.errors import OptionError, ParameterError

__all__ = ["Policy"]


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

    k: int | None = None
    l: int | None = None
    entropy_l: float | None = None
    recursive: tuple[float, int] | None = None
    t: float | None = None
    alpha: float | None = None
    beta: float | None = None
    delta: float | None = None
    max_risk: float | None = None

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
