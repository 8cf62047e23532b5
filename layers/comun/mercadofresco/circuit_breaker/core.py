"""The circuit breaker callers use: ``with breaker.guard(): ...`` or ``breaker.call(fn)``.

One Valkey round trip per guarded call, in every state but one. How:

- ``acquire`` is the only script call a normal guarded call makes. It carries the outcomes
  this process recorded since its previous call ("piggybacking"), records them, may open the
  breaker on them, then admits or rejects *this* call, atomically.
- The outcome of a call is therefore published with the process's next call. The shared view
  lags by at most one outcome per concurrent process (with 20 Lambdas failing together, the
  breaker opens after at most 20 extra failed calls, not 20 per process), and a process frozen
  or reclaimed by Lambda loses one sample. :meth:`CircuitBreaker.flush` publishes at once.
- The exception is the half-open probe: its outcome is reported immediately (a second round
  trip, once per cool-down) because every other process waits on it.

Degraded mode: if Valkey errors or exceeds the client's socket timeout (tens of ms, see
``mercadofresco.valkey``), the call goes on under :class:`LocalBreaker`, the metric
``EstadoCompartidoNoDisponible`` is emitted, and Valkey is tried again after
``shared_retry_s``.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mercadofresco.circuit_breaker.config import BreakerConfig
from mercadofresco.circuit_breaker.local import LocalBreaker
from mercadofresco.circuit_breaker.state import Decision, SharedStateUnavailableError
from mercadofresco.errors import CircuitoAbierto, PermanentError
from mercadofresco.metrics import CIRCUIT_OPEN, SHARED_STATE_UNAVAILABLE, as_metrics
from mercadofresco.valkey import KEY_PREFIX

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import redis

T = TypeVar("T")
logger = logging.getLogger("mercadofresco.circuit_breaker")


class Permit:
    """Leave to make one call; report its outcome with :meth:`success` / :meth:`failure` (``guard`` does it)."""

    __slots__ = ("_breaker", "is_probe", "local", "recorded", "token")

    def __init__(self, breaker: CircuitBreaker, *, is_probe: bool, token: str, local: bool) -> None:
        self._breaker, self.is_probe, self.token, self.local = breaker, is_probe, token, local
        self.recorded = False

    def success(self) -> None:
        """The dependency answered (a business refusal counts: it is up)."""
        self._breaker._registrar(self, success=True)

    def failure(self) -> None:
        """The dependency failed (5xx, 429, timeout, reset...)."""
        self._breaker._registrar(self, success=False)


class CircuitBreaker:
    """A breaker for one dependency, shared by every process through Valkey.

    Parameters
    ----------
    dependency:
        ``pasarela``, ``erp``, ``correo-principal``...: one breaker (one key) per dependency.
    redis_client:
        From :func:`mercadofresco.valkey.valkey_client` (short socket timeouts), or ``None``
        for a process-local breaker only.
    config:
        Thresholds and durations, :class:`BreakerConfig` defaults otherwise.
    metrics:
        A :class:`~mercadofresco.metrics.MetricsSink`, a Powertools ``Metrics``
        (its namespace is used) or ``None`` (Powertools EMF in ``MercadoFresco/Tienda``).
    prefix:
        Key prefix; the key is ``{prefix}circuito:{dependency}``.
    clock:
        Seconds since the epoch, for tests. ``None``: Valkey's ``TIME`` decides (one clock for
        every Lambda) and the degraded mode uses ``time.monotonic``.

    Raises
    ------
    mercadofresco.errors.CircuitoAbierto
        From :meth:`guard`/:meth:`call` when open: the dependency is not called.

    Examples
    --------
    >>> breaker = CircuitBreaker("pasarela", None)
    >>> breaker.call(lambda: "ok")
    'ok'
    """

    def __init__(
        self,
        dependency: str,
        redis_client: redis.Redis | None,
        *,
        config: BreakerConfig | None = None,
        metrics: Any = None,
        prefix: str = KEY_PREFIX,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.dependency = dependency
        self.config = config or BreakerConfig()
        self.key = f"{prefix}circuito:{dependency}"
        self._metricas = as_metrics(metrics)
        self._clock = clock
        self._reloj_local = clock or time.monotonic
        self._local = LocalBreaker(self.config, self._reloj_local)
        self._compartido = None
        if redis_client is not None:
            from mercadofresco.circuit_breaker.shared import SharedBreakerState  # imports redis

            self._compartido = SharedBreakerState(self.key, redis_client, self.config)
        self._pendientes: list[str] = []
        self._lock = threading.Lock()
        # Probe tokens: unique per process (random base) and per call (a counter, whose next() is atomic
        # under the GIL, unlike a generator's); no syscall per call.
        self._token_base, self._contador = secrets.token_hex(6), itertools.count()
        self._degradado_hasta: float | None = None  # set while Valkey is considered unavailable

    @contextmanager
    def guard(self) -> Iterator[Permit]:
        """Admit one call or raise :class:`CircuitoAbierto`; record how the block ended.

        An exception out of the block is a failure, except :class:`PermanentError` (the
        dependency answered, with a no). Call ``permiso.failure()`` inside to record a failure
        the block does not raise (a 503 response returned as a value).
        """
        permiso = self.acquire()
        try:
            yield permiso
        except PermanentError:
            permiso.success()
            raise
        except BaseException:
            permiso.failure()
            raise
        permiso.success()

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` under :meth:`guard`."""
        with self.guard():
            return fn(*args, **kwargs)

    def acquire(self) -> Permit:
        """Ask leave for one call (one round trip, carrying this process's pending outcomes)."""
        if self._usa_compartido():
            token = f"{self._token_base}-{next(self._contador)}"
            try:
                decision = self._execute("acquire", token=token)
            except SharedStateUnavailableError as exc:
                self._degradar(exc)
            else:
                return self._permiso(decision, token=token if decision.is_probe else "", local=False)
        return self._permiso(self._local.acquire(), token="", local=True)

    def state(self) -> Decision:
        """The current state (publishing pending outcomes first); degraded: the local breaker's."""
        if self._usa_compartido():
            try:
                return self._execute("estado")
            except SharedStateUnavailableError as exc:
                self._degradar(exc)
        return self._local.snapshot()

    def shared_state(self) -> Decision:
        """The state as Valkey holds it, for operators: never the local fallback.

        Raises
        ------
        SharedStateUnavailableError
            Valkey did not answer (nothing was read or changed).
        ValueError
            This breaker has no Valkey client.
        """
        if self._compartido is None:
            raise ValueError("reading the shared state needs a Valkey client")
        return self._execute("estado")

    def flush(self) -> None:
        """Publish pending outcomes now (e.g. at the end of an invocation)."""
        with self._lock:
            if not self._pendientes:
                return
        self.state()

    def force(self, mode: Literal["abierto", "cerrado", ""]) -> Decision:
        """Operator override: ``abierto``/``cerrado`` until ``""`` (back to automatic, reset to closed).

        Raises :class:`SharedStateUnavailableError` when Valkey does not answer (nothing changed).
        """
        if self._compartido is None:
            raise ValueError("forcing needs the shared state: this breaker has no Valkey client")
        return self._compartido.execute("forzar", now_ms=self._ahora_ms(), token=mode)

    def _execute(self, op: str, **kwargs: str) -> Decision:
        with self._lock:
            pending, self._pendientes = "".join(self._pendientes), []
        assert self._compartido is not None
        decision = self._compartido.execute(op, now_ms=self._ahora_ms(), pending=pending, **kwargs)
        if self._degradado_hasta is not None:
            self._degradado_hasta = None
            logger.info("circuit breaker shared state available again", extra={"dependencia": self.dependency})
        if decision.open_reason:
            self._anunciar_apertura(
                decision.open_reason, decision.openings, decision.open_until_ms, compartido=True
            )
        return decision

    def _permiso(self, decision: Decision, *, token: str, local: bool) -> Permit:
        if not decision.admitted:
            espera_s = max(0.0, (decision.open_until_ms - decision.now_ms) / 1000)
            raise CircuitoAbierto(
                f"circuit '{self.dependency}' is {decision.state.value}: not calling; retry in {espera_s:.0f} s",
                dependency=self.dependency,
                retry_in_s=espera_s,
            )
        return Permit(self, is_probe=decision.is_probe, token=token, local=local)

    def _registrar(self, permiso: Permit, *, success: bool) -> None:
        if permiso.recorded:
            return
        permiso.recorded = True
        if permiso.local:
            motivo = self._local.record(success, is_probe=permiso.is_probe)
            if motivo:
                local = self._local.snapshot()
                self._anunciar_apertura(motivo, local.openings, local.open_until_ms, compartido=False)
        elif permiso.is_probe:
            try:
                self._execute("sonda", token=permiso.token, outcome="E" if success else "F")
            except SharedStateUnavailableError as exc:
                self._degradar(exc)  # the reservation expires on its own: nothing is wedged
        else:
            with self._lock:
                self._pendientes.append("E" if success else "F")

    def _usa_compartido(self) -> bool:
        if self._compartido is None:
            return False
        return self._degradado_hasta is None or self._reloj_local() >= self._degradado_hasta

    def _degradar(self, exc: Exception) -> None:
        self._degradado_hasta = self._reloj_local() + self.config.shared_retry_s
        logger.warning(
            "circuit breaker shared state unavailable: process-local breaker in use",
            extra={
                "dependencia": self.dependency,
                "error": str(exc),
                "reintento_s": self.config.shared_retry_s,
            },
        )
        self._metricas.count(SHARED_STATE_UNAVAILABLE, self.dependency)

    def _anunciar_apertura(self, motivo: str, aperturas: int, open_until_ms: int, *, compartido: bool) -> None:
        logger.warning(
            "circuit opened",
            extra={
                "dependencia": self.dependency,
                "motivo": motivo,
                "aperturas": aperturas,
                "abierto_hasta_ms": open_until_ms,
                "compartido": compartido,
            },
        )
        self._metricas.count(CIRCUIT_OPEN, self.dependency)

    def _ahora_ms(self) -> int | None:
        return None if self._clock is None else int(self._clock() * 1000)
