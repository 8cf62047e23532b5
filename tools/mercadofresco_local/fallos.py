"""The fault script shared by the loopback provider stand-ins (see ``proveedores``).

A :class:`Fallo` applies to a provider and a route prefix (``None`` = any), inside a time
window of the control's clock (seconds since ``reiniciar_reloj()``, or since the provider's
first request once it is anchored with ``anclar``; inject ``reloj`` to compress time in
tests), to a proportion of the requests and optionally only ``veces`` times. The first
matching rule wins. :class:`ControlFallos` is thread-safe: the request threads of several
providers read it while a test or the demo rewrites it.
"""

from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


class TipoFallo(StrEnum):
    LATENCIA = "latencia"
    ESTADO = "estado"
    LIMITE = "limite"
    TIEMPO_AGOTADO = "tiempo-agotado"
    CONEXION_CORTADA = "conexion-cortada"


@dataclass(frozen=True, slots=True)
class Fallo:
    """One scripted fault; build it with the classmethods."""

    tipo: TipoFallo
    proveedor: str | None = None  # a provider's dependency name (its stand-in's, "pasarela"...); None = any
    ruta: str | None = None  # path prefix ("/cobros"); None = any
    desde_s: float = 0.0
    hasta_s: float = math.inf
    proporcion: float = 1.0  # fraction of matching requests affected
    veces: int | None = None  # apply at most this many times (None = no limit)
    codigo: int = 503  # HTTP status for ESTADO
    latencia_s: float = 0.0
    retry_after_s: int = 1
    tras_procesar: bool = False

    @classmethod
    def latencia(cls, latencia_s: float, **kw: Any) -> Fallo:
        return cls(TipoFallo.LATENCIA, latencia_s=latencia_s, **kw)

    @classmethod
    def estado(cls, codigo: int, **kw: Any) -> Fallo:
        return cls(TipoFallo.ESTADO, codigo=codigo, **kw)

    @classmethod
    def limite(cls, retry_after_s: int = 1, **kw: Any) -> Fallo:
        return cls(TipoFallo.LIMITE, codigo=429, retry_after_s=retry_after_s, **kw)

    @classmethod
    def tiempo_agotado(cls, latencia_s: float, **kw: Any) -> Fallo:
        return cls(TipoFallo.TIEMPO_AGOTADO, latencia_s=latencia_s, **kw)

    @classmethod
    def conexion_cortada(cls, *, tras_procesar: bool = False, **kw: Any) -> Fallo:
        return cls(TipoFallo.CONEXION_CORTADA, tras_procesar=tras_procesar, **kw)

    def aplica(self, proveedor: str, ruta: str, ahora_s: float) -> bool:
        return (
            (self.proveedor is None or self.proveedor == proveedor)
            and (self.ruta is None or ruta.startswith(self.ruta))
            and self.desde_s <= ahora_s < self.hasta_s
        )


@dataclass
class ControlFallos:
    """Thread-safe fault script and business rules shared by one or more providers."""

    reloj: Callable[[], float] = time.monotonic
    rng: random.Random = field(default_factory=random.Random)
    _t0: float = field(init=False)
    _reglas: list[Fallo] = field(default_factory=list, init=False)
    _tarjetas: set[str] = field(default_factory=set, init=False)
    _importes: set[int] = field(default_factory=set, init=False)
    _anclas: dict[str, threading.Event] = field(default_factory=dict, init=False)
    _t0_de: dict[str, float] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self._t0 = self.reloj()

    def ahora_s(self, proveedor: str | None = None) -> float:
        """Seconds on ``proveedor``'s clock (the control's, unless it is anchored)."""
        with self._lock:
            return self._ahora_de(proveedor, primera=False)

    def reiniciar_reloj(self) -> None:
        """Make t=0 now: windows in ``desde_s``/``hasta_s`` count from here."""
        with self._lock:
            self._t0 = self.reloj()

    def anclar(self, proveedor: str) -> threading.Event:
        """Count ``proveedor``'s windows from its next request; the event is set when it arrives.

        A scenario told in the provider's time ("slow after 6 s, down for 30 s") then starts when
        the first order reaches it, not when the session started: how long a loaded machine takes
        to warm the pipeline up is not part of the story.
        """
        with self._lock:
            self._t0_de.pop(proveedor, None)
            self._anclas[proveedor] = threading.Event()
            return self._anclas[proveedor]

    def _ahora_de(self, proveedor: str | None, *, primera: bool) -> float:
        ahora = self.reloj()
        ancla = self._anclas.get(proveedor) if proveedor is not None else None
        if ancla is None:
            return ahora - self._t0
        if proveedor not in self._t0_de:
            if not primera:
                return 0.0
            self._t0_de[proveedor] = ahora
            ancla.set()
        return ahora - self._t0_de[proveedor]

    def programar(self, *fallos: Fallo) -> None:
        with self._lock:
            self._reglas.extend(fallos)

    def limpiar(self) -> None:
        """Forget every fault, anchor and declined card (the providers work normally again)."""
        with self._lock:
            self._reglas.clear()
            self._anclas.clear()
            self._t0_de.clear()
            self._tarjetas.clear()
            self._importes.clear()

    def rechazar_tarjeta(self, token: str) -> None:
        """Decline charges made with this card token (or this cliente_id, the card on file)."""
        with self._lock:
            self._tarjetas.add(token)

    def rechazar_importe(self, importe_centimos: int) -> None:
        with self._lock:
            self._importes.add(importe_centimos)

    def rechaza(self, token: str | None, importe_centimos: int | None) -> bool:
        with self._lock:
            return token in self._tarjetas or importe_centimos in self._importes

    def elegir(self, proveedor: str, ruta: str) -> Fallo | None:
        """The fault for this request, if any; consumes one of its ``veces``."""
        with self._lock:
            ahora = self._ahora_de(proveedor, primera=True)
            for i, fallo in enumerate(self._reglas):
                if not fallo.aplica(proveedor, ruta, ahora) or self.rng.random() >= fallo.proporcion:
                    continue
                if fallo.veces is not None:
                    restantes = fallo.veces - 1
                    if restantes:
                        self._reglas[i] = replace(fallo, veces=restantes)
                    else:
                        del self._reglas[i]
                return fallo
        return None
