"""The recorder and the roles wired to the deploy level: requests made inside the emulated account.

Inside MiniStack the functions run in Docker and the state machine's tasks in MiniStack's own
process, so the in-process hook of :mod:`registro` cannot see them. Two recorders write JSON
lines to one folder instead (``tools/levels/emulated_account``: ``en_contenedor/mf_iam_registro.py`` in
every function container, ``ministack_con_registro.py`` around the state machine's task
dispatch); :func:`leer_registro` turns those lines into the same :class:`~registro.Llamada`
objects a local run records, and :func:`comprobar_despliegue` evaluates them against the roles
of the *transformed* ``template.yaml``, resolved with the deployed stack's physical ids.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from sam_emulator.template import Template

from least_privilege.acciones import Destino
from least_privilege.comprobacion import Cuenta, comprobar
from least_privilege.registro import Llamada, Registro
from least_privilege.roles import plantilla_transformada, resolver

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from least_privilege.comprobacion import Informe
    from least_privilege.roles import Resuelta

__all__ = [
    "arn_de_secreto",
    "comprobar_despliegue",
    "destino",
    "fisicos_de_pila",
    "funciones_de_pila",
    "leer_registro",
    "llamada_de_tarea",
    "plantilla_desplegada",
]

# arn:aws:states:::<service>:<action>[.sync|.waitForTaskToken], or the aws-sdk form.
_TAREA = re.compile(r"^arn:aws:states:::(?:aws-sdk:)?(?P<servicio>[a-z0-9-]+):(?P<accion>[A-Za-z0-9]+)")
_FUNCION_DIRECTA = re.compile(r"^arn:aws:lambda:[^:]*:[0-9]*:function:")


def llamada_de_tarea(principal: str, recurso: str, parametros: Mapping[str, Any]) -> Llamada:
    """The API call a Task state makes: ``arn:aws:states:::sqs:sendMessage`` is SQS ``SendMessage``.

    A resource this does not know is kept as ``states:<resource>`` on ``*``: no role grants it, so it
    shows up as denied instead of passing unseen.
    """
    if _FUNCION_DIRECTA.match(recurso):
        return Llamada(principal, "lambda", "Invoke", {"FunctionName": recurso})
    coincide = _TAREA.match(recurso)
    if coincide is None or coincide["servicio"] == "states":
        return Llamada(principal, "states", recurso, {})
    accion = coincide["accion"]
    return Llamada(principal, coincide["servicio"], accion[0].upper() + accion[1:], dict(parametros))


def leer_registro(
    carpeta: Path,
    funciones: Mapping[str, str],
    maquina: str | None,
    arn_de_secreto: Callable[[str], str | None] = lambda _nombre: None,
) -> Registro:
    """Every recorded line under ``carpeta``; ``funciones`` maps a function's name to its logical id.

    A function the stack does not name, or a task when the stack has no single state machine, keeps a
    principal no role belongs to (the check reports it as such). A secret asked for by name is
    authorised against its ARN (``arn_de_secreto``, the account's answer), as IAM does.
    """
    registro = Registro()
    for ruta in sorted(carpeta.glob("*.jsonl")):
        for linea in ruta.read_text(encoding="utf-8").splitlines():
            dato = json.loads(linea)
            if "recurso" in dato:
                principal = maquina or "(state machine)"
                registro.anotar(llamada_de_tarea(principal, dato["recurso"], dato.get("parametros") or {}))
            else:
                principal = funciones.get(dato["funcion"], f"(function {dato['funcion']})")
                parametros = dato["parametros"]
                secreto = parametros.get("SecretId") if dato["servicio"] == "secretsmanager" else None
                if secreto and not secreto.startswith("arn:") and (arn := arn_de_secreto(secreto)):
                    parametros = {**parametros, "SecretId": arn}
                registro.anotar(Llamada(principal, dato["servicio"], dato["operacion"], parametros))
    return registro


#: Where :func:`fisicos_de_pila` keeps a nested stack's own physical ids, beside its outputs.
FISICOS_DE_LA_UNIDAD = "Recursos"


def funciones_de_pila(fisicos: Mapping[str, Any], prefijo: str = "") -> dict[str, str]:
    """Each deployed function's name -> its logical id, a nested stack's as ``<unit>/<logical id>`` (the
    principals :func:`least_privilege.roles.principales` names), from what :func:`fisicos_de_pila` read."""
    funciones = {}
    for logico, valor in fisicos.items():
        if ":lambda:" in (arn := str(valor.get("Arn", ""))) and ":function:" in arn:
            funciones[valor["Ref"]] = prefijo + logico
        elif isinstance(propios := valor.get(FISICOS_DE_LA_UNIDAD), dict):
            funciones |= funciones_de_pila(propios, f"{prefijo}{logico}/")
    return funciones


def fisicos_de_pila(cliente: Callable[[str], Any], pila: str, region: str, cuenta: str) -> dict[str, Any]:
    """Logical id -> ``{"Ref": ..., <attribute>: ...}`` for the deployed stack, as its roles reference them."""
    recursos = cliente("cloudformation").describe_stack_resources(StackName=pila)["StackResources"]
    fisicos: dict[str, Any] = {}
    for r in recursos:
        tipo, fisico = r["ResourceType"], r.get("PhysicalResourceId", "")
        arn = f"arn:aws:{{}}:{region}:{cuenta}:{{}}"
        if tipo == "AWS::Lambda::Function":
            valor = {
                "Ref": fisico,
                "Arn": cliente("lambda").get_function(FunctionName=fisico)["Configuration"]["FunctionArn"],
            }
            if url := _url_de_funcion(cliente("lambda"), fisico):
                valor["FunctionUrl"] = url
        elif tipo == "AWS::SQS::Queue":
            atributos = cliente("sqs").get_queue_attributes(QueueUrl=fisico, AttributeNames=["QueueArn"])["Attributes"]
            valor = {"Ref": fisico, "Arn": atributos["QueueArn"], "QueueName": fisico.rsplit("/", 1)[-1]}
        elif tipo == "AWS::DynamoDB::Table":
            tabla = cliente("dynamodb").describe_table(TableName=fisico)["Table"]
            valor = {"Ref": fisico, "Arn": tabla["TableArn"], "StreamArn": tabla.get("LatestStreamArn")}
        elif tipo == "AWS::KMS::Key":
            valor = {"Ref": fisico, "Arn": cliente("kms").describe_key(KeyId=fisico)["KeyMetadata"]["Arn"]}
        elif tipo == "AWS::Events::EventBus":
            nombre = fisico.rsplit("/", 1)[-1]
            valor = {"Ref": nombre, "Name": nombre, "Arn": arn.format("events", f"event-bus/{nombre}")}
        elif tipo == "AWS::Logs::LogGroup":
            valor = {"Ref": fisico, "Arn": arn.format("logs", f"log-group:{fisico}:*")}  # CloudFormation's GetAtt Arn
        elif tipo == "AWS::S3::Bucket":
            valor = {"Ref": fisico, "Arn": f"arn:aws:s3:::{fisico}"}
        elif tipo == "AWS::SecretsManager::Secret":
            # AWS's Ref is the secret's ARN; MiniStack's physical id is its name (emulated_account.gaps).
            secreto = cliente("secretsmanager").describe_secret(SecretId=fisico)["ARN"]
            valor = {"Ref": secreto, "Arn": secreto}
        elif tipo in ("AWS::SNS::Topic", "AWS::StepFunctions::StateMachine"):
            valor = {"Ref": fisico, "Arn": fisico, "TopicArn": fisico, "Name": fisico.rsplit(":", 1)[-1]}
        elif tipo == "AWS::CloudFormation::Stack":  # a unit (decision 0130): its GetAtt Outputs.X are its outputs
            (anidada,) = cliente("cloudformation").describe_stacks(StackName=fisico)["Stacks"]
            salidas = {f"Outputs.{o['OutputKey']}": o["OutputValue"] for o in anidada.get("Outputs", [])}
            valor = {"Ref": fisico, **salidas, FISICOS_DE_LA_UNIDAD: fisicos_de_pila(cliente, fisico, region, cuenta)}
        else:
            valor = {"Ref": fisico}
        fisicos[r["LogicalResourceId"]] = valor
    return fisicos


def _url_de_funcion(lam: Any, funcion: str) -> str | None:
    try:
        return lam.get_function_url_config(FunctionName=funcion)["FunctionUrl"]
    except lam.exceptions.ResourceNotFoundException:
        return None


def arn_de_secreto(cliente: Callable[[str], Any]) -> Callable[[str], str | None]:
    """A secret's name -> its ARN in the account (None if there is no such secret)."""
    sm = cliente("secretsmanager")

    def arn(nombre: str) -> str | None:
        try:
            return sm.describe_secret(SecretId=nombre)["ARN"]
        except sm.exceptions.ResourceNotFoundException:
            return None

    return arn


def plantilla_desplegada(
    ruta: Path, parametros: Mapping[str, str], region: str, cuenta: str, pila: str, fisicos: dict[str, Any]
) -> Template:
    """``template.yaml`` with the deploy's parameter values (the rest at their defaults) and physical ids."""
    base = Template(path=ruta)
    valores: dict[str, Any] = {}
    for nombre, definicion in base.doc.get("Parameters", {}).items():
        valor = str(parametros.get(nombre, definicion.get("Default", "")))
        valores[nombre] = (
            [v for v in valor.split(",") if v] if definicion.get("Type") == "CommaDelimitedList" else valor
        )
    plantilla = Template(path=ruta, parameters=valores, region=region, account=cuenta, stack_name=pila)
    return _con_fisicos(plantilla, fisicos)


def _con_fisicos(plantilla: Template, fisicos: dict[str, Any]) -> Template:
    """``plantilla`` with these physical ids, and each unit it creates with its nested stack's
    (:data:`FISICOS_DE_LA_UNIDAD`), handed out as created (``Template.created_units``)."""
    plantilla.physical_ids.update(fisicos)
    for logical_id, unidad in plantilla.units().items():
        if isinstance(propios := (fisicos.get(logical_id) or {}).get(FISICOS_DE_LA_UNIDAD), dict):
            plantilla.created_units[logical_id] = _con_fisicos(unidad, propios)
    return plantilla


def destino(plantilla: Template, resuelta: Resuelta | None = None) -> Destino:
    """The stack's region and account, each table's partition key, and the function behind each function URL.

    A function URL is known by AWS's name (``https://<id>.lambda-url.<region>.on.aws/``) and, as the
    stack's functions are given it in the emulated account, by MiniStack's path form
    ``/_aws/lambda-url/<id>/`` (``emulated_account.gaps``). The stack's units (its nested stacks, decision
    0130) are read too, each with its nested stack's physical ids (:func:`plantilla_desplegada`).
    """
    claves, urls = {}, {}
    for _ruta, unidad in plantilla.walk():  # the root and each unit, with its nested stack's physical ids
        for logical_id, recurso in unidad.of_type("AWS::DynamoDB::Table").items():
            propiedades = recurso["Properties"]
            (hash_,) = [k["AttributeName"] for k in propiedades["KeySchema"] if k["KeyType"] == "HASH"]
            claves[unidad.resolve(propiedades.get("TableName", logical_id))] = hash_
        for recurso in unidad.of_type("AWS::Lambda::Url").values():
            funcion = unidad.physical_ids.get(recurso["Properties"]["TargetFunctionArn"]["Fn::GetAtt"][0]) or {}
            if "FunctionUrl" in funcion:
                url_id = funcion["FunctionUrl"].split("//", 1)[-1].split(".", 1)[0]
                urls[funcion["FunctionUrl"]] = urls[f"/_aws/lambda-url/{url_id}/"] = funcion["Arn"]
    resuelta = resuelta or resolver(plantilla, plantilla_transformada(plantilla.path, plantilla.region))
    return Destino.de_resuelta(resuelta, claves, urls)


def comprobar_despliegue(registro: Registro, plantilla: Template) -> Informe:
    """Every recorded call, and what AWS requested for it, against the roles and resource policies as deployed."""
    resuelta = resolver(plantilla, plantilla_transformada(plantilla.path, plantilla.region))
    return comprobar(registro.solicitudes(destino(plantilla, resuelta)), Cuenta.de_resuelta(resuelta))
