"""The provider client wired from the environment (no network: clients connect lazily)."""

from __future__ import annotations

import pytest
from mercadofresco.http import client_from_env


def test_client_from_env_without_url_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ERP_URL", raising=False)
    with pytest.raises(ValueError) as info:
        client_from_env("erp", "ERP_URL", redis_client=None)
    assert "ERP_URL" in str(info.value)


def test_client_from_env_builds_client_with_breaker_for_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the URL and a Valkey URL (the client connects lazily: nothing is reached here)
    monkeypatch.setenv("ERP_URL", "http://127.0.0.1:9/api/")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:9/0")
    # WHEN
    cliente = client_from_env("erp", "ERP_URL", prefix="test:x:")
    # THEN
    assert (cliente.dependency, cliente.base_url) == ("erp", "http://127.0.0.1:9/api")
    assert cliente.breaker.key == "test:x:circuito:erp"
