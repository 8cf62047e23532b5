"""The projection (functions/proyeccion) fed mixed batches of good and hostile records (real PostgreSQL, moto).

Properties, per batch:

- the handler never raises and reports no record failed (a payload problem is never transient);
- every bad record is in the DLQ exactly once, with ``mf-motivo``, and its order's state is untouched;
- every good record in the same batch moved its order's state;
- no DLQ attribute and no log line repeats more of a record than the log policy allows;
- an event of another source (SNS, DynamoDB Streams, API Gateway...) is refused without raising or writing.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.validation import ECHO_MAX_CHARS
from sam_emulator.moto_lambda import LambdaContext

from tests.integration.consumidores.conftest import Cola, mensajes, motivo
from tests.integration.tienda import test_proyeccion as casos
from tests.unit.fuzz.estrategias import EVENTOS_AWS, cuerpo_malo, ejemplos, texto_cualquiera, valor_json, version_mala

pytestmark = pytest.mark.integration


@pytest.fixture
def contexto(reloj) -> LambdaContext:
    """The function's context on the test's clock (each batch takes ``otra_invocacion()``, its full timeout): a
    slow example or a long run never runs an invocation "out of time" (the consumer would hand records over)."""
    return LambdaContext("mercadofresco-proyeccion", "arn:aws:lambda:eu-south-2:123456789012:function:p", clock=reloj)


# The projection's world as its own tests build it: three orders in a private schema, its queues in moto.
base, recursos, proyeccion = casos.base, casos.recursos, casos.proyeccion
PEDIDOS = casos.PEDIDOS

MARCA = "MARCA" * 12
MALO, BUENO = PEDIDOS[0], PEDIDOS[2]  # bad records name the first order; the good one confirms the third
TIPOS = ["PedidoCancelado", "PedidoNoConfirmado", "PedidoRechazado", "PedidoConfirmado"]
# Bad by construction, whatever the layer says: never null nor a string, or a string no column can hold.
raro = st.one_of(
    valor_json.filter(lambda v: v is not None and not isinstance(v, str)),
    texto_cualquiera.map(lambda t: t + "\x00"),
    texto_cualquiera.map(lambda t: "\ud800" + t),
    st.just(MARCA * 100),
)


@st.composite
def registro_malo(draw: Any) -> str:
    """A body the projection must refuse: unreadable, of another source, or an outcome with one bad field."""
    if draw(st.integers(0, 3)) == 0:
        return draw(cuerpo_malo.filter(lambda c: 0 < len(c.encode()) < 200_000))
    detalle: dict[str, Any] = {"version": 1, "pedido_id": MALO, "motivo": "ReservaStockFallida"}
    if draw(st.booleans()):
        detalle[MARCA] = MARCA * 100  # an unknown field is tolerated, never repeated
    campo = draw(st.sampled_from(["pedido_id", "motivo", "error", "id", "version"]))
    detalle[campo] = draw(version_mala if campo == "version" else raro)
    sobre = {"version": "0", "id": "e", "detail-type": draw(st.sampled_from(TIPOS)), "source": "mf", "detail": detalle}
    return json.dumps(sobre if draw(st.booleans()) else {"tipo": sobre["detail-type"], **detalle})


def _estados(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn) as conn:
        return dict(conn.execute("SELECT pedido_id, estado FROM pedidos"))


def _registro(cuerpo: str, n: int, arn: str) -> dict[str, Any]:
    return {
        "messageId": f"m-{n}",
        "receiptHandle": f"r-{n}",
        "body": cuerpo,
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": "eu-south-2",
    }


@ejemplos(0.3)
@given(malos=st.lists(registro_malo(), min_size=2, max_size=4), con_bueno=st.booleans())
def test_fuzz_proyeccion_mixed_batch_bad_records_dead_lettered_once_good_ones_applied(
    proyeccion, base, recursos, contexto, capsys, malos, con_bueno
) -> None:
    # GIVEN hostile records (wrong types in every field, NUL, lone surrogates, other sources' bodies)
    sqs, dlq = boto3.client("sqs"), Cola.de(recursos, "ColaProyeccionFallidos")
    antes = _estados(base)
    bueno = json.dumps({"tipo": "PedidoConfirmado", "version": 1, "pedido_id": BUENO})
    cuerpos = [*malos, *([bueno] if con_bueno else [])]
    arn = recursos.physical_ids["ColaProyeccion"]["Arn"]
    capsys.readouterr()
    # WHEN they arrive in one batch, next to a good confirmation
    respuesta = proyeccion.lambda_handler(
        {"Records": [_registro(c, i, arn) for i, c in enumerate(cuerpos)]}, contexto.next_invocation()
    )
    # THEN nothing is handed back for a retry
    assert respuesta == {"batchItemFailures": []}
    # AND each bad record is in the DLQ once, with its reason
    muertos = mensajes(sqs, dlq)
    for m in muertos:
        sqs.delete_message(QueueUrl=dlq.url, ReceiptHandle=m["ReceiptHandle"])
    assert sorted(m["Body"] for m in muertos) == sorted(malos)
    assert all(motivo(m) in {"json-invalido", "campo-ausente", "version-desconocida", "dato-invalido"} for m in muertos)
    # AND the bad records' order is untouched; the good one was applied
    despues = _estados(base)
    assert despues[MALO] == antes[MALO]
    assert despues[BUENO] == ("CONFIRMADO" if con_bueno else antes[BUENO])
    # AND no attribute nor log line repeats a long value whole
    registros = capsys.readouterr()
    for salida in (json.dumps([m["MessageAttributes"] for m in muertos]), registros.out, registros.err):
        assert MARCA[: ECHO_MAX_CHARS + 1] not in salida


@ejemplos(0.3)
@given(evento=st.one_of(st.sampled_from([e for n, e in EVENTOS_AWS.items() if n != "sqs-receive-message"]), valor_json))
def test_fuzz_proyeccion_event_of_another_source_is_refused_without_raising(
    proyeccion, base, recursos, contexto, evento
) -> None:
    # GIVEN an SNS / DynamoDB Streams / EventBridge / API Gateway / S3 / Kinesis event, or any JSON
    antes = _estados(base)
    # WHEN it reaches the projection THEN it is refused: no exception, nothing written, nothing dead-lettered
    assert proyeccion.lambda_handler(evento, contexto.next_invocation()) == {"batchItemFailures": []}
    assert _estados(base) == antes
    assert mensajes(boto3.client("sqs"), Cola.de(recursos, "ColaProyeccionFallidos")) == []
