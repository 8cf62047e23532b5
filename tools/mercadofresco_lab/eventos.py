"""A minimal discrete-event loop: a heap of (time, sequence, action) and a simulated clock."""

from __future__ import annotations

import heapq
import itertools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


class Simulacion:
    """Runs scheduled actions in time order; ties run in scheduling order (deterministic)."""

    def __init__(self) -> None:
        self.ahora_s = 0.0
        self._cola: list[tuple[float, int, Callable[[], None]]] = []
        self._secuencia = itertools.count()

    def reloj(self) -> float:
        """The simulated time in seconds (a clock to inject into the layer's mechanisms)."""
        return self.ahora_s

    def en(self, retraso_s: float, accion: Callable[[], None]) -> None:
        """Run ``accion`` ``retraso_s`` seconds from now."""
        if retraso_s < 0:
            raise ValueError(f"cannot schedule in the past: {retraso_s} s")
        heapq.heappush(self._cola, (self.ahora_s + retraso_s, next(self._secuencia), accion))

    def ejecutar(self, hasta_s: float = float("inf")) -> None:
        """Process events until none are left or the next one is past ``hasta_s``."""
        while self._cola and self._cola[0][0] <= hasta_s:
            self.ahora_s, _, accion = heapq.heappop(self._cola)
            accion()
