"""functions/pedido_durable loaded as Lambda loads it, with no backend: nothing here makes a call."""

from __future__ import annotations

from typing import Any

import pytest

# Every variable the saga reads (configuracion.VARIABLES), pointing nowhere: a call would fail loudly.
ENTORNO = {
    "TABLA_IDEMPOTENCIA": "mercadofresco-idempotencia",
    "PASARELA_URL": "http://127.0.0.1:9",
    "PASARELA_SECRET_ARN": "",
    "IDEMPOTENCY_LEASE_S": "100",
    "RECLAMO_LEASE_S": "7500",
    "RECONSULTA_WAIT_S": "130",
    "COLA_STOCK_URL": "http://127.0.0.1:9/cola-stock.fifo",
    "COLA_PEDIDOS_URL": "http://127.0.0.1:9/cola-pedidos",
    "COLA_PEDIDOS_FALLIDOS_URL": "http://127.0.0.1:9/pedidos-fallidos",
    "TEMA_PEDIDO_CONFIRMADO_ARN": "arn:aws:sns:eu-south-2:123456789012:mercadofresco-pedido-confirmado",
    "EVENT_BUS_NAME": "bus-mercadofresco",
    "AWS_LAMBDA_FUNCTION_NAME": "mercadofresco-pedido-durable",
}


@pytest.fixture
def durable(app_module: Any) -> Any:
    """The function's ``app`` module; its siblings (``saga``, ``reintentos``...) importable by name meanwhile."""
    return app_module("pedido_durable", **ENTORNO)
