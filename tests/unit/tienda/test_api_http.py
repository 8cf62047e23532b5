"""The local HTTP API's route matching and event shape (sam_emulator.http_api)."""

from __future__ import annotations

from sam_emulator.functions import Function, code_path
from sam_emulator.http_api import Route, http_event

TIENDA = Function("TiendaFunction", "mercadofresco-tienda", code_path("functions/tienda/"))


def test_ruta_with_parameter_matches_and_decodes_it() -> None:
    ruta = Route("GET", "/pedidos/{pedido_id}", TIENDA)
    assert ruta.matches("GET", "/pedidos/PED-1%2F2") == {"pedido_id": "PED-1/2"}
    assert ruta.matches("POST", "/pedidos/PED-1") is None
    assert ruta.matches("GET", "/pedidos/PED-1/extra") is None
    assert ruta.matches("GET", "/pedidos") is None


def test_evento_http_is_payload_2_with_route_key_parameters_and_lowercase_headers() -> None:
    # GIVEN a POST with a JSON body and the client's key
    ruta = Route("POST", "/pedidos", TIENDA)
    # WHEN it becomes an API Gateway event
    evento = http_event("POST", ruta, "/pedidos", "", {"Idempotency-Key": "k-1"}, b'{"a": 1}', {})
    # THEN it has the shape the store's resolver reads
    assert (evento["version"], evento["routeKey"], evento["rawPath"]) == ("2.0", "POST /pedidos", "/pedidos")
    assert evento["headers"] == {"idempotency-key": "k-1"}
    assert evento["body"] == '{"a": 1}' and evento["isBase64Encoded"] is False
    assert evento["requestContext"]["http"]["method"] == "POST"
