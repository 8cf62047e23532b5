"""Aurora TLS verifies the server whenever an RDS CA bundle is at hand (issue 16)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mercadofresco import db

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def _entorno_desplegado(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("AURORA_SSLROOTCERT", raising=False)
    monkeypatch.setenv("AURORA_ENDPOINT", "aurora-mf-escritor.cluster-x.eu-south-2.rds.amazonaws.com")
    monkeypatch.setenv("AURORA_SECRET_ARN", "arn:aws:secretsmanager:eu-south-2:123456789012:secret:aurora")


def test_config_bd_bundle_shipped_in_the_layer_is_the_default_root_certificate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # GIVEN a deployed environment and a layer that ships the RDS CA bundle
    bundle = tmp_path / "rds-global-bundle.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setattr(db, "CA_RDS_EN_CAPA", bundle)
    _entorno_desplegado(monkeypatch)
    # WHEN the configuration is read from the environment
    config = db.DatabaseConfig.from_env()
    # THEN the bundle is the root certificate, so connections use verify-full
    assert config.sslrootcert == str(bundle)


def test_config_bd_explicit_root_certificate_wins_over_the_layer_bundle(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # GIVEN a bundle in the layer and AURORA_SSLROOTCERT naming another one (RDS Proxy's Amazon roots)
    bundle = tmp_path / "rds-global-bundle.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setattr(db, "CA_RDS_EN_CAPA", bundle)
    _entorno_desplegado(monkeypatch)
    monkeypatch.setenv("AURORA_SSLROOTCERT", "/opt/amazon-root-ca.pem")
    # WHEN / THEN the explicit one is used
    assert db.DatabaseConfig.from_env().sslrootcert == "/opt/amazon-root-ca.pem"


def test_config_bd_without_any_bundle_has_no_root_certificate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # GIVEN a layer built without the bundle
    monkeypatch.setattr(db, "CA_RDS_EN_CAPA", tmp_path / "absent.pem")
    _entorno_desplegado(monkeypatch)
    # WHEN / THEN there is no root certificate (sslmode=require, a warning when connecting)
    assert db.DatabaseConfig.from_env().sslrootcert is None
