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
    _send_lock: threading.Lock = field(default_factory=threading.Lock)
    _sent: bool = False

    def send(self, status: str, reason: str = "", data: dict[str, str] | None = None) -> bool:
        """PUT the answer; False when another answer already went out."""
        with self._send_lock:
            if self._sent:
                return False
            self._sent = True
        body = json.dumps(
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
        _put(self.event["ResponseURL"], body)
        return True


def _put(url: str, body: bytes) -> None:
    """PUT with a few retries (full jitter): the pre-signed URL accepts the same body again."""
    last_error: Exception | None = None
    for attempt in range(RESPONSE_ATTEMPTS):
        # An empty Content-Type: the URL is pre-signed without one, S3 refuses any other.
        request = urllib.request.Request(url, data=body, method="PUT", headers={"Content-Type": ""})
        try:
            with urllib.request.urlopen(request, timeout=RESPONSE_TIMEOUT_S) as r:
                if 200 <= r.status < 300:
                    return
                last_error = ResponseError(f"ResponseURL answered HTTP {r.status}")
        except OSError as exc:  # URLError, HTTPError, timeouts
            last_error = exc
        if attempt + 1 < RESPONSE_ATTEMPTS:
            time.sleep(random.uniform(0, min(8.0, 0.5 * 2**attempt)))  # full jitter
    raise ResponseError(f"could not answer CloudFormation after {RESPONSE_ATTEMPTS} attempts: {last_error}")


def create_runtime_role(conn: Connection, username: str, password: str) -> None:
    """Create (or update the password of) the runtime role: read/write data in the current schema only.

    No CREATE on the schema, no DDL, no role attributes: a compromised function cannot change
    the schema or read another database. Default privileges cover tables added by later migrations.
    """
    from psycopg import sql  # the driver is the connection's: loaded by connect, not by importing this module

    role = sql.Identifier(username)
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (username,)).fetchone()
    verb = sql.SQL("ALTER ROLE") if exists else sql.SQL("CREATE ROLE")
    conn.execute(
        sql.SQL("{} {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD {}").format(
            verb, role, sql.Literal(password)
        )
    )
    schema = sql.Identifier(conn.execute("SELECT current_schema()").fetchone()[0])  # type: ignore[index]
    base = sql.Identifier(conn.info.dbname)
    for statement in (
        "GRANT CONNECT ON DATABASE {base} TO {role}",
        "GRANT USAGE ON SCHEMA {schema} TO {role}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {role}",
        "ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {role}",
        "ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES TO {role}",
    ):
        conn.execute(sql.SQL(statement).format(base=base, schema=schema, role=role))


@dataclass(frozen=True, slots=True)
class Credentials:
    username: str
    password: str


def read_credentials(secret_arn: str) -> Credentials:
    """username/password of a Secrets Manager secret (JSON, as RDS and the template write them)."""
    from mercadofresco import aws

    value = json.loads(aws.client("secretsmanager").get_secret_value(SecretId=secret_arn)["SecretString"])
    return Credentials(value["username"], value["password"])


def connect(config: DatabaseConfig, timeout_s: float) -> Connection:
    """One autocommit connection as the admin user (``DATABASE_URL`` locally; Aurora over TLS deployed)."""
    import psycopg

    connect_timeout_s = max(1, min(10, int(timeout_s)))
    if config.database_url:
        return psycopg.connect(config.database_url, autocommit=True, connect_timeout=connect_timeout_s)
    return psycopg.connect(**aurora_parameters(config), autocommit=True, connect_timeout=connect_timeout_s)


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
    applied = apply_migrations(conn)
    if runtime is not None:
        with conn.transaction():
            create_runtime_role(conn, runtime.username, runtime.password)
    version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return {
        "Aplicadas": ",".join(applied),
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
    responder = CustomResourceResponder(event, physical_id)
    time_budget_s = max(1.0, remaining_ms() / 1000 - WATCHDOG_MARGIN_S)
    watchdog = threading.Timer(
        time_budget_s, responder.send, args=("FAILED", f"migrations did not finish within {time_budget_s:.0f} s")
    )
    watchdog.daemon = True
    watchdog.start()
    try:
        request_type = event.get("RequestType")
        if request_type == "Delete":
            # The data outlives the stack (the cluster snapshots on delete): nothing to undo.
            data: dict[str, str] = {}
        elif request_type in ("Create", "Update"):
            data = work(properties, time_budget_s)
        else:
            raise ValueError(f"unknown RequestType {request_type!r}")
    except Exception as exc:  # every failure becomes FAILED with its reason, never a silent hang
        logger.exception("custom resource %s failed", event.get("LogicalResourceId"))
        responder.send("FAILED", f"{type(exc).__name__}: {exc}")
        return "FAILED"
    finally:
        watchdog.cancel()
    responder.send("SUCCESS", "", data)
    return "SUCCESS"
