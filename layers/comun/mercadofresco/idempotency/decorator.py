"""``@idempotent``: the store's :meth:`run` as a decorator, with key and payload taken from the arguments."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from mercadofresco.idempotency.exceptions import IdempotencyKeyError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from mercadofresco.idempotency.keys import IdempotencyKey
    from mercadofresco.idempotency.store import IdempotencyStore

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

    def decorar(funcion: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(funcion)
        def envoltura(*args: P.args, **kwargs: P.kwargs) -> R:
            k = key(*args, **kwargs)
            if payload is not None:
                p = payload(*args, **kwargs)
            elif payload_fields is not None:
                p = _campos(funcion.__qualname__, payload_fields, args, kwargs)
            else:
                p = None
            return store.run(k, lambda: funcion(*args, **kwargs), payload=p)

        return envoltura

    return decorar


def _campos(nombre: str, campos: Sequence[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The named fields of the call's first argument (positional, or the only keyword one)."""
    if args:
        datos = args[0]
    elif len(kwargs) == 1:
        datos = next(iter(kwargs.values()))
    else:
        raise IdempotencyKeyError(f"{nombre}: payload_fields needs the payload as first argument")
    if not isinstance(datos, Mapping):
        raise IdempotencyKeyError(f"{nombre}: payload_fields needs a mapping, got {type(datos).__name__}")
    faltan = [c for c in campos if c not in datos]
    if faltan:
        raise IdempotencyKeyError(f"{nombre}: payload field(s) {faltan} missing from the input")
    return {c: datos[c] for c in campos}
