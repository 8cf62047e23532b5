"""The shared HTTP client for external providers: :class:`ClienteProveedor` (see ``cliente``)."""

from __future__ import annotations

from mercadofresco.http.cliente import ClienteProveedor, Respuesta
from mercadofresco.retry.politica import MAX_ATTEMPTS_HTTP

__all__ = ["MAX_ATTEMPTS_HTTP", "ClienteProveedor", "Respuesta"]
