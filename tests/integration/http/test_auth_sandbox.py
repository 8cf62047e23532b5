"""A sandbox provider behind AWS_IAM over loopback: the client's SigV4 is accepted, anything else refused (issue 26).

The stand-in recomputes each signature with botocore (mercadofresco_local.firma), as Lambda checks
an AWS_IAM function URL before invoking it; its 403 happens before any effect.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import boto3
import pytest
import urllib3
from mercadofresco.http import ProviderClient
from mercadofresco.http.auth import FunctionUrlSigV4
from mercadofresco_local.proveedores import Proveedores, VerificadorSigV4

from tests.conftest import CREDENCIALES_FALSAS

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

COBRO = {"pedido_id": "PED-2026-084417", "importe_centimos": 687, "cliente_id": "CLI-0193"}


@pytest.fixture
def pasarela() -> Iterator[Proveedores]:
    """The gateway stand-in playing an AWS_IAM function URL, verifying with the tests' own credentials."""
    with Proveedores() as p:
        p.pasarela.verificador = VerificadorSigV4(
            CREDENCIALES_FALSAS["AWS_ACCESS_KEY_ID"],
            CREDENCIALES_FALSAS["AWS_SECRET_ACCESS_KEY"],
            CREDENCIALES_FALSAS["AWS_SESSION_TOKEN"],
            CREDENCIALES_FALSAS["AWS_REGION"],
        )
        yield p


def _cliente(url: str, auth: FunctionUrlSigV4 | None) -> ProviderClient:
    return ProviderClient(dependency="pasarela", base_url=url, auth=auth)


def test_a_signed_charge_is_accepted_once(pasarela: Proveedores) -> None:
    # WHEN the layer's client signs (the function's credentials and region)
    estado, cuerpo = _cliente(pasarela.pasarela.url, FunctionUrlSigV4()).post(
        "/cobros", json=COBRO, idempotency_key="cobro:PED-2026-084417", idempotent=True
    )
    # THEN the gateway charged
    assert (estado, pasarela.pasarela.cobros_de("PED-2026-084417")) == (201, 1), cuerpo
    assert not pasarela.pasarela.rechazadas


def test_an_unsigned_call_is_refused_before_any_effect(pasarela: Proveedores) -> None:
    # WHEN a caller stops signing
    estado, cuerpo = _cliente(pasarela.pasarela.url, None).post("/cobros", json=COBRO, idempotency_key="cobro:PED-1")
    # THEN Lambda's answer, no charge, and the call never reached the provider
    assert (estado, cuerpo) == (403, {"Message": "Forbidden"})
    assert pasarela.pasarela.cobros_de("PED-2026-084417") == 0
    assert not pasarela.pasarela.llamadas
    assert pasarela.pasarela.rechazadas == {"not signed with SigV4": 1}


@pytest.mark.parametrize(
    ("sesion", "region", "motivo"),
    [
        ({"aws_secret_access_key": "otra"}, "eu-south-2", "the signature does not match"),
        ({}, "eu-west-1", "signed for lambda in eu-west-1"),
        ({"aws_access_key_id": "AKIAOTRA"}, "eu-south-2", "signed with another access key"),
    ],
)
def test_a_wrongly_signed_call_is_refused(
    pasarela: Proveedores, sesion: dict[str, str], region: str, motivo: str
) -> None:
    credenciales = {
        "aws_access_key_id": CREDENCIALES_FALSAS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": CREDENCIALES_FALSAS["AWS_SECRET_ACCESS_KEY"],
        "aws_session_token": CREDENCIALES_FALSAS["AWS_SESSION_TOKEN"],
        **sesion,
    }
    firmante = FunctionUrlSigV4(region=region, session=boto3.Session(**credenciales))
    estado, _ = _cliente(pasarela.pasarela.url, firmante).post("/cobros", json=COBRO, idempotency_key="cobro:PED-1")
    assert estado == 403
    assert pasarela.pasarela.rechazadas == {motivo: 1}
    assert pasarela.pasarela.cobros_de("PED-2026-084417") == 0


def test_a_body_other_than_the_signed_one_is_refused(pasarela: Proveedores) -> None:
    # GIVEN a correctly signed charge of 687
    url = pasarela.pasarela.url + "/cobros"
    firmado = json.dumps(COBRO).encode()
    simples = {"Content-Type": "application/json", "Idempotency-Key": "cobro:PED-2026-084417"}
    cabeceras = FunctionUrlSigV4().headers("POST", url, simples, firmado)
    # WHEN another amount is sent under that signature
    otro = json.dumps({**COBRO, "importe_centimos": 1}).encode()
    respuesta = urllib3.PoolManager().request("POST", url, body=otro, headers=cabeceras)
    # THEN refused; the signed body itself still passes
    assert respuesta.status == 403
    assert urllib3.PoolManager().request("POST", url, body=firmado, headers=cabeceras).status == 201
    assert pasarela.pasarela.rechazadas == {"the body is not the one signed": 1}
