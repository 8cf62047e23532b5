"""Domain errors whose *class names* are the contract with the state machine.

Step Functions matches a Lambda task's failure by ``errorType``, which the Python
runtime sets to the exception's class name. The ASL's ``Retry``/``Catch`` clauses
therefore name these classes: rename one here and the workflow silently stops
matching it (``tests`` check that every name the ASL uses exists here).

Two families:

- ``ErrorTransitorio``: worth retrying later (by the workflow or the queue).
- ``ErrorPermanente``: retrying gives the same answer; record it and stop.
"""

from __future__ import annotations


class MercadoFrescoError(Exception):
    """Root of every error this project raises on purpose."""


class ErrorTransitorio(MercadoFrescoError):
    """A failure that may succeed if the same operation is tried again later."""


class ErrorPermanente(MercadoFrescoError):
    """A failure that will repeat on every attempt (business rule, bad input)."""


class PasarelaNoDisponible(ErrorTransitorio):
    """The payment gateway did not answer usefully (5xx, 429, reset, timeout)."""


class ProveedorNoDisponible(ErrorTransitorio):
    """An external provider other than the gateway (ERP, e-mail) is unavailable."""


class CircuitoAbierto(ErrorTransitorio):
    """The shared circuit breaker for a dependency is open: no call was made."""


class OperacionEnCurso(ErrorTransitorio):
    """Another consumer holds a live ``EN_CURSO`` claim for the same key."""


class PresupuestoReintentosAgotado(ErrorTransitorio):
    """The dependency's retry budget is spent: fail fast, let the queue/workflow decide."""


class CobroRechazado(ErrorPermanente):
    """The gateway declined the card: a business answer, never retried."""


class ReembolsoRechazado(ErrorPermanente):
    """The gateway refused the refund (nothing to refund, already refunded elsewhere)."""


class EventoInvalido(ErrorPermanente):
    """Malformed JSON, missing fields or an unknown ``version``: goes to the DLQ with its reason."""


#: Every name the state machine may match on, in one place.
NOMBRES_PARA_EL_FLUJO = tuple(
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
    )
)


class ResultadoDesconocido(MercadoFrescoError):
    """A non-idempotent provider call timed out reading: it may or may not have happened.

    Neither transient nor permanent: retrying could charge twice, giving up could lose a charge.
    The HTTP layer never retries it; the caller reconciles (asks the provider) before acting.
    """


NOMBRES_PARA_EL_FLUJO = (*NOMBRES_PARA_EL_FLUJO, ResultadoDesconocido.__name__)
