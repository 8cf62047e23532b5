"""Migrations at deploy time: the CloudFormation custom resource behind ``functions/migraciones``.

On Create and Update the resource connects as the database's admin user, applies the layer's
migrations (:func:`~mercadofresco.outbox.schema.apply_migrations`, idempotent and
versioned) and creates or updates the runtime role, which may read and write data only. The
template passes the layer version as a property, so every deploy that ships new migration
files updates the resource and runs them once. Delete keeps the database as it is.

Whatever happens, CloudFormation gets an answer: a PUT to the pre-signed ``ResponseURL``
(stdlib HTTP, no extra dependency). A failure answers FAILED with its reason; a watchdog
answers FAILED shortly before the Lambda times out, so a stack never waits an hour for a
custom resource that died.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco.db import DatabaseConfig, aurora_parameters
from mercadofresco.errors import MercadoFrescoError
from mercadofresco.outbox.schema import apply_migrations

if TYPE_CHECKING:
    from collections.abc import Callable

    from psycopg import Connection

logger = logging.getLogger(__name__)

WATCHDOG_MARGIN_S = 10.0  # answer FAILED this long before the Lambda's own timeout
RESPONSE_ATTEMPTS = 4
RESPONSE_TIMEOUT_S = 10.0
REASON_MAX_CHARS = 1000  # CloudFormation's whole response body must stay under 4 KB


class ResponseError(MercadoFrescoError):
    """CloudFormation's ResponseURL did not accept the answer after every attempt."""


@dataclass
class CustomResourceResponder:
    """Sends exactly one answer to a custom-resource event (the first caller wins)."""

    event: dict[str, Any]
    physical_id: str
    _enviado: threading.Lock = field(default_factory=threading.Lock)
    _hecho: bool = False

    def send(self, status: str, reason: str = "", data: dict[str, str] | None = None) -> bool:
        """PUT the answer; False when another answer already went out."""
        with self._enviado:
            if self._hecho:
                return False
            self._hecho = True
        cuerpo = json.dumps(
            {
                "Status": status,
                "Reason": reason[:REASON_MAX_CHARS],
                "PhysicalResourceId": self.physical_id,
                "StackId": self.event["StackId"],
                "RequestId": self.event["RequestId"],
                "LogicalResourceId": self.event["LogicalResourceId"],
                "NoEcho": False,
                "Data": data or {},
            }
        ).encode()
        _put(self.event["ResponseURL"], cuerpo)
        return True


def _put(url: str, cuerpo: bytes) -> None:
    """PUT with a few retries (full jitter): the pre-signed URL accepts the same body again."""
    ultimo: Exception | None = None
    for intento in range(RESPONSE_ATTEMPTS):
        # An empty Content-Type: the URL is pre-signed without one, S3 refuses any other.
        peticion = urllib.request.Request(url, data=cuerpo, method="PUT", headers={"Content-Type": ""})
        try:
            with urllib.request.urlopen(peticion, timeout=RESPONSE_TIMEOUT_S) as r:
                if 200 <= r.status < 300:
                    return
                ultimo = ResponseError(f"ResponseURL answered HTTP {r.status}")
        except OSError as exc:  # URLError, HTTPError, timeouts
            ultimo = exc
        if intento + 1 < RESPONSE_ATTEMPTS:
            time.sleep(random.uniform(0, min(8.0, 0.5 * 2**intento)))  # full jitter
    raise ResponseError(f"could not answer CloudFormation after {RESPONSE_ATTEMPTS} attempts: {ultimo}")


def create_runtime_role(conn: Connection, username: str, password: str) -> None:
    """Create (or update the password of) the runtime role: read/write data in the current schema only.

    No CREATE on the schema, no DDL, no role attributes: a compromised function cannot change
    the schema or read another database. Default privileges cover tables added by later migrations.
    """
    from psycopg import sql  # the driver is the connection's: loaded by connect, not by importing this module

    rol = sql.Identifier(username)
    existe = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (username,)).fetchone()
    verbo = sql.SQL("ALTER ROLE") if existe else sql.SQL("CREATE ROLE")
    conn.execute(
        sql.SQL("{} {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD {}").format(
            verbo, rol, sql.Literal(password)
        )
    )
    esquema = sql.Identifier(conn.execute("SELECT current_schema()").fetchone()[0])  # type: ignore[index]
    base = sql.Identifier(conn.info.dbname)
    for sentencia in (
        "GRANT CONNECT ON DATABASE {base} TO {rol}",
        "GRANT USAGE ON SCHEMA {esquema} TO {rol}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {esquema} TO {rol}",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {esquema} TO {rol}",
        "ALTER DEFAULT PRIVILEGES IN SCHEMA {esquema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {rol}",
        "ALTER DEFAULT PRIVILEGES IN SCHEMA {esquema} GRANT USAGE, SELECT ON SEQUENCES TO {rol}",
    ):
        conn.execute(sql.SQL(sentencia).format(base=base, esquema=esquema, rol=rol))


@dataclass(frozen=True, slots=True)
class Credentials:
    username: str
    password: str


def read_credentials(secret_arn: str) -> Credentials:
    """username/password of a Secrets Manager secret (JSON, as RDS and the template write them)."""
    from mercadofresco import aws

    valor = json.loads(aws.client("secretsmanager").get_secret_value(SecretId=secret_arn)["SecretString"])
    return Credentials(valor["username"], valor["password"])


def connect(config: DatabaseConfig, timeout_s: float) -> Connection:
    """One autocommit connection as the admin user (``DATABASE_URL`` locally; Aurora over TLS deployed)."""
    import psycopg

    espera = max(1, min(10, int(timeout_s)))
    if config.database_url:
        return psycopg.connect(config.database_url, autocommit=True, connect_timeout=espera)
    return psycopg.connect(**aurora_parameters(config), autocommit=True, connect_timeout=espera)


def migrate_from_properties(
    properties: dict[str, Any], time_budget_s: float, database_url: str | None
) -> dict[str, str]:
    """Create/Update: the resource's properties name the endpoint, the database and both secrets."""
    admin = DatabaseConfig(
        database_url=database_url,
        endpoint=properties.get("Endpoint") or None,
        database=properties.get("Database") or "mercadofresco",
        secret_arn=properties.get("AdminSecretArn") or None,
    )
    runtime_arn = properties.get("RuntimeSecretArn") or ""
    runtime = read_credentials(runtime_arn) if runtime_arn and runtime_arn != admin.secret_arn else None
    with connect(admin, time_budget_s) as conn:
        return apply(conn, runtime, statement_timeout_ms=int(time_budget_s * 1000))


def apply(conn: Connection, runtime: Credentials | None, *, statement_timeout_ms: int) -> dict[str, str]:
    """Apply pending migrations and (re)create the runtime role; what the resource reports back."""
    from psycopg import sql  # see create_runtime_role

    conn.execute(sql.SQL("SET statement_timeout = {}").format(sql.Literal(statement_timeout_ms)))
    aplicadas = apply_migrations(conn)
    if runtime is not None:
        with conn.transaction():
            create_runtime_role(conn, runtime.username, runtime.password)
    version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return {
        "Aplicadas": ",".join(aplicadas),
        "Version": (version[0] if version else None) or "",
        "RolRuntime": runtime.username if runtime else "",
    }


def run(
    event: dict[str, Any],
    remaining_ms: Callable[[], int],
    work: Callable[[dict[str, Any], float], dict[str, str]],
) -> str:
    """Handle one custom-resource event and always answer it; return the status sent.

    ``work(properties, time_budget_s)`` does Create/Update's work within ``time_budget_s`` seconds.
    """
    properties = event.get("ResourceProperties") or {}
    physical_id = event.get("PhysicalResourceId") or f"migraciones-{properties.get('Database', 'mercadofresco')}"
    respondedor = CustomResourceResponder(event, physical_id)
    time_budget_s = max(1.0, remaining_ms() / 1000 - WATCHDOG_MARGIN_S)
    watchdog = threading.Timer(
        time_budget_s, respondedor.send, args=("FAILED", f"migrations did not finish within {time_budget_s:.0f} s")
    )
    watchdog.daemon = True
    watchdog.start()
    try:
        tipo = event.get("RequestType")
        if tipo == "Delete":
            # The data outlives the stack (the cluster snapshots on delete): nothing to undo.
            data: dict[str, str] = {}
        elif tipo in ("Create", "Update"):
            data = work(properties, time_budget_s)
        else:
            raise ValueError(f"unknown RequestType {tipo!r}")
    except Exception as exc:  # every failure becomes FAILED with its reason, never a silent hang
        logger.exception("custom resource %s failed", event.get("LogicalResourceId"))
        respondedor.send("FAILED", f"{type(exc).__name__}: {exc}")
        return "FAILED"
    finally:
        watchdog.cancel()
    respondedor.send("SUCCESS", "", data)
    return "SUCCESS"
