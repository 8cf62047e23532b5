"""The native path (StartMessageMoveTask), on botocore's Stubber: moto does not implement move tasks."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber
from mercadofresco_ops.dlq import cli, nativo
from mercadofresco_ops.dlq.conexion import Cola, Opciones
from mercadofresco_ops.errores import ErrorOperador

CUENTA = "https://sqs.eu-south-2.amazonaws.com/123456789012"
ARN = "arn:aws:sqs:eu-south-2:123456789012"
DLQ = Cola(f"{CUENTA}/mercadofresco-pedidos-fallidos", f"{ARN}:mercadofresco-pedidos-fallidos")
ORIGEN = Cola(f"{CUENTA}/cola-mercadofresco-pedidos", f"{ARN}:cola-mercadofresco-pedidos")


@pytest.fixture
def sqs():
    cliente = boto3.client("sqs")  # the tests' fake credentials and region (tests/conftest.py)
    with Stubber(cliente) as stub:
        yield cliente, stub
        stub.assert_no_pending_responses()


def _tarea(estado: str, movidos: int, total: int = 340) -> dict:
    return {
        "Results": [
            {
                "Status": estado,
                "SourceArn": DLQ.arn,
                "DestinationArn": ORIGEN.arn,
                "ApproximateNumberOfMessagesMoved": movidos,
                "ApproximateNumberOfMessagesToMove": total,
                "MaxNumberOfMessagesPerSecond": 10,
                "TaskHandle": "tarea-1",
            }
        ]
    }


def test_iniciar_requests_the_task_with_source_destination_and_rate(sqs) -> None:
    # GIVEN SQS expecting exactly this request
    cliente, stub = sqs
    stub.add_response(
        "start_message_move_task",
        {"TaskHandle": "tarea-1"},
        {"SourceArn": DLQ.arn, "DestinationArn": ORIGEN.arn, "MaxNumberOfMessagesPerSecond": 10},
    )

    # WHEN the task starts at 10/s
    handle = nativo.iniciar(cliente, DLQ, ORIGEN, 10)

    # THEN the handle comes back (and the Stubber checked the parameters)
    assert handle == "tarea-1"


@pytest.mark.parametrize("tasa", [0, 501])
def test_iniciar_rate_outside_1_to_500_never_calls_sqs(sqs, tasa: float) -> None:
    # GIVEN / WHEN a rate SQS would reject
    cliente, _ = sqs
    with pytest.raises(ErrorOperador, match="de 1 a 500") as error:
        nativo.iniciar(cliente, DLQ, ORIGEN, tasa)

    # THEN a clear error, and no request was made (the Stubber has nothing pending or unexpected)
    assert "mensajes/s" in str(error.value)


def test_esperar_polls_until_complete_and_reports_progress(sqs) -> None:
    # GIVEN a task that is running, still running, then completed
    cliente, stub = sqs
    for estado, movidos in [("RUNNING", 100), ("RUNNING", 250), ("COMPLETED", 340)]:
        stub.add_response("list_message_move_tasks", _tarea(estado, movidos), {"SourceArn": DLQ.arn, "MaxResults": 1})
    avance, esperas = [], []

    # WHEN waited for with an injected sleep
    final = nativo.esperar(cliente, DLQ, lambda m, t: avance.append((m, t)), dormir=esperas.append, poll_s=2)

    # THEN three polls, two sleeps between them, progress reported each time
    assert final["Status"] == "COMPLETED"
    assert avance == [(100, 340), (250, 340), (340, 340)]
    assert esperas == [2, 2]


def test_esperar_returns_the_task_failure(sqs) -> None:
    # GIVEN a task that failed
    cliente, stub = sqs
    fallo = _tarea("FAILED", 12)
    fallo["Results"][0]["FailureReason"] = "AWS.SimpleQueueService.NonExistentQueue"
    stub.add_response("list_message_move_tasks", fallo, {"SourceArn": DLQ.arn, "MaxResults": 1})

    # WHEN / THEN its status and reason are returned, without sleeping
    final = nativo.esperar(cliente, DLQ, dormir=pytest.fail)
    assert (final["Status"], final["FailureReason"]) == ("FAILED", "AWS.SimpleQueueService.NonExistentQueue")


def test_cancelar_returns_what_was_already_moved(sqs) -> None:
    # GIVEN a running task
    cliente, stub = sqs
    stub.add_response("cancel_message_move_task", {"ApproximateNumberOfMessagesMoved": 42}, {"TaskHandle": "tarea-1"})

    # WHEN / THEN
    assert nativo.cancelar(cliente, "tarea-1") == 42


def test_cli_reprocesar_nativo_resolves_the_source_and_starts_the_task(sqs, monkeypatch, capsys) -> None:
    # GIVEN the DLQ by name, its single source from the RedrivePolicy, and a started task
    cliente, stub = sqs
    stub.add_response("get_queue_url", {"QueueUrl": DLQ.url}, {"QueueName": DLQ.nombre})
    stub.add_response(
        "get_queue_attributes",
        {"Attributes": {"QueueArn": DLQ.arn}},
        {"QueueUrl": DLQ.url, "AttributeNames": ["QueueArn"]},
    )
    stub.add_response("list_dead_letter_source_queues", {"queueUrls": [ORIGEN.url]}, {"QueueUrl": DLQ.url})
    stub.add_response(
        "get_queue_attributes",
        {"Attributes": {"QueueArn": ORIGEN.arn}},
        {"QueueUrl": ORIGEN.url, "AttributeNames": ["QueueArn"]},
    )
    stub.add_response(
        "start_message_move_task",
        {"TaskHandle": "tarea-9"},
        {"SourceArn": DLQ.arn, "DestinationArn": ORIGEN.arn, "MaxNumberOfMessagesPerSecond": 50},
    )
    monkeypatch.setattr(Opciones, "cliente", lambda self, servicio: cliente)

    # WHEN the operator starts a native redrive at 50/s without following it
    codigo = cli.main(
        ["reprocesar", "--cola", DLQ.nombre, "--nativo", "--tasa", "50", "--forzar", "--sin-esperar", "--json"]
    )

    # THEN exit 0 and the handle on stdout for a script
    assert codigo == cli.OK
    assert json.loads(capsys.readouterr().out) == {"TaskHandle": "tarea-9"}


def test_cli_without_permission_exits_2_with_one_line(sqs, monkeypatch, capsys) -> None:
    # GIVEN credentials that may not read the queue
    cliente, stub = sqs
    stub.add_client_error(
        "get_queue_url",
        service_error_code="AccessDenied",
        service_message="not authorized",
        http_status_code=403,
        expected_params={"QueueName": DLQ.nombre},
    )
    monkeypatch.setattr(Opciones, "cliente", lambda self, servicio: cliente)

    # WHEN the on-call inspects
    codigo = cli.main(["inspeccionar", "--cola", DLQ.nombre])

    # THEN exit 2 and one line naming the missing permission, no traceback
    err = capsys.readouterr().err
    assert codigo == cli.USO
    assert err.startswith(f"mf-dlq: cola {DLQ.nombre}: sin permiso (GetQueueUrl: AccessDenied)")
    assert err.count("\n") == 1


def test_cli_mover_estado_lists_the_tasks(sqs, monkeypatch, capsys) -> None:
    # GIVEN a DLQ given by URL and one completed task
    cliente, stub = sqs
    stub.add_response(
        "get_queue_attributes",
        {"Attributes": {"QueueArn": DLQ.arn}},
        {"QueueUrl": DLQ.url, "AttributeNames": ["QueueArn"]},
    )
    stub.add_response("list_message_move_tasks", _tarea("COMPLETED", 340), {"SourceArn": DLQ.arn, "MaxResults": 10})
    monkeypatch.setattr(Opciones, "cliente", lambda self, servicio: cliente)

    # WHEN listed (by its alias)
    codigo = cli.main(["mover-estado", "--cola", DLQ.url, "--json"])

    # THEN the task's status and counts
    assert codigo == cli.OK
    assert json.loads(capsys.readouterr().out)[0]["ApproximateNumberOfMessagesMoved"] == 340
