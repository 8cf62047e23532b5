"""The local SQS event source mapping keeps Lambda's partial-batch and redrive semantics."""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

import pytest
from sam_emulator.testing import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sam_emulator.moto_server import ServidorMoto

pytestmark = pytest.mark.integration

HANDLER = textwrap.dedent(
    """
    import threading
    vistos = []
    _cerrojo = threading.Lock()

    def lambda_handler(event, context):
        fallos = []
        for r in event["Records"]:
            with _cerrojo:
                vistos.append(r["body"])
            if r["body"].startswith("malo"):
                fallos.append({"itemIdentifier": r["messageId"]})
        return {"batchItemFailures": fallos}
    """
)


def _colas(sqs, max_receive_count: int) -> tuple[str, str, str]:
    dlq = sqs.create_queue(QueueName="prueba-fallidos")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    politica = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": max_receive_count})
    cola = sqs.create_queue(QueueName="prueba", Attributes={"VisibilityTimeout": "60", "RedrivePolicy": politica})
    arn = sqs.get_queue_attributes(QueueUrl=cola["QueueUrl"], AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return cola["QueueUrl"], arn, dlq


def test_mapping_with_partial_failures_deletes_the_good_and_redrives_the_bad_after_max_receive_count(
    servidor_moto: ServidorMoto, tmp_path: Path
) -> None:
    from sam_emulator.aws import client
    from sam_emulator.event_sources import Mapeo
    from sam_emulator.functions import Funcion

    # GIVEN a queue (maxReceiveCount 3) with 20 good and 2 poison messages, and a handler that reports the poison ones
    (tmp_path / "app.py").write_text(HANDLER)
    sqs = client("sqs")
    url, arn, dlq = _colas(sqs, max_receive_count=3)
    for i in range(20):
        sqs.send_message(QueueUrl=url, MessageBody=f"bueno-{i}")
    for i in range(2):
        sqs.send_message(QueueUrl=url, MessageBody=f"malo-{i}")
    funcion = Funcion(logical_id="Prueba", nombre="prueba", codigo=tmp_path)
    mapeo = Mapeo(
        nombre="prueba", funcion=funcion, cola_url=url, cola_arn=arn, tamano_lote=5, concurrencia=2,
        reporta_fallos=True, visibilidad_s=1,
    )  # fmt: skip

    # WHEN the mapping runs until both poison messages are in the DLQ
    mapeo.start()
    try:
        wait_until(lambda: _visibles(sqs, dlq) == 2, "both poison messages in the DLQ")
    finally:
        mapeo.stop()

    # THEN every good message was processed once and deleted; each poison one was tried exactly 3 times
    vistos = funcion.cargar().vistos
    assert sorted(b for b in vistos if b.startswith("bueno")) == sorted(f"bueno-{i}" for i in range(20))
    assert sorted(b for b in vistos if b.startswith("malo")) == ["malo-0"] * 3 + ["malo-1"] * 3
    assert _visibles(sqs, url) == 0
    assert mapeo.estadisticas.borrados == 20


def test_mapping_without_report_batch_item_failures_deletes_nothing_when_the_handler_fails(
    servidor_moto: ServidorMoto, tmp_path: Path
) -> None:
    from sam_emulator.aws import client
    from sam_emulator.event_sources import Mapeo
    from sam_emulator.functions import Funcion

    # GIVEN a handler that raises on every batch
    (tmp_path / "app.py").write_text("def lambda_handler(event, context):\n    raise RuntimeError('caido')\n")
    sqs = client("sqs")
    url, arn, dlq = _colas(sqs, max_receive_count=2)
    sqs.send_message(QueueUrl=url, MessageBody="uno")
    funcion = Funcion(logical_id="Caida", nombre="caida", codigo=tmp_path)
    mapeo = Mapeo(nombre="caida", funcion=funcion, cola_url=url, cola_arn=arn, concurrencia=1, visibilidad_s=1)

    # WHEN the mapping runs
    mapeo.start()
    try:
        wait_until(lambda: _visibles(sqs, dlq) == 1, "the message in the DLQ")
    finally:
        mapeo.stop()

    # THEN the message was never deleted: SQS redrove it after 2 failed receives
    assert funcion.errores == 2
    assert mapeo.estadisticas.borrados == 0


def test_mapping_never_holds_a_message_for_less_than_its_functions_timeout_however_compressed(
    servidor_moto: ServidorMoto, tmp_path: Path
) -> None:
    from sam_emulator.aws import client
    from sam_emulator.event_sources import mapeo_sqs
    from sam_emulator.functions import Funcion

    # GIVEN a queue whose 60 s visibility the run compresses x60 to 1 s, a consumer with a 30 s
    # Timeout (the run does not compress it) and one with a 0.5 s Timeout
    sqs = client("sqs")
    _, arn, _ = _colas(sqs, max_receive_count=4)
    lento = Funcion(logical_id="Lento", nombre="lento", codigo=tmp_path, timeout_s=30)
    rapido = Funcion(logical_id="Rapido", nombre="rapido", codigo=tmp_path, timeout_s=0.5)

    # WHEN their SQS event sources are built as the local run builds them
    props = {"Queue": arn, "BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"]}
    mapeo_lento, mapeo_rapido = (mapeo_sqs(f.nombre, f, props, compresion=60) for f in (lento, rapido))

    # THEN a batch stays invisible for as long as its invocation may run (AWS refuses a trigger whose
    # queue visibility is below the function's timeout): a slow batch is never handed to a second
    # invocation, which would burn maxReceiveCount and dead-letter a message processed once
    assert mapeo_lento.visibilidad_s == 30
    assert mapeo_rapido.visibilidad_s == 1  # the compressed visibility, where it already covers the timeout


def test_ids_fallidos_answer_with_a_foreign_id_fails_the_whole_batch() -> None:
    from sam_emulator.event_sources import ids_fallidos

    # GIVEN a batch of two records and a response naming a record that is not in it
    ids = {"a", "b"}

    # WHEN / THEN Lambda treats the malformed response as a failure of the whole batch
    assert ids_fallidos({"batchItemFailures": [{"itemIdentifier": "x"}]}, ids) == ids
    assert ids_fallidos({"batchItemFailures": [{"itemIdentifier": "a"}]}, ids) == {"a"}
    assert ids_fallidos({"batchItemFailures": []}, ids) == set()


def _visibles(sqs, url: str) -> int:
    atributos = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(atributos["Attributes"]["ApproximateNumberOfMessages"])
