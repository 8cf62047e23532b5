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
        self._config, self._clock = config, clock
        self._lock = threading.Lock()
        self._open_until_s = 0.0  # 0 = closed
        self._openings = 0
        self._consecutive = 0
        self._probe_until_s = 0.0  # a live in-process probe reservation

    def acquire(self) -> Decision:
        with self._lock:
            now_s = self._clock()
            if self._open_until_s == 0:
                return self._decision(True, BreakerState.CERRADO, now_s)
            if now_s < self._open_until_s or now_s < self._probe_until_s:
                state = BreakerState.ABIERTO if now_s < self._open_until_s else BreakerState.SEMIABIERTO
                return self._decision(False, state, now_s)
            self._probe_until_s = now_s + self._config.probe_reservation_s
            return self._decision(True, BreakerState.SEMIABIERTO, now_s, is_probe=True)

    def snapshot(self) -> Decision:
        """The state now, reserving nothing."""
        with self._lock:
            now_s = self._clock()
            if self._open_until_s == 0:
                state = BreakerState.CERRADO
            else:
                state = BreakerState.ABIERTO if now_s < self._open_until_s else BreakerState.SEMIABIERTO
            return self._decision(state is BreakerState.CERRADO, state, now_s)

    def record(self, success: bool, *, is_probe: bool) -> str:
        """Record one outcome; returns the opening reason when this outcome opened the breaker."""
        with self._lock:
            if is_probe:
                self._probe_until_s = 0.0
                if success:
                    self._open_until_s, self._openings, self._consecutive = 0.0, 0, 0
                    return ""
                return self._open("sonda_fallida")
            self._consecutive = 0 if success else self._consecutive + 1
            if self._open_until_s == 0 and self._consecutive >= self._config.local_consecutive_failures:
                return self._open("fallos_seguidos")
            return ""

    def _open(self, reason: str) -> str:
        duration_s = min(self._config.open_max_s, self._config.open_base_s * 2**self._openings)
        self._open_until_s = self._clock() + duration_s
        self._openings += 1
        self._consecutive = 0
        return reason

    def _decision(self, admitted: bool, state: BreakerState, now_s: float, *, is_probe: bool = False) -> Decision:
        return Decision(
            admitted=admitted,
            state=state,
            open_until_ms=int(self._open_until_s * 1000),
            openings=self._openings,
            is_probe=is_probe,
            open_reason="",
            now_ms=int(now_s * 1000),
            consecutive_failures=self._consecutive,
        )
