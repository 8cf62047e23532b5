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


_UNIDAD_CON_CONSUMIDOR = """
Resources:
  Cola:
    Type: AWS::SQS::Queue
    Properties: {QueueName: cola-de-la-unidad, VisibilityTimeout: 30}
  Consumidor:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: consumidor-de-la-unidad
      CodeUri: consumidor/
      Handler: app.lambda_handler
      Runtime: python3.13
      Timeout: 5
      Events:
        Mensajes:
          Type: SQS
          Properties: {Queue: !GetAtt Cola.Arn, BatchSize: 5}
"""


def _raiz_con_unidad(carpeta: Path, nombre: str, unidad: str, respuesta: str) -> Template:
    """A root nesting ``unidad`` as ``Unidad`` (``unidades/<nombre>.yaml``), whose one function's code
    (``<nombre>/app.py``) answers ``respuesta``."""
    from sam_emulator.template import Template

    (carpeta / "unidades" / nombre).mkdir(parents=True)
    (carpeta / "unidades" / nombre / "app.py").write_text(
        f"def lambda_handler(event, context):\n    return {respuesta}\n"
    )
    (carpeta / "unidades" / f"{nombre}.yaml").write_text(unidad)
    (carpeta / "template.yaml").write_text(
        "Resources:\n  Unidad:\n    Type: AWS::Serverless::Application\n"
        f"    Properties: {{Location: unidades/{nombre}.yaml}}\n"
    )
    return Template(path=carpeta / "template.yaml")


def test_a_units_function_is_known_by_its_path_and_its_queue_feeds_it(moto_server: MotoServer, tmp_path: Path) -> None:
    from sam_emulator.event_sources import mappings_from_template
    from sam_emulator.provisioning import Provisioner

    # GIVEN a root whose unit holds a queue and the function its SQS event feeds
    plantilla = _raiz_con_unidad(tmp_path, "consumidor", _UNIDAD_CON_CONSUMIDOR, "{}")

    # WHEN provisioned and its mappings read
    aprovisionador = Provisioner(plantilla).provision()
    (unidad,) = plantilla.units().values()
    (mapeo,) = mappings_from_template(unidad, aprovisionador.functions, unit_path="Unidad/")

    # THEN the function is the unit's by its path (as SAM and the least-privilege check name it), under its own
    # FunctionName, and the unit's queue feeds it
    funcion = aprovisionador.functions.by_id["Unidad/Consumidor"]
    assert (funcion.name, funcion.code) == ("consumidor-de-la-unidad", tmp_path / "unidades" / "consumidor")
    assert (mapeo.name, mapeo.function, mapeo.batch_size) == ("Unidad/Consumidor.Mensajes", funcion, 5)
    assert mapeo.queue_arn == unidad.get_att("Cola", "Arn")
    assert "Consumidor" not in aprovisionador.functions.by_id
    # AND its handler loads under that name (a cold start)
    assert funcion.load().lambda_handler({}, None) == {}


_UNIDAD_PROGRAMADA = """
Resources:
  Tarea:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: tarea-de-la-unidad
      CodeUri: tarea/
      Handler: app.lambda_handler
      Runtime: python3.13
  Programa:
    Type: AWS::Scheduler::Schedule
    Properties:
      ScheduleExpression: rate(1 minute)
      FlexibleTimeWindow: {Mode: "OFF"}
      Target: {Arn: !GetAtt Tarea.Arn, RoleArn: arn:aws:iam::123456789012:role/r, Input: '{"origen": "programa"}'}
"""


def test_a_units_schedule_acts_by_its_path_and_invokes_the_units_function(
    moto_server: MotoServer, tmp_path: Path
) -> None:
    from sam_emulator.principal import add_service_listener, remove_service_listener
    from sam_emulator.provisioning import Provisioner
    from sam_emulator.scheduler import schedules_from_template

    # GIVEN a root whose unit schedules its own function
    plantilla = _raiz_con_unidad(tmp_path, "tarea", _UNIDAD_PROGRAMADA, "event")
    aprovisionador = Provisioner(plantilla).provision()
    (unidad,) = plantilla.units().values()

    # WHEN its schedules are read and the one there fires
    (programa,) = schedules_from_template(unidad, aprovisionador.functions, unit_path="Unidad/")
    llamadas: list = []
    add_service_listener(llamadas.append)
    try:
        programa.fire()
    finally:
        remove_service_listener(llamadas.append)

    # THEN it acts under its path (the name its role is judged under) and invoked the unit's function with its input
    assert programa.name == "Unidad/Programa"
    assert programa.function is aprovisionador.functions.by_id["Unidad/Tarea"]
    assert [c.principal for c in llamadas if c.operation == "Invoke"] == ["Unidad/Programa"]
    assert (programa.executions, programa.errors) == (1, 0)


_UNIDAD_CON_API = """
Transform: AWS::Serverless-2016-10-31
Resources:
  Api:
    Type: AWS::Serverless::HttpApi
  Pedidos:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: pedidos-de-la-unidad
      CodeUri: pedidos/
      Handler: app.lambda_handler
      Runtime: python3.13
      Events:
        Crear: {Type: HttpApi, Properties: {ApiId: !Ref Api, Method: POST, Path: /pedidos}}
        Leer: {Type: HttpApi, Properties: {ApiId: !Ref Api, Method: GET, Path: "/pedidos/{id}"}}
"""


def test_a_units_http_api_serves_its_functions_routes_under_its_path(moto_server: MotoServer, tmp_path: Path) -> None:
    import urllib.request

    from sam_emulator.http_api import LocalHttpApi, routes_from_template
    from sam_emulator.provisioning import Provisioner

    # GIVEN a root whose unit holds an HTTP API and the function behind its two routes
    respuesta = '{"statusCode": 200, "body": event["routeKey"] + " " + event["pathParameters"]["id"]}'
    plantilla = _raiz_con_unidad(tmp_path, "pedidos", _UNIDAD_CON_API, respuesta)
    aprovisionador = Provisioner(plantilla).provision()

    # WHEN the stack's routes are read
    rutas = routes_from_template(plantilla, aprovisionador.functions)

    # THEN the unit's API is known by its path, with the unit's function behind both routes
    assert list(rutas) == ["Unidad/Api"]
    assert {r.key for r in rutas["Unidad/Api"]} == {"POST /pedidos", "GET /pedidos/{id}"}
    assert all(r.function is aprovisionador.functions.by_id["Unidad/Pedidos"] for r in rutas["Unidad/Api"])
    # AND served on loopback, a request reaches that function
    with LocalHttpApi(rutas["Unidad/Api"]) as api, urllib.request.urlopen(f"{api.url}/pedidos/PED-1") as r:
        assert r.read().decode() == "GET /pedidos/{id} PED-1"
