"""Shared fixtures: events, handlers as Lambda loads them, moto, and isolated PostgreSQL/Redis.

Isolation: each test gets its own PostgreSQL schema (``pg_dsn``) and its own Redis key
prefix (``redis_prefix``), so tests and developers running them at once never collide.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

# The provisioned order workflow (``flujo`` and its clock and waits): the workflow's tests and the
# contract suite of both engines use one copy.
pytest_plugins = ("tests.fixtures.flujo",)

RAIZ = Path(__file__).resolve().parents[1]
EVENTOS = RAIZ / "events"
FUNCIONES = RAIZ / "functions"

DATABASE_URL = os.environ.get("DATABASE_URL", "postgresql://postgres:postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")

# Never let a test reach a real account: fake credentials, a fixed region, before boto3 loads. The
# one place the tests' AWS identity is set; child processes (moto servers, CLIs, killed consumers)
# inherit it. A child started with an environment of its own takes CREDENCIALES_FALSAS.
CREDENCIALES_FALSAS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "eu-south-2",
    "AWS_REGION": "eu-south-2",
}
os.environ.update(
    CREDENCIALES_FALSAS,
    POWERTOOLS_METRICS_NAMESPACE="MercadoFresco/Tienda",
    POWERTOOLS_SERVICE_NAME="mercadofresco",
    POWERTOOLS_TRACE_DISABLED="true",
    POWERTOOLS_DEV="false",
)


def _perfiles_hypothesis() -> None:
    """Property-based tests: ``ci`` (default) is deterministic and CI-sized; ``largo`` is for a hunt on demand.

    ``HYPOTHESIS_PROFILE=largo pytest tests/unit/fuzz tests/integration/fuzz --timeout 0`` runs 20x the
    examples, randomised, with Hypothesis's example database so a failure found once is replayed first
    (``--timeout 0``: the consumers' properties then take longer than pytest-timeout's 300 s).
    """
    from hypothesis import HealthCheck, settings

    # Function-scoped fixtures (moto, a schema) are set up once per test, not per example: the
    # properties reset what they touch themselves, so that health check is noise here.
    comunes = {"deadline": None, "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}
    settings.register_profile("ci", derandomize=True, max_examples=25, database=None, print_blob=True, **comunes)
    settings.register_profile("largo", max_examples=500, **comunes)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_perfiles_hypothesis()


@pytest.fixture
def lambda_context() -> Any:
    """The same context object the local run gives handlers (30 s counting down)."""
    from sam_emulator.moto_lambda import LambdaContext

    return LambdaContext("mercadofresco-test", "arn:aws:lambda:eu-south-2:123456789012:function:mercadofresco-test")


def load_event(name: str) -> dict[str, Any]:
    """An event from ``events/`` (the files ``sam local invoke -e`` takes)."""
    return json.loads((EVENTOS / name).read_text())


@pytest.fixture
def app_module(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """Import ``functions/<name>/app.py`` the way Lambda does, after setting its environment.

    Each call imports a fresh module (module-level clients and config are re-created),
    under a unique name so several functions' ``app`` modules coexist.
    """

    from sam_emulator.moto_lambda import import_handler  # the loader the local run uses too

    def _load(name: str, **env: str) -> Any:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setattr(sys, "path", list(sys.path))  # the function's folder leaves sys.path after the test
        return import_handler(FUNCIONES / name / "app.py", f"mf_app_{name}_{uuid.uuid4().hex[:8]}")

    return _load


@pytest.fixture
def aws() -> Iterator[None]:
    """moto's in-process AWS, with Step Functions really executing state machines."""
    from moto import mock_aws
    from sam_emulator.moto_patches import atomic_dynamodb_writes, jsonata_evaluator

    # atomic writes and the JSONata/variables evaluator, as the local run's moto server has them
    with (
        atomic_dynamodb_writes(),
        jsonata_evaluator(),
        mock_aws(config={"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}),
    ):
        yield


@pytest.fixture
def fresh_environment() -> Iterator[None]:
    """A new execution environment: the layer's per-environment caches (pools, clients, config) start
    empty and are closed and forgotten afterwards, as when Lambda retires a container."""
    from mercadofresco.process_cache import reset_environment

    reset_environment()
    yield
    reset_environment()


@pytest.fixture
def moto_server() -> Iterator[str]:
    """moto as a real HTTP server on loopback (its URL), so other processes share this test's AWS.

    moto's backends are process-global: the server starts empty and is emptied afterwards.
    """
    import urllib.request

    from moto.server import ThreadedMotoServer

    servidor = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    servidor.start()
    host, puerto = servidor.get_host_and_port()
    url = f"http://{host}:{puerto}"

    def vaciar() -> None:
        reset = urllib.request.Request(f"{url}/moto-api/reset", method="POST")
        urllib.request.urlopen(reset, timeout=HANG_GUARD_S).close()

    vaciar()
    try:
        yield url
    finally:
        vaciar()
        servidor.stop()


def plantilla_con_clave(endpoint_url: str | None = None) -> Any:
    """``template.yaml`` resolved against moto, with a real KMS key as its ``DatosKey`` (alias/mercadofresco-datos).

    The one way the tests make the data key: in the in-process moto (the ``plantilla`` fixture)
    or, with ``endpoint_url``, in a moto server that other processes reach.
    """
    from mercadofresco.aws import client
    from sam_emulator.template import Template

    p = Template()
    kms = client("kms", endpoint_url=endpoint_url)
    clave = kms.create_key(Description="alias/mercadofresco-datos (local)")["KeyMetadata"]
    kms.create_alias(AliasName="alias/mercadofresco-datos", TargetKeyId=clave["KeyId"])
    p.physical_ids["DatosKey"] = {"Ref": clave["KeyId"], "Arn": clave["Arn"]}
    return p


@pytest.fixture
def plantilla(aws: None) -> Any:
    """``template.yaml`` resolved against the in-process moto, its data key created (:func:`plantilla_con_clave`)."""
    return plantilla_con_clave()


@pytest.fixture
def tabla_idempotencia(plantilla: Any) -> str:
    """``mercadofresco-idempotencia`` created in moto from the template's own definition."""
    import boto3
    from sam_emulator.template import create_table_from

    return create_table_from(boto3.client("dynamodb"), plantilla, "TablaIdempotencia")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    return DATABASE_URL


@pytest.fixture
def pg_dsn(postgres_url: str) -> Iterator[str]:
    """A DSN whose ``search_path`` is a schema of this test's own, dropped afterwards."""
    import psycopg

    esquema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{esquema}"')
    separador = "&" if "?" in postgres_url else "?"
    yield f"{postgres_url}{separador}options=-csearch_path%3D{esquema}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{esquema}" CASCADE')


@pytest.fixture(scope="session")
def redis_url() -> str:
    return REDIS_URL


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards."""
    import redis

    prefijo = f"test:{uuid.uuid4().hex[:12]}:"
    yield prefijo
    cliente = redis.Redis.from_url(redis_url)
    claves = list(cliente.scan_iter(match=f"{prefijo}*", count=1000))
    if claves:
        cliente.delete(*claves)
    cliente.close()


class RelojPrueba:
    """Epoch seconds that move only when the test says so (and by 1 ms per reading: moto compares strictly).

    Pass it wherever the code takes a clock (``clock=``, ``now_s=``, ``reloj=``) and its
    ``avanzar`` wherever it takes a ``sleep``: waits then cost no real time and cannot be
    shortened or stretched by a busy machine.
    """

    def __init__(self, inicio_s: float | None = None) -> None:
        self.t = time.time() if inicio_s is None else inicio_s

    def __call__(self) -> float:
        self.t += 0.001
        return self.t

    def avanzar(self, segundos: float) -> None:
        self.t += segundos


# Re-exported: the tests import them from here.
from sam_emulator.testing import HANG_GUARD_S, wait_until  # noqa: E402, F401  (tests import them from here)


@pytest.fixture
def reloj_sqs(monkeypatch: pytest.MonkeyPatch) -> RelojPrueba:
    """A :class:`RelojPrueba` that is also moto's SQS clock (visibility timeouts, ``DelaySeconds``, long polls).

    moto 5.2.5 reads ``unix_time``/``unix_time_millis`` imported into ``moto.sqs.models``, and a
    long poll (``WaitTimeSeconds``) waits on ``Queue.wait_for_messages(1)`` per empty round: that
    wait moves this clock instead of the wall clock, so an empty long poll returns at once.
    """
    import moto.sqs.models as sqs_models

    reloj = RelojPrueba()
    monkeypatch.setattr(sqs_models, "unix_time", lambda *a: reloj())
    monkeypatch.setattr(sqs_models, "unix_time_millis", lambda *a: reloj() * 1000)
    monkeypatch.setattr(sqs_models.Queue, "wait_for_messages", lambda _cola, timeout: reloj.avanzar(timeout))
    return reloj


@pytest.fixture
def stubbed() -> Iterator[Callable[[str], tuple[Any, Any]]]:
    """botocore's ``Stubber`` on a new client (the project's SDK policy): ``cliente, stubber = stubbed("sqs")``.

    The one Stubber fixture: it pins exact request shapes with no network and no moto. A request
    it was not told to expect fails at once; one it expected but never saw fails the test at the end.
    """
    from botocore.stub import Stubber
    from mercadofresco.aws import client

    activos: list[Any] = []

    def _crear(servicio: str) -> tuple[Any, Any]:
        cliente = client(servicio)
        stubber = Stubber(cliente)
        stubber.activate()
        activos.append(stubber)
        return cliente, stubber

    yield _crear
    for stubber in activos:
        stubber.deactivate()
    for stubber in activos:
        stubber.assert_no_pending_responses()
