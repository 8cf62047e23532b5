"""The demo's order producer: a scenario told in a provider's time starts with its first order there."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

from mercadofresco_local.flujo import Productor

from tests.conftest import HANG_GUARD_S


class _Pedidos:
    """The store's order source, as :class:`Productor` reads it."""

    def pedidos(self, n: int) -> list[dict[str, Any]]:
        return [{"numero": i} for i in range(1, n + 1)]


def test_producer_with_a_start_event_creates_the_first_order_alone_and_the_rest_after_it() -> None:
    # GIVEN a fast producer of 5 orders whose start event is set only after the first order exists
    arranque, primero = threading.Event(), threading.Event()
    vistos: list[tuple[int, bool]] = []

    def crear(_datos: dict[str, Any], numero: int) -> None:
        vistos.append((numero, arranque.is_set()))
        primero.set()

    productor = Productor(SimpleNamespace(tienda=_Pedidos()), 5, 1_000_000.0, crear, arranque).arrancar()
    assert primero.wait(HANG_GUARD_S)
    # WHEN the event is set (the first order reached the provider)
    arranque.set()
    assert productor.terminado.wait(HANG_GUARD_S)
    productor.comprobar()
    # THEN every order was created, and none but the first before the event
    assert vistos == [(1, False), (2, True), (3, True), (4, True), (5, True)]
    assert productor.creados == 5
