"""The layer's error root and families, and the errors its mechanisms raise.

Step Functions matches a Lambda task's failure by ``errorType``, which the Python
runtime sets to the exception's class name. The workflow errors a *mechanism* raises
(an open circuit, a claim in progress, an exhausted retry budget, an unknown outcome, an
unreadable event) are defined here under the name the ASL's ``Retry``/``Catch`` match:
rename one and the workflow silently stops matching it. The workflow's own error names
(a declined charge, a duplicate order...) and the list of every name it may match are the
domain's, in :mod:`mercadofresco.dominio.errores`.

Two families:

- ``TransientError``: worth retrying later (by the workflow or the queue).
- ``PermanentError``: retrying gives the same answer; record it and stop.
"""

from __future__ import annotations

__all__ = [
    "CircuitoAbierto",
    "DependencyUnavailableError",
    "EventoInvalido",
    "MercadoFrescoError",
    "OperacionEnCurso",
    "PermanentError",
    "PresupuestoReintentosAgotado",
    "ResultadoDesconocido",
    "TransientError",
]


class MercadoFrescoError(Exception):
    """Root of every error this project raises on purpose."""


class TransientError(MercadoFrescoError):
    """A failure that may succeed if the same operation is tried again later."""


class PermanentError(MercadoFrescoError):
    """A failure that will repeat on every attempt (business rule, bad input)."""


class DependencyUnavailableError(TransientError):
    """A dependency could not be used now; says which one and why, as constructor fields.

    Parameters
    ----------
    message:
        What happened, in English.
    dependency:
        The dependency's breaker/budget name (``pasarela``, ``erp``...), as metrics show it.
    attempts:
        HTTP attempts made before giving up (0: none, e.g. an open circuit).
    last_outcome:
        The last attempt's outcome (``HTTP 503``, ``ReadTimeoutError: ...``), or ``""``.
    retry_in_s:
        How long the caller should wait before trying again (an open circuit's remaining time), or 0.
    """

    def __init__(
        self,
        message: str,
        *,
        dependency: str = "",
        attempts: int = 0,
        last_outcome: str = "",
        retry_in_s: float = 0.0,
    ) -> None:
        super().__init__(message)
        self.dependency = dependency
        self.attempts = attempts
        self.last_outcome = last_outcome
        self.retry_in_s = retry_in_s


class CircuitoAbierto(DependencyUnavailableError):
    """The shared circuit breaker for a dependency is open: no call was made (``retry_in_s`` says for how long)."""


class OperacionEnCurso(TransientError):
    """Another consumer holds a live ``EN_CURSO`` claim for the same key."""


class PresupuestoReintentosAgotado(DependencyUnavailableError):
    """The dependency's retry budget refused a retry: fail fast, let the queue/workflow decide."""


class EventoInvalido(PermanentError):
    """Malformed JSON, missing fields or an unknown ``version``: goes to the DLQ with its reason."""


class ResultadoDesconocido(MercadoFrescoError):
    """A non-idempotent provider call timed out reading: it may or may not have happened.

    Neither transient nor permanent: retrying could charge twice, giving up could lose a charge.
    The HTTP layer never retries it; the caller reconciles (asks the provider) before acting.
    """
