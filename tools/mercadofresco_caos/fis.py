"""The spec's FIS-capable kinds as ``AWS::FIS::ExperimentTemplate`` resources for ``template.yaml``.

``python -m mercadofresco_caos.fis`` prints them; ``template.yaml`` holds that output in its
Chaos block, and a test keeps the two equal. Every template is attached only when the stack's
``Chaos`` parameter is ``enabled`` (condition :data:`CONDICION`); an entry whose targets exist
under another condition too (the sandbox gateway under ``SimularPasarela``) gets
``Chaos<that condition>``, which the template defines as both. An entry whose targets are
``objetivo: consumidores`` acts on the functions the template model gives for it (every queue
consumer that calls a provider), so a new consumer is in its experiment with no edit to the spec.
"""

from __future__ import annotations

import math
import re
import sys
from typing import TYPE_CHECKING, Any

import yaml
from mercadofresco_local import plantilla as plantilla_del_repositorio

from mercadofresco_caos import especificacion

if TYPE_CHECKING:
    from template_model import Template

    from mercadofresco_caos.especificacion import EntradaFallo, Especificacion

CONDICION = "ChaosEnabled"
ROL = "ChaosFisRole"
# The order path's alarms: an experiment stops as soon as orders end in the DLQ, fail or time out.
ALARMAS_DE_PARADA = ("AlarmaColaPedidosFallidos", "AlarmaEjecucionesFallidas", "AlarmaEjecucionesAgotadas")
USD_POR_ACCION_MINUTO = 0.10  # AWS FIS pricing: per action, per minute it runs


def id_logico(nombre: str) -> str:
    """``pasarela-tiempo-agotado`` -> ``ExperimentoCaosPasarelaTiempoAgotado``."""
    return "ExperimentoCaos" + "".join(parte.capitalize() for parte in nombre.split("-"))


def condicion(entrada: EntradaFallo) -> str:
    assert entrada.fis is not None
    return f"Chaos{entrada.fis.condicion}" if entrada.fis.condicion else CONDICION


def plantilla(entrada: EntradaFallo, de: Template) -> dict[str, Any]:
    """One experiment template: the action on its functions (of ``de``), stopped by the order path's alarms."""
    fis = entrada.fis
    assert fis is not None
    accion = "".join(parte.capitalize() for parte in entrada.nombre.split("-"))
    return {
        "Type": "AWS::FIS::ExperimentTemplate",
        "Condition": condicion(entrada),
        "Properties": {
            "Description": f"mercadofresco caos {entrada.nombre}: {entrada.descripcion}"[:512],
            "RoleArn": {"Fn::GetAtt": [ROL, "Arn"]},
            "Targets": {
                "Funciones": {
                    "ResourceType": "aws:lambda:function",
                    "ResourceArns": [{"Fn::GetAtt": [f, "Arn"]} for f in fis.objetivos(de)],
                    "SelectionMode": "ALL",
                }
            },
            "Actions": {
                accion: {
                    "ActionId": fis.accion,
                    "Parameters": dict(fis.parametros),
                    "Targets": {"Functions": "Funciones"},
                }
            },
            "StopConditions": [
                {"Source": "aws:cloudwatch:alarm", "Value": {"Fn::GetAtt": [a, "Arn"]}} for a in ALARMAS_DE_PARADA
            ],
            "Tags": {"Name": f"mercadofresco-caos-{entrada.nombre}", "mercadofresco:fallo": entrada.nombre},
        },
    }


def plantillas(espec: Especificacion | None = None, de: Template | None = None) -> dict[str, dict[str, Any]]:
    """Logical id -> experiment template, for every kind FIS can apply (targets from ``de``, the repository's)."""
    de = de or plantilla_del_repositorio()
    return {id_logico(e.nombre): plantilla(e, de) for e in (espec or especificacion.cargar()).de_fis()}


def funciones_objetivo(espec: Especificacion | None = None, de: Template | None = None) -> dict[str, str | None]:
    """Logical id of every function an experiment targets -> the extra condition it exists under."""
    de = de or plantilla_del_repositorio()
    objetivos: dict[str, str | None] = {}
    for e in (espec or especificacion.cargar()).de_fis():
        assert e.fis is not None
        for f in e.fis.objetivos(de):
            objetivos[f] = e.fis.condicion
    return objetivos


def minutos(duracion: str) -> float:
    """An ISO 8601 duration of the form FIS takes (``PT5M``, ``PT1H30M``, ``PT90S``) in minutes."""
    encontrado = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?", duracion)
    if not encontrado or not any(encontrado.groups()):
        raise ValueError(f"duration {duracion!r} is not an ISO 8601 PT..H..M..S duration")
    horas, mins, segundos = (int(g or 0) for g in encontrado.groups())
    return horas * 60 + mins + segundos / 60


def coste_usd(minutos_por_accion: list[float]) -> float:
    """What an experiment's actions cost: 0.10 USD per action-minute, each started minute billed."""
    return round(sum(math.ceil(m) for m in minutos_por_accion) * USD_POR_ACCION_MINUTO, 2)


def main() -> int:
    """Print the experiment templates."""
    yaml.safe_dump(plantillas(), sys.stdout, sort_keys=False, width=200, allow_unicode=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
