"""Valkey down or frozen: calls go on under the process-local breaker after one attempt (timings: bench/)."""

from __future__ import annotations

import pytest
import redis
from mercadofresco.circuit_breaker import BreakerConfig, BreakerState, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto
from mercadofresco.valkey import valkey_client

pytestmark = pytest.mark.integration

CONFIG = BreakerConfig(local_consecutive_failures=5, shared_retry_s=0.3)


class _Metricas:
    def __init__(self) -> None:
        self.eventos: list[str] = []

    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        self.eventos.append(nombre)


def _falla() -> None:
    raise TimeoutError("read timed out")


def _contar_viajes(cliente: redis.Redis) -> list[int]:
    """Count the script calls the breaker sends (one ``EVALSHA`` per round trip it tries)."""
    viajes = [0]
    original = cliente.evalsha

    def evalsha(*args, **kwargs):
        viajes[0] += 1
        return original(*args, **kwargs)

    cliente.evalsha = evalsha
    return viajes


def test_breaker_closed_port_degrades_to_local_after_one_attempt(redis_privado, reloj):
    # GIVEN a breaker whose Valkey is a port nobody listens on (its degraded mode on the test's clock)
    url = redis_privado.url
    redis_privado.kill()
    metricas = _Metricas()
    cliente = valkey_client(url)
    viajes = _contar_viajes(cliente)
    breaker = CircuitBreaker("erp", cliente, config=CONFIG, metrics=metricas, clock=reloj)
    # WHEN calls are made
    resultados = [breaker.call(lambda: "ok") for _ in range(20)]
    # THEN they all went through, Valkey was tried once (not once per call: a dead Valkey costs one
    # timeout per shared_retry_s), and the metric says the shared state is unavailable
    assert resultados == ["ok"] * 20
    assert viajes == [1]
    assert metricas.eventos == ["EstadoCompartidoNoDisponible"]
    # AND the local breaker still protects the dependency: 5 failures open it
    for _ in range(5):
        with pytest.raises(TimeoutError):
            breaker.call(_falla)
    with pytest.raises(CircuitoAbierto):
        breaker.call(lambda: "no llega")
    assert metricas.eventos == ["EstadoCompartidoNoDisponible", "CircuitoAbierto"]


def test_breaker_frozen_valkey_degrades_and_recovers_shared_state(redis_privado, reloj):
    # GIVEN a breaker on a private Valkey that works
    metricas = _Metricas()
    cliente = valkey_client(redis_privado.url)
    breaker = CircuitBreaker("correo-principal", cliente, config=CONFIG, metrics=metricas, clock=reloj)
    assert breaker.call(lambda: "ok") == "ok"
    assert breaker.state().state is BreakerState.CERRADO
    viajes = _contar_viajes(cliente)
    # WHEN the server freezes (SIGSTOP: connections stay open, nothing answers)
    redis_privado.freeze()
    try:
        primera = breaker.call(lambda: "ok")
        siguientes = [breaker.call(lambda: "ok") for _ in range(10)]
    finally:
        redis_privado.thaw()
    # THEN the first call tried Valkey once (one socket timeout), the next ones not at all
    assert primera == "ok" and siguientes == ["ok"] * 10
    assert viajes == [1]
    assert metricas.eventos == ["EstadoCompartidoNoDisponible"]
    # WHEN Valkey answers again and shared_retry_s has passed
    reloj.avanzar(CONFIG.shared_retry_s)
    for _ in range(3):
        breaker.call(lambda: "ok")
    # THEN the outcomes land in the shared state again
    assert breaker.state().window_successes >= 3


def test_breaker_reloads_script_after_noscript(redis_privado):
    # GIVEN a breaker that has already loaded its script
    cliente = redis.Redis.from_url(redis_privado.url)
    breaker = CircuitBreaker("pasarela", cliente, config=CONFIG, metrics=_Metricas())
    breaker.call(lambda: "ok")
    # WHEN the server forgets every script (failover, SCRIPT FLUSH)
    cliente.script_flush()
    # THEN the next call reloads it and the state is intact (shared, not degraded)
    assert breaker.call(lambda: "ok") == "ok"
    assert breaker.state().window_successes == 2
