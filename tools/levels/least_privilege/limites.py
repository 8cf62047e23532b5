"""Where iam-simulate departs from AWS's documented rules: such a request is refused, never decided by a guess.

Found by running AWS's documented cases through it (``tests/unit/iam/test_reglas_aws.py``); each is
a reason the check reports a request as *not evaluable* (a violation) rather than trust its answer:

- **A ``*`` inside an ARN segment.** AWS: "If the ``*`` wildcard is the last character of a resource
  ARN segment, it can expand to match beyond the colon boundaries" (IAM User Guide, "IAM JSON policy
  elements: Resource", Using wildcards in resource ARNs) — any other ``*`` stays within its segment.
  iam-simulate 0.1.173 lets every ``*`` of the resource part (and of an ``Arn*`` condition value) span
  colons, so ``function:mf-*-x`` matches ``function:mf-a:b-x``. Refused when the two readings differ.
- **A policy variable before the resource part's first ``/`` or ``:``.** iam-simulate splits the
  resource part at its first ``/`` or ``:`` before substituting variables, and ``${aws:username}``
  holds a colon: ``arn:aws:sqs:r:a:${aws:username}-q`` then never matches, a Deny on it never applies.

Its third gap (``kms:EncryptionContext:<key>`` context keys dropped) is closed in ``iam-simulate/evaluar.mjs``.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["fuera_de_alcance"]

_ARN_OPERADORES = re.compile(r"^(ForAllValues:|ForAnyValue:)?Arn(Not)?(Equals|Like)(IfExists)?$", re.IGNORECASE)
_VARIABLE = re.compile(r"\$\{[^}]*\}")


def _lista(valor: Any) -> list[Any]:
    return valor if isinstance(valor, list) else [valor]


def _parte_recurso(arn: str) -> str | None:
    partes = arn.split(":", 5)
    return partes[5] if len(partes) == 6 else None


@cache
def _regex(patron: str, *, segun_aws: bool) -> re.Pattern[str]:
    """``patron``'s resource part as a regex: AWS's reading (a segment's trailing ``*`` alone spans ``:``) or
    iam-simulate's (every ``*`` does)."""
    trozos = []
    for segmento in patron.split(":"):
        cuerpo = ""
        for i, caracter in enumerate(segmento):
            if caracter == "*":
                cuerpo += ".*" if not segun_aws or i == len(segmento) - 1 else "[^:]*"
            elif caracter == "?":
                cuerpo += "."
            else:
                cuerpo += re.escape(caracter)
        trozos.append(cuerpo)
    return re.compile(":".join(trozos), re.DOTALL)


def _asterisco_discrepa(patron: str, valor: str) -> bool:
    parte_p, parte_v = _parte_recurso(patron), _parte_recurso(valor)
    if parte_p is None or parte_v is None or "*" not in parte_p or _VARIABLE.search(parte_p):
        return False
    aws = _regex(parte_p, segun_aws=True).fullmatch(parte_v) is not None
    return aws != (_regex(parte_p, segun_aws=False).fullmatch(parte_v) is not None)


def _variable_cortada(patron: str) -> bool:
    parte = _parte_recurso(patron)
    if parte is None or "${" not in parte:
        return False
    separador = re.search(r"[/:]", _VARIABLE.sub(lambda m: "#" * len(m.group()), parte))
    primero = re.search(r"[/:]", parte)
    return primero is not None and (separador is None or separador.start() != primero.start())


def fuera_de_alcance(
    documentos: Iterable[Mapping[str, Any]], recurso: str, contexto_solicitud: Iterable[tuple[str, tuple[str, ...]]]
) -> str | None:
    """Why iam-simulate's answer on a request (its resource ARN and context keys) under ``documentos``
    cannot be trusted, or ``None``."""
    contexto = {clave.lower(): valores for clave, valores in contexto_solicitud}
    for documento in documentos:
        for sentencia in _lista(documento.get("Statement", [])):
            for patron in _lista(sentencia.get("Resource", [])) + _lista(sentencia.get("NotResource", [])):
                if _asterisco_discrepa(patron, recurso):
                    return f"a '*' inside an ARN segment of {patron!r} would span ':' in {recurso!r}"
                if _variable_cortada(patron):
                    return f"a policy variable before the first '/' or ':' of {patron!r}'s resource part"
            for operador, bloque in sentencia.get("Condition", {}).items():
                if not _ARN_OPERADORES.match(operador):
                    continue
                for clave, esperados in bloque.items():
                    for patron in map(str, _lista(esperados)):
                        for valor in contexto.get(clave.lower(), ()):
                            if _asterisco_discrepa(patron, valor):
                                return f"a '*' inside an ARN segment of {patron!r} would span ':' in {valor!r}"
    return None
