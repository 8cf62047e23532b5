"""What a provider's answer means to a consumer, and the client's wiring from the environment."""

from __future__ import annotations

import pytest
from mercadofresco.consumer import InvalidMessageError
from mercadofresco.consumer.providers import accepted
from mercadofresco.dlq import DlqReason
from mercadofresco.http import ProviderResponse


@pytest.mark.parametrize("status", [200, 201, 202, 409])
def test_aceptado_2xx_and_409_return_body(status: int) -> None:
    assert accepted(ProviderResponse(status, {"ok": True}), "erp") == {"ok": True}


@pytest.mark.parametrize("status", [400, 404, 422])
def test_aceptado_other_4xx_is_permanent_data_error(status: int) -> None:
    # WHEN the provider refuses this message
    with pytest.raises(InvalidMessageError) as info:
        accepted(ProviderResponse(status, {"error": "peticion_invalida"}), "correo-principal")
    # THEN it is bad data for the DLQ, naming the provider and its answer
    assert info.value.reason is DlqReason.DATO_INVALIDO
    assert "correo-principal" in info.value.detail and str(status) in info.value.detail
