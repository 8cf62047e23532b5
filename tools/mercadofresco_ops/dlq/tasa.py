"""A token bucket that spaces sends so no one-second window exceeds the rate.

The capacity is one token on purpose: a bucket that may hold ``rate`` tokens lets a burst
of ``rate`` through right after an idle moment, i.e. up to twice the rate inside one second
— exactly the spike a reprocess must not throw at a dependency that just recovered.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


class TokenBucket:
    """``adquirir()`` blocks until one more operation fits within ``tasa_por_s``."""

    def __init__(
        self,
        tasa_por_s: float,
        capacidad: float = 1.0,
        reloj: Callable[[], float] = time.monotonic,
        dormir: Callable[[float], None] = time.sleep,
    ) -> None:
        if tasa_por_s <= 0:
            raise ValueError("la tasa debe ser positiva")
        self.tasa_por_s = tasa_por_s
        self.capacidad = capacidad
        self._reloj = reloj
        self._dormir = dormir
        self._fichas = capacidad
        self._ultimo = reloj()

    def _rellenar(self) -> None:
        ahora = self._reloj()
        self._fichas = min(self.capacidad, self._fichas + (ahora - self._ultimo) * self.tasa_por_s)
        self._ultimo = ahora

    def adquirir(self) -> None:
        self._rellenar()
        while self._fichas < 1:
            self._dormir((1 - self._fichas) / self.tasa_por_s)
            self._rellenar()
        self._fichas -= 1
