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
from mercadofresco.circuit_breaker.estado import Decision, SharedStateUnavailableError
from mercadofresco.circuit_breaker.local import LocalBreaker
from mercadofresco.errors import CircuitoAbierto, PermanentError
from mercadofresco.metrics import CIRCUITO_ABIERTO, ESTADO_COMPARTIDO_NO_DISPONIBLE, as_metrics
from mercadofresco.valkey import PREFIJO_CLAVES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import redis

T = TypeVar("T")
logger = logging.getLogger("mercadofresco.circuit_breaker")


class Permit:
    """Leave to make one call; report its outcome with :meth:`success` / :meth:`failure` (``guard`` does it)."""

    __slots__ = ("_breaker", "es_sonda", "local", "registrado", "token")

    def __init__(self, breaker: CircuitBreaker, *, es_sonda: bool, token: str, local: bool) -> None:
        self._breaker, self.es_sonda, self.token, self.local = breaker, es_sonda, token, local
        self.registrado = False

    def success(self) -> None:
        """The dependency answered (a business refusal counts: it is up)."""
        self._breaker._registrar(self, exito=True)

    def failure(self) -> None:
        """The dependency failed (5xx, 429, timeout, reset...)."""
        self._breaker._registrar(self, exito=False)


class CircuitBreaker:
    """A breaker for one dependency, shared by every process through Valkey.

    Parameters
    ----------
    dependencia:
        ``pasarela``, ``erp``, ``correo-principal``...: one breaker (one key) per dependency.
    redis_client:
        From :func:`mercadofresco.valkey.valkey_client` (short socket timeouts), or ``None``
        for a process-local breaker only.
    config:
        Thresholds and durations, :class:`BreakerConfig` defaults otherwise.
    metrics:
        A :class:`~mercadofresco.metrics.MetricsSink`, a Powertools ``Metrics``
        (its namespace is used) or ``None`` (Powertools EMF in ``MercadoFresco/Tienda``).
    prefijo:
        Key prefix; the key is ``{prefijo}circuito:{dependencia}``.
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
        dependencia: str,
        redis_client: redis.Redis | None,
        *,
        config: BreakerConfig | None = None,
        metrics: Any = None,
        prefijo: str = PREFIJO_CLAVES,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.dependencia = dependencia
        self.config = config or BreakerConfig()
        self.clave = f"{prefijo}circuito:{dependencia}"
        self._metricas = as_metrics(metrics)
        self._clock = clock
        self._reloj_local = clock or time.monotonic
        self._local = LocalBreaker(self.config, self._reloj_local)
        self._compartido = None
        if redis_client is not None:
            from mercadofresco.circuit_breaker.compartido import SharedBreakerState  # imports redis

            self._compartido = SharedBreakerState(self.clave, redis_client, self.config)
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
                return self._permiso(decision, token=token if decision.es_sonda else "", local=False)
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

    def force(self, modo: Literal["abierto", "cerrado", ""]) -> Decision:
        """Operator override: ``abierto``/``cerrado`` until ``""`` (back to automatic, reset to closed).

        Raises :class:`SharedStateUnavailableError` when Valkey does not answer (nothing changed).
        """
        if self._compartido is None:
            raise ValueError("forcing needs the shared state: this breaker has no Valkey client")
        return self._compartido.execute("forzar", ahora_ms=self._ahora_ms(), token=modo)

    def _execute(self, op: str, **kwargs: str) -> Decision:
        with self._lock:
            pendientes, self._pendientes = "".join(self._pendientes), []
        assert self._compartido is not None
        decision = self._compartido.execute(op, ahora_ms=self._ahora_ms(), pendientes=pendientes, **kwargs)
        if self._degradado_hasta is not None:
            self._degradado_hasta = None
            logger.info("circuit breaker shared state available again", extra={"dependencia": self.dependencia})
        if decision.motivo_apertura:
            self._anunciar_apertura(
                decision.motivo_apertura, decision.aperturas, decision.abierto_hasta_ms, compartido=True
            )
        return decision

    def _permiso(self, decision: Decision, *, token: str, local: bool) -> Permit:
        if not decision.admitido:
            espera_s = max(0.0, (decision.abierto_hasta_ms - decision.ahora_ms) / 1000)
            raise CircuitoAbierto(
                f"circuit '{self.dependencia}' is {decision.estado.value}: not calling; retry in {espera_s:.0f} s",
                dependency=self.dependencia,
                retry_in_s=espera_s,
            )
        return Permit(self, es_sonda=decision.es_sonda, token=token, local=local)

    def _registrar(self, permiso: Permit, *, exito: bool) -> None:
        if permiso.registrado:
            return
        permiso.registrado = True
        if permiso.local:
            motivo = self._local.record(exito, es_sonda=permiso.es_sonda)
            if motivo:
                local = self._local.snapshot()
                self._anunciar_apertura(motivo, local.aperturas, local.abierto_hasta_ms, compartido=False)
        elif permiso.es_sonda:
            try:
                self._execute("sonda", token=permiso.token, resultado="E" if exito else "F")
            except SharedStateUnavailableError as exc:
                self._degradar(exc)  # the reservation expires on its own: nothing is wedged
        else:
            with self._lock:
                self._pendientes.append("E" if exito else "F")

    def _usa_compartido(self) -> bool:
        if self._compartido is None:
            return False
        return self._degradado_hasta is None or self._reloj_local() >= self._degradado_hasta

    def _degradar(self, exc: Exception) -> None:
        self._degradado_hasta = self._reloj_local() + self.config.shared_retry_s
        logger.warning(
            "circuit breaker shared state unavailable: process-local breaker in use",
            extra={
                "dependencia": self.dependencia,
                "error": str(exc),
                "reintento_s": self.config.shared_retry_s,
            },
        )
        self._metricas.count(ESTADO_COMPARTIDO_NO_DISPONIBLE, self.dependencia)

    def _anunciar_apertura(self, motivo: str, aperturas: int, abierto_hasta_ms: int, *, compartido: bool) -> None:
        logger.warning(
            "circuit opened",
            extra={
                "dependencia": self.dependencia,
                "motivo": motivo,
                "aperturas": aperturas,
                "abierto_hasta_ms": abierto_hasta_ms,
                "compartido": compartido,
            },
        )
        self._metricas.count(CIRCUITO_ABIERTO, self.dependencia)

    def _ahora_ms(self) -> int | None:
        return None if self._clock is None else int(self._clock() * 1000)
