"""Recorded requests against the roles: what would be denied, and what is granted but never used.

>>> informe = comprobar(registro.solicitudes(), politicas_por_principal(plantilla, transformada))
>>> assert not informe.denegadas, informe.texto()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco_iam.evaluador import Decision, decidir, sentencia_aplica, sentencias

if TYPE_CHECKING:
    from mercadofresco_iam.evaluador import Solicitud

__all__ = ["Denegada", "Informe", "SinUso", "comprobar"]


@dataclass(frozen=True, slots=True)
class Denegada:
    principal: str
    solicitud: Solicitud
    decision: Decision


@dataclass(frozen=True, slots=True)
class SinUso:
    """An Allow statement of a principal's role that no recorded request of that principal needed."""

    principal: str
    sid: str
    acciones: tuple[str, ...]


@dataclass
class Informe:
    solicitudes: int = 0
    denegadas: list[Denegada] = field(default_factory=list)
    sin_uso: list[SinUso] = field(default_factory=list)
    sin_rol: set[str] = field(default_factory=set)  # principals that made calls but have no role in the template

    def texto(self) -> str:
        lineas = [f"{self.solicitudes} recorded requests, {len(self.denegadas)} denied"]
        vistas: set[tuple[str, str, str, tuple[Any, ...]]] = set()
        for d in self.denegadas:
            clave = (d.principal, d.solicitud.accion, d.solicitud.recurso, d.solicitud.contexto)
            if clave not in vistas:
                vistas.add(clave)
                contexto = ", ".join(f"{k}={list(v)}" for k, v in d.solicitud.contexto)
                lineas.append(
                    f"  DENIED ({d.decision.value}) {d.principal}: {d.solicitud.accion} on {d.solicitud.recurso}"
                    + (f" [{contexto}]" if contexto else "")
                )
        lineas += [f"  no role: {p}" for p in sorted(self.sin_rol)]
        if self.sin_uso:
            lineas.append("granted, never used in this run:")
            lineas += [f"  {s.principal} {s.sid}: {', '.join(s.acciones)}" for s in self.sin_uso]
        return "\n".join(lineas)


def comprobar(registradas: list[tuple[str, Solicitud]], politicas: dict[str, list[dict[str, Any]]]) -> Informe:
    """Evaluate every recorded ``(principal, request)`` against that principal's policies."""
    informe = Informe(solicitudes=len(registradas))
    usadas: set[tuple[str, int]] = set()
    for principal, solicitud in registradas:
        documentos = politicas.get(principal)
        if documentos is None:
            informe.sin_rol.add(principal)
            continue
        decision = decidir(documentos, solicitud)
        if decision is not Decision.PERMITIDA:
            informe.denegadas.append(Denegada(principal, solicitud, decision))
        for indice, sentencia in enumerate(sentencias(documentos)):
            if sentencia.get("Effect") == "Allow" and sentencia_aplica(sentencia, solicitud):
                usadas.add((principal, indice))
    activos = {p for p, _ in registradas}
    for principal in sorted(activos & politicas.keys()):
        for indice, sentencia in enumerate(sentencias(politicas[principal])):
            if sentencia.get("Effect") == "Allow" and (principal, indice) not in usadas:
                acciones = sentencia.get("Action", sentencia.get("NotAction", []))
                acciones = (acciones,) if isinstance(acciones, str) else tuple(acciones)
                informe.sin_uso.append(SinUso(principal, sentencia.get("Sid", f"#{indice}"), acciones))
    return informe
