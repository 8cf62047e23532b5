"""Example ``--transformar`` callables for ``mf-dlq reprocesar``.

A transform receives the event (already unwrapped from its SNS or EventBridge envelope)
and returns the event to send; ``reprocesar`` puts it back in the same envelope. It must
be pure and deterministic: a re-run after a crash transforms the same message again.
"""

from __future__ import annotations

from typing import Any


def v2_a_v1(evento: dict[str, Any]) -> dict[str, Any]:
    """A ``PedidoCreado`` written by the version-2 producer, in the version-1 shape the consumer reads.

    Exercise 2's incident: the producer went out with contract 2 before its consumer. This
    adapter is the lesson's second fix (a compatibility step, no consumer redeploy). Version 2
    of the example contract nests the customer (``cliente: {"id": ...}``) and the amount
    (``importe_total: {"cantidad": "48.20", "moneda": "EUR"}``); version 1 has ``cliente_id``
    and ``importe``. Other fields pass through (consumers are tolerant readers). An event that
    is not version 2 raises ``ValueError`` and stays in the DLQ.
    """
    if evento.get("version") != 2:
        raise ValueError(f"se esperaba version 2, no {evento.get('version')!r}")
    v1 = {k: v for k, v in evento.items() if k not in {"cliente", "importe_total"}}
    v1["version"] = 1
    cliente = evento.get("cliente")
    if isinstance(cliente, dict) and "id" in cliente:
        v1["cliente_id"] = cliente["id"]
    total = evento.get("importe_total")
    if isinstance(total, dict) and "cantidad" in total:
        v1["importe"] = total["cantidad"]
    return v1
