"""Example ``--transformar`` callables for ``mf-dlq reprocesar``.

A transform receives the event (already unwrapped from its SNS envelope or EventBridge's
``detail``) and returns the event to send; ``reprocesar`` puts it back in the same envelope.
It must be pure and deterministic: a re-run after a crash transforms the same message again.
"""

from __future__ import annotations

from typing import Any


def v2_a_v1(evento: dict[str, Any]) -> dict[str, Any]:
    """A version-2 ``PedidoCreado`` in the version-1 shape the consumer reads (``events/flujo/pedido-version-2.json``).

    Exercise 2's incident: the producer went out with contract 2 before its consumer; this is
    the lesson's second fix (a compatibility step instead of an urgent consumer deploy).
    Version 2 carries the amount as ``importe: {"centimos": 4820, "moneda": "EUR"}``; version 1
    as ``importe_centimos`` and ``moneda``. Every other field passes through untouched
    (consumers are tolerant readers). Anything that is not version 2 raises ``ValueError``,
    so it stays in the DLQ instead of being "adapted" by guesswork.
    """
    if evento.get("version") != 2:
        raise ValueError(f"se esperaba version 2, no {evento.get('version')!r}")
    v1 = {k: v for k, v in evento.items() if k != "importe"}
    v1["version"] = 1
    importe = evento.get("importe")
    if isinstance(importe, dict):
        if "centimos" not in importe:
            raise ValueError("importe de version 2 sin 'centimos'")
        v1["importe_centimos"] = importe["centimos"]
        v1["moneda"] = importe.get("moneda", v1.get("moneda", "EUR"))
    return v1
