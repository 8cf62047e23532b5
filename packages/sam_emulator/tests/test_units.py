"""Nested units (decision 0130): the emulator creates a unit's resources and hands its outputs to the parent."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from sam_emulator.moto_server import MotoServer
    from sam_emulator.template import Template

pytestmark = pytest.mark.integration

_RAIZ = """
Parameters:
  Sufijo: {Type: String, Default: "-a"}
  ConColas: {Type: String, Default: "si"}
Conditions:
  CrearColas: !Equals [!Ref ConColas, "si"]
Resources:
  Clave:
    Type: AWS::KMS::Key
    Properties: {Description: la clave}
  Colas:
    Type: AWS::Serverless::Application
    Condition: CrearColas
    Properties:
      Location: unidades/colas.yaml
      Parameters:
        Sufijo: !Ref Sufijo
        ClaveArn: !GetAtt Clave.Arn
        Etiquetas: [uno, dos]
  Origen:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub origen${Sufijo}
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt Colas.Outputs.FallidosArn
        maxReceiveCount: 4
"""

_UNIDAD = """
Parameters:
  Sufijo: {Type: String}
  ClaveArn: {Type: String}
  Etiquetas: {Type: CommaDelimitedList}
Resources:
  Fallidos:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub
        - fallidos${Sufijo}-${Segunda}
        - Segunda: !Select [1, !Ref Etiquetas]
      KmsMasterKeyId: !Ref ClaveArn
Outputs:
  FallidosArn:
    Value: !GetAtt Fallidos.Arn
"""


def _plantilla(carpeta: Path, **parametros: str) -> Template:
    from sam_emulator.template import Template

    (carpeta / "unidades").mkdir(exist_ok=True)
    (carpeta / "template.yaml").write_text(_RAIZ)
    (carpeta / "unidades" / "colas.yaml").write_text(_UNIDAD)
    return Template(path=carpeta / "template.yaml", parameters=parametros)


def test_a_unit_is_created_with_what_its_parent_passes_and_its_outputs_reach_the_parent(
    moto_server: MotoServer, tmp_path: Path
) -> None:
    from sam_emulator.aws import client
    from sam_emulator.provisioning import Provisioner

    # GIVEN a root whose queue redrives to a DLQ its unit creates, from parameters the root passes
    plantilla = _plantilla(tmp_path)

    # WHEN provisioned
    aprovisionador = Provisioner(plantilla).provision()

    # THEN the unit's queue exists with the passed values (a list parameter arrives as CloudFormation passes it)
    sqs = client("sqs")
    url = sqs.get_queue_url(QueueName="fallidos-a-dos")["QueueUrl"]
    atributos = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert atributos["KmsMasterKeyId"] == plantilla.physical_ids["Clave"]["Arn"]
    # AND the root's queue redrives to it through the unit's output
    origen = sqs.get_queue_url(QueueName="origen-a")["QueueUrl"]
    redrive = sqs.get_queue_attributes(QueueUrl=origen, AttributeNames=["RedrivePolicy"])["Attributes"]
    redrive = json.loads(redrive["RedrivePolicy"])
    assert redrive["deadLetterTargetArn"] == atributos["QueueArn"]
    # AND the parent hands out the unit as created, its physical ids known to whoever reads it next
    (unidad,) = plantilla.units().values()
    assert unidad.physical_ids["Fallidos"]["Arn"] == atributos["QueueArn"]
    assert aprovisionador.units["Colas"].created == {"Fallidos": "AWS::SQS::Queue"}
    assert aprovisionador.created["Colas"] == "AWS::Serverless::Application"


def test_a_unit_whose_condition_is_false_is_not_created(moto_server: MotoServer, tmp_path: Path) -> None:
    from sam_emulator.aws import client
    from sam_emulator.provisioning import Provisioner
    from sam_emulator.template import TemplateError

    # GIVEN the unit's condition false WHEN provisioned
    plantilla = _plantilla(tmp_path, ConColas="no")
    plantilla.doc["Resources"]["Origen"]["Properties"].pop("RedrivePolicy")
    aprovisionador = Provisioner(plantilla).provision()

    # THEN nothing of it exists, and the parent has no unit to hand out
    assert not aprovisionador.units and not plantilla.units()
    assert [u.rsplit("/", 1)[-1] for u in client("sqs").list_queues()["QueueUrls"]] == ["origen-a"]
    with pytest.raises(TemplateError, match="Colas"):
        plantilla.resolve({"Fn::GetAtt": ["Colas", "Outputs.FallidosArn"]})
