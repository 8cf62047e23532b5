"""The local run's longer SDK read timeout: one setting, for its own process only, undone at the end."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


def test_the_local_run_lengthens_the_sdk_read_timeout_for_its_clients_and_undoes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mercadofresco import aws
    from mercadofresco_local.sesion import SDK_READ_TIMEOUT_LOCAL_S, alargar_lectura_sdk

    # GIVEN a process where nothing set the layer's SDK_READ_TIMEOUT_S (as in Lambda: the template never does)
    monkeypatch.delenv(aws.ENV_SDK_READ_TIMEOUT_S, raising=False)
    assert aws.client("sqs", region_name="eu-south-2").meta.config.read_timeout == aws.SDK_READ_TIMEOUT_S

    # WHEN a local session sets it
    deshacer = alargar_lectura_sdk()
    try:
        # THEN every client made afterwards waits longer for moto, keeping the rest of the policy
        config = aws.client("sqs", region_name="eu-south-2").meta.config
        assert config.read_timeout == SDK_READ_TIMEOUT_LOCAL_S > aws.SDK_READ_TIMEOUT_S
        assert config.connect_timeout == aws.SDK_CONNECT_TIMEOUT_S
        assert config.retries == {"mode": "standard", "total_max_attempts": aws.SDK_TOTAL_ATTEMPTS}
    finally:
        deshacer()

    # AND once the session ends, clients are back to the layer's 5 s
    assert aws.client("sqs", region_name="eu-south-2").meta.config.read_timeout == aws.SDK_READ_TIMEOUT_S


def test_the_template_never_sets_the_sdk_read_timeout() -> None:
    from mercadofresco import aws

    from tests.conftest import RAIZ

    # GIVEN / WHEN the template every deployment is made from / THEN Lambda keeps the layer's 5 s
    assert aws.ENV_SDK_READ_TIMEOUT_S not in (RAIZ / "template.yaml").read_text()
