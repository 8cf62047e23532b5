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
bounded instead of unbounded or all refused. That fallback bucket starts *empty*: it is filled only
by the calls this process makes while degraded, so every process's fallback adds at most 10 % of its
own calls and the whole fleet's retries stay within 10 % of all calls + 10 (the shared bucket's
capacity), however many processes lose Valkey at once. A full fallback bucket per process would add
10 retries per Lambda instance exactly when the platform is already in trouble.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from importlib.resources import files
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from mercadofresco.valkey import KEY_PREFIX

if TYPE_CHECKING:
    from collections.abc import Callable

    import redis

DEFAULT_RATIO = 0.1  # the lesson: retries at most ~10 % of the traffic
DEFAULT_CAPACITY = 10.0  # a blip on a quiet dependency may still retry 10 calls
KEY_LIFETIME_MS = 24 * 3600 * 1000  # an idle dependency's budget starts over full after a day
DEPOSIT_WINDOW_S = 10  # deposits older than this are dropped before they travel (Finagle's ttl)

_LUA = files("mercadofresco.retry").joinpath("presupuesto.lua").read_text()
logger = logging.getLogger(__name__)


class _BucketLocal:
    """The same token bucket in process memory (degraded mode, or no Valkey client given)."""

    def __init__(self, ratio: float, capacity: float, fichas: float) -> None:
        self.ratio, self.capacity, self.fichas = ratio, capacity, fichas

    def visitar(self, llamadas: int, pide: bool) -> bool:
        self.fichas = min(self.capacity, self.fichas + llamadas * self.ratio)
        if pide and self.fichas >= 1:
            self.fichas -= 1
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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < ratio <= 1 or capacity < 1:
            raise ValueError(f"need 0 < ratio <= 1 and capacity >= 1, got {ratio}, {capacity}")
        self.dependency = dependency
        self.key = f"{prefix}presupuesto:{dependency}"
        self.ratio, self.capacity = ratio, capacity
        self._redis = redis_client
        self._script = redis_client.register_script(_LUA) if redis_client is not None else None
        # The budget of this process only starts full; Valkey's fallback starts empty (module docstring).
        self._local = _BucketLocal(ratio, capacity, capacity if redis_client is None else 0.0)
        self._clock = clock
        self._pendientes: deque[list[int]] = deque()  # [second, calls] oldest first
        self._lock = threading.Lock()

    def record_call(self) -> None:
        """Count a first attempt sent to the dependency (its deposit travels with the next retry request)."""
        segundo = int(self._clock())
        with self._lock:
            if self._pendientes and self._pendientes[-1][0] == segundo:
                self._pendientes[-1][1] += 1
            else:
                self._pendientes.append([segundo, 1])
            while self._pendientes[0][0] <= segundo - DEPOSIT_WINDOW_S:
                self._pendientes.popleft()

    def allow_retry(self) -> bool:
        """Take one token for a retry; ``False`` means: do not retry, fail now."""
        return self._visitar(pide=True)

    def tokens(self) -> float:
        """Tokens left (deposits pending in this process are paid in first)."""
        self._visitar(pide=False)
        if self._script is None:
            return self._local.fichas
        try:
            return float(self._redis.hget(self.key, "fichas") or self.capacity)
        except RedisError:
            return self._local.fichas

    def _visitar(self, *, pide: bool) -> bool:
        desde = int(self._clock()) - DEPOSIT_WINDOW_S
        with self._lock:
            llamadas = sum(n for segundo, n in self._pendientes if segundo > desde)
            self._pendientes.clear()
        if self._script is None:
            return self._local.visitar(llamadas, pide)
        try:
            concedido, _ = self._script(
                keys=[self.key], args=[llamadas, self.ratio, self.capacity, int(pide), KEY_LIFETIME_MS]
            )
        except RedisError as exc:
            logger.warning(
                "retry budget in Valkey unavailable, using this process's own",
                extra={"dependencia": self.dependency, "error": type(exc).__name__},
            )
            return self._local.visitar(llamadas, pide)
        return bool(concedido)
