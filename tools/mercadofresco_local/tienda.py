"""The store's side of the local run: a private PostgreSQL schema and the orders written to it.

:class:`BaseDemo` creates a schema of its own (``mf_demo_<hex>``) on the local PostgreSQL,
applies the outbox package's migrations there, and hands out a ``DATABASE_URL`` whose
``search_path`` is that schema (the relay Lambda reads it), so the demo never touches
anyone else's tables. :class:`Tienda` writes orders the two ways exercise 3 compares:

- :meth:`Tienda.crear_con_outbox`: order + ``PedidoCreado`` in one transaction
  (``mercadofresco.dominio.pedidos.crear_pedido``); the relay publishes later;
- :meth:`Tienda.crear_ingenuo`: ``INSERT`` + ``COMMIT``, then ``PutEvents`` — the dual write,
  with an injectable crash between the two.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from mercadofresco.aws import client

if TYPE_CHECKING:
    from collections.abc import Iterator

CATALOGO = [
    ("FRU-MAN-001", 249),
    ("VER-TOM-014", 189),
    ("LAC-LEC-003", 115),
    ("PAN-BAR-002", 95),
    ("CAR-POL-020", 799),
    ("PES-MER-011", 1450),
    ("FRU-PLA-007", 210),
    ("BEB-AGU-030", 60),
]


@dataclass
class BaseDemo:
    """A PostgreSQL schema of the demo's own, migrated; dropped by :meth:`borrar`."""

    url_base: str
    esquema: str = field(default_factory=lambda: f"mf_demo_{uuid.uuid4().hex[:10]}")

    @property
    def url(self) -> str:
        separador = "&" if "?" in self.url_base else "?"
        return f"{self.url_base}{separador}options={quote(f'-csearch_path={self.esquema}')}"

    def crear(self) -> BaseDemo:
        import psycopg
        from mercadofresco.outbox.schema import apply_migrations

        with psycopg.connect(self.url_base, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{self.esquema}"')
        with psycopg.connect(self.url) as conn:
            apply_migrations(conn)
        return self

    def borrar(self) -> None:
        import psycopg

        with psycopg.connect(self.url_base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{self.esquema}" CASCADE')

    def consultar(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.url) as conn:
            return list(conn.execute(sql, args))


class CaidaSimulada(Exception):
    """The store process 'died' between its commit and its publish (exercise 3)."""


@dataclass
class Tienda:
    """Writes orders into the demo schema; ``prefijo`` keeps each scenario's ids apart."""

    base: BaseDemo
    bus: str
    prefijo: str = "PED-2026-"
    semilla: int = 7
    creados: int = 0
    caidas: int = 0
    _conn: Any = None

    def __post_init__(self) -> None:
        self._rng = random.Random(self.semilla)

    def abrir(self) -> Tienda:
        import psycopg

        self._conn = psycopg.connect(self.base.url, autocommit=True)
        return self

    def cerrar(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def pedido(self, numero: int) -> dict[str, Any]:
        lineas = [
            {"sku": sku, "cantidad": self._rng.randint(1, 3), "precio_centimos": precio}
            for sku, precio in self._rng.sample(CATALOGO, self._rng.randint(1, 3))
        ]
        cliente = f"CLI-{self._rng.randint(1, 999):04d}"
        return {
            "pedido_id": f"{self.prefijo}{numero:06d}",
            "cliente_id": cliente,
            "email": f"{cliente.lower()}@example.com",
            "lineas": lineas,
        }

    def pedidos(self, n: int) -> Iterator[dict[str, Any]]:
        for numero in range(1, n + 1):
            yield self.pedido(numero)

    def crear_con_outbox(self, datos: dict[str, Any], version: int = 1) -> None:
        """Order and event in one transaction; ``version=2`` writes the new producer's contract."""
        from mercadofresco.dominio.pedidos import Pedido, crear_pedido
        from mercadofresco.outbox.postgres import add_event

        pedido = Pedido.desde_dict(datos)
        if version == 1:
            with self._conn.transaction():
                outbox_id = crear_pedido(self._conn, pedido)
                # PedidoConfirmado (and so the e-mail consumer) needs the customer's address, which
                # Pedido has no field for yet: added to the event in the same transaction.
                self._conn.execute(
                    "UPDATE outbox SET payload = payload || %s::jsonb WHERE id = %s",
                    (json.dumps({"email": datos["email"]}), outbox_id),
                )
        else:
            with self._conn.transaction():
                self._conn.execute(
                    "INSERT INTO pedidos (pedido_id, cliente_id, lineas, importe_centimos, moneda)"
                    " VALUES (%s, %s, %s::jsonb, %s, %s)",
                    (pedido.pedido_id, pedido.cliente_id, json.dumps(datos["lineas"]), pedido.importe_centimos, "EUR"),
                )
                add_event(self._conn, "pedido", pedido.pedido_id, "PedidoCreado", evento_v2(pedido), version=2)
        self.creados += 1

    def crear_ingenuo(self, datos: dict[str, Any], caer: bool) -> None:
        """``INSERT`` and ``COMMIT``, then ``PutEvents``: ``caer`` kills the 'process' in between."""
        from mercadofresco.dominio.pedidos import Pedido

        pedido = Pedido.desde_dict(datos)
        self._conn.execute(
            "INSERT INTO pedidos (pedido_id, cliente_id, lineas, importe_centimos, moneda)"
            " VALUES (%s, %s, %s::jsonb, %s, %s)",
            (pedido.pedido_id, pedido.cliente_id, json.dumps(datos["lineas"]), pedido.importe_centimos, "EUR"),
        )  # autocommit: committed here
        self.creados += 1
        if caer:
            self.caidas += 1
            raise CaidaSimulada(pedido.pedido_id)
        detalle = {**pedido.evento_creado(), "email": datos["email"], "id": str(uuid.uuid4()), "version": 1}
        client("events").put_events(
            Entries=[
                {
                    "Source": "mercadofresco.tienda",
                    "DetailType": "PedidoCreado",
                    "Detail": json.dumps(detalle),
                    "EventBusName": self.bus,
                }
            ]
        )


def evento_v2(pedido: Any) -> dict[str, Any]:
    """``PedidoCreado`` as the version-2 producer writes it (the amount nested with its currency).

    The shape of ``events/flujo/pedido-version-2.json`` and the inverse of
    ``mercadofresco_ops.dlq.adaptadores.v2_a_v1``: what that adapter expects, so the redrive
    of exercise 2 yields a complete version-1 order (amount, currency, customer, e-mail).
    """
    return {
        "pedido_id": pedido.pedido_id,
        "cliente_id": pedido.cliente_id,
        "email": f"{pedido.cliente_id.lower()}@example.com",
        "lineas": [
            {"sku": lin.sku, "cantidad": lin.cantidad, "precio_centimos": lin.precio_centimos} for lin in pedido.lineas
        ],
        "importe": {"centimos": pedido.importe_centimos, "moneda": pedido.moneda},
    }
