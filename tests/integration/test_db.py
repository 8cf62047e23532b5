"""Connection settings: Aurora credentials from Secrets Manager (moto), TLS, writer only; pool reuse."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from mercadofresco import db
from mercadofresco.aws import client
from mercadofresco.process_cache import reset_environment

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration


@pytest.fixture
def secreto(aws: None) -> Iterator[str]:
    reset_environment()  # a fresh container: no cached secret provider
    arn = client("secretsmanager").create_secret(
        Name="aurora-mf-escritor", SecretString=json.dumps({"username": "mf", "password": "s3cret"})
    )["ARN"]
    yield arn
    reset_environment()


def test_aurora_parameters_use_cached_secret_tls_and_writer_only(secreto: str) -> None:
    # GIVEN the deployed configuration (the layer's CA bundle by default)
    config = db.DatabaseConfig(endpoint="aurora-mf-escritor.cluster-x.eu-south-2.rds.amazonaws.com", secret_arn=secreto)
    # WHEN the connection parameters are built, then the password is rotated
    p = db.aurora_parameters(config)
    client("secretsmanager").put_secret_value(SecretId=secreto, SecretString='{"username": "mf", "password": "new"}')
    otra = db.aurora_parameters(config)
    # THEN credentials come from the secret, TLS verifies the server and a demoted writer is refused
    assert (p["user"], p["password"], p["sslmode"]) == ("mf", "s3cret", "verify-full")
    assert p["sslrootcert"] == str(db.RDS_CA_BUNDLE)
    assert p["target_session_attrs"] == "read-write"
    # AND the secret is cached (max age 5 min): no Secrets Manager call per connection
    assert otra["password"] == "s3cret"


def test_aurora_parameters_with_rds_ca_verify_the_certificate(secreto: str) -> None:
    # GIVEN a CA bundle path
    config = db.DatabaseConfig(endpoint="h", secret_arn=secreto, sslrootcert="/opt/rds-global-bundle.pem")
    # WHEN / THEN the server's certificate and host name are verified
    p = db.aurora_parameters(config)
    assert (p["sslmode"], p["sslrootcert"]) == ("verify-full", "/opt/rds-global-bundle.pem")


def test_database_config_without_url_or_aurora_settings_raises_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN an environment with neither DATABASE_URL nor AURORA_*
    for nombre in ("DATABASE_URL", "AURORA_ENDPOINT", "AURORA_SECRET_ARN"):
        monkeypatch.delenv(nombre, raising=False)
    # WHEN / THEN the error names what to set
    with pytest.raises(ValueError, match=r"DATABASE_URL.*AURORA_ENDPOINT"):
        db.DatabaseConfig.from_env()


def test_shared_pool_is_reused_across_invocations(pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the local configuration
    monkeypatch.setenv("DATABASE_URL", pg_dsn)
    db.shared_pool.cache_clear()
    try:
        # WHEN two invocations ask for the pool
        primero, segundo = db.shared_pool(), db.shared_pool()
        # THEN they get the same open pool, whose connection answers
        assert primero is segundo
        with primero.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        db.shared_pool().close()
        db.shared_pool.cache_clear()
