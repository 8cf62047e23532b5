"""A small, offline evaluator of IAM identity policies: does this role allow this request?

It implements AWS's documented evaluation logic for one principal in one account, for the
operators the template uses (IAM User Guide, "Policy evaluation logic" and "IAM JSON policy
elements: Condition operators"):

- a request is denied unless an ``Allow`` statement matches it; an explicit ``Deny`` that
  matches wins over every ``Allow``;
- a statement matches when its ``Action``/``NotAction``, ``Resource``/``NotResource`` and
  every condition match;
- actions match case-insensitively, resources case-sensitively, ``*`` and ``?`` as wildcards
  (an ARN's ``*`` may span ``/`` and ``:`` inside the resource part);
- conditions: every operator of the block must hold, every key of an operator must hold, and
  a key holds when the request's value matches *any* of the listed values. A key absent from
  the request fails a positive operator and satisfies a negated one (``StringNotEquals``...);
  ``...IfExists`` holds when the key is absent; ``Null`` tests presence. ``ForAllValues:``
  holds when every request value matches one of the listed values (also when the key is
  absent: AWS's documented pitfall), ``ForAnyValue:`` when at least one does.

Not modelled (no statement of this project needs them): permission boundaries, SCPs,
resource policies, session policies, numeric/date/IP operators, policy variables. An
operator outside this list raises :class:`OperadorNoSoportadoError` rather than guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any

__all__ = [
    "Decision",
    "OperadorNoSoportadoError",
    "Solicitud",
    "decidir",
    "sentencia_aplica",
    "sentencias",
]


class OperadorNoSoportadoError(ValueError):
    """A condition operator this evaluator does not implement (never silently treated as true or false)."""


class Decision(Enum):
    PERMITIDA = "allowed"
    DENEGACION_IMPLICITA = "implicit deny"
    DENEGACION_EXPLICITA = "explicit deny"


@dataclass(frozen=True, slots=True)
class Solicitud:
    """One authorised request: ``accion`` (``dynamodb:PutItem``) on ``recurso`` (an ARN) with its context keys.

    ``contexto`` maps a condition key to its values (a tuple: ``dynamodb:LeadingKeys`` is
    multivalued, most keys have one value).
    """

    accion: str
    recurso: str
    contexto: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def claves(self) -> dict[str, tuple[str, ...]]:
        return {k.lower(): v for k, v in self.contexto}


def _lista(valor: Any) -> list[Any]:
    return valor if isinstance(valor, list) else [valor]


@cache
def _patron(glob: str, ignorar_mayusculas: bool) -> re.Pattern[str]:
    cuerpo = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile(cuerpo, re.DOTALL | (re.IGNORECASE if ignorar_mayusculas else 0))


def _glob(patron: str, valor: str, *, ignorar_mayusculas: bool = False) -> bool:
    return _patron(patron, ignorar_mayusculas).fullmatch(valor) is not None


def _arn(patron: str, valor: str) -> bool:
    """ARN matching: the first five segments one by one, the resource part (which may hold ``:``) as a whole."""
    if patron == "*":
        return True
    partes_p, partes_v = patron.split(":", 5), valor.split(":", 5)
    if len(partes_p) != 6 or len(partes_v) != 6:
        return _glob(patron, valor)
    return all(_glob(p, v) for p, v in zip(partes_p, partes_v, strict=True))


def _accion(patron: str, accion: str) -> bool:
    return _glob(patron, accion, ignorar_mayusculas=True)


_COMPARADORES = {
    "StringEquals": lambda esperado, valor: esperado == valor,
    "StringEqualsIgnoreCase": lambda esperado, valor: esperado.lower() == valor.lower(),
    "StringLike": _glob,
    "ArnEquals": _arn,
    "ArnLike": _arn,
    "Bool": lambda esperado, valor: esperado.lower() == valor.lower(),
}
_NEGADOS = {
    "StringNotEquals": "StringEquals",
    "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase",
    "StringNotLike": "StringLike",
    "ArnNotEquals": "ArnEquals",
    "ArnNotLike": "ArnLike",
}


def _condicion(operador: str, clave: str, esperados: list[Any], claves: dict[str, tuple[str, ...]]) -> bool:
    """One key of one operator against the request's context keys."""
    valores = claves.get(clave.lower())
    if operador == "Null":
        return all((valores is None) == (str(e).lower() == "true") for e in esperados)
    conjunto = ""
    if operador.startswith(("ForAllValues:", "ForAnyValue:")):
        conjunto, operador = operador.split(":", 1)
    si_existe = operador.endswith("IfExists")
    operador = operador.removesuffix("IfExists")
    negado = operador in _NEGADOS
    comparar = _COMPARADORES.get(_NEGADOS.get(operador, operador))
    if comparar is None:
        raise OperadorNoSoportadoError(f"condition operator {operador!r} is not implemented by this evaluator")
    if valores is None or (conjunto and not valores):
        # Absent key: ForAllValues holds vacuously, a negated operator or ...IfExists holds, the rest fail.
        return conjunto == "ForAllValues" or (not conjunto and (negado or si_existe))

    def coincide(valor: str) -> bool:
        return any(comparar(str(e), valor) for e in esperados)

    if conjunto == "ForAllValues":
        return all(coincide(v) != negado for v in valores)
    if conjunto == "ForAnyValue":
        return any(coincide(v) != negado for v in valores)
    return not any(coincide(v) for v in valores) if negado else any(coincide(v) for v in valores)


def sentencia_aplica(sentencia: dict[str, Any], solicitud: Solicitud) -> bool:
    """Whether one policy statement matches the request (its Effect aside)."""
    if "Action" in sentencia:
        if not any(_accion(a, solicitud.accion) for a in _lista(sentencia["Action"])):
            return False
    elif any(_accion(a, solicitud.accion) for a in _lista(sentencia.get("NotAction", []))):
        return False
    if "Resource" in sentencia:
        if not any(_arn(r, solicitud.recurso) for r in _lista(sentencia["Resource"])):
            return False
    elif any(_arn(r, solicitud.recurso) for r in _lista(sentencia.get("NotResource", []))):
        return False
    claves = solicitud.claves
    return all(
        _condicion(operador, clave, _lista(esperados), claves)
        for operador, bloque in sentencia.get("Condition", {}).items()
        for clave, esperados in bloque.items()
    )


def sentencias(politicas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every statement of some policy documents, in order."""
    return [s for politica in politicas for s in _lista(politica.get("Statement", []))]


def decidir(politicas: list[dict[str, Any]], solicitud: Solicitud) -> Decision:
    """The decision of a principal's identity policies on one request."""
    permitida = False
    for sentencia in sentencias(politicas):
        if sentencia_aplica(sentencia, solicitud):
            if sentencia.get("Effect") == "Deny":
                return Decision.DENEGACION_EXPLICITA
            permitida = permitida or sentencia.get("Effect") == "Allow"
    return Decision.PERMITIDA if permitida else Decision.DENEGACION_IMPLICITA
