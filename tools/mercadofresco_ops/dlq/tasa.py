"""A token bucket that spaces sends so no one-second window exceeds the rate.

Written as its virtual-scheduling form (GCRA): one "theoretical arrival time" instead of a
float token count, so there is no refill loop that float rounding could spin forever.
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
        capacidad: int = 1,
        reloj: Callable[[], float] = time.monotonic,
        dormir: Callable[[float], None] = time.sleep,
    ) -> None:
        if tasa_por_s <= 0 or capacidad < 1:
            raise ValueError("la tasa y la capacidad deben ser positivas")
        self.tasa_por_s = tasa_por_s
        self._intervalo_s = 1 / tasa_por_s
        self._tolerancia_s = (capacidad - 1) * self._intervalo_s  # how far ahead a burst may run
        self._reloj = reloj
        self._dormir = dormir
        self._teorico = reloj()  # when the next operation is due if the bucket were always busy

    def adquirir(self) -> None:
        ahora = self._reloj()
        permitido = self._teorico - self._tolerancia_s
        if ahora < permitido:
            self._dormir(permitido - ahora)
            # Re-read: a real sleep may overshoot, and spacing counts from when we really go.
            ahora = max(permitido, self._reloj())
        self._teorico = max(self._teorico, ahora) + self._intervalo_s
