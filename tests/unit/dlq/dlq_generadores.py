"""Dead letters as SQS's ReceiveMessage returns them, with chosen timestamps (moto's are always 'now')."""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from mercadofresco_ops.dlq.mensajes import MensajeDlq, leer


def crudo(
    cuerpo: Any, enviado: datetime, recepciones: int = 5, motivo: str | None = None, detalle: str | None = None
) -> dict[str, Any]:
    atributos = {}
    if motivo:
        atributos["mf-motivo"] = {"DataType": "String", "StringValue": motivo}
    if detalle:
        atributos["mf-detalle"] = {"DataType": "String", "StringValue": detalle}
    return {
        "MessageId": str(uuid.uuid4()),
        "ReceiptHandle": "rh",
        "Body": cuerpo if isinstance(cuerpo, str) else json.dumps(cuerpo),
        "Attributes": {
            "SentTimestamp": str(int(enviado.timestamp() * 1000)),
            "ApproximateReceiveCount": str(recepciones),
        },
        "MessageAttributes": atributos,
    }


def pedido(n: int, version: int = 1) -> dict[str, Any]:
    return {"version": version, "pedido_id": f"ped-{n:04d}", "cliente_id": "cli-1", "importe": "48.20"}


def repartidos(inicio: datetime, duracion: timedelta, cuantos: int, semilla: int = 7) -> list[datetime]:
    """``cuantos`` instants uniformly at random inside [inicio, inicio + duracion], always hitting both ends."""
    azar = random.Random(semilla)
    medio = [inicio + duracion * azar.random() for _ in range(cuantos - 2)]
    return [inicio, *medio, inicio + duracion]


def ejercicio_2() -> list[MensajeDlq]:
    """340 messages, all "version": 2, Sunday 22:04–23:51 (1 h 47 min, after a deploy), ReceiveCount 5, no reason."""
    inicio = datetime(2026, 11, 22, 22, 4, tzinfo=UTC)
    return [leer(crudo(pedido(i, version=2), t)) for i, t in enumerate(repartidos(inicio, timedelta(minutes=107), 340))]


def caida_de_proveedor() -> list[MensajeDlq]:
    """A 30-minute burst (18:12–18:41) of healthy version-1 orders redriven after a provider outage."""
    inicio = datetime(2026, 11, 23, 18, 12, tzinfo=UTC)
    return [leer(crudo(pedido(i), t)) for i, t in enumerate(repartidos(inicio, timedelta(minutes=29), 340))]


def goteo_de_datos() -> list[MensajeDlq]:
    """Malformed and missing-field messages trickling in over three days, each with its consumer's reason."""
    inicio = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    mensajes = []
    for i, t in enumerate(repartidos(inicio, timedelta(days=3), 60)):
        if i % 3 == 0:
            mensajes.append(crudo('{"version": 1, "pedido_id": "ped-', t, 1, "json-invalido", "Expecting value"))
        else:
            campo = ["pedido_id", "importe", "lineas", "cliente_id"][i % 4]
            cuerpo = {k: v for k, v in pedido(i).items() if k != campo}
            mensajes.append(crudo(cuerpo, t, 1, "campo-ausente", f"falta {campo}"))
    return [leer(m) for m in mensajes]
