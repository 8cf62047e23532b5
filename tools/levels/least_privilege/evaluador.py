"""Does AWS allow this request? Decided by ``@cloud-copilot/iam-simulate``, not by code of ours.

A :class:`Consulta` is one request as IAM authorises it: who makes it (a role's ARN, or a service
principal such as ``sns.amazonaws.com``), the :class:`Solicitud` (action, resource ARN, context
keys), the principal's identity policies and the resource's own policy (a queue policy, a key
policy, a function's permissions). iam-simulate evaluates them with AWS's logic — explicit deny,
identity OR resource policy within one account, a KMS key policy that must trust the account before
an IAM policy counts, every condition operator, policy variables, single- and multivalued keys — and
validates the action, the resource type and each context key against AWS's service reference, so a
request modelled wrong is an error instead of a quiet allow. Where it departs from AWS's documented
rules the request is refused (:mod:`least_privilege.limites`). docs/decisions/0111-iam-evaluator.md
records the choice; :mod:`least_privilege.simulador` runs it.

>>> decidir([{"Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}]}],
...         Solicitud("sqs:SendMessage", "arn:aws:sqs:eu-south-2:123456789012:cola"))
<Decision.PERMITIDA: 'allowed'>
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from least_privilege.limites import fuera_de_alcance
from least_privilege.simulador import compartido, nombre_de_politica

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from least_privilege.simulador import Simulador

__all__ = [
    "Consulta",
    "Decision",
    "NoEvaluableError",
    "Resultado",
    "Solicitud",
    "decidir",
    "evaluar",
    "sentencias",
]

_CUENTA_POR_DEFECTO = "123456789012"


class NoEvaluableError(ValueError):
    """:func:`decidir` got a request iam-simulate refused or one outside what it evaluates as AWS does."""


class Decision(Enum):
    PERMITIDA = "allowed"
    DENEGACION_IMPLICITA = "implicit deny"
    DENEGACION_EXPLICITA = "explicit deny"
    NO_EVALUABLE = "not evaluable"  # refused (see Resultado.motivo): never counted as allowed


_DECISIONES = {
    "Allowed": Decision.PERMITIDA,
    "ImplicitlyDenied": Decision.DENEGACION_IMPLICITA,
    "ExplicitlyDenied": Decision.DENEGACION_EXPLICITA,
}


@dataclass(frozen=True, slots=True)
class Solicitud:
    """One authorised request: ``accion`` (``dynamodb:PutItem``) on ``recurso`` (an ARN) with its context keys.

    ``contexto`` maps a condition key to its values (a tuple: ``dynamodb:LeadingKeys`` is multivalued,
    most keys have one value; iam-simulate knows which is which and treats them so).
    """

    accion: str
    recurso: str
    contexto: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def claves(self) -> dict[str, tuple[str, ...]]:
        return {k.lower(): v for k, v in self.contexto}


@dataclass(frozen=True, slots=True)
class Consulta:
    """``solicitud`` made by ``principal`` (an ARN, or a service principal), with the policies that decide it.

    ``identidad`` names the principal's policy documents (empty for a service principal),
    ``politica_recurso`` the resource's own, if it has one; ``cuenta`` is the resource's account.
    """

    principal: str
    solicitud: Solicitud
    identidad: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    politica_recurso: tuple[str, Mapping[str, Any]] | None = None
    cuenta: str = field(default="")


@dataclass(frozen=True, slots=True)
class Resultado:
    """The decision, and the Allow statements that matched as ``(policy label, statement index)``."""

    decision: Decision
    usadas: frozenset[tuple[str, int]] = frozenset()
    motivo: str = ""  # why a request is NO_EVALUABLE


def _lista(valor: Any) -> list[Any]:
    return valor if isinstance(valor, list) else [valor]


def sentencias(politica: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The statements of one policy document, in order (their index is what :attr:`Resultado.usadas` gives)."""
    return _lista(politica.get("Statement", []))


def _cuenta(consulta: Consulta) -> str:
    if consulta.cuenta:
        return consulta.cuenta
    partes = consulta.solicitud.recurso.split(":")
    return partes[4] if len(partes) > 4 and partes[4] else _CUENTA_POR_DEFECTO


def evaluar(consultas: Sequence[Consulta], simulador: Simulador | None = None) -> list[Resultado]:
    """Every query decided, in order, in one batch."""
    simulador = simulador or compartido()
    nombres: dict[str, str] = {}  # evaluator's name -> the caller's label
    identidad: dict[str, Mapping[str, Any]] = {}
    recurso: dict[str, Mapping[str, Any]] = {}
    enviar: list[dict[str, Any]] = []
    resultados: list[Resultado | None] = []
    for consulta in consultas:
        documentos = [d for _, d in consulta.identidad]
        if consulta.politica_recurso is not None:
            documentos.append(consulta.politica_recurso[1])
        motivo = fuera_de_alcance(documentos, consulta.solicitud.recurso, consulta.solicitud.contexto)
        if motivo is not None:
            resultados.append(Resultado(Decision.NO_EVALUABLE, motivo=motivo))
            continue
        nombres_i = []
        for etiqueta, documento in consulta.identidad:
            nombre = nombre_de_politica(etiqueta, documento)
            identidad[nombre], nombres[nombre] = documento, etiqueta
            nombres_i.append(nombre)
        nombre_r = None
        if consulta.politica_recurso is not None:
            etiqueta, documento = consulta.politica_recurso
            nombre_r = nombre_de_politica(etiqueta, documento)
            recurso[nombre_r], nombres[nombre_r] = documento, etiqueta
        enviar.append(
            {
                "principal": consulta.principal,
                "accion": consulta.solicitud.accion,
                "recurso": consulta.solicitud.recurso,
                "cuenta": _cuenta(consulta),
                "contexto": {k: list(v) for k, v in consulta.solicitud.contexto},
                "identidad": nombres_i,
                "recurso_politica": nombre_r,
            }
        )
        resultados.append(None)
    respuestas = iter(simulador.evaluar(identidad, recurso, enviar))
    return [r if r is not None else _resultado(next(respuestas), nombres) for r in resultados]


def _resultado(respuesta: Mapping[str, Any], nombres: Mapping[str, str]) -> Resultado:
    if "error" in respuesta:
        return Resultado(Decision.NO_EVALUABLE, motivo=f"iam-simulate refused the request: {respuesta['error']}")
    usadas = frozenset((nombres[nombre], indice) for nombre, indice in respuesta["usadas"])
    return Resultado(_DECISIONES[respuesta["decision"]], usadas)


def decidir(
    politicas: Sequence[Mapping[str, Any]],
    solicitud: Solicitud,
    principal: str = f"arn:aws:iam::{_CUENTA_POR_DEFECTO}:role/principal",
    politica_recurso: Mapping[str, Any] | None = None,
) -> Decision:
    """The decision of a principal's identity ``politicas`` (and the resource's policy, if any) on one request.

    Raises :class:`NoEvaluableError` for a request iam-simulate refuses (an unknown action, a resource of
    the wrong type, a context key the action does not have) or one :mod:`~least_privilege.limites` keeps out.
    """
    consulta = Consulta(
        principal,
        solicitud,
        tuple((f"politica-{i}", p) for i, p in enumerate(politicas)),
        ("recurso", politica_recurso) if politica_recurso is not None else None,
    )
    (resultado,) = evaluar([consulta])
    if resultado.decision is Decision.NO_EVALUABLE:
        raise NoEvaluableError(resultado.motivo)
    return resultado.decision
