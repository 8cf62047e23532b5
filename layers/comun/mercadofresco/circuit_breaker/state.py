"""Value types the breaker hands out (no driver imports here)."""

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
    """One answer of the breaker's state: admit or not, and the state it saw after recording outcomes.

    ``transition`` is the state *this* request moved the breaker to (``None`` almost always): exactly
    one process learns of each transition, and it announces it. ``epoch`` is the state's generation
    (+1 on every transition): an outcome counts only in the epoch its call was admitted in.
    """

    admitted: bool
    state: BreakerState
    open_until_ms: int
    openings: int
    is_probe: bool
    open_reason: str  # non-empty only for the one request whose record opened the breaker
    now_ms: int
    window_successes: int = 0
    window_failures: int = 0
    consecutive_failures: int = 0
    epoch: int = 0
    transition: BreakerState | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    """A change of a breaker's state, handed to the ``on_transition`` hook (as Powertools' ``CircuitTransition``).

    Announced once per change across every process: by the process whose request made it. ``reason`` is
    why it opened (``fallos_seguidos``, ``tasa_fallos``, ``sonda_fallida``), empty otherwise; ``shared``
    is False for the process-local breaker of the degraded mode.
    """

    dependency: str
    from_state: BreakerState
    to_state: BreakerState
    reason: str
    openings: int
    open_until_ms: int
    shared: bool


class SharedStateUnavailableError(MercadoFrescoError):
    """Valkey did not answer within the socket timeout (or refused): the breaker degrades; an operator is told."""
