"""A circuit breaker whose state every concurrent consumer shares in Valkey (lesson, section 9).

``CircuitBreaker("pasarela", valkey_client(), config=BreakerConfig(...))`` then
``with breaker.guard(): ...`` or ``breaker.call(fn)``; an open breaker raises
:class:`mercadofresco.errors.CircuitoAbierto` without calling the dependency.
Importing this package imports no driver; ``redis`` loads when a breaker gets a client.
"""

from __future__ import annotations

from mercadofresco.circuit_breaker.config import BreakerConfig
from mercadofresco.circuit_breaker.core import CircuitBreaker, Permit
from mercadofresco.circuit_breaker.state import BreakerState, Decision, SharedStateUnavailableError

__all__ = [
    "BreakerConfig",
    "BreakerState",
    "CircuitBreaker",
    "Decision",
    "Permit",
    "SharedStateUnavailableError",
]
