"""The recorder and the roles wired to ``mf-demo``'s local run (moto, in-process handlers).

Functions identify themselves (``Function._invoke`` wraps each invocation in
:func:`~sam_emulator.principal.acting_as`). The state machine's service integrations run
inside moto's Step Functions engine, whose clients sign with the fixed access key below
(``moto.stepfunctions.parser.asl.utils.boto_client``): calls signed with it are the state
machine's, and the template has one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mercadofresco_iam.acciones import Destino
from mercadofresco_iam.comprobacion import comprobar
from mercadofresco_iam.registro import Registro
from mercadofresco_iam.roles import plantilla_transformada, politicas_por_principal

if TYPE_CHECKING:
    from sam_emulator.template import Template

    from mercadofresco_iam.comprobacion import Informe

__all__ = ["comprobar_ejecucion", "destino", "registro_local"]

CLAVE_ACCESO_MOTO_SFN = "ak"


def registro_local(plantilla: Template) -> Registro:
    """A recorder that also attributes the state machine's integrations (install it before the run starts)."""
    (maquina,) = plantilla.of_type("AWS::Serverless::StateMachine")
    return Registro(por_clave_acceso={CLAVE_ACCESO_MOTO_SFN: maquina})


def destino(plantilla: Template) -> Destino:
    """The run's region and account, each table's partition key (for ``dynamodb:LeadingKeys``), and the
    function behind each function URL: moto's URL, and the loopback stand-ins the local run lets play it
    (``UrlsLocales`` in the URL's physical values, :meth:`mercadofresco_local.sesion.Sesion`)."""
    claves = {}
    for logical_id in plantilla.of_type("AWS::DynamoDB::Table"):
        propiedades = plantilla.properties(logical_id)
        (hash_,) = [k["AttributeName"] for k in propiedades["KeySchema"] if k["KeyType"] == "HASH"]
        claves[propiedades["TableName"]] = hash_
    urls = {}
    for logical_id in plantilla.of_type("AWS::Lambda::Url"):
        fisico = plantilla.physical_ids.get(logical_id) or {}
        for url in ([fisico["FunctionUrl"]] if "FunctionUrl" in fisico else []) + fisico.get("UrlsLocales", []):
            urls[url] = fisico["FunctionArn"]
    return Destino(plantilla.region, plantilla.account, claves, urls)


def comprobar_ejecucion(registro: Registro, plantilla: Template) -> Informe:
    """Every call the run recorded against its principal's role in the transformed template."""
    politicas = politicas_por_principal(plantilla, plantilla_transformada(plantilla.path, plantilla.region))
    return comprobar(registro.solicitudes(destino(plantilla)), politicas)
