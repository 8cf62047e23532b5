"""PostgreSQL connections for Lambda: one small pool per execution environment, reused.

- Local run / tests: ``DATABASE_URL`` (plain, no TLS) wins when set.
- Deployed: ``AURORA_ENDPOINT`` + ``AURORA_DATABASE``; username/password from the Secrets
  Manager secret ``AURORA_SECRET_ARN`` through Powertools Parameters (cached ``secret_max_age_s``,
  re-read when the pool opens a new connection, so a rotated password is picked up); TLS always
  ``verify-full`` against a CA bundle: ``AURORA_SSLROOTCERT`` when set, else the one the layer
  ships at ``mercadofresco/certificados/rds-global-bundle.pem`` (Amazon RDS's CAs + Amazon Root
  CA 1 for RDS Proxy; provenance in the README next to it, ``make rds-ca`` refreshes it). A
  layer without it refuses to connect rather than fall back to an unverified ``require``.
- After a failover or a restart the pool's ``check`` finds the dead connection before it is
  handed out and opens a new one; ``target_session_attrs=read-write`` refuses a demoted
  writer; ``max_lifetime_s`` bounds how long a connection outlives a DNS change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mercadofresco import aws
from mercadofresco.process_cache import per_environment

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["RDS_CA_BUNDLE", "DatabaseConfig", "aurora_parameters", "create_pool", "shared_pool"]


# Amazon RDS's CA bundle (and Amazon Root CA 1), shipped in the layer; ``make rds-ca`` refreshes it.
RDS_CA_BUNDLE = Path(__file__).parent / "certificados" / "rds-global-bundle.pem"


def _default_ca() -> str | None:
    """``AURORA_SSLROOTCERT`` (another trust anchor: a test level's CA), else the layer's bundle."""
    return os.environ.get("AURORA_SSLROOTCERT") or (str(RDS_CA_BUNDLE) if RDS_CA_BUNDLE.is_file() else None)


@dataclass(frozen=True, slots=True)
class DatabaseConfig:
    """Where the database is and how to reach it."""

    database_url: str | None = None
    endpoint: str | None = None
    database: str = "mercadofresco"
    secret_arn: str | None = None
    port: int = 5432
    # Read when the configuration is built, so every DatabaseConfig (the migrations' admin one too) verifies.
    sslrootcert: str | None = field(default_factory=_default_ca)
    secret_max_age_s: int = 300
    connect_timeout_s: int = 5
    pool_wait_s: float = 10.0
    max_lifetime_s: float = 600.0

    def __post_init__(self) -> None:
        if not self.database_url and not (self.endpoint and self.secret_arn):
            raise ValueError("set DATABASE_URL (local) or AURORA_ENDPOINT and AURORA_SECRET_ARN (deployed)")

    @classmethod
    def from_env(cls) -> DatabaseConfig:
        return cls(
            database_url=os.environ.get("DATABASE_URL") or None,
            endpoint=os.environ.get("AURORA_ENDPOINT") or None,
            database=os.environ.get("AURORA_DATABASE", "mercadofresco"),
            secret_arn=os.environ.get("AURORA_SECRET_ARN") or None,
            sslrootcert=_default_ca(),
        )


def aurora_parameters(config: DatabaseConfig) -> dict[str, Any]:
    """libpq keyword arguments for Aurora, credentials from the (cached) secret; TLS verifies the server."""
    if not config.sslrootcert:
        # Only a layer built without its bundle gets here: encrypting without verifying would let
        # anyone on the path answer as the database, so the connection is refused, with the fix.
        raise RuntimeError(
            f"no CA bundle to verify Aurora's certificate: {RDS_CA_BUNDLE} (make rds-ca) or AURORA_SSLROOTCERT"
        )
    secret = aws.read_secret(config.secret_arn, transform="json", max_age_s=config.secret_max_age_s)
    parameters: dict[str, Any] = {
        "host": config.endpoint,
        "port": int(secret.get("port", config.port)),
        "dbname": config.database,
        "user": secret["username"],
        "password": secret["password"],
        "sslmode": "verify-full",
        "sslrootcert": config.sslrootcert,
        "target_session_attrs": "read-write",
    }
    return parameters


def create_pool(config: DatabaseConfig, *, max_size: int = 1, **options: Any) -> ConnectionPool:
    """An open pool; one connection suffices for a Lambda (one invocation at a time)."""
    # The driver (layers/postgres) is imported by the first pool, not by importing this module:
    # ~100 ms of a cold start's init phase otherwise (bench/bench_cold_start.py).
    from psycopg_pool import ConnectionPool

    common = {
        "connect_timeout": config.connect_timeout_s,
        "application_name": os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "mercadofresco"),
        "keepalives_idle": 30,
    }
    if config.database_url:
        conninfo, kwargs = config.database_url, common
    else:
        # A callable: evaluated for every new connection (new password after a rotation).
        conninfo, kwargs = "", lambda: {**aurora_parameters(config), **common}
    return ConnectionPool(
        conninfo,
        kwargs=kwargs,
        min_size=1,
        max_size=max_size,
        open=True,
        check=ConnectionPool.check_connection,
        timeout=config.pool_wait_s,
        max_lifetime=config.max_lifetime_s,
        name="mercadofresco",
        **options,
    )


@per_environment(close=lambda pool: pool.close())
def shared_pool() -> ConnectionPool:
    """The execution environment's pool, created on first use and reused by warm invocations."""
    return create_pool(DatabaseConfig.from_env())
