"""The workflow's own error names: the order's outcomes the state machine matches by class name.

Step Functions matches a Lambda task's failure by ``errorType``, the exception's class name; the
ASL's ``Retry``/``Catch`` name these classes (and the mechanism errors of :mod:`mercadofresco.errors`
it also matches), so a rename here silently stops the workflow matching it. A test keeps the ASL's
``ErrorEquals`` a subset of :data:`NOMBRES_PARA_EL_FLUJO`.

How a failed execution *ends* is named here too, once for both engines of the workflow
(:data:`FINALES_DEL_FLUJO`): the state machine's ``Fail`` states name these classes as their ``Error``
and the durable function (``functions/pedido_durable``) raises them; tests keep every ``Fail`` state's
``Error`` one of them, and both engines' causes naming the same records and runbook.
"""

from __future__ import annotations

from mercadofresco.errors import (
    CircuitoAbierto,
    DependencyUnavailableError,
    EventoInvalido,
    OperacionEnCurso,
    PermanentError,
    PresupuestoReintentosAgotado,
    ResultadoDesconocido,
)
from mercadofresco.idempotency.exceptions import IdempotencyPersistenceError

__all__ = [
    "FINALES_DEL_FLUJO",
    "NOMBRES_PARA_EL_FLUJO",
    "AvisoNoPublicado",
    "CobroNoCompletado",
    "CobroRechazado",
    "LoteNoAdmitido",
    "PasarelaNoDisponible",
    "PedidoCancelado",
    "PedidoDuplicado",
    "PlataformaOcupada",
    "ReclamoSinCerrar",
    "ReembolsoNoCompletado",
    "ReembolsoRechazado",
]


class PasarelaNoDisponible(DependencyUnavailableError):
    """The payment gateway did not answer usefully (5xx, 429, reset, timeout)."""


class CobroRechazado(PermanentError):
    """The gateway declined the card: a business answer, never retried."""


class ReembolsoRechazado(PermanentError):
    """The gateway refused the refund (nothing to refund, already refunded elsewhere)."""


class LoteNoAdmitido(PermanentError):
    """The order workflow was started with something other than one SQS record (the pipe's BatchSize is 1)."""


class PedidoDuplicado(PermanentError):
    """Another execution holds the order's claim, or the order already has its outcome: nothing to do."""


class PedidoCancelado(PermanentError):
    """A step after the charge failed: the charge was refunded once, PedidoCancelado published, the stock released."""


class CobroNoCompletado(PermanentError):
    """The charge's outcome stayed unknown and was compensated: no charge remains, the customer was told."""


class ReembolsoNoCompletado(PermanentError):
    """A charge may exist and its refund could not be made: an operator refunds it (alarmed)."""


class PlataformaOcupada(PermanentError):
    """The charge function stayed throttled for every capacity wait: nothing was charged, the customer was told."""


class ReclamoSinCerrar(PermanentError):
    """The order has its outcome but its claim ``pedido:{pedido_id}`` could not be closed: close it by hand."""


class AvisoNoPublicado(PermanentError):
    """The order has its outcome and its claim is closed, but the customer's notice could not be published."""


#: How a failed execution of the order workflow ends, besides the mechanism's ``CircuitoAbierto`` (the
#: circuit open at the first attempt) and the unreadable input (``EventoInvalido``, ``LoteNoAdmitido``).
FINALES_DEL_FLUJO = tuple(
    cls.__name__
    for cls in (
        PedidoCancelado,
        CobroNoCompletado,
        ReembolsoNoCompletado,
        PlataformaOcupada,
        ReclamoSinCerrar,
        AvisoNoPublicado,
    )
)


#: Every name the state machine may match on, in one place (a test keeps the ASL's a subset of it).
#: ``IdempotencyPersistenceError``: the store could not read or write its record; the workflow retries the claim.
NOMBRES_PARA_EL_FLUJO = (
    *(
        cls.__name__
        for cls in (
            PasarelaNoDisponible,
            CircuitoAbierto,
            OperacionEnCurso,
            PresupuestoReintentosAgotado,
            CobroRechazado,
            ReembolsoRechazado,
            EventoInvalido,
            LoteNoAdmitido,
            PedidoDuplicado,
            ResultadoDesconocido,
            IdempotencyPersistenceError,
        )
    ),
)
