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

__all__ = ["lazy_module_attribute", "per_environment", "reset_environment"]

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

    def register(function: Callable[..., Any]) -> Any:
        cached = functools.cache(function)
        with _lock:
            _caches.append((cached, close))
        return cached

    return register(fn) if fn is not None else register


def reset_environment() -> None:
    """Forget every per-environment cache of the layer, closing pools first, as a new container would."""
    with _lock:
        caches = list(_caches)
    for cached, close in caches:
        if close is not None and cached.cache_info().currsize:
            close(cached())
        cached.cache_clear()


def lazy_module_attribute(
    module_globals: dict[str, Any], name: str, build: Callable[[], Any]
) -> tuple[Callable[[], Any], Callable[[str], Any]]:
    """A handler's module attribute built on the first invocation instead of in the init phase.

    Returns ``(get, module_getattr)``: the handler calls ``get()``; ``module_getattr`` is the
    module's PEP 562 ``__getattr__``, so ``app.<name>`` read from outside (tests, the local run)
    builds it too, and an ``app.<name> = ...`` set from outside replaces it (a module global wins
    over ``__getattr__``). What it builds is the handler's own (its clients, its store), so
    :func:`reset_environment` does not forget it: a new module import does.

    Examples
    --------
    >>> g = {"__name__": "app"}
    >>> get, module_getattr = lazy_module_attribute(g, "store", dict)
    >>> get() is module_getattr("store") is g["store"]
    True
    """

    def get() -> Any:
        if name not in module_globals:
            module_globals[name] = build()
        return module_globals[name]

    def module_getattr(attribute: str) -> Any:
        if attribute == name:
            return get()
        raise AttributeError(f"module {module_globals['__name__']!r} has no attribute {attribute!r}")

    return get, module_getattr
