"""The state machine's ``Retry`` entries as the saga's step retry strategies, one rule per entry.

A :class:`Regla` is one ASL ``Retry`` entry: ``ErrorEquals`` (class names, as a task's ``errorType``
is matched), ``MaxAttempts`` retries, ``IntervalSeconds`` and ``MaxDelaySeconds`` with ``BackoffRate``
2 and ``JitterStrategy: FULL`` (every entry of the ASL has those two): the layer's
:class:`~mercadofresco.retry.FullJitterBackoff`. A test keeps each gateway step's rules equal to its
state's entries. The SDK waits between attempts without running the function (a retry checkpoints
its delay and the invocation ends) and bills each retry as one operation.

Two differences, both small: the SDK counts a step's attempts across all its errors where the ASL
counts per entry (a step failing with two kinds of error in turn retries a little less here; no
step of this saga mixes them in practice), and a delay is whole seconds, at least 1.

The steps that call AWS services (the state machine's service integrations) retry what the layer's
one table calls transient (:func:`mercadofresco.retry.classify`) where the ASL names each service's
error codes: the same throttling and 5xx, in one place.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aws_durable_execution_sdk_python.config import Duration, StepConfig, StepSemantics
from aws_durable_execution_sdk_python.retries import RetryDecision
from mercadofresco.errors import TransientError
from mercadofresco.idempotency import IdempotencyPersistenceError
from mercadofresco.retry import FullJitterBackoff, classify

if TYPE_CHECKING:
    from collections.abc import Callable

# The gateway released the key: asking again at once with the same Idempotency-Key is safe (ReintentarCobro).
CLAVE_LIBERADA = ("PasarelaNoDisponible", "PresupuestoReintentosAgotado", "ResultadoDesconocido")

_AZAR = random.Random()  # the jitter: drawn when a step fails, then checkpointed with its retry (replay reads it)


def aws_transitorio(error: BaseException) -> bool:
    """Throttling, 5xx, a dropped connection (the layer's one table), or a failed PutEvents entry."""
    return isinstance(error, TransientError) or classify(error).retryable


def persistencia_transitoria(error: BaseException) -> bool:
    """The record's write failed for a reason worth retrying (the close's DynamoDB ``Retry``)."""
    return isinstance(error, IdempotencyPersistenceError) and (
        error.__cause__ is None or classify(error.__cause__).retryable
    )


@dataclass(frozen=True, slots=True)
class Regla:
    """One ASL ``Retry`` entry: which errors, ``MaxAttempts`` retries, the full-jitter backoff."""

    reintentos: int
    intervalo_s: int
    max_s: int
    errores: tuple[str, ...] = ()  # ErrorEquals: class names
    transitorio: Callable[[BaseException], bool] | None = None  # or a classification (the AWS calls)
    espera: FullJitterBackoff = field(init=False)

    def __post_init__(self) -> None:
        if not (self.errores or self.transitorio) or self.reintentos < 1:
            raise ValueError("a rule needs the errors it retries and at least one retry")
        object.__setattr__(self, "espera", FullJitterBackoff(self.intervalo_s, self.max_s))

    def acepta(self, error: BaseException) -> bool:
        return type(error).__name__ in self.errores or (self.transitorio is not None and self.transitorio(error))


def config(*reglas: Regla, una_vez: bool = False) -> StepConfig:
    """A step's configuration: its retry strategy from ``reglas`` (an error none accepts fails the step).

    ``una_vez``: ``AT_MOST_ONCE_PER_RETRY``, for the steps that call the gateway: an attempt cut short
    (the process died) is an unknown outcome for the saga to resolve, not an attempt to run again.
    """

    def estrategia(error: Exception, intentos: int) -> RetryDecision:  # intentos: made so far, the first included
        for regla in reglas:
            if regla.acepta(error):
                if intentos > regla.reintentos:
                    return RetryDecision.no_retry()
                segundos = regla.espera.compute(intentos - 1, _AZAR)
                return RetryDecision.retry(Duration.from_seconds(max(1, math.ceil(segundos))))
        return RetryDecision.no_retry()

    semantica = StepSemantics.AT_MOST_ONCE_PER_RETRY if una_vez else StepSemantics.AT_LEAST_ONCE_PER_RETRY
    return StepConfig(retry_strategy=estrategia, step_semantics=semantica)


#: Each kind of step's rules, with the ASL state they come from.
REINTENTOS: dict[str, tuple[str, tuple[Regla, ...]]] = {
    "reclamo": ("ReclamarPedido", (Regla(3, 1, 10, errores=("IdempotencyPersistenceError",)),)),
    # Cobrar retried only the platform's errors: here the service invokes the function again.
    "cobro": ("Cobrar", ()),
    "reintentar-cobro": ("ReintentarCobro", (Regla(2, 3, 30, errores=CLAVE_LIBERADA),)),
    "reconsulta": ("Reconsultar", (Regla(3, 60, 300, errores=("CircuitoAbierto",)),)),
    "reembolso": (
        "Reembolsar",
        (Regla(1, 10, 60, errores=CLAVE_LIBERADA), Regla(3, 60, 300, errores=("CircuitoAbierto",))),
    ),
    "aws": ("(service integrations)", (Regla(3, 1, 10, transitorio=aws_transitorio),)),
    "cierre": ("CerrarReclamo", (Regla(3, 1, 10, transitorio=persistencia_transitoria),)),
}
#: The steps that call the gateway: at most once per attempt.
UNA_VEZ = frozenset({"cobro", "reintentar-cobro", "reconsulta", "reembolso"})
REGLAS = {nombre: config(*reglas, una_vez=nombre in UNA_VEZ) for nombre, (_, reglas) in REINTENTOS.items()}
