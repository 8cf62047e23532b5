"""The store writes an order and its PedidoCreado event (the outbox row) together or not at all."""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
import pytest
from mercadofresco.dominio.pedidos import Pedido, PedidoDuplicado, PedidoInvalido, crear_pedido

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

pytestmark = pytest.mark.integration


def _pedido(pedido_id: str = "ped-1") -> Pedido:
    return Pedido.desde_dict(
        {
            "pedido_id": pedido_id,
            "cliente_id": "cli-7",
            "lineas": [
                {"sku": "MANZ-1", "cantidad": 3, "precio_centimos": 120},
                {"sku": "PERA-2", "cantidad": 1, "precio_centimos": 4460},
            ],
        }
    )


def _cuenta(pool: ConnectionPool) -> tuple[int, int]:
    with pool.connection() as conn:
        return conn.execute("SELECT (SELECT count(*) FROM pedidos), (SELECT count(*) FROM outbox)").fetchone()


def test_crear_pedido_when_committed_writes_order_and_event(pool: ConnectionPool) -> None:
    # GIVEN an empty schema
    # WHEN the store writes an order
    with pool.connection() as conn:
        outbox_id = crear_pedido(conn, _pedido())
    # THEN the order and exactly one pending PedidoCreado row for it exist
    with pool.connection() as conn:
        fila = conn.execute(
            "SELECT tipo_evento, agregado_id, version, payload, publicado, intentos FROM outbox WHERE id = %s",
            (outbox_id,),
        ).fetchone()
        importe = conn.execute("SELECT importe_centimos FROM pedidos WHERE pedido_id = 'ped-1'").fetchone()[0]
    assert fila[:3] == ("PedidoCreado", "ped-1", 1)
    assert fila[3]["importe_centimos"] == importe == 3 * 120 + 4460
    assert fila[4:] == (False, 0)
    assert _cuenta(pool) == (1, 1)


def test_crear_pedido_when_caller_transaction_fails_leaves_neither(pool: ConnectionPool) -> None:
    # GIVEN a caller transaction that writes the order and then fails before committing
    with pool.connection() as conn, pytest.raises(RuntimeError, match="after the write"), conn.transaction():
        crear_pedido(conn, _pedido())
        raise RuntimeError("the store crashed after the write")
    # THEN neither the order nor its event exists
    assert _cuenta(pool) == (0, 0)


def test_crear_pedido_when_outbox_insert_fails_rolls_back_order(pool: ConnectionPool) -> None:
    # GIVEN an outbox that refuses the event (a constraint the insert violates)
    with pool.connection() as conn:
        conn.execute("ALTER TABLE outbox ADD CONSTRAINT sin_pedidos CHECK (tipo_evento <> 'PedidoCreado')")
    # WHEN the store writes an order
    with pool.connection() as conn, pytest.raises(psycopg.errors.CheckViolation):
        crear_pedido(conn, _pedido())
    # THEN the order row was rolled back with it
    assert _cuenta(pool) == (0, 0)


def test_crear_pedido_when_duplicate_raises_and_writes_nothing(pool: ConnectionPool) -> None:
    # GIVEN an order already written
    with pool.connection() as conn:
        crear_pedido(conn, _pedido())
    # WHEN the same pedido_id is written again
    with pool.connection() as conn, pytest.raises(PedidoDuplicado, match="ped-1"):
        crear_pedido(conn, _pedido())
    # THEN there is still one order and one event
    assert _cuenta(pool) == (1, 1)


@pytest.mark.parametrize(
    ("datos", "mensaje"),
    [
        ({"cliente_id": "c", "lineas": []}, "missing field 'pedido_id'"),
        ({"pedido_id": "p", "cliente_id": "c", "lineas": []}, "no lines"),
        (
            {"pedido_id": "p", "cliente_id": "c", "lineas": [{"sku": "A", "cantidad": "x", "precio_centimos": 1}]},
            "malformed",
        ),
        (
            {"pedido_id": "p", "cliente_id": "c", "lineas": [{"sku": "A", "cantidad": 0, "precio_centimos": 1}]},
            "quantity < 1",
        ),
    ],
)
def test_pedido_desde_dict_when_malformed_raises_clear_error(datos: dict, mensaje: str) -> None:
    # WHEN / THEN a malformed order is refused with a message saying why
    with pytest.raises(PedidoInvalido, match=mensaje):
        Pedido.desde_dict(datos)
