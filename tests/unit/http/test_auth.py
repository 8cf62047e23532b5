"""The HTTP client's authentication strategies: SigV4 for a sandbox function URL, as botocore signs, or a Bearer key."""

from __future__ import annotations

import datetime
import hashlib

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from mercadofresco.http.auth import BearerAuth, FunctionUrlSigV4
from mercadofresco.http.factory import request_auth_from_env

AHORA = datetime.datetime(2026, 11, 29, 18, 12, 1, tzinfo=datetime.UTC)
CREDENCIALES = ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "IQoJb3JpZ2luX2VjEXAMPLE")
URL = "https://abcdefghijklmnopqrstuvwxyz012345.lambda-url.eu-south-2.on.aws/cobros"
CUERPO = b'{"pedido_id":"PED-2026-084417","importe_centimos":687}'
CABECERAS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    "Idempotency-Key": "cobro:PED-2026-084417",
}


def _ahora(remove_tzinfo: bool = True) -> datetime.datetime:
    return AHORA.replace(tzinfo=None) if remove_tzinfo else AHORA


@pytest.fixture
def reloj_fijo(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's signing clock, in its pure-Python signer and, where awscrt is installed, in the CRT's."""
    import importlib.util

    monkeypatch.setattr("botocore.auth.get_current_datetime", _ahora)
    if importlib.util.find_spec("awscrt") is not None:
        monkeypatch.setattr("botocore.crt.auth.get_current_datetime", _ahora)


def _sesion() -> boto3.Session:
    clave, secreta, token = CREDENCIALES
    return boto3.Session(aws_access_key_id=clave, aws_secret_access_key=secreta, aws_session_token=token)


def test_function_url_request_is_signed_exactly_as_botocores_sigv4_signs_it(reloj_fijo: None) -> None:
    # GIVEN a known request, and what botocore's own SigV4Auth makes of it for service lambda
    esperada = AWSRequest(
        method="POST",
        url=URL,
        data=CUERPO,
        headers={**CABECERAS, "X-Amz-Content-SHA256": hashlib.sha256(CUERPO).hexdigest()},
    )
    SigV4Auth(Credentials(*CREDENCIALES), "lambda", "eu-south-2").add_auth(esperada)
    # WHEN the client's strategy signs it
    firmadas = FunctionUrlSigV4(region="eu-south-2", session=_sesion()).headers("POST", URL, CABECERAS, CUERPO)
    cabeceras = {k.lower(): v for k, v in firmadas.items()}  # HTTP header names: case-insensitive
    # THEN the same Authorization and X-Amz-* headers, the caller's own headers kept
    for nombre in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token", "X-Amz-Content-SHA256"):
        assert cabeceras[nombre.lower()] == esperada.headers[nombre], nombre
    assert cabeceras["idempotency-key"] == "cobro:PED-2026-084417"
    # AND the scope is Lambda's in the caller's region; the body's hash and the idempotency key are signed
    autorizacion = cabeceras["authorization"]
    assert autorizacion.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261129/eu-south-2/lambda/aws4_request, ")
    assert (
        "SignedHeaders=accept;content-type;host;idempotency-key;x-amz-content-sha256;x-amz-date;x-amz-security-token"
        in autorizacion
    )
    assert cabeceras["x-amz-date"] == "20261129T181201Z"
    assert cabeceras["x-amz-content-sha256"] == hashlib.sha256(CUERPO).hexdigest()


def test_another_body_gets_another_signature(reloj_fijo: None) -> None:
    firmante = FunctionUrlSigV4(region="eu-south-2", session=_sesion())
    una = {k.lower(): v for k, v in firmante.headers("POST", URL, CABECERAS, CUERPO).items()}
    otra = {k.lower(): v for k, v in firmante.headers("POST", URL, CABECERAS, CUERPO.replace(b"687", b"688")).items()}
    assert una["authorization"] != otra["authorization"]


def test_signing_announces_the_function_url_call_on_the_sessions_events(reloj_fijo: None) -> None:
    # The request recorder (least_privilege) hears signed calls through this event
    sesion, oidas = _sesion(), []
    sesion.events.register("before-sign.lambda.InvokeFunctionUrl", lambda request, **_: oidas.append(request.url))
    FunctionUrlSigV4(region="eu-south-2", session=sesion).headers("POST", URL, CABECERAS, CUERPO)
    assert oidas == [URL]


def test_aws_iam_selects_sigv4_and_replaces_the_callers_key(monkeypatch: pytest.MonkeyPatch) -> None:
    clave = BearerAuth("sk_live")
    monkeypatch.setenv("PASARELA_URL_AUTH", "AWS_IAM")
    assert isinstance(request_auth_from_env("PASARELA_URL", clave), FunctionUrlSigV4)
    monkeypatch.setenv("PASARELA_URL_AUTH", "")
    assert request_auth_from_env("PASARELA_URL", clave) is clave
    monkeypatch.delenv("PASARELA_URL_AUTH")
    assert request_auth_from_env("PASARELA_URL") is None
    assert clave.headers("POST", URL, {"Accept": "application/json"}, None) == {
        "Accept": "application/json",
        "Authorization": "Bearer sk_live",
    }


def test_an_unknown_auth_type_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERP_URL_AUTH", "NONE")
    with pytest.raises(ValueError, match="ERP_URL_AUTH is 'NONE'"):
        request_auth_from_env("ERP_URL")
