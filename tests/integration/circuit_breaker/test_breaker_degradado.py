"""Valkey down or frozen: calls go on under the process-local breaker, within the socket timeout."""

from __future__ import annotations

import time

import pytest
import redis
from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker, Estado
from mercadofresco.errors import CircuitoAbierto
from mercadofresco.valkey import cliente_valkey

pytestmark = pytest.mark.integration

CONFIG = BreakerConfig(fallos_seguidos_local=5, reintento_compartido_s=0.3)


class _Metricas:
    def __init__(self) -> None:
        self.eventos: list[str] = []

    def contar(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        self.eventos.append(nombre)


def _falla() -> None:
    raise TimeoutError("read timed out")


def test_breaker_closed_port_degrades_to_local_within_timeout(redis_privado):
    # GIVEN a breaker whose Valkey is a port nobody listens on
    url = redis_privado.url
    redis_privado.matar()
    metricas = _Metricas()
    breaker = CircuitBreaker("erp", cliente_valkey(url), config=CONFIG, metrics=metricas)
    # WHEN calls are made
    inicio = time.monotonic()
    resultados = [breaker.call(lambda: "ok") for _ in range(20)]
    transcurrido = time.monotonic() - inicio
    # THEN they all went through, quickly, and the metric says the shared state is unavailable
    assert resultados == ["ok"] * 20
    assert transcurrido < 0.5
    assert metricas.eventos == ["EstadoCompartidoNoDisponible"]
    # AND the local breaker still protects the dependency: 5 failures open it
    for _ in range(5):
        with pytest.raises(TimeoutError):
            breaker.call(_falla)
    with pytest.raises(CircuitoAbierto):
        breaker.call(lambda: "no llega")
    assert metricas.eventos == ["EstadoCompartidoNoDisponible", "CircuitoAbierto"]


def test_breaker_frozen_valkey_degrades_and_recovers_shared_state(redis_privado):
    # GIVEN a breaker on a private Valkey that works
    metricas = _Metricas()
    breaker = CircuitBreaker("correo-principal", cliente_valkey(redis_privado.url), config=CONFIG, metrics=metricas)
    assert breaker.call(lambda: "ok") == "ok"
    assert breaker.estado().estado is Estado.CERRADO
    # WHEN the server freezes (SIGSTOP: connections stay open, nothing answers)
    redis_privado.congelar()
    try:
        inicio = time.monotonic()
        assert breaker.call(lambda: "ok") == "ok"
        primera = time.monotonic() - inicio
        inicio = time.monotonic()
        for _ in range(10):
            breaker.call(lambda: "ok")
        siguientes = time.monotonic() - inicio
    finally:
        redis_privado.descongelar()
    # THEN the first call waited one socket timeout (50 ms), the next ones none at all
    assert primera < 0.3
    assert siguientes < 0.05
    assert metricas.eventos == ["EstadoCompartidoNoDisponible"]
    # WHEN Valkey answers again and reintento_compartido_s has passed
    time.sleep(CONFIG.reintento_compartido_s + 0.05)
    for _ in range(3):
        breaker.call(lambda: "ok")
    # THEN the outcomes land in the shared state again
    assert breaker.estado().exitos_ventana >= 3


def test_breaker_reloads_script_after_noscript(redis_privado):
    # GIVEN a breaker that has already loaded its script
    cliente = redis.Redis.from_url(redis_privado.url)
    breaker = CircuitBreaker("pasarela", cliente, config=CONFIG, metrics=_Metricas())
    breaker.call(lambda: "ok")
    # WHEN the server forgets every script (failover, SCRIPT FLUSH)
    cliente.script_flush()
    # THEN the next call reloads it and the state is intact (shared, not degraded)
    assert breaker.call(lambda: "ok") == "ok"
    assert breaker.estado().exitos_ventana == 2
