"""boto3 clients built with the project's SDK policy, in one place.

The lesson's rule: one retry layer governs (the workflow's ``Retry``, or the queue's
redelivery); the SDK only absorbs instantaneous network blips, so it stays at the
lesson's ``max_attempts=2`` in ``standard`` mode, with explicit timeouts far below any
function's timeout. Every client in the project comes from :func:`client`.

Beware the unit: in a botocore ``Config``, ``retries["max_attempts"]`` counts *retries*
(botocore reports ``total_max_attempts = 3``), whereas ``AWS_MAX_ATTEMPTS`` and the
shared config file count attempts. The worst-case tables use
:data:`SDK_TOTAL_ATTEMPTS`, the number botocore really makes.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from mercadofresco.process_cache import per_environment

if TYPE_CHECKING:
    from botocore.client import BaseClient

__all__ = [
    "ENV_SDK_READ_TIMEOUT_S",
    "SDK_CONFIG",
    "SDK_CONNECT_TIMEOUT_S",
    "SDK_MAX_ATTEMPTS",
    "SDK_READ_TIMEOUT_S",
    "SDK_TOTAL_ATTEMPTS",
    "SECRET_MAX_AGE_S",
    "cached_client",
    "client",
    "read_secret",
    "region",
]


SDK_MAX_ATTEMPTS = 2  # the lesson's setting, as botocore's Config reads it: retries
SDK_TOTAL_ATTEMPTS = SDK_MAX_ATTEMPTS + 1  # what botocore makes per API call, first included
SDK_CONNECT_TIMEOUT_S = 2
SDK_READ_TIMEOUT_S = 5
# Set by the local run only, never by the template: there moto answers from the same process as
# every handler and poller, and on a loaded machine a call can wait for the GIL past 5 s, a
# timeout no AWS endpoint would cause (mercadofresco_local.sesion). Read at each client().
ENV_SDK_READ_TIMEOUT_S = "SDK_READ_TIMEOUT_S"

SDK_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": SDK_MAX_ATTEMPTS},
    connect_timeout=SDK_CONNECT_TIMEOUT_S,
    read_timeout=SDK_READ_TIMEOUT_S,
    tcp_keepalive=True,
)


def client(service: str, **kwargs: Any) -> BaseClient:
    """Return a boto3 client for ``service`` with the project's retry and timeout policy.

    ``AWS_ENDPOINT_URL`` (honoured by botocore itself) points every client at moto's
    server for the local run, and ``SDK_READ_TIMEOUT_S`` (:data:`ENV_SDK_READ_TIMEOUT_S`,
    the local run only) lengthens the read timeout there; extra keyword arguments override
    per call.
    """
    config = kwargs.pop("config", None)
    merged = SDK_CONFIG
    if read_timeout_s := os.environ.get(ENV_SDK_READ_TIMEOUT_S):
        merged = merged.merge(Config(read_timeout=float(read_timeout_s)))
    if config is not None:
        merged = merged.merge(config)
    return boto3.client(service, config=merged, **kwargs)


@per_environment
def cached_client(service: str) -> BaseClient:
    """A module-lifetime client, reused across warm invocations (created on first use)."""
    return client(service)


SECRET_MAX_AGE_S = 300  # one Secrets Manager call per secret per 5 min per container; a rotation is seen within it


@per_environment
def _secrets_provider() -> Any:
    from aws_lambda_powertools.utilities.parameters import SecretsProvider  # imported on first secret only

    return SecretsProvider(boto3_client=cached_client("secretsmanager"))


def read_secret(arn: str, *, transform: str | None = None, max_age_s: int = SECRET_MAX_AGE_S) -> Any:
    """A Secrets Manager value, through the layer's one Powertools provider (so its cache really is shared).

    ``transform="json"`` decodes a JSON secret. Values are cached ``max_age_s`` per process.
    """
    return _secrets_provider().get(arn, transform=transform, max_age=max_age_s)


def region() -> str:
    """The region Lambda (or the local run) says we are in."""
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "eu-south-2"
