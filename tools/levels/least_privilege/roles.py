"""Each principal's role and identity policies as the *transformed* template defines them, resolved to real ARNs.

A principal is whatever acts with a role: a function, the state machine, a pipe, a schedule.

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sam_emulator.template import Template, TemplateError
from template_model import read
from template_model.transform import sam_transformed

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = [
    "GESTIONADAS",
    "PoliticasError",
    "Principal",
    "Resuelta",
    "plantilla_transformada",
    "politicas_por_principal",
    "principales",
    "resolver",
]

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


def plantilla_transformada(ruta: Path, region: str) -> dict[str, Any]:
    """``template.yaml`` (loops expanded) through SAM's translator, as ``sam deploy`` would send it."""
    try:
        return sam_transformed(read(ruta), region)
    except TemplateError as exc:
        raise PoliticasError(str(exc)) from None


@dataclass
class Resuelta(Template):
    """The transformed template, resolved with a run's physical ids; unknown references match nothing.

    A log group is named as CloudFormation names it whatever the run made of it (the local run creates
    none): ``Ref`` is its ``LogGroupName``, ``GetAtt Arn`` is ``arn:aws:logs:<region>:<account>:log-group:<name>:*``.
    Its nested units (decision 0130) are transformed and resolved each with its own physical ids
    (:attr:`unidades`): their principals, keys and policies are the account's too.
    """

    unidades: dict[str, Resuelta] = field(default_factory=dict)

    def recorrer(self, prefijo: str = "") -> Iterator[tuple[str, Resuelta]]:
        """(prefix, resolved template) for this one and every unit below it (``Simuladores/``, as SAM names it)."""
        yield prefijo, self
        for logical_id, unidad in self.unidades.items():
            yield from unidad.recorrer(f"{prefijo}{logical_id}/")

    def _grupo_de_log(self, nombre: str) -> str | None:
        recurso = self.resources.get(nombre, {})
        if recurso.get("Type") != "AWS::Logs::LogGroup" or "LogGroupName" not in recurso.get("Properties", {}):
            return None
        return self.resolve(recurso["Properties"]["LogGroupName"])

    def ref(self, nombre: str) -> Any:
        if (grupo := self._grupo_de_log(nombre)) is not None:
            return grupo
        try:
            valor = super().ref(nombre)
        except TemplateError:
            return f"arn:not-created-in-this-run:{nombre}"
        # a unit's parameter its parent could not resolve (a resource the run did not create) is still written
        return f"arn:not-created-in-this-run:{nombre}" if isinstance(valor, dict) else valor

    def get_att(self, nombre: str, atributo: str) -> Any:
        if atributo == "Arn" and (grupo := self._grupo_de_log(nombre)) is not None:
            return f"arn:aws:logs:{self.region}:{self.account}:log-group:{grupo}:*"
        try:
            return super().get_att(nombre, atributo)
        except TemplateError:
            return f"arn:not-created-in-this-run:{nombre}.{atributo}"


def resolver(plantilla: Template, transformada: dict[str, Any]) -> Resuelta:
    """``transformada`` (the output of :func:`plantilla_transformada`) resolved with ``plantilla``'s run; each unit
    ``plantilla`` creates, transformed and resolved with its own (``Template.units()``: as the run created it)."""
    resuelta = Resuelta(
        path=plantilla.path,
        parameters=plantilla.parameters,
        region=plantilla.region,
        account=plantilla.account,
        stack_name=plantilla.stack_name,
        physical_ids=plantilla.physical_ids,
        unidades={
            logical_id: resolver(unidad, plantilla_transformada(unidad.path, unidad.region))
            for logical_id, unidad in plantilla.units().items()
        },
    )
    resuelta.__dict__["doc"] = copy.deepcopy(transformada)
    return resuelta


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


def _rol_adjunto(resuelta: Resuelta, rol: Any) -> str:
    """The role an attached policy names: a role of this template by its logical id; any other (a unit's, read
    from its output: ``Fn::GetAtt Unidad.Outputs.XRole``; a name as written) by its resolved name, which no
    principal of this template has."""
    if isinstance(rol, dict) and isinstance(rol.get("Ref"), str) and rol["Ref"] in resuelta.resources:
        return rol["Ref"]
    return str(resuelta.resolve(rol))


@dataclass(frozen=True, slots=True)
class Principal:
    """Who makes a function's, a state machine's, a pipe's or a schedule's requests: its role and its policies."""

    rol: str  # the role's ARN
    documentos: list[dict[str, Any]]


# The resource types that act with a role, and where each names it.
_ROL_DE = {
    "AWS::Lambda::Function": lambda p: _nombre_rol(p.get("Role")),
    "AWS::StepFunctions::StateMachine": lambda p: _nombre_rol(p.get("RoleArn")),
    "AWS::Pipes::Pipe": lambda p: _nombre_rol(p.get("RoleArn")),
    "AWS::Scheduler::Schedule": lambda p: _nombre_rol(p.get("Target", {}).get("RoleArn")),
}


def _adjuntas(resuelta: Resuelta) -> dict[str, list[Any]]:
    """Role -> the policies this template attaches to it as separate resources (``AWS::IAM::Policy``...), as
    written: a role of this template by its logical id, any other by its resolved name (:func:`_rol_adjunto`)."""
    adjuntas: dict[str, list[Any]] = {}
    for recurso in resuelta.doc["Resources"].values():
        propiedades = recurso.get("Properties", {})
        if recurso["Type"] not in _ADJUNTAS or not resuelta.condition(recurso.get("Condition")):
            continue
        roles = propiedades.get("Roles", []) if recurso["Type"] != "AWS::IAM::RolePolicy" else [propiedades["RoleName"]]
        for rol in (_elegir(resuelta, r) for r in roles):
            if rol == {"Ref": "AWS::NoValue"}:
                continue
            adjuntas.setdefault(_rol_adjunto(resuelta, rol), []).append(propiedades["PolicyDocument"])
    return adjuntas


def _adjuntas_de_fuera(resuelta: Resuelta) -> dict[str, list[Any]]:
    """Role name -> the policies a template of the stack attaches to a role another one holds, resolved where they
    are written: the root's to a unit's role (read from its output), a unit's to the parent's role (passed to it)."""
    de_fuera: dict[str, list[Any]] = {}
    for _prefijo, plantilla in resuelta.recorrer():
        for rol, documentos in _adjuntas(plantilla).items():
            if rol not in plantilla.doc["Resources"]:
                de_fuera.setdefault(rol, []).extend(plantilla.resolve(d) for d in documentos)
    return de_fuera


def principales(resuelta: Resuelta, de_fuera: dict[str, list[Any]] | None = None) -> dict[str, Principal]:
    """Function / state machine / pipe / schedule logical id -> its role's ARN and policy documents, resolved;
    a unit's as ``<unit>/<logical id>`` (as SAM names it), with what another template of the stack attaches to its
    role by name (``de_fuera``, role name -> policy documents: :func:`_adjuntas_de_fuera` of the whole stack)."""
    if de_fuera is None:
        de_fuera = _adjuntas_de_fuera(resuelta)
    recursos = resuelta.doc["Resources"]
    adjuntas = _adjuntas(resuelta)
    resultado: dict[str, Principal] = {}
    for logical_id, recurso in recursos.items():
        rol = _ROL_DE.get(recurso["Type"], lambda _p: None)(recurso.get("Properties", {}))
        if rol is None or not resuelta.condition(recurso.get("Condition")):
            continue
        definicion = recursos[rol]["Properties"]
        documentos = [p["PolicyDocument"] for p in resuelta.resolve(definicion.get("Policies", []))]
        documentos += adjuntas.get(rol, []) + de_fuera.get(str(resuelta.ref(rol)), [])
        for arn in resuelta.resolve(definicion.get("ManagedPolicyArns", [])):
            if arn not in GESTIONADAS:
                raise PoliticasError(f"{rol} attaches {arn}: add its published document to GESTIONADAS")
            documentos.append(GESTIONADAS[arn])
        nombre = resuelta.resolve(definicion.get("RoleName", rol))
        resultado[logical_id] = Principal(
            f"arn:aws:iam::{resuelta.account}:role/{nombre}", [resuelta.resolve(d) for d in documentos]
        )
    for unidad, anidada in resuelta.unidades.items():
        resultado |= {f"{unidad}/{lid}": p for lid, p in principales(anidada, de_fuera).items()}
    return resultado


def politicas_por_principal(plantilla: Template, transformada: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Function / state machine / pipe / schedule logical id -> the policy documents of its role, resolved."""
    return {lid: p.documentos for lid, p in principales(resolver(plantilla, transformada)).items()}
