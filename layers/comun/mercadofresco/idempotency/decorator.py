"""``@idempotent``: :meth:`IdempotencyStore.run` (claim, then complete or fail) as a decorator."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from mercadofresco.idempotency.exceptions import IdempotencyKeyError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from mercadofresco.idempotency.keys import IdempotencyKey
    from mercadofresco.idempotency.store import IdempotencyStore

__all__ = ["idempotent"]

P = ParamSpec("P")
R = TypeVar("R")


def idempotent(
    store: IdempotencyStore,
    *,
    key: Callable[..., IdempotencyKey],
    payload_fields: Sequence[str] | None = None,
    payload: Callable[..., Any] | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make a function run once per key.

    Parameters
    ----------
    store
        The :class:`IdempotencyStore` holding the records.
    key
        Called with the function's own arguments; returns the key (``claves.cobro(...)``).
    payload_fields
        Fields of the first argument (a mapping) whose values must match on a duplicate.
    payload
        Alternatively, a callable with the function's arguments returning what to validate.

    Key and payload are computed *before* the function runs, so mutating the input
    inside it changes neither.

    Examples
    --------
    >>> @idempotent(store, key=lambda pedido: claves.cobro(pedido["pedido_id"]),
    ...             payload_fields=("pedido_id", "importe"))
    ... def cobrar(pedido): ...
    """
    if payload_fields is not None and payload is not None:
        raise ValueError("give payload_fields or payload, not both")

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            k = key(*args, **kwargs)
            if payload is not None:
                p = payload(*args, **kwargs)
            elif payload_fields is not None:
                p = _payload_fields(function.__qualname__, payload_fields, args, kwargs)
            else:
                p = None
            return store.run(k, lambda: function(*args, **kwargs), payload=p)

        return wrapper

    return decorate


def _payload_fields(name: str, fields: Sequence[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The named fields of the call's first argument (positional, or the only keyword one)."""
    if args:
        data = args[0]
    elif len(kwargs) == 1:
        data = next(iter(kwargs.values()))
    else:
        raise IdempotencyKeyError(f"{name}: payload_fields needs the payload as first argument")
    if not isinstance(data, Mapping):
        raise IdempotencyKeyError(f"{name}: payload_fields needs a mapping, got {type(data).__name__}")
    missing = [f for f in fields if f not in data]
    if missing:
        raise IdempotencyKeyError(f"{name}: payload field(s) {missing} missing from the input")
    return {f: data[f] for f in fields}
