"""The operator command ``mf-circuito`` on the real Redis: read, force open, close; clear failures."""

from __future__ import annotations

import pytest
import redis
from mercadofresco.circuit_breaker import BreakerState, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto
from mercadofresco_ops.circuito import SALIDA_CONFIG, SALIDA_OK, SALIDA_USO, SALIDA_VALKEY, main

from tests.conftest import RelojPrueba

pytestmark = pytest.mark.integration


def test_mf_circuito_abrir_stops_calls_and_cerrar_restores(redis_url, redis_prefix, capsys):
    # GIVEN a Lambda's breaker on the same key (its view's age on a clock the test moves)
    reloj = RelojPrueba()
    breaker = CircuitBreaker("pasarela", redis.Redis.from_url(redis_url), prefix=redis_prefix, clock=reloj)
    base = ["--redis-url", redis_url, "--prefijo", redis_prefix]
    # WHEN the operator forces the gateway's breaker open
    assert main([*base, "abrir", "pasarela"]) == SALIDA_OK
    # THEN every process's calls fail fast
    with pytest.raises(CircuitoAbierto):
        breaker.call(lambda: "no llega")
    assert main([*base, "estado", "pasarela", "erp"]) == SALIDA_OK
    salida = capsys.readouterr().out.splitlines()
    assert salida[-2].startswith("pasarela: forzado_abierto")
    assert salida[-1].startswith("erp: cerrado")
    # WHEN it closes it again
    assert main([*base, "cerrar", "pasarela"]) == SALIDA_OK
    # THEN, once the process's view of the state is cache_max_age_s old, calls go through, automatic and closed
    reloj.avanzar(breaker.config.cache_max_age_s)
    assert breaker.call(lambda: "ok") == "ok"
    assert breaker.state().state is BreakerState.CERRADO


def test_mf_circuito_valkey_unreachable_one_line_error_exit_3(capsys):
    codigo = main(["--redis-url", "redis://127.0.0.1:1/0", "abrir", "pasarela"])
    error = capsys.readouterr().err
    assert codigo == SALIDA_VALKEY
    assert error.count("\n") == 1
    assert "Valkey no responde" in error
    assert "Traceback" not in error


def test_mf_circuito_without_configuration_exit_4(monkeypatch, capsys):
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("VALKEY_ENDPOINT", raising=False)
    assert main(["estado", "pasarela"]) == SALIDA_CONFIG
    assert "VALKEY_ENDPOINT" in capsys.readouterr().err


def test_mf_circuito_bad_usage_exit_2():
    with pytest.raises(SystemExit) as info:
        main(["abrir"])
    assert info.value.code == SALIDA_USO
