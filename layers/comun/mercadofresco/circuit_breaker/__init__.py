"""A circuit breaker whose state every concurrent consumer shares in Valkey (lesson, section 9).

``CircuitBreaker("pasarela", valkey_client(), config=BreakerConfig(...))`` then
``with breaker.guard(): ...``, ``breaker.call(fn)`` or ``@breaker.protect(on_circuit_open=plan)``; an
open breaker raises :class:`mercadofresco.errors.CircuitoAbierto` (or runs the plan) without calling
the dependency. A healthy call reads Valkey at most once per ``cache_max_age_s`` per process; the
staleness that allows, and why the invariants hold under it, are in :mod:`.core`.
Importing this package imports no driver; ``redis`` loads when a breaker gets a client.
"""

from __future__ import annotations

from mercadofresco.circuit_breaker.config import BreakerConfig
from mercadofresco.circuit_breaker.core import CircuitBreaker, Permit
from mercadofresco.circuit_breaker.state import BreakerState, Decision, SharedStateUnavailableError, Transition

__all__ = [
    "BreakerConfig",
    "BreakerState",
    "CircuitBreaker",
    "Decision",
    "Permit",
    "SharedStateUnavailableError",
    "Transition",
]
