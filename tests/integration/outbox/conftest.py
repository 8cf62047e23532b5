"""Outbox fixtures: a migrated private schema, a pool on it, and a moto bus delivering to SQS."""

from __future__ import annotations

import functools
import json
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from mercadofresco.outbox.config import OutboxConfig
from mercadofresco.outbox.schema import apply_migrations
from psycopg_pool import ConnectionPool

if TYPE_CHECKING:
    from collections.abc import Iterator

BUS = "bus-mercadofresco"


def metricas_emf(salida: str) -> dict[str, Any]:
    """Metric name -> value from the EMF lines Powertools printed."""
    valores: dict[str, Any] = {}
    for linea in salida.splitlines():
        if '"_aws"' in linea:
            doc = json.loads(linea)
            for definicion in doc["_aws"]["CloudWatchMetrics"][0]["Metrics"]:
                valor = doc[definicion["Name"]]
                valores[definicion["Name"]] = valor[-1] if isinstance(valor, list) else valor
    return valores


@pytest.fixture
def outbox_dsn(pg_dsn: str) -> str:
    """A private schema with the outbox migrations applied by the same step the Lambda uses."""
    with psycopg.connect(pg_dsn) as conn:
        apply_migrations(conn)
    return pg_dsn


@pytest.fixture
def pool(outbox_dsn: str) -> Iterator[ConnectionPool]:
    with ConnectionPool(outbox_dsn, min_size=1, max_size=2, open=True, check=ConnectionPool.check_connection) as p:
        yield p


@pytest.fixture
def config() -> OutboxConfig:
    return OutboxConfig(bus_name=BUS, poll_s=0.01, error_wait_s=0.05, resend_wait_s=0.0)


@dataclass
class BusEnCola:
    """``bus-mercadofresco`` on moto with a rule delivering every store event to an SQS queue."""

    bus: str
    cola_url: str
    sqs: Any

    def recibir_todo(self) -> list[dict[str, Any]]:
        """Every event delivered so far, in delivery order (messages are deleted)."""
        eventos: list[dict[str, Any]] = []
        while lote := self.recibir_lote():
            eventos.extend(lote)
        return eventos

    def recibir_lote(self) -> list[dict[str, Any]]:
        """Up to 10 delivered events, oldest first, deleted from the queue."""
        mensajes = self.sqs.receive_message(QueueUrl=self.cola_url, MaxNumberOfMessages=10).get("Messages", [])
        if mensajes:
            self.sqs.delete_message_batch(
                QueueUrl=self.cola_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(mensajes)],
            )
        return [json.loads(m["Body"]) for m in mensajes]


class Consumidor:
    """Reads the queue in a thread while relays publish, in delivery order.

    moto's SQS re-counts the whole queue on every send and every received message, so its
    cost grows with the square of the depth: 10,000 queued messages take minutes. The
    consumer keeps the queue short, and :meth:`frenar` makes a client's ``PutEvents`` wait
    while more than ``max_en_cola`` events are unread (back-pressure in the test harness only).
    """

    def __init__(self, bus: BusEnCola, max_en_cola: int = 30) -> None:
        self.eventos: list[dict[str, Any]] = []
        self._bus = bus
        self._max = max_en_cola
        self._enviados = 0
        self._cerrojo = threading.Lock()
        self._parar = threading.Event()
        self._hilo = threading.Thread(target=self._consumir, daemon=True)
        self._hilo.start()

    def frenar(self, cliente: Any) -> Any:
        cliente.meta.events.register("before-call.events.PutEvents", self._esperar)
        cliente.meta.events.register("after-call.events.PutEvents", self._contar)
        return cliente

    def terminar(self, hang_guard_s: float = 900) -> list[dict[str, Any]]:
        """Stop after draining the queue; the bound only stops a hung run (a busy machine is just slower)."""
        self._parar.set()
        self._hilo.join(hang_guard_s)
        assert not self._hilo.is_alive(), "the consumer thread did not finish draining"
        return self.eventos

    def _esperar(self, **_: Any) -> None:
        while self._enviados - len(self.eventos) > self._max and self._hilo.is_alive():
            time.sleep(0.002)

    def _contar(self, parsed: dict[str, Any], **_: Any) -> None:
        with self._cerrojo:
            self._enviados += sum(1 for e in parsed.get("Entries", []) if "EventId" in e)

    def _consumir(self) -> None:
        while not self._parar.is_set():
            if not (lote := self._bus.recibir_lote()):
                time.sleep(0.005)
            self.eventos.extend(lote)
        self.eventos.extend(self._bus.recibir_todo())


def crear_bus_en_cola(endpoint_url: str | None = None) -> BusEnCola:
    """Create the bus, a queue and a rule sending every store event to it."""
    from mercadofresco.aws import client

    extra = {"endpoint_url": endpoint_url} if endpoint_url else {}
    eventos, sqs = client("events", **extra), client("sqs", **extra)
    eventos.create_event_bus(Name=BUS)
    cola_url = sqs.create_queue(QueueName="outbox-entregados")["QueueUrl"]
    cola_arn = sqs.get_queue_attributes(QueueUrl=cola_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    patron = json.dumps({"source": ["mercadofresco.tienda"]})
    eventos.put_rule(Name="todo-de-la-tienda", EventBusName=BUS, EventPattern=patron)
    eventos.put_targets(Rule="todo-de-la-tienda", EventBusName=BUS, Targets=[{"Id": "cola", "Arn": cola_arn}])
    return BusEnCola(BUS, cola_url, sqs)


def acelerar_moto_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache JSONPath compilation, which moto redoes 8 times for every event it routes (~2 ms each).

    Same expressions, same results: only the parser's table building is not repeated. Without
    it, routing 10,000 events costs moto minutes of CPU, not the relay.
    """
    import jsonpath_ng.ext

    monkeypatch.setattr(jsonpath_ng.ext, "parse", functools.lru_cache(maxsize=64)(jsonpath_ng.ext.parse))


@pytest.fixture
def bus_en_cola(aws: None, monkeypatch: pytest.MonkeyPatch) -> BusEnCola:
    acelerar_moto_events(monkeypatch)
    return crear_bus_en_cola()
