"""Migrations at deploy time: the CloudFormation custom resource behind ``functions/migraciones``.

On Create and Update the resource connects as the database's admin user, applies the layer's
migrations (:func:`~mercadofresco.outbox.migraciones.apply_migrations`, idempotent and
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
from mercadofresco.outbox.migraciones import apply_migrations

if TYPE_CHECKING:
    from collections.abc import Callable

    from psycopg import Connection

logger = logging.getLogger(__name__)

MARGEN_WATCHDOG_S = 10.0  # answer FAILED this long before the Lambda's own timeout
RESPUESTA_INTENTOS = 4
RESPUESTA_TIMEOUT_S = 10.0
MOTIVO_MAX = 1000  # CloudFormation's whole response body must stay under 4 KB


class RespuestaError(MercadoFrescoError):
    """CloudFormation's ResponseURL did not accept the answer after every attempt."""


@dataclass
class CustomResourceResponder:
    """Sends exactly one answer to a custom-resource event (the first caller wins)."""

    evento: dict[str, Any]
    id_fisico: str
    _enviado: threading.Lock = field(default_factory=threading.Lock)
    _hecho: bool = False

    def responder(self, estado: str, motivo: str = "", datos: dict[str, str] | None = None) -> bool:
        """PUT the answer; False when another answer already went out."""
        with self._enviado:
            if self._hecho:
                return False
            self._hecho = True
        cuerpo = json.dumps(
            {
                "Status": estado,
                "Reason": motivo[:MOTIVO_MAX],
                "PhysicalResourceId": self.id_fisico,
                "StackId": self.evento["StackId"],
                "RequestId": self.evento["RequestId"],
                "LogicalResourceId": self.evento["LogicalResourceId"],
                "NoEcho": False,
                "Data": datos or {},
            }
        ).encode()
        _put(self.evento["ResponseURL"], cuerpo)
        return True


def _put(url: str, cuerpo: bytes) -> None:
    """PUT with a few retries (full jitter): the pre-signed URL accepts the same body again."""
    ultimo: Exception | None = None
    for intento in range(RESPUESTA_INTENTOS):
        # An empty Content-Type: the URL is pre-signed without one, S3 refuses any other.
        peticion = urllib.request.Request(url, data=cuerpo, method="PUT", headers={"Content-Type": ""})
        try:
            with urllib.request.urlopen(peticion, timeout=RESPUESTA_TIMEOUT_S) as r:
                if 200 <= r.status < 300:
                    return
                ultimo = RespuestaError(f"ResponseURL answered HTTP {r.status}")
        except OSError as exc:  # URLError, HTTPError, timeouts
            ultimo = exc
        if intento + 1 < RESPUESTA_INTENTOS:
            time.sleep(random.uniform(0, min(8.0, 0.5 * 2**intento)))  # full jitter
    raise RespuestaError(f"could not answer CloudFormation after {RESPUESTA_INTENTOS} attempts: {ultimo}")


def create_runtime_role(conn: Connection, usuario: str, password: str) -> None:
    """Create (or update the password of) the runtime role: read/write data in the current schema only.

    No CREATE on the schema, no DDL, no role attributes: a compromised function cannot change
    the schema or read another database. Default privileges cover tables added by later migrations.
    """
    from psycopg import sql  # the driver is the connection's: loaded by connect, not by importing this module

    rol = sql.Identifier(usuario)
    existe = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (usuario,)).fetchone()
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
    usuario: str
    password: str


def read_credentials(secreto_arn: str) -> Credentials:
    """username/password of a Secrets Manager secret (JSON, as RDS and the template write them)."""
    from mercadofresco import aws

    valor = json.loads(aws.client("secretsmanager").get_secret_value(SecretId=secreto_arn)["SecretString"])
    return Credentials(valor["username"], valor["password"])


def connect(config: DatabaseConfig, timeout_s: float) -> Connection:
    """One autocommit connection as the admin user (``DATABASE_URL`` locally; Aurora over TLS deployed)."""
    import psycopg

    espera = max(1, min(10, int(timeout_s)))
    if config.database_url:
        return psycopg.connect(config.database_url, autocommit=True, connect_timeout=espera)
    return psycopg.connect(**aurora_parameters(config), autocommit=True, connect_timeout=espera)


def migrate_from_properties(propiedades: dict[str, Any], plazo_s: float, database_url: str | None) -> dict[str, str]:
    """Create/Update: the resource's properties name the endpoint, the database and both secrets."""
    admin = DatabaseConfig(
        database_url=database_url,
        endpoint=propiedades.get("Endpoint") or None,
        database=propiedades.get("Database") or "mercadofresco",
        secret_arn=propiedades.get("AdminSecretArn") or None,
    )
    runtime_arn = propiedades.get("RuntimeSecretArn") or ""
    runtime = read_credentials(runtime_arn) if runtime_arn and runtime_arn != admin.secret_arn else None
    with connect(admin, plazo_s) as conn:
        return apply(conn, runtime, statement_timeout_ms=int(plazo_s * 1000))


def apply(conn: Connection, runtime: Credentials | None, *, statement_timeout_ms: int) -> dict[str, str]:
    """Apply pending migrations and (re)create the runtime role; what the resource reports back."""
    from psycopg import sql  # see create_runtime_role

    conn.execute(sql.SQL("SET statement_timeout = {}").format(sql.Literal(statement_timeout_ms)))
    aplicadas = apply_migrations(conn)
    if runtime is not None:
        with conn.transaction():
            create_runtime_role(conn, runtime.usuario, runtime.password)
    version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return {
        "Aplicadas": ",".join(aplicadas),
        "Version": (version[0] if version else None) or "",
        "RolRuntime": runtime.usuario if runtime else "",
    }


def run(
    evento: dict[str, Any],
    restante_ms: Callable[[], int],
    trabajo: Callable[[dict[str, Any], float], dict[str, str]],
) -> str:
    """Handle one custom-resource event and always answer it; return the status sent.

    ``trabajo(propiedades, plazo_s)`` does Create/Update's work within ``plazo_s`` seconds.
    """
    propiedades = evento.get("ResourceProperties") or {}
    id_fisico = evento.get("PhysicalResourceId") or f"migraciones-{propiedades.get('Database', 'mercadofresco')}"
    respondedor = CustomResourceResponder(evento, id_fisico)
    plazo_s = max(1.0, restante_ms() / 1000 - MARGEN_WATCHDOG_S)
    watchdog = threading.Timer(
        plazo_s, respondedor.responder, args=("FAILED", f"migrations did not finish within {plazo_s:.0f} s")
    )
    watchdog.daemon = True
    watchdog.start()
    try:
        tipo = evento.get("RequestType")
        if tipo == "Delete":
            # The data outlives the stack (the cluster snapshots on delete): nothing to undo.
            datos: dict[str, str] = {}
        elif tipo in ("Create", "Update"):
            datos = trabajo(propiedades, plazo_s)
        else:
            raise ValueError(f"unknown RequestType {tipo!r}")
    except Exception as exc:  # every failure becomes FAILED with its reason, never a silent hang
        logger.exception("custom resource %s failed", evento.get("LogicalResourceId"))
        respondedor.responder("FAILED", f"{type(exc).__name__}: {exc}")
        return "FAILED"
    finally:
        watchdog.cancel()
    respondedor.responder("SUCCESS", "", datos)
    return "SUCCESS"
