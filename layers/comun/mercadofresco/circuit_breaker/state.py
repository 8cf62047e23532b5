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

    admitted: bool
    state: BreakerState
    open_until_ms: int
    openings: int
    is_probe: bool
    open_reason: str  # non-empty only for the one call whose record opened the breaker
    now_ms: int
    window_successes: int = 0
    window_failures: int = 0
    consecutive_failures: int = 0


class SharedStateUnavailableError(MercadoFrescoError):
    """Valkey did not answer within the socket timeout (or refused): the breaker degrades; an operator is told."""
