"""The client for ``mercadofresco-catalogo`` (Valkey on ElastiCache; any Redis for local runs).

From the environment, in this order:

- ``REDIS_URL`` (local runs, tests): ``redis://127.0.0.1:6379/0``; ``rediss://`` for TLS.
- ``VALKEY_ENDPOINT`` ``host:port`` (the template's Globals) with TLS on (ElastiCache in-transit
  encryption; ``VALKEY_TLS=false`` to turn it off) and the AUTH token from the secret
  ``VALKEY_SECRET_ARN`` (JSON ``{"token": ...}`` as the template generates it, or a plain string),
  read through Powertools Parameters with a cache of :data:`SECRET_MAX_AGE_S`. The token is
  fetched per *new connection* (a redis-py ``CredentialProvider``), so a rotated token is picked
  up within the cache age without restarting the function.

Timeouts are short on purpose (``VALKEY_SOCKET_TIMEOUT_MS``, default 50 ms): the breaker guards a
call that itself may take seconds, and a slow Valkey must degrade the breaker, not stall the
caller. redis-py's own retries are off (``Retry(NoBackoff(), 0)``): the breaker's degraded mode is
the answer to a Valkey failure, not a second retry layer. Create the client once, at module scope.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import redis

# Every key the layer writes in mercadofresco-catalogo starts with it (breaker, retry budget): one
# prefix for every capability, so an operator can list or clear the project's keys with one pattern.
KEY_PREFIX = "mf:"
SOCKET_TIMEOUT_MS = 50  # in-VPC Valkey answers in ~1 ms; 50x that is "down or overloaded"
CONNECT_TIMEOUT_MS = 200  # TCP + TLS handshake in the same region, with margin for a cold connect
SECRET_MAX_AGE_S = 300  # Powertools' cache: one Secrets Manager call per 5 min per container


def _token_provider(secret_arn: str) -> Any:
    """A redis-py ``CredentialProvider``: the AUTH token from Secrets Manager, asked for on each new connection."""
    from redis.credentials import CredentialProvider

    from mercadofresco.aws import read_secret  # the layer's one cached provider, not one per connection

    class SecretToken(CredentialProvider):
        def get_credentials(self) -> tuple[str]:
            value: Any = read_secret(secret_arn, max_age_s=SECRET_MAX_AGE_S)
            return (_extract_token(value),)

    return SecretToken()


def _extract_token(value: str | bytes) -> str:
    text = value.decode() if isinstance(value, bytes) else str(value)
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, dict):
        for field in ("token", "authToken", "password"):
            if data.get(field):
                return str(data[field])
        raise ValueError("the Valkey secret is JSON without a 'token', 'authToken' or 'password' field")
    return text


def valkey_client(url: str | None = None, *, socket_timeout_ms: int | None = None) -> redis.Redis:
    """A Redis-protocol client for the breaker and the retry budget.

    Parameters
    ----------
    url:
        Overrides ``REDIS_URL``/``VALKEY_ENDPOINT`` (the operator CLI's ``--redis-url``).
    socket_timeout_ms:
        Overrides ``VALKEY_SOCKET_TIMEOUT_MS`` (the operator CLI can afford a second).

    Raises
    ------
    ValueError
        When neither ``REDIS_URL`` nor ``VALKEY_ENDPOINT`` is set, or the endpoint is malformed.
    """
    import redis  # the driver loads with the first client, not with this module (KEY_PREFIX is imported widely)
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    timeout_ms = socket_timeout_ms or int(os.environ.get("VALKEY_SOCKET_TIMEOUT_MS", SOCKET_TIMEOUT_MS))
    common: dict[str, Any] = {
        "socket_timeout": timeout_ms / 1000,
        "socket_connect_timeout": max(timeout_ms, CONNECT_TIMEOUT_MS) / 1000,
        "retry": Retry(NoBackoff(), 0),
        "client_name": "mercadofresco",
    }
    url = url or os.environ.get("REDIS_URL")
    if url:
        return redis.Redis.from_url(url, **common)
    endpoint = os.environ.get("VALKEY_ENDPOINT", "").strip()
    if not endpoint:
        raise ValueError("set REDIS_URL (local) or VALKEY_ENDPOINT host:port (AWS) to reach mercadofresco-catalogo")
    host, _, port = endpoint.rpartition(":") if ":" in endpoint else (endpoint, "", "6379")
    if not host or not port.isdigit():
        raise ValueError(f"VALKEY_ENDPOINT must be host:port, got {endpoint!r}")
    secret_arn = os.environ.get("VALKEY_SECRET_ARN", "").strip()
    tls = os.environ.get("VALKEY_TLS", "true").lower() != "false"
    return redis.Redis(
        host=host,
        port=int(port),
        ssl=tls,
        credential_provider=_token_provider(secret_arn) if secret_arn else None,
        **common,
    )
