"""Aurora TLS always verifies the server: the layer ships the RDS CA bundle (issues 16, 26)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from mercadofresco import db

if TYPE_CHECKING:
    from pathlib import Path


def _entorno_desplegado(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("AURORA_SSLROOTCERT", raising=False)
    monkeypatch.setenv("AURORA_ENDPOINT", "aurora-mf-escritor.cluster-x.eu-south-2.rds.amazonaws.com")
    monkeypatch.setenv("AURORA_SECRET_ARN", "arn:aws:secretsmanager:eu-south-2:123456789012:secret:aurora")


def test_database_config_bundle_shipped_in_the_layer_is_the_default_root_certificate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # GIVEN a deployed environment and a layer that ships the RDS CA bundle
    bundle = tmp_path / "rds-global-bundle.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setattr(db, "RDS_CA_BUNDLE", bundle)
    _entorno_desplegado(monkeypatch)
    # WHEN the configuration is read from the environment
    config = db.DatabaseConfig.from_env()
    # THEN the bundle is the root certificate, so connections use verify-full
    assert config.sslrootcert == str(bundle)


def test_database_config_explicit_root_certificate_wins_over_the_layer_bundle(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # GIVEN a bundle in the layer and AURORA_SSLROOTCERT naming another one (RDS Proxy's Amazon roots)
    bundle = tmp_path / "rds-global-bundle.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setattr(db, "RDS_CA_BUNDLE", bundle)
    _entorno_desplegado(monkeypatch)
    monkeypatch.setenv("AURORA_SSLROOTCERT", "/opt/amazon-root-ca.pem")
    # WHEN / THEN the explicit one is used
    assert db.DatabaseConfig.from_env().sslrootcert == "/opt/amazon-root-ca.pem"


def test_the_layer_ships_the_bundle_so_a_plain_build_verifies(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a deployed environment and the layer as the repository builds it (no make rds-ca step)
    _entorno_desplegado(monkeypatch)
    # WHEN / THEN its bundle is there and is the default root certificate: verify-full
    assert db.RDS_CA_BUNDLE.is_file()
    assert db.DatabaseConfig.from_env().sslrootcert == str(db.RDS_CA_BUNDLE)
    # AND a configuration built in code (the migrations' admin one) verifies too
    assert db.DatabaseConfig(endpoint="h", secret_arn="arn").sslrootcert == str(db.RDS_CA_BUNDLE)


def test_without_any_bundle_the_connection_is_refused_not_left_unverified(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # GIVEN a layer built without the bundle
    monkeypatch.setattr(db, "RDS_CA_BUNDLE", tmp_path / "absent.pem")
    _entorno_desplegado(monkeypatch)
    config = db.DatabaseConfig.from_env()
    assert config.sslrootcert is None
    # WHEN / THEN no connection parameters are built (no silent sslmode=require), and the error says the fix
    with pytest.raises(RuntimeError, match="make rds-ca"):
        db.aurora_parameters(config)
