"""The recorder and the roles wired to ``mf-demo``'s local run (moto, in-process handlers).

Functions identify themselves (``Function._invoke`` wraps each invocation in
:func:`~sam_emulator.principal.acting_as`). The state machine's service integrations run
inside moto's Step Functions engine, whose clients sign with the fixed access key below
(``moto.stepfunctions.parser.asl.utils.boto_client``): calls signed with it are the state
machine's, and the template has one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from least_privilege.acciones import Destino
from least_privilege.comprobacion import Cuenta, comprobar
from least_privilege.registro import Registro
from least_privilege.roles import plantilla_transformada, resolver

if TYPE_CHECKING:
    from sam_emulator.template import Template

    from least_privilege.comprobacion import Informe
    from least_privilege.roles import Resuelta

__all__ = ["comprobar_ejecucion", "destino", "registro_local", "resuelta"]

CLAVE_ACCESO_MOTO_SFN = "ak"


def registro_local(plantilla: Template) -> Registro:
    """A recorder that also attributes the state machine's integrations (install it before the run starts)."""
    (maquina,) = plantilla.of_type("AWS::Serverless::StateMachine")
    return Registro(por_clave_acceso={CLAVE_ACCESO_MOTO_SFN: maquina})


def resuelta(plantilla: Template) -> Resuelta:
    """The transformed template resolved with the run's physical ids."""
    return resolver(plantilla, plantilla_transformada(plantilla.path, plantilla.region))


def destino(plantilla: Template, resuelta_: Resuelta | None = None) -> Destino:
    """The run's region and account, each table's partition key (for ``dynamodb:LeadingKeys``), the
    function behind each function URL: moto's URL, and the loopback stand-ins the local run lets play it
    (``UrlsLocales`` in the URL's physical values, :meth:`mercadofresco_local.sesion.Sesion`); the keys,
    log groups and tracing of the transformed template (:meth:`Destino.de_resuelta`). The units the run created
    (``Template.created_units``, with their physical ids) are read as the root is."""
    claves = {}
    urls = {}
    for _ruta, unidad in plantilla.walk():  # the root and every unit the run created (their own physical ids)
        for logical_id, recurso in unidad.of_type("AWS::DynamoDB::Table").items():
            propiedades = recurso["Properties"]
            (hash_,) = [k["AttributeName"] for k in propiedades["KeySchema"] if k["KeyType"] == "HASH"]
            claves[unidad.resolve(propiedades.get("TableName", logical_id))] = hash_
        for logical_id in unidad.of_type("AWS::Lambda::Url"):
            fisico = unidad.physical_ids.get(logical_id) or {}
            for url in ([fisico["FunctionUrl"]] if "FunctionUrl" in fisico else []) + fisico.get("UrlsLocales", []):
                urls[url] = fisico["FunctionArn"]
    return Destino.de_resuelta(resuelta_ or resuelta(plantilla), claves, urls)


def comprobar_ejecucion(registro: Registro, plantilla: Template) -> Informe:
    """Every call the run recorded, and what AWS requested for it, against the roles and resource policies."""
    resuelta_ = resuelta(plantilla)
    return comprobar(registro.solicitudes(destino(plantilla, resuelta_)), Cuenta.de_resuelta(resuelta_))
