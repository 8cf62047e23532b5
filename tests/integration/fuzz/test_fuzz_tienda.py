"""The store API (functions/tienda) fed hostile requests as API Gateway's HTTP API hands them over (real PostgreSQL).

Properties, per request:

- the handler never raises: the answer is 201/200 (an order) or a 4xx with its ``error`` code and a
  message, the reasons listed for an invalid order;
- a refused request writes nothing (no order, no outbox row, no key claimed); a created one writes
  exactly one order and one ``PedidoCreado``;
- the same key with another body is a 422 and writes nothing;
- no answer and no log line repeats more of what was sent than the log policy allows
  (``validation.ECHO_MAX_CHARS``): a long marker hidden in the request never comes back whole.
"""

from __future__ import annotations

import base64
import copy
import json
import uuid
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.outbox.schema import apply_migrations
from mercadofresco.validation import ECHO_MAX_CHARS

from tests.conftest import load_event
from tests.unit.fuzz.estrategias import importe_malo, json_profundo, moneda_mala, texto_cualquiera, valor_json

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.integration

MARCA = "MARCA" * 12  # 60 characters no answer nor log line may repeat whole
BUENO = json.loads(load_event("tienda-crear-pedido.json")["body"])
ERRORES_4XX = {
    400: {"invalid_json", "invalid_order", "invalid_idempotency_key"},
    422: {"idempotency_key_reused"},
}


@pytest.fixture
def tienda(pg_dsn: str, fresh_environment: None, app_module: Callable[..., Any]) -> tuple[Any, str]:
    with psycopg.connect(pg_dsn) as conn:
        apply_migrations(conn)
    return app_module("tienda", DATABASE_URL=pg_dsn), pg_dsn


def _filas(dsn: str) -> tuple[int, int, int]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT (SELECT count(*) FROM pedidos), (SELECT count(*) FROM outbox),"
            " (SELECT count(*) FROM solicitudes_pedido)"
        ).fetchone()


def _peticion(cuerpo: str | None, clave: str | None, *, base64_: bool = False) -> dict[str, Any]:
    evento = load_event("tienda-crear-pedido.json")
    del evento["headers"]["idempotency-key"]
    if clave is not None:
        evento["headers"]["idempotency-key"] = clave
    evento["body"], evento["isBase64Encoded"] = cuerpo, base64_
    return evento


def _enviar(tienda: tuple[Any, str], evento: dict[str, Any], contexto: Any, capsys: Any) -> tuple[int, dict[str, Any]]:
    """Invoke the handler; check what every answer must hold; return (status, body)."""
    app, dsn = tienda
    antes = _filas(dsn)
    capsys.readouterr()
    respuesta = app.lambda_handler(evento, contexto)  # THEN it never raises
    estado, cuerpo = respuesta["statusCode"], json.loads(respuesta["body"])
    despues = _filas(dsn)
    if estado == 201:
        # THEN a created order is one order, one event and one key
        assert despues == (antes[0] + 1, antes[1] + 1, antes[2] + 1)
        assert cuerpo["estado"] == "CREADO"
    else:
        # THEN anything else wrote nothing: a 200 is a retry's answer, a 4xx a refusal with its code and reasons
        assert despues == antes
        assert estado == 200 or cuerpo["error"] in ERRORES_4XX[estado], (estado, cuerpo)
        if estado != 200:
            assert cuerpo["message"]
        if cuerpo.get("error") == "invalid_order":
            assert cuerpo["details"] and all(isinstance(d, str) and d for d in cuerpo["details"])
    # AND neither the answer nor the logs repeat more of the request than the log policy allows
    registros = capsys.readouterr()
    for salida in (respuesta["body"], registros.out, registros.err):
        assert MARCA[: ECHO_MAX_CHARS + 1] not in salida
    return estado, cuerpo


def _con(campo: str, valor: Any, linea: bool = False) -> dict[str, Any]:
    cuerpo = copy.deepcopy(BUENO)
    (cuerpo["lineas"][0] if linea else cuerpo)[campo] = valor
    return cuerpo


cuerpo_json = st.one_of(
    valor_json,
    st.dictionaries(st.sampled_from([*BUENO, MARCA]), st.one_of(valor_json, st.just(MARCA))),
    st.tuples(st.sampled_from(["cliente_id", "email", "moneda", "lineas", MARCA]), valor_json).map(
        lambda cv: _con(*cv)
    ),
    st.tuples(st.sampled_from(["moneda"]), moneda_mala).map(lambda cv: _con(*cv)),
    st.tuples(
        st.sampled_from(["sku", "cantidad", "precio_centimos", MARCA]),
        st.one_of(texto_cualquiera, importe_malo, st.integers(), st.just(MARCA), valor_json),
    ).map(lambda cv: _con(*cv, linea=True)),
)


@given(
    cuerpo=st.one_of(
        cuerpo_json.map(lambda c: json.dumps(c, ensure_ascii=False)),
        cuerpo_json.map(lambda c: json.dumps(c, ensure_ascii=True)),
        json_profundo(),
        texto_cualquiera,
        st.just(MARCA),
        st.integers(1_000, 5_000).map(lambda n: json.dumps({**BUENO, "relleno": "x" * n * 200})),  # up to 1 MB
    ),
    clave=st.one_of(st.none(), st.just(""), st.just(MARCA * 5), texto_cualquiera, st.uuids().map(str)),
)
def test_fuzz_post_pedidos_any_body_and_key_answers_4xx_or_one_order_never_raises(
    tienda, lambda_context, capsys, cuerpo, clave
) -> None:
    # GIVEN any body (JSON or not, wrong types, unknown fields, huge) and any Idempotency-Key, or none
    _enviar(tienda, _peticion(cuerpo, clave), lambda_context, capsys)


@given(
    crudo=st.one_of(
        st.binary(max_size=200),
        st.binary(max_size=50).map(lambda b: b"\xff\xfe" + b),  # never UTF-8
        st.just(json.dumps(BUENO).encode("utf-16")),
        st.just(json.dumps(BUENO).encode()),
    ),
    roto=st.booleans(),
)
def test_fuzz_post_pedidos_base64_body_of_any_bytes_answers_4xx_or_one_order(
    tienda, lambda_context, capsys, crudo, roto
) -> None:
    # GIVEN a body API Gateway passed as base64 (binary: not UTF-8, UTF-16...), or one that is not base64 at all
    cuerpo = base64.b64encode(crudo).decode()
    cuerpo = cuerpo[:-1] if roto else cuerpo  # cut: its padding is wrong
    estado, respuesta = _enviar(tienda, _peticion(cuerpo, uuid.uuid4().hex, base64_=True), lambda_context, capsys)
    # THEN only the real order, as UTF-8 and well encoded, makes one; a cut base64 is not JSON at all
    if roto:
        assert (estado, respuesta["error"]) == (400, "invalid_json")
    elif crudo != json.dumps(BUENO).encode():
        assert estado == 400


@given(otro=cuerpo_json.filter(lambda c: c != BUENO))
def test_fuzz_post_pedidos_same_key_with_another_body_is_422_and_writes_nothing(
    tienda, lambda_context, capsys, otro
) -> None:
    # GIVEN an order placed with a key
    clave = uuid.uuid4().hex
    estado, pedido = _enviar(tienda, _peticion(json.dumps(BUENO), clave), lambda_context, capsys)
    assert estado == 201
    # WHEN the same key comes back with any other body
    estado, respuesta = _enviar(tienda, _peticion(json.dumps(otro), clave), lambda_context, capsys)
    # THEN 422 naming the order the key made (or the body's own 400 first), and nothing written
    assert (estado, respuesta["error"]) in {(422, "idempotency_key_reused"), (400, "invalid_order")}
    if estado == 422:
        assert pedido["pedido_id"] in respuesta["message"]


@given(pedido_id=st.one_of(texto_cualquiera, st.just(MARCA * 80), st.text(min_size=65, max_size=5_000)))
def test_fuzz_get_pedido_any_id_answers_without_repeating_it(tienda, lambda_context, capsys, pedido_id) -> None:
    # GIVEN a GET for any id (5,000 characters, controls, surrogates...)
    evento = load_event("tienda-consultar-pedido.json")
    evento["pathParameters"] = {"pedido_id": pedido_id}
    evento["rawPath"] = evento["requestContext"]["http"]["path"] = f"/pedidos/{pedido_id}"
    capsys.readouterr()
    # WHEN the store handles it THEN a 4xx (there is no such order), never an exception...
    respuesta = tienda[0].lambda_handler(evento, lambda_context)
    assert respuesta["statusCode"] in {400, 404}
    # ...that repeats at most the log policy's share of the id
    registros = capsys.readouterr()
    for salida in (respuesta["body"], registros.out, registros.err):
        assert MARCA[: ECHO_MAX_CHARS + 1] not in salida
        assert len(pedido_id) <= ECHO_MAX_CHARS or pedido_id not in salida
