"""The retry budget with Valkey closed: a fresh container still retries, the fleet stays bounded.

Each "Lambda" is its own :class:`RetryBudget` built the way the handlers build it
(:meth:`RetryBudget.from_env`, the template's ``RETRY_BUDGET_MAX_INSTANCES``), against a private
redis-server that was stopped: every script call fails with a connection error, as with Valkey closed.
"""

from __future__ import annotations

import shutil
import threading
from typing import TYPE_CHECKING

import pytest
import redis
from mercadofresco.retry import RetryBudget
from mercadofresco.retry.budget import DEFAULT_CAPACITY, DEFAULT_RATIO, MAX_INSTANCES_ENV
from sam_emulator.private_redis import PrivateRedis
from sam_emulator.template import Template

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

LLAMADAS_POR_INSTANCIA = 200


@pytest.fixture(scope="module")
def valkey_cerrado() -> Iterator[str]:
    """The URL of a redis-server that answered once and is now stopped (Valkey closed)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server binary not installed")
    servidor = PrivateRedis().start()
    url = servidor.url
    servidor.stop()
    yield url


def _instancia(url: str, monkeypatch: pytest.MonkeyPatch, max_instancias: str) -> RetryBudget:
    """A fresh container's budget, as the handler builds it from its environment."""
    monkeypatch.setenv(MAX_INSTANCES_ENV, max_instancias)
    return RetryBudget.from_env("pasarela", redis.Redis.from_url(url, socket_connect_timeout=5))


def _maximos_de_la_plantilla() -> dict[str, int]:
    """Function -> RETRY_BUDGET_MAX_INSTANCES as deployed with the parameters' defaults."""
    p = Template()
    defectos = {k: str(v.get("Default", "")) for k, v in p.doc["Parameters"].items()}
    p = Template(parameters=defectos)
    return {
        lid: int(p.resolve(v[MAX_INSTANCES_ENV]))
        for lid, r in p.of_type("AWS::Serverless::Function").items()
        if MAX_INSTANCES_ENV in (v := (r["Properties"].get("Environment") or {}).get("Variables") or {})
    }


MAXIMOS = _maximos_de_la_plantilla()


def test_fresh_container_with_valkey_closed_retries_its_first_transient_error(
    valkey_cerrado: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a container just started (one of 10 at most) while Valkey is closed
    budget = _instancia(valkey_cerrado, monkeypatch, "10")
    # WHEN its first call fails with a transient error
    budget.record_call()
    # THEN it may retry it (an empty fallback refused it: PresupuestoReintentosAgotado)
    assert budget.allow_retry() is True


@pytest.mark.parametrize(("funcion", "n"), sorted(MAXIMOS.items()))
def test_fleet_of_fresh_containers_with_valkey_closed_retries_within_floor_plus_ten_percent(
    valkey_cerrado: str, monkeypatch: pytest.MonkeyPatch, funcion: str, n: int
) -> None:
    # GIVEN as many fresh containers as the function may run at once (the template's value), Valkey closed
    instancias = [_instancia(valkey_cerrado, monkeypatch, str(n)) for _ in range(n)]
    concedidos = [0] * n
    primeros = [False] * n
    salida = threading.Barrier(n)

    def contenedor(i: int) -> None:
        salida.wait()
        for llamada in range(LLAMADAS_POR_INSTANCIA):
            instancias[i].record_call()
            concedido = instancias[i].allow_retry()
            concedidos[i] += concedido
            if llamada == 0:
                primeros[i] = concedido

    # WHEN every call of every container fails at once and asks for its retry
    hilos = [threading.Thread(target=contenedor, args=(i,)) for i in range(n)]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join()
    llamadas = n * LLAMADAS_POR_INSTANCIA
    # THEN the fleet retried at most the floor + 10 % of its calls, as the shared bucket allows
    assert sum(concedidos) <= DEFAULT_CAPACITY + DEFAULT_RATIO * llamadas, funcion
    # AND it was not refused everything: each container's own 10 % came through
    assert sum(concedidos) >= DEFAULT_RATIO * llamadas - n, funcion
    # AND each container retried its very first failure when its share is a whole token
    assert all(primeros) == (DEFAULT_CAPACITY / n >= 1), (funcion, n, primeros)
