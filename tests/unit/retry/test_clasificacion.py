"""The classification table, case by case."""

from __future__ import annotations

import pytest
from botocore import exceptions as bc
from mercadofresco.retry import Classification, classify
from urllib3 import exceptions as u3

C = Classification


@pytest.mark.parametrize(
    ("status", "esperado"),
    [
        (200, C.EXITO),
        (201, C.EXITO),
        (302, C.EXITO),
        (400, C.PERMANENTE),
        (402, C.PERMANENTE),
        (404, C.PERMANENTE),
        (409, C.PERMANENTE),
        (422, C.PERMANENTE),
        (429, C.TRANSITORIO_ESPERA_LARGA),
        (500, C.TRANSITORIO),
        (502, C.TRANSITORIO),
        (503, C.TRANSITORIO),
        (504, C.TRANSITORIO),
    ],
)
def test_clasificar_http_status(status: int, esperado: Classification) -> None:
    assert classify(status) is esperado


def _cliente_error(codigo: str, status: int) -> bc.ClientError:
    return bc.ClientError(
        {"Error": {"Code": codigo, "Message": "x"}, "ResponseMetadata": {"HTTPStatusCode": status}}, "PutItem"
    )


@pytest.mark.parametrize(
    ("error", "idempotent", "esperado"),
    [
        (u3.NewConnectionError(None, "refused"), False, C.TRANSITORIO),
        (ConnectionRefusedError(), False, C.TRANSITORIO),
        (u3.ConnectTimeoutError(None, "connect timed out"), False, C.TRANSITORIO),
        (u3.ProtocolError("Connection aborted.", ConnectionResetError()), False, C.TRANSITORIO),
        (ConnectionResetError(), False, C.TRANSITORIO),
        (u3.ReadTimeoutError(None, "/cobros", "read timed out"), True, C.TRANSITORIO),
        (u3.ReadTimeoutError(None, "/cobros", "read timed out"), False, C.RESULTADO_DESCONOCIDO),
        (TimeoutError(), False, C.RESULTADO_DESCONOCIDO),
        (_cliente_error("ConditionalCheckFailedException", 400), False, C.NO_ES_ERROR),
        (_cliente_error("ThrottlingException", 400), False, C.TRANSITORIO_ESPERA_LARGA),
        (_cliente_error("ProvisionedThroughputExceededException", 400), False, C.TRANSITORIO_ESPERA_LARGA),
        (_cliente_error("InternalServerError", 500), False, C.TRANSITORIO),
        (_cliente_error("ValidationException", 400), False, C.PERMANENTE),
        (_cliente_error("AccessDeniedException", 403), False, C.PERMANENTE),
        (bc.EndpointConnectionError(endpoint_url="https://dynamodb"), False, C.TRANSITORIO),
        (bc.ConnectTimeoutError(endpoint_url="https://dynamodb"), False, C.TRANSITORIO),
        (bc.ReadTimeoutError(endpoint_url="https://dynamodb"), False, C.RESULTADO_DESCONOCIDO),
        (bc.ReadTimeoutError(endpoint_url="https://dynamodb"), True, C.TRANSITORIO),
        (ValueError("bug"), False, C.PERMANENTE),
    ],
)
def test_clasificar_exception(error: BaseException, idempotent: bool, esperado: Classification) -> None:
    assert classify(error, idempotent=idempotent) is esperado


@pytest.mark.parametrize(
    ("clasificacion", "reintentable"),
    [
        (C.TRANSITORIO, True),
        (C.TRANSITORIO_ESPERA_LARGA, True),
        (C.RESULTADO_DESCONOCIDO, False),
        (C.PERMANENTE, False),
        (C.NO_ES_ERROR, False),
        (C.EXITO, False),
    ],
)
def test_clasificacion_only_transient_ones_retryable(clasificacion: Classification, reintentable: bool) -> None:
    assert clasificacion.reintentable is reintentable
