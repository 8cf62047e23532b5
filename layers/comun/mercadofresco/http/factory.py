"""The provider client wired from the environment: one way for every function (charge, ERP, e-mail).

A :class:`~mercadofresco.http.ProviderClient` behind the dependency's shared breaker and
retry budget (both in Valkey), its base URL from an environment variable.

A sandbox provider (the stack's own ``simulador-*`` function URL) is reached through a path
token that is a secret: the template gives the callers the URL with a ``{token}`` placeholder
and the secret's ARN (``SIMULADOR_SECRET_ARN``), never the token itself, which is read here
through the layer's Powertools provider when the client is built.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import redis

    from mercadofresco.circuit_breaker import BreakerConfig
    from mercadofresco.http.client import ProviderClient

__all__ = ["ENV_SANDBOX_SECRET", "TOKEN_MARKER", "client_from_env", "token_sandbox", "url_with_token"]

ENV_SANDBOX_SECRET = "SIMULADOR_SECRET_ARN"
TOKEN_MARKER = "{token}"  # where the sandbox's path token goes in a provider URL


def token_sandbox() -> str:
    """The sandbox providers' path token, from the secret ``$SIMULADOR_SECRET_ARN`` (JSON ``{"token": ...}``)."""
    from mercadofresco.aws import read_secret

    arn = os.environ.get(ENV_SANDBOX_SECRET, "").strip()
    if not arn:
        raise ValueError(f"a sandbox provider URL has {TOKEN_MARKER} but {ENV_SANDBOX_SECRET} is not set")
    secreto = read_secret(arn, transform="json")
    if not isinstance(secreto, dict) or not secreto.get("token"):
        raise ValueError(f"the secret {ENV_SANDBOX_SECRET} names is not JSON with a 'token' field")
    return str(secreto["token"])


def url_with_token(url: str) -> str:
    """``url`` with the sandbox token in place of ``{token}``; any other URL unchanged."""
    return url.replace(TOKEN_MARKER, token_sandbox()) if TOKEN_MARKER in url else url


def client_from_env(
    dependency: str,
    variable_url: str,
    *,
    redis_client: redis.Redis | None = None,
    config: BreakerConfig | None = None,
    **kwargs: Any,
) -> ProviderClient:
    """The provider client for ``dependency`` at ``$variable_url``, with its shared breaker and budget.

    ``redis_client`` defaults to :func:`mercadofresco.valkey.valkey_client` (the breaker's
    and budget's shared state). Tests pass ``clock`` (the breaker's and the budget's) and ``prefix`` (private
    Valkey keys); any other keyword (``sleep``, ``rng``, timeouts) goes to ``ProviderClient``.
    """
    from mercadofresco.circuit_breaker import CircuitBreaker
    from mercadofresco.http.client import ProviderClient
    from mercadofresco.retry import RetryBudget, RetryPolicy

    url = os.environ.get(variable_url, "").strip()
    if not url:
        raise ValueError(f"environment variable {variable_url} (base URL of {dependency}) is not set")
    url = url_with_token(url)
    if redis_client is None:
        from mercadofresco.valkey import valkey_client

        redis_client = valkey_client()
    reloj = kwargs.pop("clock", None)
    prefix = kwargs.pop("prefix", None)
    claves_extra = {"prefix": prefix} if prefix else {}
    breaker = CircuitBreaker(dependency, redis_client, config=config, clock=reloj, **claves_extra)
    # The budget ages its pending deposits on the same clock as the breaker.
    reloj_budget = {"clock": reloj} if reloj is not None else {}
    budget = RetryBudget(dependency, redis_client, **claves_extra, **reloj_budget)
    kwargs.setdefault("retry", RetryPolicy.from_env())
    return ProviderClient(dependency=dependency, base_url=url, breaker=breaker, budget=budget, **kwargs)
