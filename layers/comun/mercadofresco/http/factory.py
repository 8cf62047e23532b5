"""The provider client wired from the environment: one way for every function (charge, ERP, e-mail).

A :class:`~mercadofresco.http.ProviderClient` behind the dependency's shared breaker and
retry budget (both in Valkey), its base URL from an environment variable, the breaker's periods
from ``BREAKER_*`` where set (:meth:`~mercadofresco.circuit_breaker.BreakerConfig.from_env`).

How a request is authenticated is configuration too: ``<URL variable>_AUTH=AWS_IAM`` (set by the
template only where the stack plays that provider itself, a ``simulador-*`` function URL) signs every
attempt with SigV4 (:class:`~mercadofresco.http.auth.FunctionUrlSigV4`); otherwise the caller's own
``auth`` (the gateway's API key), or none.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import redis

    from mercadofresco.circuit_breaker import BreakerConfig
    from mercadofresco.http.auth import RequestAuth
    from mercadofresco.http.client import ProviderClient

__all__ = ["client_from_env", "request_auth_from_env"]


def request_auth_from_env(variable_url: str, auth: RequestAuth | None = None) -> RequestAuth | None:
    """The authentication ``$<variable_url>_AUTH`` selects: ``AWS_IAM`` signs; empty or unset keeps ``auth``.

    A sandbox provider takes no API key: behind ``AWS_IAM``, the signature replaces whatever ``auth`` was.
    """
    from mercadofresco.http.auth import AUTH_IAM, FunctionUrlSigV4

    mode = os.environ.get(f"{variable_url}_AUTH", "").strip()
    if not mode:
        return auth
    if mode != AUTH_IAM:
        raise ValueError(f"{variable_url}_AUTH is {mode!r}: only {AUTH_IAM} (or empty) is known")
    return FunctionUrlSigV4()


def client_from_env(
    dependency: str,
    variable_url: str,
    *,
    redis_client: redis.Redis | None = None,
    config: BreakerConfig | None = None,
    auth: RequestAuth | None = None,
    **kwargs: Any,
) -> ProviderClient:
    """The provider client for ``dependency`` at ``$variable_url``, with its shared breaker and budget.

    ``redis_client`` defaults to :func:`mercadofresco.valkey.valkey_client` (the breaker's
    and budget's shared state), ``config`` to the environment's; ``auth`` is how a real provider is authenticated (see
    :func:`request_auth_from_env`). Tests pass ``clock`` (the breaker's and the budget's) and ``prefix`` (private
    Valkey keys); any other keyword (``sleep``, ``rng``, timeouts) goes to ``ProviderClient``.
    """
    from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker
    from mercadofresco.http.client import ProviderClient
    from mercadofresco.retry import RetryBudget, RetryPolicy

    url = os.environ.get(variable_url, "").strip()
    if not url:
        raise ValueError(f"environment variable {variable_url} (base URL of {dependency}) is not set")
    if redis_client is None:
        from mercadofresco.valkey import valkey_client

        redis_client = valkey_client()
    clock = kwargs.pop("clock", None)
    prefix = kwargs.pop("prefix", None)
    prefix_kwargs = {"prefix": prefix} if prefix else {}
    config = config or BreakerConfig.from_env()
    breaker = CircuitBreaker(dependency, redis_client, config=config, clock=clock, **prefix_kwargs)
    # The budget ages its pending deposits on the same clock as the breaker.
    budget_clock = {"clock": clock} if clock is not None else {}
    budget = RetryBudget.from_env(dependency, redis_client, **prefix_kwargs, **budget_clock)
    kwargs.setdefault("retry", RetryPolicy.from_env())
    return ProviderClient(
        dependency=dependency,
        base_url=url,
        breaker=breaker,
        budget=budget,
        auth=request_auth_from_env(variable_url, auth),
        **kwargs,
    )
