"""The ERP and e-mail consumers fed mixed batches of good and hostile records (moto, real Redis, loopback providers).

Properties, per batch:

- the handler never raises, and reports no bad record as failed (a bad record is not transient);
- every bad record is in its DLQ exactly once, with ``mf-motivo``, within SQS's attribute limits,
  and neither its attributes nor the logs carry an e-mail address;
- every good record in the same batch reached its provider exactly once;
- an event of another source (SNS, DynamoDB Streams, EventBridge, API Gateway...) is refused
  without raising and without touching any queue or provider.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco import validation
from mercadofresco.dominio import claves, valores
from mercadofresco.idempotency.exceptions import IdempotencyKeyError

from tests.conftest import load_event
from tests.integration.consumidores.conftest import Cola, Sondeo, mensajes, motivo
from tests.unit.fuzz.estrategias import (
    EVENTOS_AWS,
    cuerpo_malo,
    ejemplos,
    importe_malo,
    moneda_mala,
    texto_cualquiera,
    tipo_desconocido,
    valor_json,
    version_mala,
)

pytestmark = pytest.mark.integration

AVISO = json.loads(load_event("erp-pedido-confirmado.json")["Records"][0]["body"])
CONFIRMACION = json.loads(load_event("correo-confirmacion.json")["Records"][0]["body"])
MAX_ATRIBUTOS_BYTES = 262_144
RECHAZADO = "rechazado.fuzz@example.org"
numeros = itertools.count()

campo_malo = st.one_of(
    st.tuples(st.just("importe_centimos"), importe_malo),
    st.tuples(st.just("moneda"), moneda_mala),
    st.tuples(st.just("version"), version_mala),
    st.tuples(st.just("tipo"), tipo_desconocido),
    st.tuples(st.just("email"), st.one_of(texto_cualquiera, st.just("lucia.ferrer"), valor_json)),
    st.tuples(st.just("pedido_id"), st.one_of(st.just(""), st.integers(), valor_json, texto_cualquiera)),
    st.tuples(st.just("lineas"), st.one_of(st.just([{"sku": "A", "cantidad": "2"}]), valor_json)),
)


@st.composite
def malo(draw: Any, base: dict[str, Any]) -> str:
    """A bad body: unreadable or wrong-source, or a good event with one bad value (that really is bad)."""
    if draw(st.booleans()):
        return draw(cuerpo_malo.filter(lambda c: 0 < len(c.encode()) < 200_000))
    campo, valor = draw(campo_malo)
    if campo == "email" and isinstance(valor, str) and re.fullmatch(r"[^@\s]{1,64}@[^@\s.]+(\.[^@\s.]+)+", valor):
        valor = "no-es-un-correo"
    if campo in ("pedido_id", "lineas") and valor in ({}, None, [], 0, False):
        valor = ""
    if campo == "pedido_id" and _id_valido(valor):
        valor = ""  # "0" or "A-7" are good order ids: this record must really be bad
    # A refused record carries its own address: it must show up in no log line and no DLQ attribute.
    return json.dumps(base | {"email": RECHAZADO} | {campo: valor}, ensure_ascii=False)


def _id_valido(valor: Any) -> bool:
    try:
        claves.aviso_erp(valores.id_tienda(valor, "pedido_id"))
    except (validation.InvalidValueError, IdempotencyKeyError):
        return False
    return True


def _lote(
    sqs,
    app,
    contexto,
    cola: Cola,
    dlq: Cola,
    base: dict[str, Any],
    malos: list[str],
    buenos: int,
    proveedor,
    prefijo_clave: str,
    capsys,
) -> None:
    pedidos = [f"PED-F{next(numeros):06d}" for _ in range(buenos)]
    cuerpos = [*malos, *(json.dumps(base | {"pedido_id": p}) for p in pedidos)]
    for cuerpo in cuerpos:
        sqs.send_message(QueueUrl=cola.url, MessageBody=cuerpo)
    capsys.readouterr()
    # WHEN the mapping hands them to the handler (Sondeo: receive, invoke, delete what did not fail)
    sondeo = Sondeo(sqs, cola, app.lambda_handler, contexto)
    sondeo.drenar()
    # THEN no bad record was reported failed (none is transient) and none is left in the queue
    assert all(r["batchItemFailures"] == [] for r in sondeo.respuestas), sondeo.respuestas
    assert mensajes(sqs, cola) == []
    # AND each bad record is in the DLQ once, with its reason, small enough, without an e-mail address
    muertos = mensajes(sqs, dlq)
    for m in muertos:
        sqs.delete_message(QueueUrl=dlq.url, ReceiptHandle=m["ReceiptHandle"])
    assert sorted(m["Body"] for m in muertos) == sorted(malos)
    for m in muertos:
        assert motivo(m) in {"json-invalido", "campo-ausente", "version-desconocida", "dato-invalido"}
        atributos = m.get("MessageAttributes", {})
        assert len(json.dumps(atributos).encode()) + len(m["Body"].encode()) <= MAX_ATRIBUTOS_BYTES * 2
        assert RECHAZADO not in json.dumps(atributos)
    # AND every good record reached the provider exactly once
    for p in pedidos:
        assert proveedor.efectos_por_clave[f"{prefijo_clave}:{p}"] == 1
    # AND no log line repeats the address of a refused record
    registros = capsys.readouterr()
    assert RECHAZADO not in registros.out + registros.err


@ejemplos(0.3)
@given(malos=st.lists(malo(AVISO), min_size=1, max_size=3), buenos=st.integers(0, 2))
def test_fuzz_erp_mixed_batch_bad_records_dead_lettered_once_good_ones_once(
    recursos, cargar_consumidor, proveedores, lambda_context, capsys, malos, buenos
) -> None:
    # GIVEN a batch of hostile records next to good order notices
    app = cargar_consumidor("erp")
    _lote(
        boto3.client("sqs"),
        app,
        lambda_context,
        Cola.de(recursos, "ColaErp"),
        Cola.de(recursos, "ColaErpFallidos"),
        AVISO,
        malos,
        buenos,
        proveedores["erp"],
        "aviso-erp",
        capsys,
    )


@ejemplos(0.3)
@given(malos=st.lists(malo(CONFIRMACION), min_size=1, max_size=3), buenos=st.integers(0, 2))
def test_fuzz_correo_mixed_batch_bad_records_dead_lettered_once_good_ones_once(
    recursos, cargar_consumidor, proveedores, lambda_context, capsys, malos, buenos
) -> None:
    # GIVEN a batch of hostile records (amounts as strings, bad addresses...) next to good confirmations
    app = cargar_consumidor("correo")
    _lote(
        boto3.client("sqs"),
        app,
        lambda_context,
        Cola.de(recursos, "ColaCorreo"),
        Cola.de(recursos, "ColaCorreoFallidos"),
        CONFIRMACION,
        malos,
        buenos,
        proveedores["correo-principal"],
        "correo-confirmacion",
        capsys,
    )


@pytest.mark.parametrize("funcion", ["erp", "correo"])
@ejemplos(0.3)
@given(evento=st.one_of(st.sampled_from([e for n, e in EVENTOS_AWS.items() if n != "sqs-receive-message"]), valor_json))
def test_fuzz_consumer_event_of_another_source_is_refused_without_raising(
    recursos, cargar_consumidor, proveedores, lambda_context, funcion, evento
) -> None:
    # GIVEN an SNS / DynamoDB Streams / EventBridge / API Gateway / S3 / Kinesis event, or any JSON
    app = cargar_consumidor(funcion)
    # WHEN it reaches the SQS consumer THEN it is refused: no exception, nothing processed
    assert app.lambda_handler(evento, lambda_context) == {"batchItemFailures": []}
    assert sum(p.llamadas.total() for p in proveedores.todos) == 0
