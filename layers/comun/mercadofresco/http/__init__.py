"""The shared HTTP client for external providers: :class:`ProviderClient` (see ``client``), and
:func:`client_from_env`, which wires one to its URL, shared breaker and retry budget."""

from __future__ import annotations

from mercadofresco.http.client import ProviderClient, ProviderResponse
from mercadofresco.http.factory import client_from_env
from mercadofresco.retry.policy import MAX_ATTEMPTS_HTTP

__all__ = ["MAX_ATTEMPTS_HTTP", "ProviderClient", "ProviderResponse", "client_from_env"]
