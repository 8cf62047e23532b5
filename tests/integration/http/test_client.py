"""ProviderClient against a real loopback HTTP server (and the real Redis for breaker/budget)."""

from __future__ import annotations

import random
import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
import redis
from mercadofresco.circuit_breaker import BreakerConfig, BreakerState, CircuitBreaker
from mercadofresco.dominio.errores import PasarelaNoDisponible
from mercadofresco.errors import CircuitoAbierto, PresupuestoReintentosAgotado, ResultadoDesconocido
from mercadofresco.http import MAX_ATTEMPTS_HTTP, ProviderClient
from mercadofresco.retry import FullJitterBackoff, RetryBudget, RetryPolicy

pytestmark = pytest.mark.integration


class MetricsSink:
    def __init__(self) -> None:
        self.eventos: list[tuple[str, str]] = []
        self.latencias: list[tuple[str, str, float]] = []

    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        self.eventos.append((nombre, dependencia))

    def measure_ms(self, nombre: str, dependencia: str, valor_ms: float) -> None:
        self.latencias.append((nombre, dependencia, valor_ms))


def _cliente(url: str, esperas: list[float], **kwargs) -> ProviderClient:
    opciones = {
        "dependency": "pasarela",
        "base_url": url,
        "retry": RetryPolicy(backoff=FullJitterBackoff(base_s=0.2, cap_s=2.0)),
        "connect_timeout_s": 0.5,
        "read_timeout_s": 3.0,  # held answers never come; a loopback answer comes well within it
        "unavailable_error": PasarelaNoDisponible,
        "metrics": MetricsSink(),
        "rng": random.Random(7),
        "sleep": esperas.append,
    }
    return ProviderClient(**{**opciones, **kwargs})


def test_post_success_sends_idempotency_key_once(proveedor):
    # GIVEN a gateway that accepts the charge
    proveedor.responder(201, {"referencia_cobro": "ch_1"})
    esperas: list[float] = []
    # WHEN the client posts with the operation's key
    status, cuerpo = _cliente(proveedor.url, esperas).post(
        "/cobros", json={"importe": 4820}, idempotency_key="cobro:PED-1", idempotent=True
    )
    # THEN one request carried the key and the JSON body, and the answer came back
    assert (status, cuerpo) == (201, {"referencia_cobro": "ch_1"})
    [peticion] = proveedor.peticiones
    assert peticion["cabeceras"]["Idempotency-Key"] == "cobro:PED-1"
    assert peticion["cuerpo"] == b'{"importe":4820}'
    assert esperas == []


def test_post_business_4xx_returned_not_retried(proveedor):
    proveedor.responder(402, {"motivo": "fondos insuficientes"})
    esperas: list[float] = []
    respuesta = _cliente(proveedor.url, esperas).post("/cobros", json={}, idempotency_key="cobro:PED-2")
    # THEN the caller gets the business answer to map (CobroRechazado), after a single request
    assert respuesta == (402, {"motivo": "fondos insuficientes"})
    assert respuesta.status == 402
    assert len(proveedor.peticiones) == 1
    assert esperas == []


def test_post_503_then_200_retried_once_with_jitter_and_counted(proveedor):
    proveedor.responder(503)
    proveedor.responder(200, {"ok": True})
    esperas: list[float] = []
    metricas = MetricsSink()
    respuesta = _cliente(proveedor.url, esperas, metrics=metricas).post("/cobros", json={}, idempotent=True)
    # THEN the second attempt succeeded after a full-jitter wait in [0, base]
    assert respuesta == (200, {"ok": True})
    assert len(proveedor.peticiones) == 2
    [espera] = esperas
    assert 0 <= espera <= 0.2
    assert metricas.eventos == [("Reintentos", "pasarela")]
    # AND each attempt's latency went to the metric the gateway's p99 alarm reads (issue 15)
    assert [(n, d) for n, d, _ in metricas.latencias] == [("LatenciaProveedor", "pasarela")] * 2
    assert all(ms >= 0 for _, _, ms in metricas.latencias)


def test_post_503_every_time_raises_after_max_attempts(proveedor):
    for _ in range(5):
        proveedor.responder(503)
    esperas: list[float] = []
    with pytest.raises(PasarelaNoDisponible) as info:
        _cliente(proveedor.url, esperas).post("/cobros", json={}, idempotent=True)
    # THEN exactly MAX_ATTEMPTS_HTTP requests were made, and the error says so
    assert len(proveedor.peticiones) == MAX_ATTEMPTS_HTTP == 2
    assert info.value.attempts == 2
    assert "HTTP 503" in str(info.value)


@pytest.mark.parametrize("retry_after", ["3", "Thu, 01 Jan 2099 00:00:00 GMT"])
def test_post_429_honours_retry_after_or_gives_up_when_too_long(proveedor, retry_after):
    proveedor.responder(429, retry_after=retry_after)
    esperas: list[float] = []
    cliente = _cliente(proveedor.url, esperas)
    if retry_after == "3":
        # THEN a short Retry-After is waited exactly, then the retry succeeds
        assert cliente.post("/cobros", json={}, idempotent=True).status == 200
        assert esperas == [3.0]
    else:
        # THEN a Retry-After beyond the bound is not slept inside the Lambda: fail now
        with pytest.raises(PasarelaNoDisponible, match="Retry-After above the limit"):
            cliente.post("/cobros", json={}, idempotent=True)
        assert esperas == []
        assert len(proveedor.peticiones) == 1


def test_post_read_timeout_non_idempotent_is_unknown_outcome_not_retried(proveedor):
    # GIVEN a gateway that does not answer within the read timeout (it may well have charged)
    proveedor.retener()
    esperas: list[float] = []
    # WHEN a non-idempotent POST times out reading
    with pytest.raises(ResultadoDesconocido, match="reconcile"):
        _cliente(proveedor.url, esperas).post("/cobros", json={}, idempotent=False)
    # THEN it was not sent again
    assert len(proveedor.peticiones) == 1
    assert esperas == []


def test_post_read_timeout_idempotent_is_retried(proveedor):
    proveedor.retener()
    esperas: list[float] = []
    respuesta = _cliente(proveedor.url, esperas).post("/cobros", json={}, idempotency_key="k", idempotent=True)
    assert respuesta.status == 200
    assert len(proveedor.peticiones) == 2
    assert proveedor.peticiones[1]["cabeceras"]["Idempotency-Key"] == "k"


def test_post_connection_reset_is_retried(proveedor):
    proveedor.cortar()
    esperas: list[float] = []
    assert _cliente(proveedor.url, esperas).post("/cobros", json={}, idempotent=True).status == 200
    assert len(proveedor.peticiones) == 2
    assert len(esperas) == 1


def test_post_connection_refused_raises_pasarela_no_disponible():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        puerto = s.getsockname()[1]  # closed as soon as the block ends: nobody listens
    esperas: list[float] = []
    with pytest.raises(PasarelaNoDisponible, match="2 attempt"):
        _cliente(f"http://127.0.0.1:{puerto}", esperas).post("/cobros", json={}, idempotent=True)
    assert len(esperas) == 1


def test_post_non_json_error_body_kept_as_text(proveedor):
    proveedor.responder(404, crudo=b"<html>no existe</html>")
    assert _cliente(proveedor.url, []).get("/cobros/x") == (404, {"texto": "<html>no existe</html>"})


def test_post_budget_spent_fails_fast_without_retry(proveedor, redis_url, redis_prefix):
    # GIVEN a shared budget already spent
    budget = RetryBudget("pasarela", redis.Redis.from_url(redis_url), prefix=redis_prefix, capacity=1)
    assert budget.allow_retry()
    proveedor.responder(503)
    esperas: list[float] = []
    # WHEN the call fails transiently
    with pytest.raises(PresupuestoReintentosAgotado, match="retry budget exhausted"):
        _cliente(proveedor.url, esperas, budget=budget).post("/cobros", json={}, idempotent=True)
    # THEN no retry was made and nothing was slept
    assert len(proveedor.peticiones) == 1
    assert esperas == []


def test_post_breaker_opens_on_5xx_then_no_request_reaches_provider(proveedor, redis_url, redis_prefix):
    # GIVEN a shared breaker that opens after 4 consecutive failures
    breaker = CircuitBreaker(
        "pasarela",
        redis.Redis.from_url(redis_url),
        config=BreakerConfig(consecutive_failures=4),
        prefix=redis_prefix,
        metrics=MetricsSink(),
    )
    for _ in range(10):
        proveedor.responder(500)
    cliente = _cliente(proveedor.url, [], breaker=breaker)
    # WHEN two calls fail (2 attempts each = 4 failures)
    for _ in range(2):
        with pytest.raises(PasarelaNoDisponible):
            cliente.post("/cobros", json={}, idempotent=True)
    # THEN the third call is refused by the breaker with no request sent
    with pytest.raises(CircuitoAbierto):
        cliente.post("/cobros", json={}, idempotent=True)
    assert len(proveedor.peticiones) == 4
    assert breaker.state().state is BreakerState.ABIERTO


def test_post_402_counts_as_success_for_breaker(proveedor, redis_url, redis_prefix):
    breaker = CircuitBreaker(
        "pasarela", redis.Redis.from_url(redis_url), config=BreakerConfig(consecutive_failures=2), prefix=redis_prefix
    )
    for _ in range(5):
        proveedor.responder(402, {"motivo": "fondos insuficientes"})
    cliente = _cliente(proveedor.url, [], breaker=breaker)
    assert [cliente.post("/cobros", json={}).status for _ in range(5)] == [402] * 5
    assert breaker.state().state is BreakerState.CERRADO


def test_post_503_with_retry_after_http_date_waits_until_then(proveedor):
    # GIVEN a 503 asking to come back at an HTTP date 2 s from now
    cuando = datetime.now(UTC) + timedelta(seconds=2)
    proveedor.responder(503, retry_after=format_datetime(cuando, usegmt=True))
    esperas: list[float] = []
    # WHEN the client retries
    assert _cliente(proveedor.url, esperas).post("/cobros", json={}, idempotent=True).status == 200
    # THEN it waited until that date (whole seconds in the header), not its own short backoff
    [espera] = esperas
    assert 0.9 <= espera <= 2.0


def test_calls_and_retries_the_open_circuit_refuses_neither_feed_the_budget_nor_count(
    proveedor, redis_url, redis_prefix
):
    # GIVEN a spent budget and a breaker that opens on the first failure
    cliente_redis = redis.Redis.from_url(redis_url)
    budget = RetryBudget("pasarela", cliente_redis, prefix=redis_prefix, capacity=1)
    assert budget.allow_retry()
    breaker = CircuitBreaker(
        "pasarela",
        cliente_redis,
        config=BreakerConfig(consecutive_failures=1),
        prefix=redis_prefix,
        metrics=MetricsSink(),
    )
    proveedor.responder(503)
    metricas = MetricsSink()
    cliente = _cliente(proveedor.url, [], breaker=breaker, budget=budget, metrics=metricas)
    with pytest.raises(PresupuestoReintentosAgotado):
        cliente.post("/cobros", json={}, idempotent=True)
    assert breaker.state().state is BreakerState.ABIERTO
    # WHEN 20 more calls meet the open circuit
    for _ in range(20):
        with pytest.raises(CircuitoAbierto):
            cliente.post("/cobros", json={}, idempotent=True)
    # THEN only the one call the gateway saw deposited (0.1 token), and no retry was counted
    assert len(proveedor.peticiones) == 1
    assert budget.tokens() == pytest.approx(0.1)
    assert metricas.eventos == []


def test_a_retry_the_open_circuit_refuses_is_not_counted_as_a_retry(proveedor, redis_url, redis_prefix):
    # GIVEN a breaker that opens on the first failure and a budget with tokens to spare
    cliente_redis = redis.Redis.from_url(redis_url)
    breaker = CircuitBreaker(
        "pasarela",
        cliente_redis,
        config=BreakerConfig(consecutive_failures=1),
        prefix=redis_prefix,
        metrics=MetricsSink(),
    )
    budget = RetryBudget("pasarela", cliente_redis, prefix=redis_prefix)
    proveedor.responder(503)
    metricas = MetricsSink()
    esperas: list[float] = []
    # WHEN the first attempt fails (the circuit opens) and the retry meets the open circuit
    with pytest.raises(CircuitoAbierto):
        _cliente(proveedor.url, esperas, breaker=breaker, budget=budget, metrics=metricas).post(
            "/cobros", json={}, idempotent=True
        )
    # THEN one request reached the gateway, and the retry that never left is not in the metric
    assert len(proveedor.peticiones) == 1
    assert len(esperas) == 1
    assert metricas.eventos == []
