"""``mf-retenidos``: bring what ``sam delete`` kept back under a new stack, so ``sam deploy`` works again.

Usage (between ``sam delete`` and ``sam deploy``, with the deploy's own stack name and parameters)::

    mf-retenidos listar                     # each retained resource: in a stack, outside every stack, or absent
    mf-retenidos adoptar                    # import them all into a new stack; then `sam deploy` updates it
    mf-retenidos --config-env prod adoptar  # stack, region and parameter_overrides from samconfig.toml's prod
    mf-retenidos --pila mf-v2 --parametros 'NameSuffix=-v2 KmsKeyArn=arn:aws:kms:...' adoptar

The two tables and six DLQs keep the lesson's names (plus ``NameSuffix``) and survive a stack
delete, with the KMS key that encrypts them: a new stack that creates them again fails
("already exists"). CloudFormation's automatic import (``ImportExistingResources``) refuses names
built with ``${NameSuffix}`` and SAM CLI does not pass it, so ``adoptar`` does the import itself:
one IMPORT change set whose template holds exactly the retained resources (``topologia``: the
template's ``DeletionPolicy: Retain`` resources for these parameters), as written, with the
parameters and conditions they use and this deploy's values for them, executed, leaving a stack
``sam deploy`` then updates with everything else and finds them unchanged.

The key has no name: it is the one the retained queues and tables are encrypted with, read from
them. Ownership is read from every live stack's resources (a retained resource keeps its
``aws:cloudformation:*`` tags after its stack is gone, so tags cannot tell).

Exit codes: 0 adopted, or nothing to adopt; 2 refused, nothing changed (some retained resources
missing, the stack already exists, a resource in another stack, a key scheduled for deletion);
3 CloudFormation refused or rolled back the import (its reason is printed; a stack left in
``REVIEW_IN_PROGRESS`` by a refused change set is deleted).
"""

from __future__ import annotations

import json
import shlex
import sys
import time
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from mercadofresco_ops.ayuda import ParserEspanol
from mercadofresco_ops.errores import ErrorOperador, errores_de_aws, una_linea
from mercadofresco_ops.topologia import PLANTILLA, SUFIJO, Topologia

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

    from botocore.client import BaseClient

    Clientes = Callable[[str], BaseClient]

SALIDA_OK, SALIDA_RECHAZO, SALIDA_IMPORTACION = 0, 2, 3
SAMCONFIG = PLANTILLA.with_name("samconfig.toml")
ESPERA_CAMBIOS_S = 2  # between DescribeChangeSet / DescribeStacks polls (the waiters' default is 30 s)
ESPERA_MAX_S = 1800  # a hang guard: an import of nine resources takes about a minute in an account


class RechazoError(Exception):
    """``adoptar`` would leave things half done: nothing is changed (exit 2)."""


class ImportacionError(Exception):
    """CloudFormation refused the IMPORT change set or rolled the import back (exit 3)."""


@dataclass(frozen=True, slots=True)
class Retenido:
    """One retained resource of the template and what the account holds for it."""

    logico: str
    tipo: str
    nombre: str | None  # its physical name (the key's id, once found); None: not in the account
    identificador: dict[str, str] | None  # the ResourceIdentifier an import names it by
    pila: str | None  # the live stack it belongs to, if any

    @property
    def suelto(self) -> bool:
        """In the account and in no stack: what ``adoptar`` imports."""
        return self.identificador is not None and self.pila is None

    def linea(self) -> str:
        donde = "no existe" if self.identificador is None else f"en la pila {self.pila}" if self.pila else "suelto"
        return f"{self.logico:<24} {self.tipo:<22} {self.nombre or '-':<42} {donde}"


def _clave_fisica(tipo: str, fisico: str) -> tuple[str, str]:
    """A physical id as a stack lists it, comparable with what the service calls it (a queue's URL host varies)."""
    return tipo, fisico.rstrip("/").rsplit("/", 1)[-1]


def duenos(cfn: BaseClient) -> dict[tuple[str, str], str]:
    """(type, physical id) -> the live stack that holds it, over every stack of the region.

    DescribeStackResources by PhysicalResourceId would answer one resource at a time, but the
    emulated account (MiniStack 1.5.33) answers it "stack does not exist" for every resource: listing
    the stacks works in both.
    """
    vivas = [e for e in cfn.meta.service_model.shape_for("StackStatus").enum if e != "DELETE_COMPLETE"]
    mapa = {}
    for pagina in cfn.get_paginator("list_stacks").paginate(StackStatusFilter=vivas):
        for pila in pagina["StackSummaries"]:
            nombre = pila["StackName"]
            for recursos in cfn.get_paginator("list_stack_resources").paginate(StackName=pila["StackId"]):
                for r in recursos["StackResourceSummaries"]:
                    if r.get("PhysicalResourceId"):
                        mapa[_clave_fisica(r["ResourceType"], r["PhysicalResourceId"])] = nombre
    return mapa


def _cola(clientes: Clientes, nombre: str) -> tuple[dict[str, str], str | None] | None:
    """The queue's import identifier and the KMS key it is encrypted with, or None if there is no such queue."""
    sqs = clientes("sqs")
    try:
        url = sqs.get_queue_url(QueueName=nombre)["QueueUrl"]
    except sqs.exceptions.QueueDoesNotExist:
        return None
    atributos = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["KmsMasterKeyId"])["Attributes"]
    return {"QueueUrl": url}, atributos.get("KmsMasterKeyId")


def _tabla(clientes: Clientes, nombre: str) -> tuple[dict[str, str], str | None] | None:
    ddb = clientes("dynamodb")
    try:
        tabla = ddb.describe_table(TableName=nombre)["Table"]
    except ddb.exceptions.ResourceNotFoundException:
        return None
    return {"TableName": nombre}, tabla.get("SSEDescription", {}).get("KMSMasterKeyArn")


# Per retained type with a name: the property holding it and how the account is asked for it.
_CON_NOMBRE = {"AWS::SQS::Queue": ("QueueName", _cola), "AWS::DynamoDB::Table": ("TableName", _tabla)}


def _clave_kms(clientes: Clientes, logico: str, cifrados: dict[str, str]) -> tuple[str, dict[str, str]] | None:
    """The key the retained resources naming ``logico`` are encrypted with (read from them), or None.

    ``cifrados`` is logical id -> the key id or ARN that resource reports; one that reports none
    (the emulated account's DescribeTable has no SSEDescription) says nothing either way.
    """
    kms = clientes("kms")
    ids = {}
    for recurso, clave in cifrados.items():
        metadatos = kms.describe_key(KeyId=clave)["KeyMetadata"]
        if metadatos["KeyState"] == "PendingDeletion":
            raise RechazoError(
                f"la clave KMS {metadatos['KeyId']} ({logico}) está programada para borrarse: "
                f"aws kms cancel-key-deletion --key-id {metadatos['KeyId']} y después adoptar"
            )
        ids[recurso] = metadatos["KeyId"]
    if len(set(ids.values())) > 1:
        raise RechazoError(f"los recursos retenidos están cifrados con claves distintas ({ids}): ¿cuál es {logico}?")
    if not ids:
        return None
    (clave,) = set(ids.values())
    return clave, {"KeyId": clave}


def localizar(topologia: Topologia, clientes: Clientes) -> list[Retenido]:
    """Every retained resource of the template, as the account holds it (named ones first, then the keys)."""
    retenidos = topologia.retenidos()
    tipos = {lid: topologia.tipo(lid) for lid in retenidos}
    vistos: dict[str, tuple[str | None, dict[str, str] | None]] = {}
    claves_de: dict[str, str | None] = {}
    for lid in retenidos:
        if tipos[lid] in _CON_NOMBRE:
            propiedad, buscar = _CON_NOMBRE[tipos[lid]]
            nombre = topologia.nombre(lid, propiedad)
            encontrado = buscar(clientes, nombre)
            vistos[lid] = (nombre, encontrado[0] if encontrado else None)
            claves_de[lid] = encontrado[1] if encontrado else None
        elif tipos[lid] != "AWS::KMS::Key":
            raise RechazoError(f"{lid} ({tipos[lid]}) es un recurso retenido que mf-retenidos no sabe buscar")
    for lid in retenidos:
        if tipos[lid] == "AWS::KMS::Key":
            que_la_nombran = {
                otro: clave
                for otro, clave in claves_de.items()
                if clave and {"Ref": lid} in _valores(topologia.definicion_para_importar(otro, retenidos))
            }
            encontrada = _clave_kms(clientes, lid, que_la_nombran)
            vistos[lid] = encontrada or (None, None)
    propietarios = duenos(clientes("cloudformation"))
    return [
        Retenido(
            lid,
            tipos[lid],
            vistos[lid][0],
            vistos[lid][1],
            propietarios.get(_clave_fisica(tipos[lid], _fisico(vistos[lid][1]))) if vistos[lid][1] else None,
        )
        for lid in retenidos
    ]


def _fisico(identificador: dict[str, str]) -> str:
    (valor,) = identificador.values()
    return valor


def _valores(nodo: Any) -> list[Any]:
    """Every dict and scalar inside ``nodo`` (to find a ``{"Ref": X}`` anywhere in a definition)."""
    if isinstance(nodo, dict):
        return [nodo, *(v for valor in nodo.values() for v in _valores(valor))]
    if isinstance(nodo, list):
        return [v for valor in nodo for v in _valores(valor)]
    return [nodo]


def plantilla_de_importacion(topologia: Topologia, logicos: Sequence[str]) -> dict[str, Any]:
    """The IMPORT change set's template: exactly ``logicos``, and the parameters and conditions they use."""
    recursos = {lid: topologia.definicion_para_importar(lid, logicos) for lid in logicos}
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": "mf-retenidos: the resources a sam delete retained, adopted; sam deploy adds the rest",
        **topologia.declaraciones_para(recursos),
        "Resources": recursos,
    }


def _estado_pila(cfn: BaseClient, pila: str) -> str | None:
    try:
        return cfn.describe_stacks(StackName=pila)["Stacks"][0]["StackStatus"]
    except ClientError as exc:
        if "does not exist" in str(exc):
            return None
        raise


def _esperar(consulta: Callable[[], str], hasta: frozenset[str]) -> str:
    """Poll ``consulta()`` until its status is one of ``hasta`` (CloudFormation announces nothing)."""
    limite = time.monotonic() + ESPERA_MAX_S
    while (estado := consulta()) not in hasta:
        if time.monotonic() > limite:
            raise ImportacionError(f"sin respuesta en {ESPERA_MAX_S} s (último estado {estado})")
        time.sleep(ESPERA_CAMBIOS_S)
    return estado


def adoptar(topologia: Topologia, pila: str, clientes: Clientes, escribir: Callable[[str], None]) -> list[Retenido]:
    """Import every loose retained resource into a new stack ``pila``; the ones imported ([] if none).

    Raises :class:`RechazoError` before any change when the situation is partial, and
    :class:`ImportacionError` when CloudFormation refuses or rolls back the import.
    """
    retenidos = localizar(topologia, clientes)
    sueltos = [r for r in retenidos if r.suelto]
    if not sueltos:
        donde = sorted({r.pila for r in retenidos if r.pila})
        escribir(
            "nada que adoptar: "
            + (f"los retenidos existentes están en {', '.join(donde)}" if donde else "no existe ninguno")
        )
        return []
    cfn = clientes("cloudformation")
    if (estado := _estado_pila(cfn, pila)) is not None:
        raise RechazoError(f"la pila {pila} ya existe ({estado}): adoptar crea la pila; bórrala o elige otra --pila")
    if ajenos := [r for r in retenidos if r.pila]:
        raise RechazoError(", ".join(f"{r.logico} ({r.nombre}) está en la pila {r.pila}" for r in ajenos))
    if faltan := [r.logico for r in retenidos if r.identificador is None]:
        raise RechazoError(
            f"faltan {len(faltan)} de {len(retenidos)} retenidos ({', '.join(faltan)}): borra los demás "
            "(README, «Deploying again after sam delete») o recréalos antes"
        )
    plantilla = plantilla_de_importacion(topologia, [r.logico for r in sueltos])
    nombre_cambios = f"mf-retenidos-{time.strftime('%Y%m%d%H%M%S')}"
    cambios = cfn.create_change_set(
        StackName=pila,
        ChangeSetName=nombre_cambios,
        ChangeSetType="IMPORT",
        Description="mf-retenidos adoptar",
        TemplateBody=json.dumps(plantilla),
        Parameters=[
            {"ParameterKey": k, "ParameterValue": v}
            for k, v in topologia.valores_de(plantilla.get("Parameters", {})).items()
        ],
        ResourcesToImport=[
            {"ResourceType": r.tipo, "LogicalResourceId": r.logico, "ResourceIdentifier": r.identificador}
            for r in sueltos
        ],
    )

    def conjunto() -> dict[str, Any]:
        return cfn.describe_change_set(ChangeSetName=cambios["Id"], StackName=pila)

    if _esperar(lambda: conjunto()["Status"], frozenset({"CREATE_COMPLETE", "FAILED"})) == "FAILED":
        motivo = conjunto().get("StatusReason", "")
        cfn.delete_change_set(ChangeSetName=cambios["Id"], StackName=pila)
        if _estado_pila(cfn, pila) == "REVIEW_IN_PROGRESS":
            cfn.delete_stack(StackName=pila)  # the empty stack the refused change set created: nothing else
        raise ImportacionError(f"CloudFormation rechazó la importación: {motivo}")
    escribir(f"importando {len(sueltos)} recursos en la pila {pila} (conjunto de cambios {nombre_cambios})")
    cfn.execute_change_set(ChangeSetName=cambios["Id"], StackName=pila)
    final = _esperar(lambda: _estado_pila(cfn, pila) or "", frozenset({"IMPORT_COMPLETE", "IMPORT_ROLLBACK_COMPLETE",
                                                                       "IMPORT_ROLLBACK_FAILED"}))  # fmt: skip
    if final != "IMPORT_COMPLETE":
        motivo = cfn.describe_stacks(StackName=pila)["Stacks"][0].get("StackStatusReason", "")
        raise ImportacionError(
            f"la importación terminó en {final}: {motivo} (los recursos siguen fuera de la pila: "
            f"bórrala con sam delete --stack-name {pila} y vuelve a adoptar)"
        )
    return sueltos


def _samconfig(entorno: str) -> dict[str, str]:
    """stack_name, region and parameter_overrides of one samconfig.toml environment (what sam deploy reads)."""
    if not SAMCONFIG.exists():
        return {}
    config = tomllib.loads(SAMCONFIG.read_text()).get(entorno, {})
    return {**config.get("global", {}).get("parameters", {}), **config.get("deploy", {}).get("parameters", {})}


def construir_parser() -> argparse.ArgumentParser:
    p = ParserEspanol(
        prog="mf-retenidos",
        description="Devuelve a una pila nueva lo que sam delete retuvo, para que sam deploy vuelva a funcionar "
        "(runbooks/README.md).",
    )
    p.add_argument(
        "--config-env", default="default", metavar="ENTORNO", help="entorno de samconfig.toml (por defecto 'default')"
    )
    p.add_argument("--pila", help="nombre de la pila (por defecto el stack_name de samconfig.toml)")
    p.add_argument("--region", help="región (por defecto la de samconfig.toml)")
    p.add_argument(
        "--parametros", metavar="'CLAVE=VALOR ...'",
        help="los --parameter-overrides del despliegue (por defecto el parameter_overrides de samconfig.toml)",
    )  # fmt: skip
    p.add_argument("--endpoint-url", metavar="URL", help="endpoint de AWS alternativo (la cuenta emulada)")
    sub = p.add_subparsers(dest="orden", required=True, metavar="ORDEN")
    sub.add_parser("listar", help="cada recurso retenido: en una pila, suelto o ausente")
    sub.add_parser("adoptar", help="importa los sueltos en una pila nueva; después, sam deploy")
    return p


def main(argv: Sequence[str] | None = None, clientes: Clientes | None = None) -> int:
    """The command line; ``clientes`` (service -> client) replaces the session's, for tests."""
    args = construir_parser().parse_args(argv)
    config = _samconfig(args.config_env)
    pila = args.pila or config.get("stack_name")
    if not pila:
        print("mf-retenidos: falta --pila (samconfig.toml no da stack_name)", file=sys.stderr)
        return SALIDA_RECHAZO
    pares = shlex.split(config.get("parameter_overrides", "") if args.parametros is None else args.parametros)
    if malos := [p for p in pares if "=" not in p]:
        print(f"mf-retenidos: parámetro sin '=': {malos[0][:60]}", file=sys.stderr)
        return SALIDA_RECHAZO
    parametros = dict(p.split("=", 1) for p in pares)
    topologia = Topologia(sufijo=parametros.pop(SUFIJO, ""), parametros=parametros)

    if clientes is None:
        import boto3
        from mercadofresco.aws import SDK_CONFIG  # the project's SDK policy: max_attempts=2, bounded timeouts

        sesion = boto3.session.Session(region_name=args.region or config.get("region"))

        def clientes(servicio: str) -> BaseClient:
            return sesion.client(servicio, endpoint_url=args.endpoint_url, config=SDK_CONFIG)

    try:
        with errores_de_aws("AWS"):  # a last net: any AWS/botocore failure is one line, never a traceback
            if args.orden == "listar":
                for retenido in localizar(topologia, clientes):
                    print(retenido.linea())
                return SALIDA_OK
            adoptados = adoptar(topologia, pila, clientes, lambda texto: print(f"mf-retenidos: {texto}"))
    except ErrorOperador as exc:
        print(f"mf-retenidos: {una_linea(exc)}; nada se ha cambiado", file=sys.stderr)
        return SALIDA_RECHAZO
    except RechazoError as exc:
        print(f"mf-retenidos: {exc}; nada se ha cambiado", file=sys.stderr)
        return SALIDA_RECHAZO
    except ImportacionError as exc:
        print(f"mf-retenidos: {exc}", file=sys.stderr)
        return SALIDA_IMPORTACION
    if adoptados:
        print(f"mf-retenidos: {len(adoptados)} recursos adoptados en {pila}: ahora sam deploy la actualiza")
    return SALIDA_OK


if __name__ == "__main__":
    sys.exit(main())
