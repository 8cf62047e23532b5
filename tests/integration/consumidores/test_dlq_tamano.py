"""A dead letter keeps its reason and origin whatever its body's size, at SQS's 1 MiB limit (moto).

moto checks a body's length against the queue's ``MaximumMessageSize`` but does not count the
attributes, as SQS does: the tests set the DLQ's limit to the template's (1,048,576) so moto refuses
a body past it, and count body + attributes themselves (:func:`_bytes_sqs`).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco import dlq

from tests.integration.consumidores.conftest import LIMITE_SQS_BYTES, consumir
from tests.unit.fuzz.estrategias import ejemplos

pytestmark = pytest.mark.integration


def _bytes_sqs(mensaje: dict[str, Any]) -> int:
    total = len(mensaje["Body"].encode())
    for nombre, valor in mensaje.get("MessageAttributes", {}).items():
        dato = valor["StringValue"].encode() if "StringValue" in valor else valor["BinaryValue"]
        total += len(nombre.encode()) + len(valor["DataType"].encode()) + len(dato)
    return total


def _muerto(sqs: Any, dlq_url: str) -> dict[str, Any]:
    (muerto,) = sqs.receive_message(QueueUrl=dlq_url, MessageAttributeNames=["All"], MaxNumberOfMessages=10)["Messages"]
    return muerto


def test_dead_letter_of_a_body_at_the_sqs_limit_keeps_reason_and_origin_and_cuts_the_body(colas) -> None:
    # GIVEN a message that is not JSON and fills SQS's 1 MiB on its own
    sqs, origen, dlq_url = colas
    cuerpo = "no es json " + "x" * (LIMITE_SQS_BYTES - 11)
    # WHEN the consumer dead-letters it
    assert consumir(sqs, origen, cuerpo, {}) == {"batchItemFailures": []}
    # THEN its copy in the DLQ carries the reason and the queue it came from...
    muerto = _muerto(sqs, dlq_url)
    atributos = {k: v["StringValue"] for k, v in muerto["MessageAttributes"].items()}
    assert atributos[dlq.REASON_ATTRIBUTE] == "json-invalido"
    assert atributos[dlq.SOURCE_QUEUE_ATTRIBUTE] == origen["url"]
    assert atributos[dlq.FUNCTION_ATTRIBUTE] == "prueba"
    # ...within SQS's limit, attributes included, by cutting the end of the body and saying how long it was
    assert _bytes_sqs(muerto) <= LIMITE_SQS_BYTES
    assert cuerpo.startswith(muerto["Body"]) and len(muerto["Body"]) > LIMITE_SQS_BYTES - 2_000
    assert atributos[dlq.TRUNCATED_BODY_ATTRIBUTE] == str(LIMITE_SQS_BYTES)


def test_dead_letter_of_a_900_kb_poison_message_is_byte_identical(colas) -> None:
    # GIVEN a poison message of 900 KB (not JSON), far past the 256 KiB SQS took before 2026
    sqs, origen, dlq_url = colas
    cuerpo = "no es json " + "".join(chr(0x41 + i % 26) for i in range(900_000 - 11))
    # WHEN the consumer dead-letters it
    assert consumir(sqs, origen, cuerpo, {}) == {"batchItemFailures": []}
    # THEN its copy is the whole body, byte for byte (its end too), with its reason and no cut mark
    muerto = _muerto(sqs, dlq_url)
    assert muerto["Body"].encode() == cuerpo.encode()
    assert muerto["MessageAttributes"][dlq.REASON_ATTRIBUTE]["StringValue"] == "json-invalido"
    assert dlq.TRUNCATED_BODY_ATTRIBUTE not in muerto["MessageAttributes"]


def test_dead_letter_that_fits_keeps_its_body_whole_and_no_cut_mark(colas) -> None:
    # GIVEN a small message that is not JSON
    sqs, origen, dlq_url = colas
    assert consumir(sqs, origen, "no es json", {}) == {"batchItemFailures": []}
    # THEN its copy is verbatim, with its reason and no cut mark
    muerto = _muerto(sqs, dlq_url)
    assert muerto["Body"] == "no es json"
    assert muerto["MessageAttributes"][dlq.REASON_ATTRIBUTE]["StringValue"] == "json-invalido"
    assert dlq.TRUNCATED_BODY_ATTRIBUTE not in muerto["MessageAttributes"]


@ejemplos(0.2)
@given(
    relleno=st.integers(LIMITE_SQS_BYTES - 6_000, LIMITE_SQS_BYTES - 200),
    caracter=st.sampled_from(["x", "ñ", "€", "😀"]),
    atributo=st.integers(0, 4_000),
)
def test_fuzz_dead_letter_near_the_limit_with_attributes_always_keeps_reason_and_origin(
    colas, relleno, caracter, atributo
) -> None:
    # GIVEN a body of multi-byte characters and an attribute of its own, together at or just under 1 MiB
    sqs, origen, dlq_url = colas
    atributos = {"traza": {"DataType": "String", "StringValue": "t" * atributo}}
    ancho = len(caracter.encode())
    cuerpo = caracter * ((relleno - atributo - len("trazaString")) // ancho)
    # WHEN the consumer dead-letters it
    assert consumir(sqs, origen, cuerpo, atributos) == {"batchItemFailures": []}
    # THEN the reason and origin are always there, the whole fits, and the body is the original or its start
    muerto = _muerto(sqs, dlq_url)
    sqs.delete_message(QueueUrl=dlq_url, ReceiptHandle=muerto["ReceiptHandle"])
    suyos = muerto["MessageAttributes"]
    assert suyos[dlq.REASON_ATTRIBUTE]["StringValue"] == "json-invalido"
    assert suyos[dlq.SOURCE_QUEUE_ATTRIBUTE]["StringValue"] == origen["url"]
    assert _bytes_sqs(muerto) <= LIMITE_SQS_BYTES
    if dlq.TRUNCATED_BODY_ATTRIBUTE in suyos:
        assert cuerpo.startswith(muerto["Body"]) and "traza" not in suyos
        assert suyos[dlq.TRUNCATED_BODY_ATTRIBUTE]["StringValue"] == str(len(cuerpo.encode()))
    else:
        assert muerto["Body"] == cuerpo
