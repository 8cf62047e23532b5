"""What a provider's answer means to a consumer, and the client's wiring from the environment."""

from __future__ import annotations

import pytest
from mercadofresco.consumer import MensajeInvalido
from mercadofresco.consumer.proveedores import aceptado, cliente_desde_env
from mercadofresco.dlq import Motivo
from mercadofresco.http import Respuesta


@pytest.mark.parametrize("status", [200, 201, 202, 409])
def test_aceptado_2xx_and_409_return_body(status: int) -> None:
    assert aceptado(Respuesta(status, {"ok": True}), "erp") == {"ok": True}


@pytest.mark.parametrize("status", [400, 404, 422])
def test_aceptado_other_4xx_is_permanent_data_error(status: int) -> None:
    # WHEN the provider refuses this message
    with pytest.raises(MensajeInvalido) as info:
        aceptado(Respuesta(status, {"error": "peticion_invalida"}), "correo-principal")
    # THEN it is bad data for the DLQ, naming the provider and its answer
    assert info.value.motivo is Motivo.DATO_INVALIDO
    assert "correo-principal" in info.value.detalle and str(status) in info.value.detalle


def test_cliente_desde_env_without_url_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ERP_URL", raising=False)
    with pytest.raises(ValueError) as info:
        cliente_desde_env("erp", "ERP_URL", redis_client=None)
    assert "ERP_URL" in str(info.value)


def test_cliente_desde_env_builds_client_with_breaker_for_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the URL and a Valkey URL (the client connects lazily: nothing is reached here)
    monkeypatch.setenv("ERP_URL", "http://127.0.0.1:9/api/")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:9/0")
    # WHEN
    cliente = cliente_desde_env("erp", "ERP_URL", prefijo="test:x:")
    # THEN
    assert (cliente.dependencia, cliente.base_url) == ("erp", "http://127.0.0.1:9/api")
    assert cliente.breaker.clave == "test:x:circuito:erp"
