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


def confirmado(n: int, cliente: str = "cli-1", importe: Any = 4820) -> dict[str, Any]:
    """A PedidoConfirmado as the ERP/e-mail queues carry it (raw SNS delivery)."""
    return {
        "tipo": "PedidoConfirmado",
        "version": 1,
        "pedido_id": f"PED-{n:05d}",
        "cliente_id": cliente,
        "importe_centimos": importe,
        "moneda": "EUR",
    }


def dlq_mixta() -> list[MensajeDlq]:
    """Four problems in one DLQ (mercadofresco-erp-fallidos, Monday):

    - 120 valid notices redriven without a reason after an ERP outage, 10:00-10:35;
    - 40 ``"version": 2`` notices from a producer deployed at 14:00 (no reason: the old consumer failed them);
    - 12 notices the consumer refused for a bad amount (``dato-invalido``) of customers cli-7 and cli-9, all day;
    - 6 unreadable bodies (``json-invalido``), 14:00-14:20.
    """
    lunes = datetime(2026, 11, 23, tzinfo=UTC)
    caida = [
        crudo(confirmado(i), t)
        for i, t in enumerate(repartidos(lunes + timedelta(hours=10), timedelta(minutes=35), 120))
    ]
    v2 = [
        crudo(confirmado(1000 + i) | {"version": 2}, t)
        for i, t in enumerate(repartidos(lunes + timedelta(hours=14), timedelta(minutes=50), 40, semilla=3))
    ]
    datos = [
        crudo(
            confirmado(2000 + i, cliente=("cli-7", "cli-9")[i % 2], importe=-100 * (i + 1)),
            t,
            1,
            "dato-invalido",
            "PedidoConfirmado: 'importe_centimos' must be a positive whole number of cents",
        )
        for i, t in enumerate(repartidos(lunes + timedelta(hours=8), timedelta(hours=11), 12, semilla=5))
    ]
    ilegibles = [
        crudo('{"tipo": "PedidoConfirmado", "pedido_id": "PED-', t, 1, "json-invalido", "Expecting value")
        for t in repartidos(lunes + timedelta(hours=14), timedelta(minutes=20), 6, semilla=9)
    ]
    return [leer(m) for m in caida + v2 + datos + ilegibles]


def goteo_de_validos() -> list[MensajeDlq]:
    """30 valid notices, no reason, one every ~40 min for 20 h: an ERP that flaps (or a consumer bug)."""
    inicio = datetime(2026, 11, 24, 2, 0, tzinfo=UTC)
    return [leer(crudo(confirmado(i), t)) for i, t in enumerate(repartidos(inicio, timedelta(hours=20), 30))]


def datos_de_algunos_clientes() -> list[MensajeDlq]:
    """Healthy redriven orders, plus invalid amounts/currencies that only customers cli-3 and cli-8 produce."""
    inicio = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    sanos = [
        crudo(confirmado(i, cliente=f"cli-{i % 20 + 10}"), t)
        for i, t in enumerate(repartidos(inicio, timedelta(minutes=25), 50))
    ]
    malos = []
    for i, t in enumerate(repartidos(inicio - timedelta(days=2), timedelta(days=2, hours=6), 16, semilla=11)):
        cliente = ("cli-3", "cli-8")[i % 2]
        valor = {"importe_centimos": "48.20"} if i % 3 else {"moneda": "EURO"}
        malos.append(
            crudo(
                confirmado(500 + i, cliente=cliente) | valor,
                t,
                1,
                "dato-invalido",
                f"PedidoConfirmado: bad {next(iter(valor))}",
            )
        )
    return [leer(m) for m in sanos + malos]
