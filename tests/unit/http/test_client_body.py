"""How a provider's body becomes the dict the caller maps (no network)."""

from __future__ import annotations

import pytest
from mercadofresco.http import ProviderClient, ProviderResponse
from mercadofresco.http.client import BODY_TEXT_MAX_CHARS, body_of


@pytest.mark.parametrize(
    ("crudo", "esperado"),
    [
        (b"", {}),
        (b'{"motivo": "fondos insuficientes"}', {"motivo": "fondos insuficientes"}),
        (b"[1, 2]", {"datos": [1, 2]}),
        (b"<html>502 Bad Gateway</html>", {"texto": "<html>502 Bad Gateway</html>"}),
        (b"\xff\xfe", {"texto": "\ufffd\ufffd"}),
    ],
)
def test_cuerpo_any_body_becomes_a_dict(crudo: bytes, esperado: dict) -> None:
    assert body_of(crudo) == esperado


def test_cuerpo_long_text_truncated() -> None:
    assert len(body_of(b"x" * 5000)["texto"]) == BODY_TEXT_MAX_CHARS


def test_provider_response_unpacks_as_status_and_body() -> None:
    status, cuerpo = ProviderResponse(402, {"motivo": "x"})
    assert (status, cuerpo) == (402, {"motivo": "x"})


def test_cliente_strips_trailing_slash_and_defaults_to_two_attempts() -> None:
    cliente = ProviderClient(dependency="erp", base_url="http://erp.local/")
    assert cliente.base_url == "http://erp.local"
    assert cliente.retry.max_attempts == 2
