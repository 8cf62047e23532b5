"""Each principal's identity policies as the *transformed* template defines them, resolved to real ARNs.

SAM's own translator (``samtranslator``, installed with SAM CLI) turns ``template.yaml`` into
the CloudFormation that is deployed: a function's ``Policies`` become its generated role's
inline policies, SAM adds managed policies (basic execution, VPC access, X-Ray), and a
function that names its ``Role`` keeps it. The intrinsics are then resolved against a
:class:`~sam_emulator.template.Template` whose physical ids are the run's (the local
run's moto ARNs; an emulated deploy's stack resources): a reference to something the run did
not create resolves to an ARN that matches nothing, so a statement on it grants nothing here.

AWS managed policies are not in the template; the few it attaches are copied below from
their published documents (AWS Managed Policy Reference), actions only, on ``*``.
"""

from __future__ import annotations

import copy
import json
import os
from typing import TYPE_CHECKING, Any

from cfnlint.decode import decode
from sam_emulator.template import Template, TemplateError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["GESTIONADAS", "PoliticasError", "plantilla_transformada", "politicas_por_principal"]

_LOGS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]
_SQS_LECTURA = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
_ENI = [
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
]
_XRAY = [
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
    "xray:GetSamplingStatisticSummaries",
]


def _gestionada(*acciones: str) -> dict[str, Any]:
    return {"Statement": [{"Effect": "Allow", "Action": list(acciones), "Resource": "*"}]}


GESTIONADAS = {
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": _gestionada(*_LOGS),
    "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole": _gestionada(*_LOGS, *_ENI),
    "arn:aws:iam::aws:policy/service-role/AWSLambdaENIManagementAccess": _gestionada(*_ENI[:2], *_ENI[3:]),
    "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole": _gestionada(*_LOGS, *_SQS_LECTURA),
    "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess": _gestionada(*_XRAY),
    "arn:aws:iam::aws:policy/AWSXRayDaemonWriteAccess": _gestionada(*_XRAY),
}


class PoliticasError(Exception):
    """The template cannot be transformed, or a role attaches a managed policy this module does not know."""


class _SinPolitica:
    def load(self) -> dict[str, str]:
        return {}  # the template names managed policies by ARN only


def plantilla_transformada(ruta: Path, region: str) -> dict[str, Any]:
    """``template.yaml`` through SAM's translator, as ``sam deploy`` would send it (code URIs stubbed)."""
    from samtranslator.translator.transform import transform

    plantilla, errores = decode(str(ruta))
    if errores or plantilla is None:
        raise PoliticasError(f"{ruta}: {errores}")
    plantilla = json.loads(json.dumps(plantilla))
    for recurso in plantilla.get("Resources", {}).values():
        propiedades = recurso.get("Properties", {})
        for clave in ("CodeUri", "ContentUri", "DefinitionUri"):
            if isinstance(propiedades.get(clave), str) and not propiedades[clave].startswith("s3://"):
                propiedades[clave] = f"s3://sam-package/{propiedades[clave]}"  # what `sam package` puts there
    anterior = os.environ.get("AWS_DEFAULT_REGION")
    os.environ["AWS_DEFAULT_REGION"] = region  # the translator reads the region from boto's session
    try:
        return transform(plantilla, {}, _SinPolitica())
    finally:
        if anterior is None:
            os.environ.pop("AWS_DEFAULT_REGION")
        else:
            os.environ["AWS_DEFAULT_REGION"] = anterior


class _Resuelta(Template):
    """The transformed template, resolved with a run's physical ids; unknown references match nothing."""

    def ref(self, nombre: str) -> Any:
        try:
            return super().ref(nombre)
        except TemplateError:
            return f"arn:not-created-in-this-run:{nombre}"

    def get_att(self, nombre: str, atributo: str) -> Any:
        try:
            return super().get_att(nombre, atributo)
        except TemplateError:
            return f"arn:not-created-in-this-run:{nombre}.{atributo}"


_ADJUNTAS = ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy")


def _nombre_rol(referencia: Any) -> str | None:
    if isinstance(referencia, dict) and "Fn::GetAtt" in referencia:
        objetivo = referencia["Fn::GetAtt"]
        return (objetivo.split(".", 1) if isinstance(objetivo, str) else objetivo)[0]
    return None


def _elegir(resuelta: Template, nodo: Any) -> Any:
    """``nodo`` with its ``Fn::If`` chosen by the run's conditions (an attached policy may name a role under one)."""
    while isinstance(nodo, dict) and set(nodo) == {"Fn::If"}:
        condicion, si, no = nodo["Fn::If"]
        nodo = si if resuelta.condition(condicion) else no
    return nodo


def politicas_por_principal(plantilla: Template, transformada: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Function / state machine / pipe logical id -> the policy documents of its role, resolved."""
    resuelta = _Resuelta(
        path=plantilla.path,
        parameters=plantilla.parameters,
        region=plantilla.region,
        account=plantilla.account,
        physical_ids=plantilla.physical_ids,
    )
    resuelta.__dict__["doc"] = copy.deepcopy(transformada)
    recursos = transformada["Resources"]
    adjuntas: dict[str, list[Any]] = {}  # role -> the policies attached to it from outside
    for recurso in recursos.values():
        propiedades = recurso.get("Properties", {})
        if recurso["Type"] not in _ADJUNTAS or not resuelta.condition(recurso.get("Condition")):
            continue
        roles = propiedades.get("Roles", []) if recurso["Type"] != "AWS::IAM::RolePolicy" else [propiedades["RoleName"]]
        for rol in (_elegir(resuelta, r) for r in roles):
            if rol == {"Ref": "AWS::NoValue"}:
                continue
            adjuntas.setdefault(rol.get("Ref", rol) if isinstance(rol, dict) else rol, []).append(
                propiedades["PolicyDocument"]
            )
    principales: dict[str, list[dict[str, Any]]] = {}
    for logical_id, recurso in recursos.items():
        propiedades = recurso.get("Properties", {})
        rol = {
            "AWS::Lambda::Function": lambda p: _nombre_rol(p.get("Role")),
            "AWS::StepFunctions::StateMachine": lambda p: _nombre_rol(p.get("RoleArn")),
            "AWS::Pipes::Pipe": lambda p: _nombre_rol(p.get("RoleArn")),
        }.get(recurso["Type"], lambda _p: None)(propiedades)
        if rol is None or not resuelta.condition(recurso.get("Condition")):
            continue
        definicion = recursos[rol]["Properties"]
        documentos = [p["PolicyDocument"] for p in resuelta.resolve(definicion.get("Policies", []))]
        documentos += adjuntas.get(rol, [])
        for arn in resuelta.resolve(definicion.get("ManagedPolicyArns", [])):
            if arn not in GESTIONADAS:
                raise PoliticasError(f"{rol} attaches {arn}: add its published document to GESTIONADAS")
            documentos.append(GESTIONADAS[arn])
        principales[logical_id] = [resuelta.resolve(d) for d in documentos]
    return principales
