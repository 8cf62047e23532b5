"""The template is the source of truth: the local run and the tests read it, never a copy."""

from __future__ import annotations

import boto3
import pytest
from sam_emulator.template import Template, TemplateError, create_table_from


def test_parameters_default_to_the_lessons_names() -> None:
    # GIVEN the template with its default parameters
    p = Template()
    # WHEN the idempotency table's name is resolved
    nombre = p.resolve({"Fn::Sub": "mercadofresco-idempotencia${NameSuffix}"})
    # THEN it is the lesson's name, and a suffix is appended when given
    assert nombre == "mercadofresco-idempotencia"
    assert Template(parameters={"NameSuffix": "-dev"}).resolve({"Fn::Sub": "x${NameSuffix}"}) == "x-dev"


def test_unresolvable_ref_raises_instead_of_guessing() -> None:
    with pytest.raises(TemplateError, match="DatosKey"):
        Template().properties("TablaIdempotencia")


def test_bounds_from_mappings_resolve_to_the_declared_value_and_an_unknown_key_raises() -> None:
    # GIVEN the charge function's Timeout and lease, written as !FindInMap into Mappings.Plazos
    p = Template()
    cobro = p.resources["CobroFunction"]["Properties"]
    declarado = p.doc["Mappings"]["Plazos"]["CobroFunction"]
    # WHEN the local run resolves them THEN they are the declared numbers, not a copy of them
    assert p.resolve(cobro["Timeout"]) == declarado["TimeoutS"]
    assert p.resolve(cobro["Environment"]["Variables"]["IDEMPOTENCY_LEASE_S"]) == declarado["LeaseS"]
    # AND a key the Mappings do not hold raises instead of guessing
    with pytest.raises(TemplateError, match="Plazos, CobroFunction, NoExiste"):
        p.resolve({"Fn::FindInMap": ["Plazos", "CobroFunction", "NoExiste"]})


@pytest.mark.integration
def test_idempotency_table_created_from_the_template(plantilla: Template) -> None:
    ddb = boto3.client("dynamodb")
    nombre = create_table_from(ddb, plantilla, "TablaIdempotencia")
    tabla = ddb.describe_table(TableName=nombre)["Table"]
    assert nombre == "mercadofresco-idempotencia"
    assert tabla["KeySchema"] == [{"AttributeName": "clave", "KeyType": "HASH"}]
    assert tabla["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    ttl = ddb.describe_time_to_live(TableName=nombre)["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expira_en"}


def test_sdk_clients_use_the_lessons_retry_policy() -> None:
    from mercadofresco import aws

    c = aws.client("sqs", region_name="eu-south-2")
    # botocore turns the lesson's max_attempts=2 (retries) into 3 attempts in all
    assert c.meta.config.retries == {"mode": "standard", "total_max_attempts": aws.SDK_TOTAL_ATTEMPTS}
    assert aws.SDK_TOTAL_ATTEMPTS == 3
    assert (c.meta.config.connect_timeout, c.meta.config.read_timeout) == (
        aws.SDK_CONNECT_TIMEOUT_S,
        aws.SDK_READ_TIMEOUT_S,
    )


def test_what_the_workflow_publishes_to_a_topic_is_what_the_topic_declares_it_carries() -> None:
    # GIVEN the workflow's SNS publish tasks, each naming its topic through a DefinitionSubstitution and its event type
    # in the message attribute tipo (what the consumers' routing reads: template_model.messaging.queues_reached_by)
    from template_model import asl

    p = Template()
    maquina = p.resources["ProcesarPedido"]
    definicion, _origen = asl.definition_of(maquina, p.path.parent)
    sustituciones = maquina["Properties"]["DefinitionSubstitutions"]
    publicaciones = [
        (s.body["Parameters"]["TopicArn"], s.body["Parameters"]["MessageAttributes"]["tipo"]["StringValue"])
        for s in asl.walk(definicion)
        if s.body.get("Resource") == "arn:aws:states:::sns:publish"
    ]
    assert publicaciones, "the workflow publishes the confirmation to a topic"
    for destino, tipo in publicaciones:
        # WHEN the topic it names is looked up  THEN it declares that type (Metadata.Mensajeria.Eventos)
        tema = sustituciones[destino.removeprefix("${").removesuffix("}")]["Ref"]
        assert tipo in p.resources[tema]["Metadata"]["Mensajeria"]["Eventos"], (destino, tipo)
