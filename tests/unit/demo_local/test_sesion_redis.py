"""Each local run has a Redis of its own: two runs at once never decide each other's breakers."""

from __future__ import annotations

import pytest
from mercadofresco_local.sesion import redis_propio


@pytest.fixture
def sin_bd_compartida(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MF_DEMO_REDIS_DB", raising=False)


@pytest.mark.usefixtures("sin_bd_compartida")
def test_redis_propio_by_default_a_run_starts_its_own_server() -> None:
    # GIVEN a machine with redis-server (this one) and no shared database asked for
    # WHEN a scenario or the chaos scenario starts  THEN each starts a redis-server of its own
    assert redis_propio(caos=False) and redis_propio(caos=True)


def test_redis_propio_a_named_shared_database_is_used_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN MF_DEMO_REDIS_DB naming a database of the shared server
    monkeypatch.setenv("MF_DEMO_REDIS_DB", "13")
    # WHEN a scenario starts  THEN it uses that database; the chaos scenario still freezes a server of its own
    assert not redis_propio(caos=False)
    assert redis_propio(caos=True)


@pytest.mark.usefixtures("sin_bd_compartida")
def test_redis_propio_without_a_redis_server_binary_the_shared_server_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    # GIVEN no redis-server on PATH (Redis in a container, say)  WHEN a scenario starts  THEN it shares the server
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not redis_propio(caos=False)
