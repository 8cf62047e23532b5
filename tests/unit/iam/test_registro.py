"""The recorder sees every call made on a principal's behalf, and only those (botocore hook on boto3's session)."""

from __future__ import annotations

import boto3
import pytest
from mercadofresco_iam.registro import Registro
from sam_emulator.principal import acting_as


@pytest.fixture
def sesion_limpia(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # the hook goes on a session of this test's own


def test_calls_in_a_principal_block_are_recorded_as_that_principal_others_are_not(
    aws: None, sesion_limpia: None
) -> None:
    with Registro() as registro:
        sqs = boto3.client("sqs", region_name="eu-south-2")
        url = sqs.create_queue(QueueName="q")["QueueUrl"]  # the harness: nobody's
        with acting_as("ErpFunction"):
            sqs.send_message(QueueUrl=url, MessageBody="x")
            with acting_as("CorreoFunction"):
                sqs.get_queue_attributes(QueueUrl=url)
            sqs.delete_queue(QueueUrl=url)
    sqs.list_queues()  # uninstalled: not recorded
    assert [(ll.principal, ll.operacion) for ll in registro.llamadas()] == [
        ("ErpFunction", "SendMessage"),
        ("CorreoFunction", "GetQueueAttributes"),
        ("ErpFunction", "DeleteQueue"),
    ]
    assert registro.llamadas()[0].parametros["MessageBody"] == "x"


def test_a_caller_without_principal_is_attributed_by_its_access_key(aws: None, sesion_limpia: None) -> None:
    with Registro(por_clave_acceso={"ak": "ProcesarPedido"}) as registro:
        boto3.client("sns", region_name="eu-south-2", aws_access_key_id="ak", aws_secret_access_key="sk").list_topics()
        boto3.client("sns", region_name="eu-south-2").list_topics()
    assert [(ll.principal, ll.servicio, ll.operacion) for ll in registro.llamadas()] == [
        ("ProcesarPedido", "sns", "ListTopics")
    ]


def test_a_signed_function_url_call_is_recorded_as_its_principals(sesion_limpia: None) -> None:
    from mercadofresco.http.auth import FunctionUrlSigV4

    url = "http://127.0.0.1:41001/cobros"
    with Registro() as registro:
        FunctionUrlSigV4(region="eu-south-2").headers("POST", url, {}, b"{}")  # the harness: nobody's
        with acting_as("CobroFunction"):
            FunctionUrlSigV4(region="eu-south-2").headers("POST", url, {}, b"{}")
    assert [(ll.principal, ll.servicio, ll.operacion, ll.parametros) for ll in registro.llamadas()] == [
        ("CobroFunction", "lambda", "InvokeFunctionUrl", {"FunctionUrl": url})
    ]
