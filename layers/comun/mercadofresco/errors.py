"""Domain errors whose *class names* are the contract with the state machine.

Step Functions matches a Lambda task's failure by ``errorType``, which the Python
runtime sets to the exception's class name. The ASL's ``Retry``/``Catch`` clauses
therefore name these classes: rename one here and the workflow silently stops
matching it (``tests`` check that every name the ASL uses exists here).

Two families:

- ``TransientError``: worth retrying later (by the workflow or the queue).
- ``PermanentError``: retrying gives the same answer; record it and stop.
"""

from __future__ import annotations

__all__ = [
    "NOMBRES_PARA_EL_FLUJO",
    "CircuitoAbierto",
    "CobroRechazado",
    "DependencyUnavailableError",
    "EventoInvalido",
    "LoteNoAdmitido",
    "MercadoFrescoError",
    "OperacionEnCurso",
    "PasarelaNoDisponible",
    "PedidoDuplicado",
    "PermanentError",
    "PresupuestoReintentosAgotado",
    "ProveedorNoDisponible",
    "ReembolsoRechazado",
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


class PasarelaNoDisponible(DependencyUnavailableError):
    """The payment gateway did not answer usefully (5xx, 429, reset, timeout)."""


class ProveedorNoDisponible(DependencyUnavailableError):
    """An external provider other than the gateway (ERP, e-mail) is unavailable."""


class CircuitoAbierto(DependencyUnavailableError):
    """The shared circuit breaker for a dependency is open: no call was made (``retry_in_s`` says for how long)."""


class OperacionEnCurso(TransientError):
    """Another consumer holds a live ``EN_CURSO`` claim for the same key."""


class PresupuestoReintentosAgotado(DependencyUnavailableError):
    """The dependency's retry budget refused a retry: fail fast, let the queue/workflow decide."""


class CobroRechazado(PermanentError):
    """The gateway declined the card: a business answer, never retried."""


class ReembolsoRechazado(PermanentError):
    """The gateway refused the refund (nothing to refund, already refunded elsewhere)."""


class EventoInvalido(PermanentError):
    """Malformed JSON, missing fields or an unknown ``version``: goes to the DLQ with its reason."""


class LoteNoAdmitido(PermanentError):
    """The order workflow was started with something other than one SQS record (the pipe's BatchSize is 1)."""


class PedidoDuplicado(PermanentError):
    """Another execution holds the order's claim, or the order already has its outcome: nothing to do."""


class ResultadoDesconocido(MercadoFrescoError):
    """A non-idempotent provider call timed out reading: it may or may not have happened.

    Neither transient nor permanent: retrying could charge twice, giving up could lose a charge.
    The HTTP layer never retries it; the caller reconciles (asks the provider) before acting.
    """


#: Every name the state machine may match on, in one place (a test keeps the ASL's a subset of it).
#: ``IdempotencyPersistenceError`` (the store could not read or write its record; the workflow retries
#: the claim) is raised by ``mercadofresco.idempotency``, which imports this module, so it is named
#: here by string; a test checks that every name is an exception class of the layer.
NOMBRES_PARA_EL_FLUJO = (
    *(
        cls.__name__
        for cls in (
            PasarelaNoDisponible,
            ProveedorNoDisponible,
            CircuitoAbierto,
            OperacionEnCurso,
            PresupuestoReintentosAgotado,
            CobroRechazado,
            ReembolsoRechazado,
            EventoInvalido,
            LoteNoAdmitido,
            PedidoDuplicado,
            ResultadoDesconocido,
        )
    ),
    "IdempotencyPersistenceError",
)
