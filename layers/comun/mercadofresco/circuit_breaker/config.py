"""The breaker's parameters and why their defaults (see also ``layers/comun/README.md``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from math import isfinite
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

# Every field is a number: a NaN or an infinity would pass the comparisons below the wrong way.
_QUANTITIES = (
    "consecutive_failures",
    "failure_rate",
    "min_calls",
    "window_s",
    "buckets",
    "open_base_s",
    "open_max_s",
    "probe_reservation_s",
    "cache_max_age_s",
    "local_consecutive_failures",
    "shared_retry_s",
)


# The periods an environment may set, each as ``BREAKER_<FIELD>`` (``BREAKER_OPEN_BASE_S``...): a deployment
# tunes how long a breaker stays open without a code change, and the local chaos run compresses them
# with the workflow's waits (tools/mercadofresco_local/plazos.py). Counts and rates stay in code.
PERIODS = ("window_s", "open_base_s", "open_max_s", "probe_reservation_s", "cache_max_age_s", "shared_retry_s")


def env_variable(period: str) -> str:
    """The environment variable that sets ``period`` (one of :data:`PERIODS`)."""
    return f"BREAKER_{period.upper()}"


@dataclass(frozen=True, slots=True)
class BreakerConfig:
    """When a dependency's breaker opens, for how long, and how it probes.

    Parameters
    ----------
    consecutive_failures:
        Consecutive failures that open it, whatever the rate: the lesson's 20 ("if the gateway
        has failed 20 times in a row, call 21 will fail too"). Catches a slow trickle of failures
        too sparse for the rate window.
    failure_rate:
        Failure ratio over the window that opens it (0.5: most calls fail, the provider is sick).
    min_calls:
        Calls the window must hold before the rate counts: 3 failures out of 4 calls is noise.
    window_s / buckets:
        The rate's sliding window, kept as ``buckets`` time buckets (30 s in 10 buckets of 3 s:
        old failures fall out within 3 s; one hash field per bucket).
    open_base_s / open_max_s:
        Open for ``base * 2**(trips-1)`` seconds, capped. 30 s is the lesson's typical outage; the
        5 min cap matches the ERP consumer's 300 s deferral, so a long outage is probed every 5 min.
    probe_reservation_s:
        How long the half-open probe reservation lives. Must exceed the guarded call's worst case
        (connect 2 s + read 10 s); when the probing process dies, another may probe after it.
    cache_max_age_s:
        How long a process trusts the state it last read before it asks Valkey again (the healthy path's
        cost: one round trip per process per period). It bounds how stale a process's view is: a
        process may go on calling for up to this long after another opened the breaker (at most one
        of those calls fails: a failure is written at once and its answer carries the new state), and
        an operator's override reaches every process within it. At most ``open_base_s``, so a view
        read before an opening never outlives the open period: half-open still admits one probe.
    local_consecutive_failures / shared_retry_s:
        Degraded mode, when Valkey is unreachable: a process-local breaker opens after this many
        consecutive failures (one process sees few calls, so a lower bar), and Valkey is tried
        again only every ``shared_retry_s`` so a dead Valkey costs one timeout per period.
    """

    consecutive_failures: int = 20
    failure_rate: float = 0.5
    min_calls: int = 20
    window_s: float = 30.0
    buckets: int = 10
    open_base_s: float = 30.0
    open_max_s: float = 300.0
    probe_reservation_s: float = 15.0
    cache_max_age_s: float = 1.0
    local_consecutive_failures: int = 5
    shared_retry_s: float = 5.0

    def __post_init__(self) -> None:
        if not all(isfinite(getattr(self, name)) for name in _QUANTITIES):
            raise ValueError(f"{', '.join(_QUANTITIES)} must be finite numbers")
        if min(self.consecutive_failures, self.min_calls, self.buckets, self.local_consecutive_failures) < 1:
            raise ValueError("consecutive_failures, min_calls, buckets and local_consecutive_failures must be >= 1")
        if not 0 < self.failure_rate <= 1:
            raise ValueError(f"failure_rate must be in (0, 1], got {self.failure_rate}")
        if not 0 < self.open_base_s <= self.open_max_s:
            raise ValueError("need 0 < open_base_s <= open_max_s")
        if self.window_s <= 0 or self.probe_reservation_s <= 0 or self.shared_retry_s < 0:
            raise ValueError("window_s and probe_reservation_s must be > 0, shared_retry_s >= 0")
        if not 0 <= self.cache_max_age_s <= self.open_base_s:
            raise ValueError(
                f"cache_max_age_s must be in [0, open_base_s={self.open_base_s}], got {self.cache_max_age_s}: "
                "a state cached longer than the open period could let a second probe through"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> BreakerConfig:
        """The defaults, with each period the environment sets (:func:`env_variable`); unset or empty keeps it.

        Raises
        ------
        ValueError
            A variable is not a number, or the periods break a rule of the constructor (named).
        """
        periods: dict[str, float] = {}
        for period in PERIODS:
            raw = environ.get(env_variable(period), "").strip()
            if not raw:
                continue
            try:
                periods[period] = float(raw)
            except ValueError:
                raise ValueError(f"{env_variable(period)} must be a number of seconds, got {raw!r}") from None
        return cls(**periods)

    @property
    def bucket_ms(self) -> int:
        """Width of one rate bucket in milliseconds."""
        return max(1, int(self.window_s * 1000 / self.buckets))
