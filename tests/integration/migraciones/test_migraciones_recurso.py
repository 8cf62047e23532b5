"""The deploy-time migrations custom resource on the real PostgreSQL, answering a loopback ResponseURL."""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from mercadofresco.aws import client
from mercadofresco.outbox.exceptions import MigrationError
from mercadofresco.outbox.schema import migration_files, verify_migrations
from psycopg.conninfo import make_conninfo

from tests.conftest import load_event

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.integration

ULTIMA_VERSION = migration_files()[-1][0]


class CloudFormationLocal:
    """A loopback stand-in for the pre-signed ResponseURL: records each PUT body, answers ``estado_http``."""

    def __init__(self) -> None:
        self.respuestas: list[dict[str, Any]] = []
        self.estados_http: list[int] = []
        padre = self

        class _Manejador(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                cuerpo = self.rfile.read(int(self.headers["Content-Length"]))
                estado = padre.estados_http.pop(0) if padre.estados_http else 200
                if estado == 200:
                    padre.respuestas.append(json.loads(cuerpo))
                self.send_response(estado)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.servidor = ThreadingHTTPServer(("127.0.0.1", 0), _Manejador)
        self.url = f"http://127.0.0.1:{self.servidor.server_port}/respuesta?X-Amz-Signature=local"
        self.hilo = threading.Thread(target=self.servidor.serve_forever, daemon=True)

    def __enter__(self) -> CloudFormationLocal:
        self.hilo.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.servidor.shutdown()
        self.servidor.server_close()
        self.hilo.join()


@pytest.fixture
def cfn() -> Iterator[CloudFormationLocal]:
    with CloudFormationLocal() as servidor:
        yield servidor


@pytest.fixture
def rol_runtime(aws: None, pg_dsn: str) -> Iterator[tuple[str, str, str]]:
    """(role name, password, secret ARN) of a runtime role this test owns; dropped afterwards."""
    rol, password = f"mf_app_{uuid.uuid4().hex[:10]}", uuid.uuid4().hex
    arn = client("secretsmanager").create_secret(
        Name=f"aurora-runtime-{rol}", SecretString=json.dumps({"username": rol, "password": password})
    )["ARN"]
    yield rol, password, arn
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (rol,)).fetchone():
            conn.execute(f'DROP OWNED BY "{rol}"')
            conn.execute(f'DROP ROLE "{rol}"')


def _evento(nombre: str, cfn: CloudFormationLocal, runtime_arn: str) -> dict[str, Any]:
    evento = load_event(nombre)
    evento["ResponseURL"] = cfn.url
    evento["ResourceProperties"]["RuntimeSecretArn"] = runtime_arn
    return evento


def test_migraciones_create_then_update_migrate_once_and_create_a_data_only_role(
    pg_dsn: str,
    cfn: CloudFormationLocal,
    rol_runtime: tuple[str, str, str],
    app_module: Callable[..., Any],
    lambda_context: Any,
) -> None:
    rol, password, arn = rol_runtime
    app = app_module("migraciones", DATABASE_URL=pg_dsn)
    # GIVEN a fresh database WHEN CloudFormation creates the resource, then updates it (a new layer)
    creado = app.lambda_handler(_evento("migraciones-create.json", cfn, arn), lambda_context)
    actualizado = app.lambda_handler(_evento("migraciones-update.json", cfn, arn), lambda_context)
    # THEN both answered SUCCESS once each, the first applied every migration, the second none
    assert (creado, actualizado) == ({"estado": "SUCCESS"}, {"estado": "SUCCESS"})
    primera, segunda = cfn.respuestas
    assert [r["Status"] for r in cfn.respuestas] == ["SUCCESS", "SUCCESS"]
    assert primera["Data"]["Aplicadas"].split(",") == [v for v, _ in migration_files()]
    assert (segunda["Data"]["Aplicadas"], segunda["Data"]["Version"]) == ("", ULTIMA_VERSION)
    assert primera["PhysicalResourceId"] == segunda["PhysicalResourceId"]  # an update never replaces it
    assert primera["RequestId"] == load_event("migraciones-create.json")["RequestId"]
    # AND the runtime role reads and writes data but cannot change the schema
    with psycopg.connect(make_conninfo(pg_dsn, user=rol, password=password), autocommit=True) as conn:
        verify_migrations(conn)
        assert conn.execute("SELECT count(*) FROM outbox").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE TABLE intrusa (x int)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DROP TABLE outbox")


def test_migraciones_delete_answers_success_without_touching_the_database(
    cfn: CloudFormationLocal, rol_runtime: tuple[str, str, str], app_module: Callable[..., Any], lambda_context: Any
) -> None:
    # GIVEN a database nobody can reach (the stack is being deleted or rolled back)
    app = app_module("migraciones", DATABASE_URL="postgresql://postgres@127.0.0.1:1/nadie")
    # WHEN CloudFormation deletes the resource
    estado = app.lambda_handler(_evento("migraciones-delete.json", cfn, rol_runtime[2]), lambda_context)
    # THEN it answers SUCCESS (the data outlives the stack) and keeps the physical id
    assert estado == {"estado": "SUCCESS"}
    (respuesta,) = cfn.respuestas
    assert (respuesta["Status"], respuesta["PhysicalResourceId"]) == ("SUCCESS", "migraciones-mercadofresco")


def test_migraciones_unreachable_database_answers_failed_with_the_reason(
    cfn: CloudFormationLocal, rol_runtime: tuple[str, str, str], app_module: Callable[..., Any], lambda_context: Any
) -> None:
    # GIVEN a database that refuses connections
    app = app_module("migraciones", DATABASE_URL="postgresql://postgres@127.0.0.1:1/nadie")
    # WHEN CloudFormation creates the resource
    estado = app.lambda_handler(_evento("migraciones-create.json", cfn, rol_runtime[2]), lambda_context)
    # THEN the stack hears FAILED with the reason at once (no hour-long wait for a timeout)
    assert estado == {"estado": "FAILED"}
    (respuesta,) = cfn.respuestas
    assert respuesta["Status"] == "FAILED" and "OperationalError" in respuesta["Reason"]


def test_migraciones_response_url_refusing_once_is_retried(
    pg_dsn: str,
    cfn: CloudFormationLocal,
    rol_runtime: tuple[str, str, str],
    app_module: Callable[..., Any],
    lambda_context: Any,
) -> None:
    # GIVEN a ResponseURL that answers 503 once
    cfn.estados_http.append(503)
    app = app_module("migraciones", DATABASE_URL=pg_dsn)
    # WHEN the resource is created THEN the answer is sent again and accepted
    assert app.lambda_handler(_evento("migraciones-create.json", cfn, rol_runtime[2]), lambda_context) == {
        "estado": "SUCCESS"
    }
    assert [r["Status"] for r in cfn.respuestas] == ["SUCCESS"]


def test_verificar_migraciones_schema_behind_names_the_pending_versions(pg_dsn: str) -> None:
    # GIVEN a schema nobody migrated (a deployed function whose deploy did not run the migrations)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        # WHEN / THEN the cold-start check refuses, naming what is missing and who applies it
        with pytest.raises(MigrationError, match=r"MigracionesAurora") as exc:
            verify_migrations(conn)
        assert ULTIMA_VERSION in str(exc.value)
