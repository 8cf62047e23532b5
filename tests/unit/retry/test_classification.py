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
        (200, C.SUCCESS),
        (201, C.SUCCESS),
        (302, C.SUCCESS),
        (400, C.PERMANENT),
        (402, C.PERMANENT),
        (404, C.PERMANENT),
        (409, C.PERMANENT),
        (422, C.PERMANENT),
        (429, C.TRANSIENT_LONG_WAIT),
        (500, C.TRANSIENT),
        (502, C.TRANSIENT),
        (503, C.TRANSIENT),
        (504, C.TRANSIENT),
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
        (u3.NewConnectionError(None, "refused"), False, C.TRANSIENT),
        (ConnectionRefusedError(), False, C.TRANSIENT),
        (u3.ConnectTimeoutError(None, "connect timed out"), False, C.TRANSIENT),
        (u3.ProtocolError("Connection aborted.", ConnectionResetError()), False, C.TRANSIENT),
        (ConnectionResetError(), False, C.TRANSIENT),
        (u3.ReadTimeoutError(None, "/cobros", "read timed out"), True, C.TRANSIENT),
        (u3.ReadTimeoutError(None, "/cobros", "read timed out"), False, C.UNKNOWN_OUTCOME),
        (TimeoutError(), False, C.UNKNOWN_OUTCOME),
        (_cliente_error("ConditionalCheckFailedException", 400), False, C.NOT_AN_ERROR),
        (_cliente_error("ThrottlingException", 400), False, C.TRANSIENT_LONG_WAIT),
        (_cliente_error("ProvisionedThroughputExceededException", 400), False, C.TRANSIENT_LONG_WAIT),
        (_cliente_error("InternalServerError", 500), False, C.TRANSIENT),
        (_cliente_error("ValidationException", 400), False, C.PERMANENT),
        (_cliente_error("AccessDeniedException", 403), False, C.PERMANENT),
        (bc.EndpointConnectionError(endpoint_url="https://dynamodb"), False, C.TRANSIENT),
        (bc.ConnectTimeoutError(endpoint_url="https://dynamodb"), False, C.TRANSIENT),
        (bc.ReadTimeoutError(endpoint_url="https://dynamodb"), False, C.UNKNOWN_OUTCOME),
        (bc.ReadTimeoutError(endpoint_url="https://dynamodb"), True, C.TRANSIENT),
        (ValueError("bug"), False, C.PERMANENT),
    ],
)
def test_clasificar_exception(error: BaseException, idempotent: bool, esperado: Classification) -> None:
    assert classify(error, idempotent=idempotent) is esperado


@pytest.mark.parametrize(
    ("clasificacion", "reintentable"),
    [
        (C.TRANSIENT, True),
        (C.TRANSIENT_LONG_WAIT, True),
        (C.UNKNOWN_OUTCOME, False),
        (C.PERMANENT, False),
        (C.NOT_AN_ERROR, False),
        (C.SUCCESS, False),
    ],
)
def test_clasificacion_only_transient_ones_retryable(clasificacion: Classification, reintentable: bool) -> None:
    assert clasificacion.retryable is reintentable
