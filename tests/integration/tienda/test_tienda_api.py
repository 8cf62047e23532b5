"""The store API's handler, fed API Gateway HTTP API (v2) events, on the real local PostgreSQL.

What matters: one order and ONE ``PedidoCreado`` outbox row per Idempotency-Key, whatever the
retries; nothing written for a bad request; clear 4xx answers; the order readable with its state.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from mercadofresco.dominio.solicitudes import registrar_pedido
from mercadofresco.outbox.schema import apply_migrations
from mercadofresco.validation import ECHO_MAX_CHARS

from tests.conftest import HANG_GUARD_S, load_event, wait_until

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.integration


@pytest.fixture
def tienda_dsn(pg_dsn: str, fresh_environment: None) -> str:
    """A migrated private schema, and a fresh execution environment (the pool is cached per environment)."""
    with psycopg.connect(pg_dsn) as conn:
        apply_migrations(conn)
    return pg_dsn


@pytest.fixture
def tienda(tienda_dsn: str, app_module: Callable[..., Any]) -> Any:
    return app_module("tienda", DATABASE_URL=tienda_dsn)


def _filas(dsn: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return list(conn.execute(sql, args))


def _invocar(tienda: Any, evento: dict[str, Any], contexto: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
    respuesta = tienda.lambda_handler(evento, contexto)
    return respuesta["statusCode"], json.loads(respuesta["body"]), respuesta.get("headers", {})


def test_post_pedidos_new_key_creates_order_and_one_outbox_event(
    tienda: Any, tienda_dsn: str, lambda_context: Any
) -> None:
    # GIVEN the sample POST /pedidos with an Idempotency-Key
    evento = load_event("tienda-crear-pedido.json")
    # WHEN the store handles it
    estado, cuerpo, cabeceras = _invocar(tienda, evento, lambda_context)
    # THEN 201 with the order, its total in cents and its state, and a Location to read it
    assert estado == 201
    assert cuerpo["importe_centimos"] == 2 * 249 + 189
    assert cuerpo["estado"] == "CREADO"
    assert cabeceras["Location"] == f"/pedidos/{cuerpo['pedido_id']}"
    # AND the order row and exactly one PedidoCreado outbox row exist, in the same schema
    eventos = _filas(tienda_dsn, "SELECT tipo_evento, payload FROM outbox WHERE agregado_id = %s", cuerpo["pedido_id"])
    assert [e[0] for e in eventos] == ["PedidoCreado"]
    assert eventos[0][1]["email"] == "lucia.ferrer@example.com"
    assert eventos[0][1]["importe_centimos"] == cuerpo["importe_centimos"]


def test_post_pedidos_retry_same_key_and_body_returns_same_order_with_200(
    tienda: Any, tienda_dsn: str, lambda_context: Any
) -> None:
    # GIVEN an order placed with a key
    evento = load_event("tienda-crear-pedido.json")
    primero, pedido, _ = _invocar(tienda, evento, lambda_context)
    # WHEN the client retries the same request twice (its first answer was lost)
    repetidos = [_invocar(tienda, load_event("tienda-crear-pedido.json"), lambda_context) for _ in range(2)]
    # THEN 201 then 200, 200, always the same order
    assert [primero, *(r[0] for r in repetidos)] == [201, 200, 200]
    assert {r[1]["pedido_id"] for r in repetidos} == {pedido["pedido_id"]}
    # AND one order, one event: the retries wrote nothing
    assert _filas(tienda_dsn, "SELECT count(*) FROM pedidos") == [(1,)]
    assert _filas(tienda_dsn, "SELECT count(*) FROM outbox") == [(1,)]


def test_post_pedidos_same_key_different_body_refused_with_422(
    tienda: Any, tienda_dsn: str, lambda_context: Any
) -> None:
    # GIVEN an order placed with a key
    _invocar(tienda, load_event("tienda-crear-pedido.json"), lambda_context)
    # WHEN the same key comes with another quantity
    otro = load_event("tienda-crear-pedido.json")
    datos = json.loads(otro["body"])
    datos["lineas"][0]["cantidad"] = 5
    otro["body"] = json.dumps(datos)
    estado, cuerpo, _ = _invocar(tienda, otro, lambda_context)
    # THEN 422 saying the key was used with another body, and nothing new is written
    assert estado == 422
    assert cuerpo["error"] == "idempotency_key_reused"
    assert "different request body" in cuerpo["message"]
    assert _filas(tienda_dsn, "SELECT count(*) FROM outbox") == [(1,)]


def test_post_pedidos_same_key_from_another_caller_is_another_order(
    tienda: Any, tienda_dsn: str, lambda_context: Any
) -> None:
    # GIVEN an order placed by one IAM caller
    _, primero, _ = _invocar(tienda, load_event("tienda-crear-pedido.json"), lambda_context)
    # WHEN another caller sends the same key and body
    otro = load_event("tienda-crear-pedido.json")
    otro["requestContext"]["authorizer"]["iam"]["userArn"] = "arn:aws:iam::123456789012:user/otra-tienda"
    estado, segundo, _ = _invocar(tienda, otro, lambda_context)
    # THEN keys are scoped per caller: a new order, never the first caller's
    assert estado == 201
    assert segundo["pedido_id"] != primero["pedido_id"]
    assert _filas(tienda_dsn, "SELECT count(*) FROM outbox") == [(2,)]


def test_post_pedidos_key_order_of_fields_irrelevant_returns_same_order(tienda: Any, lambda_context: Any) -> None:
    # GIVEN an order placed with a key
    _, pedido, _ = _invocar(tienda, load_event("tienda-crear-pedido.json"), lambda_context)
    # WHEN the retry serialises the same body with its fields in another order
    otro = load_event("tienda-crear-pedido.json")
    otro["body"] = json.dumps(dict(reversed(list(json.loads(otro["body"]).items()))), indent=2)
    estado, cuerpo, _ = _invocar(tienda, otro, lambda_context)
    # THEN it is the same request
    assert (estado, cuerpo["pedido_id"]) == (200, pedido["pedido_id"])


def test_post_pedidos_without_key_answers_400_and_writes_nothing(
    tienda: Any, tienda_dsn: str, lambda_context: Any
) -> None:
    estado, cuerpo, _ = _invocar(tienda, load_event("tienda-crear-pedido-sin-clave.json"), lambda_context)
    assert estado == 400
    assert cuerpo["error"] == "invalid_idempotency_key"
    assert "Idempotency-Key header is required" in cuerpo["message"]
    assert _filas(tienda_dsn, "SELECT count(*) FROM pedidos") == [(0,)]


def test_post_pedidos_invalid_body_answers_400_listing_each_problem(
    tienda: Any, tienda_dsn: str, lambda_context: Any
) -> None:
    # GIVEN the sample with a bad e-mail, currency, quantity and a price in euros (a float)
    estado, cuerpo, _ = _invocar(tienda, load_event("tienda-crear-pedido-invalido.json"), lambda_context)
    # THEN 400 naming each field, and nothing written (the key stays free for the corrected order)
    assert estado == 400
    assert cuerpo["error"] == "invalid_order"
    detalles = " | ".join(cuerpo["details"])
    for campo in ("email", "moneda", "lineas[0].cantidad", "lineas[0].precio_centimos"):
        assert campo in detalles
    assert _filas(tienda_dsn, "SELECT count(*) FROM solicitudes_pedido") == [(0,)]


def test_post_pedidos_with_a_card_token_answers_400_saying_the_card_on_file_is_charged(
    tienda: Any, tienda_dsn: str, lambda_context: Any
) -> None:
    # GIVEN a valid order that also brings a card token (as a PedidoCreado from another source may)
    evento = load_event("tienda-crear-pedido.json")
    evento["body"] = json.dumps({**json.loads(evento["body"]), "token_tarjeta": "tok_rechazada"})
    # WHEN the store handles it
    estado, cuerpo, _ = _invocar(tienda, evento, lambda_context)
    # THEN 400: refused as an unknown field, and told why and how a declined card is reached
    assert estado == 400 and cuerpo["error"] == "invalid_order"
    assert any("unknown field(s) 'token_tarjeta'" in d for d in cuerpo["details"])
    assert any("no card data" in d and "SimuladorTarjetasRechazadas" in d for d in cuerpo["details"])
    assert "tok_rechazada" not in json.dumps(cuerpo)  # a card token is never echoed back
    assert _filas(tienda_dsn, "SELECT count(*) FROM solicitudes_pedido") == [(0,)]


def test_post_pedidos_malformed_json_answers_400(tienda: Any, lambda_context: Any) -> None:
    evento = load_event("tienda-crear-pedido.json")
    evento["body"] = '{"cliente_id": "CLI-1", '
    estado, cuerpo, _ = _invocar(tienda, evento, lambda_context)
    assert (estado, cuerpo["error"]) == (400, "invalid_json")


def test_get_pedido_existing_returns_order_and_state(tienda: Any, lambda_context: Any) -> None:
    # GIVEN an order placed through the API
    _, pedido, _ = _invocar(tienda, load_event("tienda-crear-pedido.json"), lambda_context)
    # WHEN the sample GET asks for it
    evento = load_event("tienda-consultar-pedido.json")
    evento["rawPath"] = evento["requestContext"]["http"]["path"] = f"/pedidos/{pedido['pedido_id']}"
    evento["pathParameters"] = {"pedido_id": pedido["pedido_id"]}
    estado, cuerpo, _ = _invocar(tienda, evento, lambda_context)
    # THEN the same order, with its state
    assert estado == 200
    assert cuerpo == pedido


def _consulta_de(pedido_id: str, user_arn: str | None = None) -> dict[str, Any]:
    evento = load_event("tienda-consultar-pedido.json")
    evento["rawPath"] = evento["requestContext"]["http"]["path"] = f"/pedidos/{pedido_id}"
    evento["pathParameters"] = {"pedido_id": pedido_id}
    if user_arn is not None:
        evento["requestContext"]["authorizer"]["iam"]["userArn"] = user_arn
    return evento


def test_get_pedido_of_another_caller_answers_404_without_its_data(tienda: Any, lambda_context: Any) -> None:
    # GIVEN an order placed by one IAM caller (the customer's e-mail in it)
    _, pedido, _ = _invocar(tienda, load_event("tienda-crear-pedido.json"), lambda_context)
    # WHEN another principal allowed to invoke the API asks for it by id
    otro = _consulta_de(pedido["pedido_id"], "arn:aws:iam::123456789012:user/otra-tienda")
    estado, cuerpo, _ = _invocar(tienda, otro, lambda_context)
    # THEN "not found", as for an order that does not exist: neither the e-mail nor the order's existence leaks
    assert (estado, cuerpo["error"]) == (404, "not_found")
    assert pedido["email"] not in json.dumps(cuerpo) and pedido["cliente_id"] not in json.dumps(cuerpo)
    # AND its own caller still reads it
    estado, propio, _ = _invocar(tienda, _consulta_de(pedido["pedido_id"]), lambda_context)
    assert (estado, propio) == (200, pedido)


def test_get_pedido_unknown_answers_404(tienda: Any, lambda_context: Any) -> None:
    estado, cuerpo, _ = _invocar(tienda, load_event("tienda-consultar-pedido.json"), lambda_context)
    assert estado == 404
    assert "'PED-2026-084417' does not exist" in cuerpo["message"]


@pytest.mark.parametrize("pedido_id", ["P" * 5_000, "PED-ñ", "PED:1", "PED 1"])
def test_get_pedido_malformed_id_answers_400_without_repeating_it(
    tienda: Any, lambda_context: Any, pedido_id: str
) -> None:
    # GIVEN a GET for an id the store could never have produced (5,000 characters, a non-ASCII letter, a ':')
    evento = load_event("tienda-consultar-pedido.json")
    evento["rawPath"] = evento["requestContext"]["http"]["path"] = f"/pedidos/{pedido_id}"
    evento["pathParameters"] = {"pedido_id": pedido_id}
    # WHEN the store handles it
    estado, cuerpo, _ = _invocar(tienda, evento, lambda_context)
    # THEN 400 naming the expected format, and the answer repeats none of the id
    assert (estado, cuerpo["error"]) == (400, "invalid_pedido_id")
    assert "ASCII letters" in cuerpo["message"]
    assert pedido_id not in json.dumps(cuerpo, ensure_ascii=False)


def test_get_pedido_unknown_answers_404_repeating_at_most_the_log_policy(tienda: Any, lambda_context: Any) -> None:
    # GIVEN a well-formed id of the store's longest, for which there is no order
    evento = load_event("tienda-consultar-pedido.json")
    evento["pathParameters"] = {"pedido_id": "P" * 64}
    # WHEN read THEN 404, and the answer cuts the id as the log policy cuts a value
    estado, cuerpo, _ = _invocar(tienda, evento, lambda_context)
    assert estado == 404
    assert "P" * (ECHO_MAX_CHARS + 1) not in cuerpo["message"]


def test_post_pedidos_database_down_answers_503_with_retry_after(
    app_module: Callable[..., Any], lambda_context: Any, fresh_environment: None
) -> None:
    # GIVEN a store whose database refuses connections
    tienda = app_module("tienda", DATABASE_URL="postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=1")
    # WHEN an order arrives
    estado, cuerpo, cabeceras = _invocar(tienda, load_event("tienda-crear-pedido.json"), lambda_context)
    # THEN 503 telling the client to retry with the same key
    assert estado == 503
    assert "same Idempotency-Key" in cuerpo["message"]
    assert cabeceras["Retry-After"]


def test_registrar_pedido_concurrent_same_key_one_order(tienda_dsn: str) -> None:
    # GIVEN a first request holding its key's claim in an open transaction
    cuerpo = json.loads(load_event("tienda-crear-pedido.json")["body"])
    clave = "concurrente-1"
    with psycopg.connect(tienda_dsn) as primera, psycopg.connect(tienda_dsn) as segunda:
        pid_segunda = segunda.info.backend_pid
        resultados: dict[str, Any] = {}
        with primera.transaction():
            original = registrar_pedido(primera, clave, cuerpo)
            # WHEN a concurrent retry arrives with the same key
            hilo = threading.Thread(target=lambda: resultados.update(r=registrar_pedido(segunda, clave, cuerpo)))
            hilo.start()
            _esperar_bloqueo(tienda_dsn, pid_segunda)  # it waits on the claim's row lock
        # (the first transaction commits here)
        hilo.join(HANG_GUARD_S)
    # THEN the retry returns the first request's order, and only one order and one event exist
    assert not hilo.is_alive()
    assert original.creado and not resultados["r"].creado
    assert resultados["r"].pedido["pedido_id"] == original.pedido["pedido_id"]
    assert _filas(tienda_dsn, "SELECT count(*) FROM outbox") == [(1,)]


def _esperar_bloqueo(dsn: str, pid: int) -> None:
    """Until backend ``pid`` waits on a lock (a condition, polled; no fixed sleep)."""
    consulta = "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s"
    with psycopg.connect(dsn, autocommit=True) as conn:
        wait_until(lambda: (conn.execute(consulta, (pid,)).fetchone() or [None])[0] == "Lock", f"backend {pid} to wait")
