"""Entries, sizes and call grouping for PutEvents (pure functions, no network)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest
from mercadofresco.outbox.config import OutboxConfig
from mercadofresco.outbox.events import OutboxRow, entry, entry_size, split_entries

CONFIG = OutboxConfig(bus_name="bus-mercadofresco")


def _fila(agregado: str = "p1", **payload: object) -> OutboxRow:
    id_ = uuid.uuid4()
    return OutboxRow(
        id=id_,
        tipo_agregado="pedido",
        agregado_id=agregado,
        tipo_evento="PedidoCreado",
        version=1,
        detalle=json.dumps({"pedido_id": agregado, **payload, "id": str(id_), "version": 1}),
        creado_en=datetime(2026, 11, 29, 18, 12, 3, tzinfo=UTC),
        intentos=0,
    )


def _items(*filas: OutboxRow) -> list[tuple[OutboxRow, dict, int]]:
    return [(f, e, entry_size(e)) for f in filas for e in [entry(f, CONFIG)]]


def test_entry_sends_the_claimed_detail_with_who_what_and_when() -> None:
    # GIVEN a claimed row (its Detail written by the claim: tests/integration/outbox, payload id/version)
    fila = _fila()
    # WHEN the entry is built
    ent = entry(fila, CONFIG)
    # THEN it carries that Detail untouched, and the envelope says who, what and when
    assert ent["Detail"] == fila.detalle
    assert (ent["Source"], ent["DetailType"], ent["EventBusName"]) == (
        "mercadofresco.tienda",
        "PedidoCreado",
        "bus-mercadofresco",
    )
    assert ent["Time"] == fila.creado_en


def test_entry_size_counts_utf8_bytes_and_14_for_time() -> None:
    # GIVEN an entry with a two-byte character
    ent = {"Source": "ab", "DetailType": "c", "Detail": '{"x":"ñ"}', "Time": 0, "EventBusName": "ignored"}
    # WHEN / THEN the size is EventBridge's: UTF-8 bytes of the counted fields + 14 for Time
    assert entry_size(ent) == 2 + 1 + len('{"x":"ñ"}'.encode()) + 14


def test_split_entries_groups_ten_entries_a_call() -> None:
    # GIVEN 25 events of different orders
    items = _items(*(_fila(f"p{i}") for i in range(25)))
    # WHEN / THEN they go in calls of 10, 10 and 5, in order
    llamadas = list(split_entries(items, CONFIG))
    assert [len(c) for c in llamadas] == [10, 10, 5]
    assert [i for c in llamadas for i in c] == items


def test_split_entries_never_exceeds_the_byte_limit() -> None:
    # GIVEN events of ~100 KB each
    items = _items(*(_fila(f"p{i}", relleno="x" * 100_000) for i in range(5)))
    # WHEN / THEN no call carries more than 256 KB (two per call)
    llamadas = list(split_entries(items, CONFIG))
    assert [len(c) for c in llamadas] == [2, 2, 1]
    assert all(sum(t for _, _, t in c) <= 256 * 1024 for c in llamadas)


def test_split_entries_puts_two_events_of_one_order_in_consecutive_calls() -> None:
    # GIVEN p1's creation, p2's, then p1's cancellation
    items = _items(_fila("p1"), _fila("p2"), _fila("p1"))
    # WHEN / THEN p1's second event starts a new call (entries of one call are not ordered)
    assert [[f.agregado_id for f, _, _ in c] for c in split_entries(items, CONFIG)] == [["p1", "p2"], ["p1"]]


@pytest.mark.parametrize(
    ("cambios", "mensaje"),
    [
        ({"bus_name": ""}, "EVENT_BUS_NAME"),
        ({"entries_per_call": 11}, "entries_per_call"),
        ({"bytes_per_call": 300_000}, "bytes_per_call"),
        ({"batch_max": 0}, "batch_max"),
        ({"retention_days": 0}, "retention_days"),
    ],
)
def test_outbox_config_when_out_of_limits_raises_clear_error(cambios: dict, mensaje: str) -> None:
    # WHEN / THEN a configuration PutEvents or the lesson would not accept is refused
    with pytest.raises(ValueError, match=mensaje):
        OutboxConfig(**{"bus_name": "b", **cambios})


def test_outbox_config_from_env_reads_bus_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the Lambda's environment
    monkeypatch.setenv("EVENT_BUS_NAME", "bus-mercadofresco-dev")
    monkeypatch.setenv("OUTBOX_DRAIN_S", "40")
    # WHEN / THEN the config follows it and keeps the lesson's defaults elsewhere
    config = OutboxConfig.from_env()
    assert (config.bus_name, config.drain_s, config.batch_max, config.retention_days) == (
        "bus-mercadofresco-dev",
        40.0,
        100,
        7,
    )
