"""A consumer's provider calls: the client wired from the environment, and what its answer means.

Every consumer of an external provider (ERP, e-mail) needs the same two things: a
:class:`~mercadofresco.http.ClienteProveedor` behind the dependency's shared breaker and
retry budget (both in Valkey), and one rule for the answer: 2xx is done, a 4xx is the
provider refusing *this* message (permanent: to the DLQ with ``dato-invalido``, never
retried), and 409 means the provider already has it (done, the duplicate it told us about).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from mercadofresco.consumer.lectura import MensajeInvalido
from mercadofresco.dlq import Motivo

if TYPE_CHECKING:
    import redis

    from mercadofresco.circuit_breaker import BreakerConfig
    from mercadofresco.http import ClienteProveedor, Respuesta

YA_LO_TIENE = 409  # the provider saw this Idempotency-Key's operation already


def cliente_desde_env(
    dependencia: str,
    variable_url: str,
    *,
    redis_client: redis.Redis | None = None,
    config: BreakerConfig | None = None,
    **kwargs: Any,
) -> ClienteProveedor:
    """The provider client for ``dependencia`` at ``$variable_url``, with its shared breaker and budget.

    ``redis_client`` defaults to :func:`mercadofresco.valkey.cliente_valkey` (the breaker's
    and budget's shared state). Tests pass ``clock`` (the breaker's and the budget's) and ``prefijo`` (private
    Valkey keys); any other keyword (``sleep``, ``rng``, timeouts) goes to ``ClienteProveedor``.
    """
    from mercadofresco.circuit_breaker import CircuitBreaker
    from mercadofresco.http import ClienteProveedor
    from mercadofresco.retry import RetryBudget, RetryPolicy

    url = os.environ.get(variable_url, "").strip()
    if not url:
        raise ValueError(f"environment variable {variable_url} (base URL of {dependencia}) is not set")
    if redis_client is None:
        from mercadofresco.valkey import cliente_valkey

        redis_client = cliente_valkey()
    reloj = kwargs.pop("clock", None)
    prefijo = kwargs.pop("prefijo", None)
    claves_extra = {"prefijo": prefijo} if prefijo else {}
    breaker = CircuitBreaker(dependencia, redis_client, config=config, clock=reloj, **claves_extra)
    # The budget ages its pending deposits on the same clock as the breaker.
    reloj_budget = {"clock": reloj} if reloj is not None else {}
    budget = RetryBudget(dependencia, redis_client, **claves_extra, **reloj_budget)
    kwargs.setdefault("retry", RetryPolicy.from_env())
    return ClienteProveedor(dependencia=dependencia, base_url=url, breaker=breaker, budget=budget, **kwargs)


def aceptado(respuesta: Respuesta, dependencia: str) -> dict[str, Any]:
    """The body of a successful answer; a refusal raises :class:`MensajeInvalido` (``dato-invalido``)."""
    status, cuerpo = respuesta
    if 200 <= status < 300 or status == YA_LO_TIENE:
        return cuerpo
    # Only the status and a short machine code: a provider's error body may echo the customer's
    # e-mail or our request, and this detail goes to logs and to the DLQ's mf-detalle.
    codigo = cuerpo.get("error") or cuerpo.get("codigo") or cuerpo.get("code")
    sufijo = f" ({codigo})" if isinstance(codigo, str) and _CODIGO.fullmatch(codigo) else ""
    raise MensajeInvalido(Motivo.DATO_INVALIDO, f"{dependencia} refused the message: HTTP {status}{sufijo}")


_CODIGO = re.compile(r"[A-Za-z0-9_.-]{1,40}")  # what a provider's error code looks like; free text never passes
