"""Recorded requests against the account: what would be denied, and what is granted but never used.

>>> cuenta = Cuenta.de_plantilla(plantilla)
>>> informe = comprobar(registro.solicitudes(destino(plantilla, cuenta)), cuenta)
>>> assert not informe.denegadas, informe.texto()

A request is decided as AWS decides it (:mod:`least_privilege.evaluador`): by its principal's role
(none for a service principal) *and* by its resource's own policy (a queue policy, the key policy, a
function's permissions). Both kinds of Allow statement count as used when they allowed a request, so
"granted, never used" lists the role grants *and* the resource-policy statements no request needed;
within a statement some request used, the actions it lists that no request asked for are listed too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from least_privilege.acciones import es_servicio
from least_privilege.evaluador import Consulta, Decision, Solicitud, evaluar, sentencias
from least_privilege.recursos import politica_de, politicas_de_recurso
from least_privilege.roles import plantilla_transformada, principales, resolver

if TYPE_CHECKING:
    from collections.abc import Iterable

    from sam_emulator.template import Template

    from least_privilege.roles import Principal, Resuelta

__all__ = ["Cuenta", "Denegada", "Informe", "SinUso", "comprobar"]


@dataclass(frozen=True, slots=True)
class Cuenta:
    """What decides a request in the account: each principal's role, each resource's own policy."""

    region: str
    numero: str
    principales: dict[str, Principal]
    politicas_recurso: dict[str, tuple[str, dict[str, Any]]]  # resource ARN -> (label, document)

    @classmethod
    def de_resuelta(cls, resuelta: Resuelta) -> Cuenta:
        politicas: dict[str, tuple[str, dict[str, Any]]] = {}
        for _prefijo, anidada in resuelta.recorrer():  # a unit's resources are the account's too
            politicas |= politicas_de_recurso(anidada)
        return cls(resuelta.region, resuelta.account, principales(resuelta), politicas)

    @classmethod
    def de_plantilla(cls, plantilla: Template) -> Cuenta:
        """The transformed ``template.yaml`` resolved with ``plantilla``'s run (its physical ids)."""
        return cls.de_resuelta(resolver(plantilla, plantilla_transformada(plantilla.path, plantilla.region)))

    def _globales(self, principal: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Keys AWS puts in every request of this principal (global condition keys)."""
        comunes = (("aws:SecureTransport", ("true",)), ("aws:RequestedRegion", (self.region,)))
        if es_servicio(principal):
            return (
                *comunes,
                ("aws:PrincipalIsAWSService", ("true",)),
                ("aws:PrincipalServiceName", (principal,)),
            )
        return (
            *comunes,
            ("aws:PrincipalArn", (self.principales[principal].rol,)),
            ("aws:PrincipalAccount", (self.numero,)),
            ("aws:PrincipalType", ("AssumedRole",)),
            ("aws:PrincipalIsAWSService", ("false",)),
            ("aws:ViaAWSService", ("false",)),
        )

    def consulta(self, principal: str, solicitud: Solicitud) -> Consulta | None:
        """The query that decides ``solicitud`` by ``principal``; ``None`` if it has no role in the template."""
        if not es_servicio(principal) and principal not in self.principales:
            return None
        propias = {k.lower() for k, _ in solicitud.contexto}
        contexto = solicitud.contexto + tuple(g for g in self._globales(principal) if g[0].lower() not in propias)
        completa = Solicitud(solicitud.accion, solicitud.recurso, contexto)
        recurso = politica_de(self.politicas_recurso, solicitud.recurso)
        if es_servicio(principal):
            return Consulta(principal, completa, (), recurso)
        rol = self.principales[principal]
        return Consulta(
            rol.rol, completa, tuple((f"{principal}#{i}", d) for i, d in enumerate(rol.documentos)), recurso
        )

    def sentencias_de(self, etiqueta: str) -> list[dict[str, Any]]:
        """Every statement a principal's role or a labelled resource policy holds, in order."""
        if etiqueta in self.principales:
            return [s for d in self.principales[etiqueta].documentos for s in sentencias(d)]
        documento = next((d for e, d in self.politicas_recurso.values() if e == etiqueta), {})
        return sentencias(documento)

    def indice(self, etiqueta_politica: str, indice: int) -> tuple[str, int]:
        """``("Principal#doc", i)`` or ``(label, i)`` -> (principal or resource label, index among its statements)."""
        principal, _, documento = etiqueta_politica.rpartition("#")
        if principal in self.principales and documento.isdigit():
            previos = self.principales[principal].documentos[: int(documento)]
            return principal, sum(len(sentencias(d)) for d in previos) + indice
        return etiqueta_politica, indice


@dataclass(frozen=True, slots=True)
class Denegada:
    principal: str
    solicitud: Solicitud
    decision: Decision
    motivo: str = ""
    veces: int = 1


@dataclass(frozen=True, slots=True)
class SinUso:
    """An Allow statement of a principal's role, or of a resource's policy, that no recorded request needed."""

    principal: str  # the principal, or the resource policy's label
    sid: str
    acciones: tuple[str, ...]

    parcial: bool = False  # the statement was used, only these of its actions were not

    def etiqueta(self) -> str:
        parte = " (acciones sin uso)" if self.parcial else ""
        return f"{self.principal} · {self.sid}{parte}: {', '.join(self.acciones)}"


@dataclass
class Informe:
    solicitudes: int = 0
    denegadas: list[Denegada] = field(default_factory=list)
    sin_uso: list[SinUso] = field(default_factory=list)
    acciones_sin_uso: list[SinUso] = field(default_factory=list)  # of statements some request used
    sin_rol: set[str] = field(default_factory=set)  # principals that made calls but have no role in the template
    activos: set[str] = field(default_factory=set)  # principals and resource policies some request reached

    def texto(self) -> str:
        lineas = [f"{self.solicitudes} recorded requests, {len(self.denegadas)} denied"]
        for d in self.denegadas:
            contexto = ", ".join(f"{k}={list(v)}" for k, v in d.solicitud.contexto)
            lineas.append(
                f"  DENIED ({d.decision.value}) {d.principal}: {d.solicitud.accion} on {d.solicitud.recurso}"
                + (f" [{contexto}]" if contexto else "")
                + (f" — {d.motivo}" if d.motivo else "")
            )
        lineas += [f"  no role: {p}" for p in sorted(self.sin_rol)]
        if self.sin_uso:
            lineas.append("granted, never used in this run:")
            lineas += [f"  {s.principal} {s.sid}: {', '.join(s.acciones)}" for s in self.sin_uso]
        if self.acciones_sin_uso:
            lineas.append("actions of used statements no request asked for:")
            lineas += [f"  {s.principal} {s.sid}: {', '.join(s.acciones)}" for s in self.acciones_sin_uso]
        return "\n".join(lineas)


def _acciones(sentencia: dict[str, Any]) -> tuple[str, ...]:
    acciones = sentencia.get("Action", sentencia.get("NotAction", []))
    return (acciones,) if isinstance(acciones, str) else tuple(acciones)


def comprobar(registradas: Iterable[tuple[str, Solicitud]], cuenta: Cuenta, *, todos: bool = False) -> Informe:
    """Decide every recorded ``(principal, request)``; list the denied ones and the Allow statements none used.

    The unused are those of the principals and resource policies some request reached; with ``todos``,
    of every principal and resource policy of the account.
    """
    veces = Counter(registradas)
    informe = Informe(solicitudes=sum(veces.values()))
    distintas = [(p, s) for p, s in veces if cuenta.consulta(p, s) is not None]
    informe.sin_rol = {p for p, s in veces if cuenta.consulta(p, s) is None}
    resultados = evaluar([cuenta.consulta(p, s) for p, s in distintas])  # type: ignore[misc]
    usadas: set[tuple[str, int]] = set()
    pedidas: dict[tuple[str, int], set[str]] = {}  # statement -> the actions of the requests it allowed
    for (principal, solicitud), resultado in zip(distintas, resultados, strict=True):
        informe.activos.add(principal)
        if (recurso := politica_de(cuenta.politicas_recurso, solicitud.recurso)) is not None:
            informe.activos.add(recurso[0])
        if resultado.decision is not Decision.PERMITIDA:
            informe.denegadas.append(
                Denegada(principal, solicitud, resultado.decision, resultado.motivo, veces[(principal, solicitud)])
            )
        for etiqueta, i in resultado.usadas:
            usadas.add(sentencia := cuenta.indice(etiqueta, i))
            pedidas.setdefault(sentencia, set()).add(solicitud.accion.lower())
    etiquetas = sorted(cuenta.principales) + sorted({e for e, _ in cuenta.politicas_recurso.values()})
    for etiqueta in etiquetas:
        if not todos and etiqueta not in informe.activos:
            continue
        for indice, sentencia in enumerate(cuenta.sentencias_de(etiqueta)):
            if sentencia.get("Effect") != "Allow":
                continue
            sid = sentencia.get("Sid", f"#{indice}")
            if (etiqueta, indice) not in usadas:
                informe.sin_uso.append(SinUso(etiqueta, sid, _acciones(sentencia)))
            elif "Action" in sentencia:
                acciones = pedidas[(etiqueta, indice)]
                sobran = tuple(a for a in _acciones(sentencia) if not any(fnmatchcase(p, a.lower()) for p in acciones))
                if sobran:
                    informe.acciones_sin_uso.append(SinUso(etiqueta, sid, sobran, parcial=True))
    return informe
