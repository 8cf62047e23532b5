"""The local runtime creates template.yaml's resources in moto from their own definitions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sam_emulator.moto_server import MotoServer

pytestmark = pytest.mark.integration


def test_aprovisionar_template_creates_each_resource_with_its_name_and_settings(servidor_moto: MotoServer) -> None:
    from mercadofresco.aws import client
    from sam_emulator.provisioning import Provisioner
    from sam_emulator.template import Template

    # GIVEN the template as committed
    plantilla = Template()

    # WHEN the runtime provisions it
    aprovisionador = Provisioner(plantilla).provision()

    # THEN every resource whose condition holds was created or explicitly marked as without local effect
    activos = {lid for lid, r in plantilla.resources.items() if plantilla.condition(r.get("Condition"))}
    assert set(aprovisionador.created) | set(aprovisionador.no_effect) == activos
    # AND the idempotency table carries the template's TTL attribute
    ttl = client("dynamodb").describe_time_to_live(TableName="mercadofresco-idempotencia")
    assert ttl["TimeToLiveDescription"]["AttributeName"] == "expira_en"
    # AND every queue's redrive policy points at a queue that exists
    sqs = client("sqs")
    arns = set()
    politicas = []
    for url in sqs.list_queues().get("QueueUrls", []):
        atributos = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        arns.add(atributos["QueueArn"])
        if "RedrivePolicy" in atributos:
            politicas.append(atributos["RedrivePolicy"])
    assert all(any(arn in p for arn in arns) for p in politicas)


def test_aprovisionar_resource_with_an_impossible_reference_is_named_in_the_error(servidor_moto: MotoServer) -> None:
    from sam_emulator.provisioning import Provisioner
    from sam_emulator.template import Template, TemplateError

    # GIVEN a template whose queue refers to a resource that does not exist
    plantilla = Template()
    plantilla.doc["Resources"] = {
        "Cola": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Fn::GetAtt": ["NoExiste", "Arn"]}}}
    }

    # WHEN it is provisioned
    with pytest.raises(TemplateError) as error:
        Provisioner(plantilla).provision()

    # THEN the error names the resource that could not be resolved
    assert "Cola" in str(error.value)
    assert "NoExiste" in str(error.value)
