"""Least privilege by execution in the emulated account: what the stack's own containers and tasks asked for.

Every request the deployed functions and the state machine's tasks made (recorded in the account,
``gaps.recorder_docker_flags`` and ``ministack_del_nivel.py``) is evaluated against the roles and
policies of the SAM-transformed ``template.yaml``, resolved with the deployed stack's physical ids and
that deploy's parameters (:mod:`least_privilege.desplegado`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from emulated_account import despliegue

if TYPE_CHECKING:
    from emulated_account.observaciones import Cuenta


def comprobar(c: Cuenta, fase: str, informes: Path) -> dict[str, Any]:
    """:func:`_comprobar`, or the error that stopped it (the test shows it; the level goes on)."""
    try:
        return _comprobar(c, fase, informes)
    except Exception as exc:  # the check's own failure is an outcome to assert, not a reason to skip the redeploy
        return {"error": repr(exc), "texto": repr(exc), "solicitudes": 0, "denegadas": [], "sin_rol": []}


def _comprobar(c: Cuenta, fase: str, informes: Path) -> dict[str, Any]:
    """The requests recorded so far (moved to ``registro/<fase>``) against the deployed stack's roles.

    Called while the stack that made them still exists (its physical ids resolve the roles); what its
    containers write later lands in the next phase's files.
    """
    from least_privilege.desplegado import (
        arn_de_secreto,
        comprobar_despliegue,
        fisicos_de_pila,
        funciones_de_pila,
        leer_registro,
        plantilla_desplegada,
    )

    registro = Path(c.estado.registro_iam)
    numero = c.cliente("sts").get_caller_identity()["Account"]
    fisicos = fisicos_de_pila(c.cliente, despliegue.PILA, c.estado.region, numero)
    carpeta = registro / fase
    carpeta.mkdir()
    for linea in registro.glob("*.jsonl"):
        linea.rename(carpeta / linea.name)
    funciones = funciones_de_pila(fisicos)  # its units' too (the sandbox providers)
    maquinas = list(c.plantilla.of_type("AWS::Serverless::StateMachine"))
    llamadas = leer_registro(carpeta, funciones, maquinas[0] if len(maquinas) == 1 else None, arn_de_secreto(c.cliente))
    plantilla = plantilla_desplegada(
        despliegue.RAIZ / "template.yaml", c.parametros, c.estado.region, numero, despliegue.PILA, fisicos
    )
    informe = comprobar_despliegue(llamadas, plantilla)
    texto = informe.texto()
    (informes / f"minimo-privilegio-{fase}.txt").write_text(texto + "\n")
    return {
        "solicitudes": informe.solicitudes,
        "principales": sorted({ll.principal for ll in llamadas.llamadas()}),
        "denegadas": [f"{d.principal}: {d.solicitud.accion} on {d.solicitud.recurso}" for d in informe.denegadas],
        "sin_rol": sorted(informe.sin_rol),
        "sin_uso": [f"{u.principal} {u.sid}" for u in informe.sin_uso],
        "texto": texto,
    }
