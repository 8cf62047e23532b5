"""What the layer keeps for the life of an execution environment, and the one way to forget it.

Clients, pools, secret providers and configuration are built on first use and reused by warm
invocations (a Lambda container lives for many of them). Every such cache is declared with
:func:`per_environment` instead of a bare ``functools.cache``, so :func:`reset_environment` can
forget them all, closing what holds connections first: what a new container would see. The
local run calls it between runs in one process (another moto port, another database schema);
nothing in Lambda needs it.
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

_lock = threading.Lock()
_caches: list[tuple[Any, Callable[[Any], None] | None]] = []


def per_environment(fn: Callable[..., Any] | None = None, *, close: Callable[[Any], None] | None = None) -> Any:
    """``functools.cache`` that :func:`reset_environment` clears; ``close`` releases a zero-argument cache's value.

    Examples
    --------
    >>> @per_environment
    ... def config() -> dict:
    ...     return {"built": True}
    >>> config() is config()
    True
    """

    def registrar(funcion: Callable[..., Any]) -> Any:
        cacheada = functools.cache(funcion)
        with _lock:
            _caches.append((cacheada, close))
        return cacheada

    return registrar(fn) if fn is not None else registrar


def reset_environment() -> None:
    """Forget every per-environment cache of the layer, closing pools first, as a new container would."""
    with _lock:
        caches = list(_caches)
    for cacheada, close in caches:
        if close is not None and cacheada.cache_info().currsize:
            close(cacheada())
        cacheada.cache_clear()
