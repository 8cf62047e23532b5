"""The workflow's own error names: the order's outcomes the state machine matches by class name.

Step Functions matches a Lambda task's failure by ``errorType``, the exception's class name; the
ASL's ``Retry``/``Catch`` name these classes (and the mechanism errors of :mod:`mercadofresco.errors`
it also matches), so a rename here silently stops the workflow matching it. A test keeps the ASL's
``ErrorEquals`` a subset of :data:`NOMBRES_PARA_EL_FLUJO`.
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
    "NOMBRES_PARA_EL_FLUJO",
    "CobroRechazado",
    "LoteNoAdmitido",
    "PasarelaNoDisponible",
    "PedidoDuplicado",
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
