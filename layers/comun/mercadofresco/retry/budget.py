"""A retry budget per dependency, shared by every process through Valkey.

Choice: the ratio form, as a token bucket fed by calls (Finagle's RetryBudget, gRPC's retry
throttling). Every first attempt sent to the dependency deposits ``ratio`` tokens (0.1; a call
the open circuit refuses is not one), every retry costs one token, the bucket holds at most
``capacity`` (10). So over any stretch retries <= 10 % of calls + 10,
exactly the lesson's rule ("if more than 10 % of calls are retries, stop retrying until the
proportion drops"), and after recovery successful calls refill it. botocore's quota form
(500 capacity, cost 5/10, refund on success) was not chosen: its unit is not a share of the
traffic, so "10 %" has no direct reading in it.

Cost: zero Valkey round trips on the happy path. Deposits are counted in process and carried
by the next retry's script call (one EVALSHA per retry). Only deposits of the last
``ventana_deposito_s`` (10 s) travel: a process that was healthy for an hour does not bring an
hour of deposits to the start of an outage (with 20 Lambdas that would be 20 full buckets at
once); as in Finagle, retries are bounded by ~10 % of the *recent* calls. A process that dies
loses its unsent deposits: the budget errs towards fewer retries, never more.

Valkey unreachable: the same bucket runs in process (:class:`_BucketLocal`), so retries stay
bounded instead of unbounded or all refused. The fleet's bound is kept by splitting the shared
bucket's capacity between the processes that can run at once: a function runs at most
``max_instances`` execution environments (its reserved concurrency, or the sum of its event source
mappings' ``MaximumConcurrency``; the template passes it as ``RETRY_BUDGET_MAX_INSTANCES``), and each
fallback bucket starts with ``capacity / max_instances`` tokens, then is fed only by the calls its
own process makes while degraded. With every instance degraded at once::

    retries  <=  max_instances * (capacity / max_instances)  +  ratio * calls
             =   capacity (10)                                +  10 % of all calls

the bound the shared bucket gives. So a fresh container whose first call meets a transient error
still retries it, as long as the division gives it a whole token (``max_instances`` <= 10); a larger
fleet's instance starts with its fraction and its own first calls' deposits complete the token.
The bound holds for the environments alive at once: one that Lambda starts to replace a recycled
one brings its share again (environments live for minutes to hours, not per request). A full bucket
per process would add 10 retries per instance exactly when the platform is already in trouble; an
empty one refuses a fresh container's first retry. Without ``max_instances`` (a fleet of unknown
size) the fallback starts empty.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from importlib.resources import files
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from mercadofresco.valkey import KEY_PREFIX

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    import redis

DEFAULT_RATIO = 0.1  # the lesson: retries at most ~10 % of the traffic
DEFAULT_CAPACITY = 10.0  # a blip on a quiet dependency may still retry 10 calls
KEY_LIFETIME_MS = 24 * 3600 * 1000  # an idle dependency's budget starts over full after a day
DEPOSIT_WINDOW_S = 10  # deposits older than this are dropped before they travel (Finagle's ttl)
MAX_INSTANCES_ENV = "RETRY_BUDGET_MAX_INSTANCES"  # the function's most execution environments at once

_LUA = files("mercadofresco.retry").joinpath("presupuesto.lua").read_text()
logger = logging.getLogger(__name__)


class _BucketLocal:
    """The same token bucket in process memory (degraded mode, or no Valkey client given)."""

    def __init__(self, ratio: float, capacity: float, tokens: float) -> None:
        self.ratio, self.capacity, self.tokens = ratio, capacity, tokens

    def visit(self, calls: int, asks: bool) -> bool:
        self.tokens = min(self.capacity, self.tokens + calls * self.ratio)
        if asks and self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class RetryBudget:
    """Whether a dependency may be retried now.

    Parameters
    ----------
    dependency:
        Budget name (``pasarela``, ``erp``, ``correo-principal``): one bucket per dependency.
    redis_client:
        A client from :func:`mercadofresco.valkey.valkey_client`, or ``None`` for a budget of
        this process only.
    prefix:
        Key prefix (tests use a private one).
    ratio, capacity:
        Tokens a call deposits, and the bucket's ceiling.
    max_instances:
        The most processes that share this budget at once (the function's maximum concurrency):
        the Valkey fallback of each starts with ``capacity / max_instances``; ``None``: empty.
    clock:
        Seconds, for tests (ages the pending deposits); ``time.monotonic`` otherwise.

    Examples
    --------
    >>> budget = RetryBudget("pasarela", None)
    >>> budget.record_call()
    >>> budget.allow_retry()
    True
    """

    def __init__(
        self,
        dependency: str,
        redis_client: redis.Redis | None,
        *,
        prefix: str = KEY_PREFIX,
        ratio: float = DEFAULT_RATIO,
        capacity: float = DEFAULT_CAPACITY,
        max_instances: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < ratio <= 1 or capacity < 1:
            raise ValueError(f"need 0 < ratio <= 1 and capacity >= 1, got {ratio}, {capacity}")
        if max_instances is not None and (isinstance(max_instances, bool) or max_instances < 1):
            raise ValueError(f"max_instances must be a whole number >= 1, got {max_instances!r}")
        self.dependency = dependency
        self.key = f"{prefix}presupuesto:{dependency}"
        self.ratio, self.capacity = ratio, capacity
        self._redis = redis_client
        self._script = redis_client.register_script(_LUA) if redis_client is not None else None
        # The budget of this process only starts full; Valkey's fallback with this process's share of
        # the capacity, so the fleet's fallbacks together start with one capacity (module docstring).
        share = 0.0 if max_instances is None else capacity / max_instances
        self._local = _BucketLocal(ratio, capacity, capacity if redis_client is None else share)
        self._clock = clock
        self._pending: deque[list[int]] = deque()  # [second, calls] oldest first
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, dependency: str, redis_client: redis.Redis | None, **kwargs: Any) -> RetryBudget:
        """The budget with ``max_instances`` from ``RETRY_BUDGET_MAX_INSTANCES`` (the template sets it).

        Unset or empty: ``None`` (the fallback starts empty). Any other keyword goes to the constructor.

        Raises
        ------
        ValueError
            The variable is not a whole number >= 1.
        """
        value = os.environ.get(MAX_INSTANCES_ENV, "").strip()
        try:
            instances = int(value) if value else None
        except ValueError:
            instances = 0  # refused below, with the variable's name
        if instances is not None and instances < 1:
            raise ValueError(f"{MAX_INSTANCES_ENV} must be a whole number >= 1, got {value!r}")
        return cls(dependency, redis_client, max_instances=instances, **kwargs)

    def record_call(self) -> None:
        """Count a first attempt sent to the dependency (its deposit travels with the next retry request)."""
        second = int(self._clock())
        with self._lock:
            if self._pending and self._pending[-1][0] == second:
                self._pending[-1][1] += 1
            else:
                self._pending.append([second, 1])
            while self._pending[0][0] <= second - DEPOSIT_WINDOW_S:
                self._pending.popleft()

    def allow_retry(self) -> bool:
        """Take one token for a retry; ``False`` means: do not retry, fail now."""
        return self._visit(asks=True)

    def tokens(self) -> float:
        """Tokens left (deposits pending in this process are paid in first)."""
        self._visit(asks=False)
        if self._script is None:
            return self._local.tokens
        try:
            return float(self._redis.hget(self.key, "fichas") or self.capacity)
        except RedisError:
            return self._local.tokens

    def _visit(self, *, asks: bool) -> bool:
        since = int(self._clock()) - DEPOSIT_WINDOW_S
        with self._lock:
            calls = sum(n for second, n in self._pending if second > since)
            self._pending.clear()
        if self._script is None:
            return self._local.visit(calls, asks)
        try:
            granted, _ = self._script(
                keys=[self.key], args=[calls, self.ratio, self.capacity, int(asks), KEY_LIFETIME_MS]
            )
        except RedisError as exc:
            logger.warning(
                "retry budget in Valkey unavailable, using this process's own",
                extra={"dependencia": self.dependency, "error": type(exc).__name__},
            )
            return self._local.visit(calls, asks)
        return bool(granted)
