"""The Valkey client factory: local URL, ElastiCache endpoint with TLS and the AUTH token from Secrets Manager."""

from __future__ import annotations

import json

import boto3
import pytest
from mercadofresco.valkey import SOCKET_TIMEOUT_MS, valkey_client

pytestmark = pytest.mark.integration


def test_cliente_valkey_redis_url_short_timeouts_no_retries(monkeypatch, redis_url):
    monkeypatch.setenv("REDIS_URL", redis_url)
    cliente = valkey_client()
    opciones = cliente.connection_pool.connection_kwargs
    assert cliente.ping()
    assert opciones["socket_timeout"] == SOCKET_TIMEOUT_MS / 1000
    assert opciones["retry"].get_retries() == 0


def test_cliente_valkey_endpoint_uses_tls_and_token_from_secret(aws, monkeypatch):
    # GIVEN the template's wiring: endpoint host:port and the generated secret {"token": ...}
    arn = boto3.client("secretsmanager").create_secret(Name="valkey", SecretString=json.dumps({"token": "s3cr3t"}))[
        "ARN"
    ]
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("VALKEY_ENDPOINT", "mercadofresco-catalogo.abc.cache.amazonaws.com:6379")
    monkeypatch.setenv("VALKEY_SECRET_ARN", arn)
    # WHEN the client is built (no connection is opened yet)
    cliente = valkey_client()
    pool = cliente.connection_pool
    # THEN it speaks TLS to that host and authenticates with the secret's token
    assert pool.connection_class.__name__ == "SSLConnection"
    assert pool.connection_kwargs["host"] == "mercadofresco-catalogo.abc.cache.amazonaws.com"
    assert pool.connection_kwargs["credential_provider"].get_credentials() == ("s3cr3t",)


@pytest.mark.parametrize(
    ("entorno", "mensaje"),
    [({}, "REDIS_URL"), ({"VALKEY_ENDPOINT": "solo-host:"}, "host:port"), ({"VALKEY_ENDPOINT": ":6379"}, "host:port")],
)
def test_cliente_valkey_missing_or_bad_configuration_clear_error(monkeypatch, entorno, mensaje):
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("VALKEY_ENDPOINT", raising=False)
    for clave, valor in entorno.items():
        monkeypatch.setenv(clave, valor)
    with pytest.raises(ValueError, match=mensaje):
        valkey_client()
