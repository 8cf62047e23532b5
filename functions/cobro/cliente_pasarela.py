"""The payment gateway's client, built the same way for both engines of the order workflow.

The charge function (``app.py``) and the durable order saga (``functions/pedido_durable``, which
ships this module next to its own) call the gateway through one :class:`ClientePasarela`: its URL
from ``PASARELA_URL``, its API key from the Secrets Manager secret ``PASARELA_SECRET_ARN`` (cached
by Powertools Parameters; none configured: no key, for local runs), its timeouts from
``PASARELA_CONNECT_TIMEOUT_S`` / ``PASARELA_READ_TIMEOUT_S``, the breaker and retry budget
``pasarela`` in Valkey.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from mercadofresco import aws
from mercadofresco.dominio.errores import PasarelaNoDisponible
from mercadofresco.http import client_from_env
from mercadofresco.http.auth import BearerAuth
from mercadofresco.retry import RetryPolicy

if TYPE_CHECKING:
    from aws_lambda_powertools import Metrics
    from mercadofresco.http import ProviderClient

SECRET_MAX_AGE_S = 300  # one Secrets Manager call per 5 min per container; a rotated key is seen within it


class ClientePasarela:
    """``cliente()``: the gateway client for the current API key (the secret may rotate), one per key.

    Built at the handler's import, which is when its configuration is read (the project's rule): each
    handler module (a cold start) reads its own, whatever an earlier one in the process read.
    """

    def __init__(self, metrics: Metrics | None = None) -> None:
        self._metrics = metrics  # LatenciaProveedor per attempt: the gateway's p99 alarm reads it
        self._read_timeout_s = float(os.environ.get("PASARELA_READ_TIMEOUT_S", "10"))
        self._connect_timeout_s = float(os.environ.get("PASARELA_CONNECT_TIMEOUT_S", "2"))
        self._secreto_arn = os.environ.get("PASARELA_SECRET_ARN", "").strip()  # the API key's secret; none: no key
        self._por_clave = lru_cache(maxsize=2)(self._crear)

    def __call__(self) -> ProviderClient:
        if not self._secreto_arn:
            return self._por_clave("")
        secreto: Any = aws.read_secret(self._secreto_arn, max_age_s=SECRET_MAX_AGE_S)
        try:
            clave_api = json.loads(secreto)["api_key"]
        except (ValueError, TypeError, KeyError):
            clave_api = str(secreto)  # a plain-string secret is the key itself
        return self._por_clave(clave_api)

    def _crear(self, clave_api: str) -> ProviderClient:
        return client_from_env(
            "pasarela",
            "PASARELA_URL",
            unavailable_error=PasarelaNoDisponible,
            retry=RetryPolicy.from_env(),  # HTTP_MAX_ATTEMPTS: docs/worst-case-attempts.md counts it
            connect_timeout_s=self._connect_timeout_s,
            read_timeout_s=self._read_timeout_s,
            auth=BearerAuth(clave_api) if clave_api else None,  # a sandbox behind AWS_IAM signs instead
            metrics=self._metrics,
        )
