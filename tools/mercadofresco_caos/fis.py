"""The spec's FIS-capable kinds as ``AWS::FIS::ExperimentTemplate`` resources for the chaos unit.

``python -m mercadofresco_caos.fis`` prints them; ``unidades/caos.yaml`` (the unit ``template.yaml``
nests as ``Caos`` under ``Chaos=enabled``, decision 0130) holds that output, and a test keeps the two
equal. The unit gets its targets and stop alarms from its parent as parameters: a named function ``F``
as ``FArn``, an alarm ``A`` as ``AArn``, and ``objetivo: consumidores`` as :data:`PARAMETRO_CONSUMIDORES`, the list
the parent builds from the consumers the template model gives (every queue consumer that calls a
provider), so a new consumer is in its experiment with no edit to the spec. An entry whose targets exist
under another condition (the sandbox gateway under ``SimularPasarela``) is created under that condition,
which the unit defines as "its function's ARN was passed". A target may live in another unit (the sandbox
gateway in ``Simuladores``): the parent passes its ARN from that unit's output, and :func:`funciones_objetivo`
names it where it is declared (``Simuladores/SimuladorPasarelaFunction``).
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

CONDICION = "ChaosEnabled"  # the parent's, on the unit and on the targets' extension
UNIDAD = "Caos"  # the unit's logical id in template.yaml
ROL = "ChaosFisRole"
PARAMETRO_CONSUMIDORES = "ConsumerFunctionArns"  # the unit's list of the consumers' ARNs
# The order path's alarms: an experiment stops as soon as orders end in the DLQ, fail or time out.
ALARMAS_DE_PARADA = ("AlarmaColaPedidosFallidos", "AlarmaEjecucionesFallidas", "AlarmaEjecucionesAgotadas")
USD_POR_ACCION_MINUTO = 0.10  # AWS FIS pricing: per action, per minute it runs


def id_logico(nombre: str) -> str:
    """``pasarela-tiempo-agotado`` -> ``ExperimentoCaosPasarelaTiempoAgotado``."""
    return "ExperimentoCaos" + "".join(parte.capitalize() for parte in nombre.split("-"))


def parametro(logico: str) -> str:
    """The unit's parameter carrying a parent resource's ARN: ``ErpFunction`` -> ``ErpFunctionArn``."""
    return f"{logico}Arn"


def plantilla(entrada: EntradaFallo) -> dict[str, Any]:
    """One experiment template: the action on its functions, stopped by the order path's alarms."""
    fis = entrada.fis
    assert fis is not None
    accion = "".join(parte.capitalize() for parte in entrada.nombre.split("-"))
    objetivos: Any = [{"Ref": parametro(f)} for f in fis.funciones]
    if fis.objetivo == especificacion.CONSUMIDORES:
        objetivos = {"Ref": PARAMETRO_CONSUMIDORES}
    recurso: dict[str, Any] = {"Type": "AWS::FIS::ExperimentTemplate"}
    if fis.condicion:
        recurso["Condition"] = fis.condicion
    recurso["Properties"] = {
        "Description": f"mercadofresco caos {entrada.nombre}: {entrada.descripcion}"[:512],
        "RoleArn": {"Fn::GetAtt": [ROL, "Arn"]},
        "Targets": {
            "Funciones": {"ResourceType": "aws:lambda:function", "ResourceArns": objetivos, "SelectionMode": "ALL"}
        },
        "Actions": {
            accion: {
                "ActionId": fis.accion,
                "Parameters": dict(fis.parametros),
                "Targets": {"Functions": "Funciones"},
            }
        },
        "StopConditions": [
            {"Source": "aws:cloudwatch:alarm", "Value": {"Ref": parametro(a)}} for a in ALARMAS_DE_PARADA
        ],
        "Tags": {"Name": f"mercadofresco-caos-{entrada.nombre}", "mercadofresco:fallo": entrada.nombre},
    }
    return recurso


def plantillas(espec: Especificacion | None = None) -> dict[str, dict[str, Any]]:
    """Logical id -> experiment template, for every kind FIS can apply."""
    return {id_logico(e.nombre): plantilla(e) for e in (espec or especificacion.cargar()).de_fis()}


def ubicacion(logico: str, de: Template | None = None) -> str:
    """Where a target the spec names by logical id is declared, as :meth:`Template.walk` names it: ``CobroFunction``
    in the root, ``Simuladores/SimuladorPasarelaFunction`` in a nested unit (the logical id as given when no
    created unit declares it)."""
    de = de or plantilla_del_repositorio()
    return next((prefijo + logico for prefijo, t in de.walk() if logico in t.resources), logico)


def funciones_objetivo(espec: Especificacion | None = None, de: Template | None = None) -> dict[str, str | None]:
    """Every function an experiment targets, where it is declared (:func:`ubicacion`) -> the extra condition it
    exists under."""
    de = de or plantilla_del_repositorio()
    objetivos: dict[str, str | None] = {}
    for e in (espec or especificacion.cargar()).de_fis():
        assert e.fis is not None
        for f in e.fis.objetivos(de):
            objetivos[ubicacion(f, de)] = e.fis.condicion
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
