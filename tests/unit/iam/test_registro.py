"""The recorder sees every call made on a principal's behalf, and only those (botocore hook on boto3's session)."""

from __future__ import annotations

import boto3
import pytest
from least_privilege.registro import Registro
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


def test_what_aws_does_with_no_code_calling_is_recorded_as_its_principals(aws: None, sesion_limpia: None) -> None:
    from sam_emulator.moto_patches import report_service_messages
    from sam_emulator.principal import PLATFORM_INVOCATION, report_invocation

    with report_service_messages(), Registro() as registro:
        # GIVEN a topic and a rule that deliver to queues (set up by the harness: nobody's calls)
        sqs, sns, events = (boto3.client(s, region_name="eu-south-2") for s in ("sqs", "sns", "events"))
        cola = sqs.get_queue_attributes(
            QueueUrl=sqs.create_queue(QueueName="cola")["QueueUrl"], AttributeNames=["QueueArn"]
        )["Attributes"]["QueueArn"]
        tema = sns.create_topic(Name="tema")["TopicArn"]
        sns.subscribe(TopicArn=tema, Protocol="sqs", Endpoint=cola)
        regla = events.put_rule(Name="regla", EventPattern='{"source": ["mf"]}')["RuleArn"]
        events.put_targets(Rule="regla", Targets=[{"Id": "cola", "Arn": cola}])
        # WHEN a function is invoked and, as it, publishes and puts an event
        report_invocation("CobroFunction", "mercadofresco-cobro")
        with acting_as("CobroFunction"):
            sns.publish(TopicArn=tema, Message="m")
            events.put_events(Entries=[{"Source": "mf", "DetailType": "x", "Detail": "{}"}])
    # THEN the invocation is Lambda's (with the function's role), each delivery the service's, for its source
    assert [(ll.principal, ll.servicio, ll.operacion, ll.origen) for ll in registro.llamadas()] == [
        ("CobroFunction", "lambda", PLATFORM_INVOCATION, None),
        ("CobroFunction", "sns", "Publish", None),  # recorded before it is sent, its delivery while it is served
        ("sns.amazonaws.com", "sqs", "SendMessage", tema),
        ("CobroFunction", "events", "PutEvents", None),
        ("events.amazonaws.com", "sqs", "SendMessage", regla),
    ]
    assert registro.llamadas()[2].parametros == {"QueueArn": cola}
