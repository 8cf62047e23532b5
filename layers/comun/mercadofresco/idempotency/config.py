"""How long records and claims live, caching and waiting: one frozen object per consumer."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from typing import Any

from mercadofresco.errors import PermanentError

__all__ = ["ENV_LEASE_S", "IdempotencyConfig", "lease_for_timeout"]

EXPIRES_AFTER_S = 24 * 60 * 60  # the lesson's 24 h: covers a same-day DLQ reprocess, not 4 days of retention
FUNCTION_TIMEOUT_S = 30  # template Globals' Timeout, used when the environment does not say
# A claim outlives the function: a charge that timed out may still be running at the gateway,
# and running it again before the gateway answers is exactly the double charge we prevent.
LEASE_MARGIN_S = 60
LOCAL_CACHE_MAX_ITEMS = 256
POLL_INTERVAL_S = 0.25

# Environment variables read by :meth:`IdempotencyConfig.from_env` (all optional).
ENV_LEASE_S = "IDEMPOTENCY_LEASE_S"
ENV_EXPIRES_AFTER_S = "IDEMPOTENCY_EXPIRES_AFTER_S"
ENV_FUNCTION_TIMEOUT_S = ("FUNCTION_TIMEOUT_S", "AWS_LAMBDA_FUNCTION_TIMEOUT")  # ours first; SAM local sets the 2nd


def lease_for_timeout(function_timeout_s: float, margin_s: float = LEASE_MARGIN_S) -> int:
    """The ``EN_CURSO`` lease for a function with this timeout: the timeout plus a safety margin."""
    if function_timeout_s <= 0 or margin_s < 0:
        raise ValueError(f"function_timeout_s must be > 0 and margin_s >= 0, got {function_timeout_s}, {margin_s}")
    return math.ceil(function_timeout_s + margin_s)


@dataclass(frozen=True, slots=True)
class IdempotencyConfig:
    """Settings of an :class:`~mercadofresco.idempotency.IdempotencyStore`.

    Parameters
    ----------
    expires_after_s
        Life of a record after its outcome is written, or after its lease ends for a claim still
        ``EN_CURSO`` (``expira_en``). After it the key counts as absent even if DynamoDB's TTL has
        not deleted the item yet.
    lease_s
        Life of an ``EN_CURSO`` claim (``caduca_bloqueo``); after it another consumer may take
        the key over. Set it above the longest time the operation's side effect can take.
    local_cache, local_cache_max_items
        Keep ``COMPLETADO`` records in process memory (LRU, evicted at ``expira_en``).
    permanent_errors
        Exception types recorded as ``FALLIDO``; any other exception releases the key.
    wait_for_completion_s, poll_interval_s
        Opt-in: on a live ``EN_CURSO`` claim, poll up to this long for the owner's outcome
        instead of raising ``OperacionEnCurso`` at once (0 = do not wait).
    """

    expires_after_s: int = EXPIRES_AFTER_S
    lease_s: int = field(default_factory=lambda: lease_for_timeout(FUNCTION_TIMEOUT_S))
    local_cache: bool = False
    local_cache_max_items: int = LOCAL_CACHE_MAX_ITEMS
    permanent_errors: tuple[type[BaseException], ...] = (PermanentError,)
    wait_for_completion_s: float = 0.0
    poll_interval_s: float = POLL_INTERVAL_S

    def __post_init__(self) -> None:
        if not 0 < self.lease_s < self.expires_after_s:
            raise ValueError(f"need 0 < lease_s < expires_after_s, got {self.lease_s} and {self.expires_after_s}")
        if self.local_cache_max_items < 1:
            raise ValueError(f"local_cache_max_items must be >= 1, got {self.local_cache_max_items}")
        if self.wait_for_completion_s < 0 or self.poll_interval_s <= 0:
            raise ValueError("wait_for_completion_s must be >= 0 and poll_interval_s > 0")
        if not self.permanent_errors or not all(
            isinstance(t, type) and issubclass(t, BaseException) for t in self.permanent_errors
        ):
            raise ValueError(f"permanent_errors must be exception classes, got {self.permanent_errors!r}")

    @classmethod
    def from_env(cls, **overrides: Any) -> IdempotencyConfig:
        """Build from the environment; keyword arguments win over it.

        ``IDEMPOTENCY_LEASE_S`` sets the lease outright; otherwise it is derived from
        ``FUNCTION_TIMEOUT_S`` (or ``AWS_LAMBDA_FUNCTION_TIMEOUT``) with :func:`lease_for_timeout`.
        ``IDEMPOTENCY_EXPIRES_AFTER_S`` overrides the 24 h record life.
        """
        values: dict[str, Any] = {}
        if ENV_EXPIRES_AFTER_S in os.environ:
            values["expires_after_s"] = _whole_seconds(ENV_EXPIRES_AFTER_S)
        if ENV_LEASE_S in os.environ:
            values["lease_s"] = _whole_seconds(ENV_LEASE_S)
        else:
            timeout = next((_whole_seconds(n) for n in ENV_FUNCTION_TIMEOUT_S if n in os.environ), FUNCTION_TIMEOUT_S)
            values["lease_s"] = lease_for_timeout(timeout)
        return cls(**(values | overrides))

    def with_changes(self, **changes: Any) -> IdempotencyConfig:
        """A copy with some fields changed (the config itself is immutable)."""
        return replace(self, **changes)


def _whole_seconds(name: str) -> int:
    value = os.environ[name]
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} must be a whole number of seconds, got {value!r}") from None
