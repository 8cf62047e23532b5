"""A template as a deployed stack holds it: what the least-privilege tests judge a request against."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from template_model import TemplateError

if TYPE_CHECKING:
    from sam_emulator.template import Template

REGION, CUENTA = "eu-south-2", "123456789012"
CLAVE = f"arn:aws:kms:{REGION}:{CUENTA}:key/1234abcd"
_NOMBRE = {
    "AWS::SQS::Queue": "QueueName",
    "AWS::SNS::Topic": "TopicName",
    "AWS::DynamoDB::Table": "TableName",
    "AWS::Serverless::Function": "FunctionName",
    "AWS::Events::Rule": "Name",
    "AWS::Events::EventBus": "Name",
    "AWS::Serverless::StateMachine": "Name",
}


def arn(servicio: str, recurso: str) -> str:
    return f"arn:aws:{servicio}:{REGION}:{CUENTA}:{recurso}"


def _fisicos(p: Template) -> dict[str, Any]:
    """A physical id for every resource, shaped as a deployed stack's (fisicos_de_pila)."""
    fisicos: dict[str, Any] = {"DatosKey": {"Ref": "1234abcd", "Arn": CLAVE, "KeyId": "1234abcd"}}
    for lid, recurso in p.resources.items():
        tipo = recurso["Type"]
        nombre = p.resolve(recurso.get("Properties", {}).get(_NOMBRE.get(tipo, ""), lid))
        if tipo == "AWS::SQS::Queue":
            url = f"https://sqs.{REGION}.amazonaws.com/{CUENTA}/{nombre}"
            fisicos[lid] = {"Ref": url, "Arn": arn("sqs", nombre), "QueueName": nombre}
        elif tipo == "AWS::SNS::Topic":
            fisicos[lid] = {"Ref": arn("sns", nombre), "TopicName": nombre}
        elif tipo == "AWS::DynamoDB::Table":
            tabla = arn("dynamodb", f"table/{nombre}")
            fisicos[lid] = {"Ref": nombre, "Arn": tabla, "StreamArn": f"{tabla}/stream/2026-12-04T00:00:00.000"}
        elif tipo == "AWS::Serverless::Function":
            fisicos[lid] = {"Ref": nombre, "Arn": arn("lambda", f"function:{nombre}")}
        elif tipo == "AWS::Lambda::Url":
            fisicos[lid] = {"Ref": f"https://{lid}.lambda-url.{REGION}.on.aws/"}
            fisicos[lid]["FunctionUrl"] = fisicos[lid]["Ref"]
        elif tipo == "AWS::IAM::Role":  # named as CloudFormation names a role: a policy of a unit grants it by name
            fisicos[lid] = {"Ref": f"pila-{lid}", "Arn": f"arn:aws:iam::{CUENTA}:role/pila-{lid}"}
        elif tipo == "AWS::Events::EventBus":
            fisicos[lid] = {"Ref": nombre, "Name": nombre, "Arn": arn("events", f"event-bus/{nombre}")}
        elif tipo == "AWS::SecretsManager::Secret":
            fisicos[lid] = {"Ref": arn("secretsmanager", f"secret:{lid}-AbCdEf")}
        elif tipo == "AWS::Serverless::HttpApi":
            fisicos[lid] = {"Ref": "a1b2c3d4e5"}
        elif tipo == "AWS::Serverless::StateMachine":
            fisicos[lid] = {"Ref": arn("states", f"stateMachine:{nombre}"), "Name": nombre}
    for lid, recurso in p.resources.items():  # a rule's ARN names its bus
        if recurso["Type"] == "AWS::Events::Rule":
            nombre = p.resolve(recurso["Properties"]["Name"])
            bus = recurso["Properties"]["EventBusName"]  # the root's bus, or a unit's parameter naming it
            bus = fisicos[bus["Ref"]]["Name"] if bus["Ref"] in fisicos else p.resolve(bus)
            fisicos[lid] = {"Ref": nombre, "Arn": arn("events", f"rule/{bus}/{nombre}")}
    return fisicos


def creada(p: Template) -> Template:
    """``p`` as a deployed stack holds it: every resource with a physical id, in it and in each unit it creates
    (given what ``p`` resolves), each unit's outputs what the parent's ``!GetAtt Unidad.Outputs.X`` resolves to."""
    p = replace(p, region=REGION, account=CUENTA, physical_ids=_fisicos(p))
    unidades: dict[str, Template] = {}
    pendientes = list(p.units())
    while pendientes:  # a unit handed another's outputs (the sandbox grants, the simulators' ARNs) after that one
        lid = next(u for u in pendientes if not _lee_salidas_de(p, u) & set(pendientes))
        pendientes.remove(lid)
        unidades[lid] = unidad = creada(p.units()[lid])
        p.physical_ids[lid] = {}
        for nombre, salida in (unidad.doc.get("Outputs") or {}).items():
            if unidad.condition(salida.get("Condition")):
                with suppress(TemplateError):  # an output of a resource given no id here (the network's)
                    p.physical_ids[lid][f"Outputs.{nombre}"] = unidad.resolve(salida["Value"])
    return replace(p, created_units=unidades)


def _lee_salidas_de(p: Template, unidad: str) -> set[str]:
    """The units whose outputs the parent hands ``unidad`` (``!GetAtt Otra.Outputs.X`` among its parameters)."""
    leidas: set[str] = set()

    def recorrer(nodo: Any) -> None:
        if isinstance(nodo, dict):
            att = nodo.get("Fn::GetAtt")
            if isinstance(att, list) and len(att) == 2 and str(att[1]).startswith("Outputs."):
                leidas.add(att[0])
            for valor in nodo.values():
                recorrer(valor)
        elif isinstance(nodo, list):
            for valor in nodo:
                recorrer(valor)

    recorrer(p.resources[unidad].get("Properties", {}).get("Parameters"))
    return leidas
