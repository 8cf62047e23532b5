"""Backoff policies: how long to wait before retry number ``attempt`` (0 = the first retry).

Policy only, no loop (the loop lives with whoever owns the attempts, e.g. ``mercadofresco.http``).
The randomness source is passed in, so tests pin it with ``random.Random(seed)``.

Full jitter (the lesson, section 5; AWS Architecture Blog "Exponential Backoff and Jitter"):
``uniform(0, min(cap, base * 2**attempt))``. The cap keeps the fourth retry from waiting minutes;
the jitter keeps 450 executions that failed together from retrying at the same instant.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random

DEFAULT_BASE_S = 0.2  # first retry waits up to 200 ms: a network blip is over by then
DEFAULT_CAP_S = 2.0  # a provider call retried inside one Lambda invocation must stay far below its 30 s timeout


class Backoff(ABC):
    """A wait policy: ``compute(attempt, rng)`` seconds before retry number ``attempt`` (0-based)."""

    @abstractmethod
    def compute(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait before retry ``attempt``."""


@dataclass(frozen=True, slots=True)
class FullJitterBackoff(Backoff):
    """``uniform(0, min(cap_s, base_s * 2**attempt))``: the spread that de-synchronises retries best."""

    base_s: float = DEFAULT_BASE_S
    cap_s: float = DEFAULT_CAP_S

    def __post_init__(self) -> None:
        if self.base_s <= 0 or self.cap_s < self.base_s:
            raise ValueError(f"need 0 < base_s <= cap_s, got base_s={self.base_s} cap_s={self.cap_s}")

    def compute(self, attempt: int, rng: random.Random) -> float:
        # min() before the power would overflow for large attempts; 2**attempt grows exactly in Python ints.
        return rng.uniform(0, min(self.cap_s, self.base_s * 2 ** min(attempt, 62)))


@dataclass(frozen=True, slots=True)
class EqualJitterBackoff(Backoff):
    """``half + uniform(0, half)`` with ``half = min(cap, base*2**attempt)/2``: a floor under the wait."""

    base_s: float = DEFAULT_BASE_S
    cap_s: float = DEFAULT_CAP_S

    def compute(self, attempt: int, rng: random.Random) -> float:
        half = min(self.cap_s, self.base_s * 2 ** min(attempt, 62)) / 2
        return half + rng.uniform(0, half)


@dataclass(frozen=True, slots=True)
class NoBackoff(Backoff):
    """Retry at once (tests, or a layer whose caller already waits)."""

    def compute(self, attempt: int, rng: random.Random) -> float:
        return 0.0


def retry_after_s(value: str | None, *, now: datetime | None = None) -> float | None:
    """Parse a ``Retry-After`` header: delta-seconds or an HTTP-date (RFC 9110 §10.2.3).

    Returns the wait in seconds (never negative), or ``None`` when absent or unparseable
    (the caller then falls back to its own backoff rather than trusting garbage).
    """
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        date = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if date.tzinfo is None:  # RFC 850/asctime forms parse naive; HTTP dates are always GMT
        date = date.replace(tzinfo=UTC)
    return max(0.0, (date - (now or datetime.now(UTC))).total_seconds())
