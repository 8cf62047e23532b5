"""The consumers' body reader and dead-letter attributes under any body: an event or a reason, always within limits."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from mercadofresco import dlq
from mercadofresco.consumer.queues import Queue, send_to_dlq
from mercadofresco.consumer.reading import InvalidMessageError, Route, read
from mercadofresco.dlq import DlqReason
from mercadofresco.dominio.valores import CAMPOS, IMPORTE_MAX_CENTIMOS, MONEDAS_ISO_4217
from mercadofresco.payload_limits import SQS_MESSAGE_MAX_BYTES as MAX_MESSAGE_BYTES

from tests.conftest import load_event
from tests.unit.fuzz.estrategias import (
    cuerpo_malo,
    importe_malo,
    json_grande,
    moneda_mala,
    texto_cualquiera,
    texto_sqs,
    valor_json,
    version_mala,
)

RUTAS = {
    "PedidoConfirmado": Route(lambda e: None, fields=("pedido_id",)),
    "ReservaStock": Route(lambda e: None, fields=("pedido_id", "sku", "cantidad")),
}
AVISO = json.loads(load_event("erp-pedido-confirmado.json")["Records"][0]["body"])
ARN_ERP = "arn:aws:sqs:eu-south-2:123456789012:mercadofresco-erp"
DLQ_ERP = "https://sqs.eu-south-2.amazonaws.com/1/mercadofresco-erp-fallidos"


def _leer(cuerpo: str):
    """The event, or None after checking the refusal carries a reason and a bounded, safe detail."""
    try:
        evento = read(cuerpo, RUTAS, field_checks=CAMPOS)
    except InvalidMessageError as exc:
        assert exc.reason in set(DlqReason) - {DlqReason.APLAZAMIENTOS_AGOTADOS}
        assert exc.detail and "Traceback" not in exc.detail
        return None
    for campo in ("importe_centimos", "moneda"):
        if campo in evento.data:
            assert evento.data[campo] in MONEDAS_ISO_4217 or 0 < evento.data[campo] <= IMPORTE_MAX_CENTIMOS
    return evento


@given(cuerpo=st.one_of(cuerpo_malo, json_grande, valor_json.map(json.dumps)))
def test_fuzz_leer_any_body_is_an_event_or_a_reason_never_a_crash(cuerpo) -> None:
    # GIVEN any body SQS could deliver (deep, large, not JSON, an AWS event of another source)
    # WHEN read THEN an event, or InvalidMessageError with its reason: never RecursionError or TypeError
    _leer(cuerpo)


@given(
    campo_valor=st.one_of(
        st.tuples(st.just("importe_centimos"), importe_malo),
        st.tuples(st.just("moneda"), moneda_mala),
        st.tuples(st.just("version"), version_mala),
        st.tuples(st.just("email"), st.one_of(texto_cualquiera, valor_json)),
        st.tuples(st.just("pedido_id"), st.one_of(valor_json.filter(lambda v: not isinstance(v, str)), st.just(" x"))),
    ),
    sobre=st.sampled_from(["raw", "sns", "eventbridge"]),
)
def test_fuzz_leer_bad_value_in_any_envelope_is_dato_invalido_or_its_own_reason(campo_valor, sobre) -> None:
    # GIVEN a notice with one bad value, raw or in an SNS / EventBridge envelope
    campo, valor = campo_valor
    evento = AVISO | {campo: valor}
    if campo == "email" and isinstance(valor, str) and "@" in valor and "." in valor.split("@")[-1]:
        return  # could be a real address; the shape check is what is tested elsewhere
    cuerpo = json.dumps(evento)
    if sobre == "sns":
        cuerpo = json.dumps({"Type": "Notification", "TopicArn": "arn:aws:sns:eu-south-2:1:t", "Message": cuerpo})
    elif sobre == "eventbridge":
        detalle = {k: v for k, v in evento.items() if k != "tipo"}
        cuerpo = json.dumps({"detail-type": "PedidoConfirmado", "source": "mf", "version": "0", "detail": detalle})
    # WHEN read THEN refused: the value never reaches the ERP or an e-mail
    assert _leer(cuerpo) is None


def _bytes_sqs(envio: dict) -> int:
    """What SQS counts against MaximumMessageSize: the body plus each attribute's name, type and value."""
    total = len(envio["MessageBody"].encode("utf-8", "surrogatepass"))
    for nombre, valor in envio.get("MessageAttributes", {}).items():
        dato = valor["StringValue"].encode("utf-8", "surrogatepass") if "StringValue" in valor else valor["BinaryValue"]
        total += len(nombre.encode()) + len(valor["DataType"].encode()) + len(dato)
    return total


@given(
    cuerpo=st.one_of(
        texto_sqs.filter(bool),
        json_grande,
        st.integers(MAX_MESSAGE_BYTES - 2_000, MAX_MESSAGE_BYTES).map(lambda n: "x" * n),  # no room left for all
    ),
    detalle=st.one_of(texto_cualquiera, st.text(min_size=900, max_size=1000)),
    originales=st.dictionaries(st.sampled_from(["a", "b", "mf-aplazamientos"]), texto_sqs, max_size=3),
)
def test_fuzz_dead_letter_always_fits_and_keeps_reason_and_origin_cutting_the_body_if_it_must(
    stubbed, cuerpo, detalle, originales
) -> None:
    # GIVEN any body SQS accepted, with any attributes, and any error detail
    sqs, stubber = stubbed("sqs")
    enviados: list[dict] = []
    sqs.meta.events.register(
        "provide-client-params.sqs.SendMessage", lambda params, **_: enviados.append(params), unique_id="enviados"
    )
    stubber.add_response("send_message", {"MessageId": "m-dlq"})
    cola = Queue(ARN_ERP, "https://sqs.eu-south-2.amazonaws.com/1/mercadofresco-erp", DLQ_ERP, 3)
    atributos = {k: {"dataType": "String", "stringValue": v} for k, v in originales.items()}
    record = {"messageId": "m-1", "body": cuerpo, "messageAttributes": atributos, "attributes": {}}
    # WHEN it is dead-lettered with its reason
    send_to_dlq(sqs, cola, record, DlqReason.DATO_INVALIDO, detalle, "erp")
    # THEN the message SQS got fits its size limit and always carries its reason and origin
    (envio,) = enviados
    assert _bytes_sqs(envio) <= MAX_MESSAGE_BYTES
    assert envio["MessageAttributes"][dlq.REASON_ATTRIBUTE]["StringValue"] == "dato-invalido"
    assert envio["MessageAttributes"][dlq.SOURCE_QUEUE_ATTRIBUTE]["StringValue"] == cola.url
    # AND the body is whole, or its start with the original's size marked
    recortado = envio["MessageAttributes"].get(dlq.TRUNCATED_BODY_ATTRIBUTE)
    if recortado is None:
        assert envio["MessageBody"] == cuerpo
    else:
        assert cuerpo.startswith(envio["MessageBody"])
        assert recortado["StringValue"] == str(len(cuerpo.encode("utf-8", "surrogatepass")))
