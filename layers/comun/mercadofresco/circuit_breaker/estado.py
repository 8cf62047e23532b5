"""Value types the breaker's backends return (no driver imports here)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from mercadofresco.errors import MercadoFrescoError


class BreakerState(Enum):
    """A breaker's state as an operator reads it."""

    CERRADO = "cerrado"
    ABIERTO = "abierto"
    SEMIABIERTO = "semiabierto"
    FORZADO_ABIERTO = "forzado_abierto"
    FORZADO_CERRADO = "forzado_cerrado"


@dataclass(frozen=True, slots=True)
class Decision:
    """One script call's answer: admit or not, and the state it saw after recording outcomes."""

    admitido: bool
    estado: BreakerState
    abierto_hasta_ms: int
    aperturas: int
    es_sonda: bool
    motivo_apertura: str  # non-empty only for the one call whose record opened the breaker
    ahora_ms: int
    exitos_ventana: int = 0
    fallos_ventana: int = 0
    consecutive_failures: int = 0


class SharedStateUnavailableError(MercadoFrescoError):
    """Valkey did not answer within the socket timeout (or refused): the breaker degrades; an operator is told."""
