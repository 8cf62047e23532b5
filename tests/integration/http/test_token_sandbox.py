"""The sandbox providers' path token comes from Secrets Manager at run time (issue 26), never from a variable."""

from __future__ import annotations

import json

import pytest
from mercadofresco.aws import client
from mercadofresco.http.factory import url_with_token

pytestmark = pytest.mark.integration

URL = "https://abc.lambda-url.eu-south-2.on.aws/{token}/principal"


def test_url_with_placeholder_gets_the_secrets_token(
    aws: None, fresh_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the stack's sandbox secret and a caller given only its ARN
    arn = client("secretsmanager").create_secret(Name="simulador", SecretString=json.dumps({"token": "t0k3n"}))["ARN"]
    monkeypatch.setenv("SIMULADOR_SECRET_ARN", arn)
    # THEN the placeholder becomes the token; a real provider's URL is left alone
    assert url_with_token(URL) == "https://abc.lambda-url.eu-south-2.on.aws/t0k3n/principal"
    assert url_with_token("https://erp.example/api") == "https://erp.example/api"


def test_placeholder_without_a_secret_is_a_clear_error(
    fresh_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIMULADOR_SECRET_ARN", raising=False)
    with pytest.raises(ValueError, match="SIMULADOR_SECRET_ARN is not set"):
        url_with_token(URL)


def test_a_secret_without_a_token_is_a_clear_error(
    aws: None, fresh_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    arn = client("secretsmanager").create_secret(Name="otro", SecretString=json.dumps({"api_key": "x"}))["ARN"]
    monkeypatch.setenv("SIMULADOR_SECRET_ARN", arn)
    with pytest.raises(ValueError, match="'token' field"):
        url_with_token(URL)
