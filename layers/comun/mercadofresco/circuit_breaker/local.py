"""The degraded mode: a breaker in process memory, used while Valkey is unreachable.

Deliberately simpler than the shared one: only consecutive failures open it (one process sees
too few calls for a meaningful rate), with a lower bar (``local_consecutive_failures``); the open
time still grows exponentially, and half-open admits one probe in this process. Twenty Lambdas
in degraded mode are twenty small breakers: worse than one shared breaker, far better than none.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from mercadofresco.circuit_breaker.state import BreakerState, Decision

if TYPE_CHECKING:
    from collections.abc import Callable

    from mercadofresco.circuit_breaker.config import BreakerConfig


class LocalBreaker:
    """Process-local state machine; ``clock`` returns seconds."""

    def __init__(self, config: BreakerConfig, clock: Callable[[], float]) -> None:
        self._config, self._reloj = config, clock
        self._lock = threading.Lock()
        self._abierto_hasta = 0.0  # 0 = closed
        self._aperturas = 0
        self._seguidos = 0
        self._sonda_hasta = 0.0  # a live in-process probe reservation

    def acquire(self) -> Decision:
        with self._lock:
            ahora = self._reloj()
            if self._abierto_hasta == 0:
                return self._decision(True, BreakerState.CERRADO, ahora)
            if ahora < self._abierto_hasta or ahora < self._sonda_hasta:
                estado = BreakerState.ABIERTO if ahora < self._abierto_hasta else BreakerState.SEMIABIERTO
                return self._decision(False, estado, ahora)
            self._sonda_hasta = ahora + self._config.probe_reservation_s
            return self._decision(True, BreakerState.SEMIABIERTO, ahora, is_probe=True)

    def snapshot(self) -> Decision:
        """The state now, reserving nothing."""
        with self._lock:
            ahora = self._reloj()
            if self._abierto_hasta == 0:
                estado = BreakerState.CERRADO
            else:
                estado = BreakerState.ABIERTO if ahora < self._abierto_hasta else BreakerState.SEMIABIERTO
            return self._decision(estado is BreakerState.CERRADO, estado, ahora)

    def record(self, success: bool, *, is_probe: bool) -> str:
        """Record one outcome; returns the opening reason when this outcome opened the breaker."""
        with self._lock:
            if is_probe:
                self._sonda_hasta = 0.0
                if success:
                    self._abierto_hasta, self._aperturas, self._seguidos = 0.0, 0, 0
                    return ""
                return self._abrir("sonda_fallida")
            self._seguidos = 0 if success else self._seguidos + 1
            if self._abierto_hasta == 0 and self._seguidos >= self._config.local_consecutive_failures:
                return self._abrir("fallos_seguidos")
            return ""

    def _abrir(self, motivo: str) -> str:
        duracion = min(self._config.open_max_s, self._config.open_base_s * 2**self._aperturas)
        self._abierto_hasta = self._reloj() + duracion
        self._aperturas += 1
        self._seguidos = 0
        return motivo

    def _decision(self, admitted: bool, estado: BreakerState, ahora: float, *, is_probe: bool = False) -> Decision:
        return Decision(
            admitted=admitted,
            state=estado,
            open_until_ms=int(self._abierto_hasta * 1000),
            openings=self._aperturas,
            is_probe=is_probe,
            open_reason="",
            now_ms=int(ahora * 1000),
            consecutive_failures=self._seguidos,
        )
