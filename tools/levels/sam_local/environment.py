"""What a sample event needs, started where a Lambda container reaches it.

``events/env-vars.json`` is the one source of the addresses: every URL in it names the Docker
bridge (172.17.0.1), where this module opens, for the length of a run only, a relay to the
service on loopback: moto's server (with ``template.yaml``'s resources, created by
``mercadofresco_local``'s provisioning), the provider stand-ins (one per provider the template's
functions call: each ``<DEPENDENCY>_URL`` variable the file names), and the shared PostgreSQL and
Redis. The functions write into a PostgreSQL schema and a Redis database of their own
(``mf_sam_local``, db 8: named in the file), emptied before each event and dropped at the end.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

from mercadofresco_local.firma import urls_firmadas

from sam_local.invoke import LOCAL_CREDENTIALS
from sam_local.relay import TcpRelay, relay_unless_reachable

if TYPE_CHECKING:
    from mercadofresco_local.proveedores import Proveedores

RAIZ = Path(__file__).resolve().parents[3]
ENV_VARS = RAIZ / "events" / "env-vars.json"
LOCK = Path(os.environ.get("TMPDIR", "/tmp")) / "mercadofresco-sam-local.lock"
# The host's own services (the Makefile's defaults): the relays' targets.
DATABASE_URL = os.environ.get("DATABASE_URL", "postgresql://postgres:postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
REGION = os.environ.get("AWS_DEFAULT_REGION", "eu-south-2")


PROVISIONING_READ_TIMEOUT_S = 120
LANE_PORT_STEP = 10  # lane N listens on the file's ports + 10 N


def load_env_vars(path: Path = ENV_VARS) -> dict[str, str]:
    """The ``Parameters`` of an ``--env-vars`` file (the values every function gets)."""
    return json.loads(path.read_text())["Parameters"]


def lane_env_vars(lane: int, directory: Path) -> Path:
    """The env-vars file of a parallel lane: lane 0 is ``events/env-vars.json`` itself; lane N
    has every bridge port + 10 N, its own schema and Redis database, so lanes share nothing."""
    if lane == 0:
        return ENV_VARS
    documento = json.loads(ENV_VARS.read_text())
    puente = urlsplit(documento["Parameters"]["AWS_ENDPOINT_URL"]).hostname

    def mover(valor: str) -> str:
        partes = urlsplit(valor)
        if "://" not in valor or partes.hostname != puente or partes.port is None:
            return valor
        netloc = partes.netloc.rsplit(":", 1)[0] + f":{partes.port + LANE_PORT_STEP * lane}"
        ruta, consulta = partes.path, partes.query
        if partes.scheme.startswith("redis"):
            ruta = f"/{int(ruta.strip('/') or 0) + lane}"
        if partes.scheme.startswith("postgres"):
            consulta = consulta.replace(_schema(valor), f"{_schema(valor)}_{lane}")
        return urlunsplit((partes.scheme, netloc, ruta, consulta, partes.fragment))

    derivado = {seccion: {k: mover(v) for k, v in variables.items()} for seccion, variables in documento.items()}
    directory.mkdir(parents=True, exist_ok=True)
    ruta = directory / f"env-vars-lane-{lane}.json"
    ruta.write_text(json.dumps(derivado, indent=2))
    return ruta


def _address(url: str) -> tuple[str, int]:
    partes = urlsplit(url)
    if partes.hostname is None or partes.port is None:
        raise ValueError(f"{url!r} in the env-vars file needs an explicit host and port")
    return partes.hostname, partes.port


def _schema(database_url: str) -> str:
    """The schema named by ``options=-csearch_path=<schema>`` in a libpq URL."""
    for opcion in parse_qs(urlsplit(database_url).query).get("options", []):
        for parte in unquote(opcion).split():
            if parte.startswith("-csearch_path="):
                return parte.split("=", 1)[1]
    raise ValueError(f"DATABASE_URL {database_url!r} in the env-vars file must set options=-csearch_path=<schema>")


def _on_host(url: str, base: str) -> str:
    """``url`` (as the container sees it) with ``base``'s host and port (as this host sees it)."""
    partes, destino = urlsplit(url), urlsplit(base)
    netloc = destino.netloc.rsplit("@", 1)[-1]
    credenciales = partes.netloc.rsplit("@", 1)[0] + "@" if "@" in partes.netloc else ""
    return urlunsplit((partes.scheme, credenciales + netloc, partes.path, partes.query, partes.fragment))


@dataclass
class LocalEnvironment:
    """``with LocalEnvironment() as env:`` moto, stand-ins and relays up; ``env.reset()`` between events."""

    env_vars_path: Path = ENV_VARS
    env_vars: dict[str, str] = field(init=False)
    proveedores: Proveedores | None = None
    recursos: dict[str, Any] = field(default_factory=dict)  # logical id -> physical ids (moto)
    firmadas: dict[str, str] = field(default_factory=dict)  # URL variables whose stand-in verifies SigV4
    _moto: Any = None
    _relays: dict[str, TcpRelay] = field(default_factory=dict)
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def __post_init__(self) -> None:
        self.env_vars = load_env_vars(self.env_vars_path)

    # -- the addresses, as the host sees them -------------------------------------------------
    @property
    def database_url(self) -> str:
        return _on_host(self.env_vars["DATABASE_URL"], DATABASE_URL)

    @property
    def redis_url(self) -> str:
        return _on_host(self.env_vars["REDIS_URL"], REDIS_URL)

    def __enter__(self) -> LocalEnvironment:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _start(self) -> None:
        from sam_emulator.moto_server import MotoServer
        from sam_emulator.provisioning import Provisioner
        from sam_emulator.template import Template

        # One run at a time on this host: the addresses in the env-vars file are fixed.
        cerrojo = self._stack.enter_context(LOCK.with_name(f"{LOCK.stem}-{self.env_vars_path.stem}.lock").open("w"))
        fcntl.flock(cerrojo, fcntl.LOCK_EX)
        self._moto = MotoServer(region=REGION).start()
        self._stack.callback(self._moto.stop)
        # This process only provisions and observes: moto parsing the state machine's ASL takes
        # seconds on a busy machine, past the functions' 5 s SDK read timeout (kept for them).
        from botocore.config import Config
        from mercadofresco import aws

        previo = aws.SDK_CONFIG
        aws.SDK_CONFIG = previo.merge(Config(read_timeout=PROVISIONING_READ_TIMEOUT_S))
        self._stack.callback(setattr, aws, "SDK_CONFIG", previo)
        aprovisionador = Provisioner(Template()).provision()
        self.recursos = aprovisionador.template.physical_ids
        self.firmadas = urls_firmadas(aprovisionador.template)
        self._relay("AWS_ENDPOINT_URL", ("127.0.0.1", self._moto.port))
        self._relay_service("DATABASE_URL", DATABASE_URL)
        self._relay_service("REDIS_URL", REDIS_URL)
        self._stack.callback(self._drop_schema)
        self._start_stand_ins()
        self._stack.callback(self._stop_stand_ins)
        self.reset()

    def _relay(self, variable: str, target: tuple[str, int]) -> None:
        relay = TcpRelay(_address(self.env_vars[variable]), target).start()
        self._relays[variable] = relay
        self._stack.callback(relay.stop)

    def _relay_service(self, variable: str, host_url: str) -> None:
        relay = relay_unless_reachable(_address(self.env_vars[variable]), _address(host_url))
        self._stack.enter_context(relay)

    def _start_stand_ins(self) -> None:
        from mercadofresco_local.firma import VerificadorSigV4
        from mercadofresco_local.proveedores import Proveedores

        self.proveedores = Proveedores().__enter__()
        # The template's defaults make every provider a sandbox behind AWS_IAM: its callers sign with
        # the containers' credentials, and the stand-in playing it refuses what Lambda would.
        stand_ins = self.proveedores.por_variable()
        for variable in self.firmadas:
            stand_ins[variable].verificador = VerificadorSigV4.de(LOCAL_CREDENTIALS, REGION)
        for variable, stand_in in stand_ins.items():
            if variable not in self.env_vars:
                raise ValueError(f"{self.env_vars_path} has no {variable}: give it a bridge address for its stand-in")
            destino = _address(stand_in.url)
            if variable in self._relays:
                self._relays[variable].target = destino  # fresh stand-ins behind the same address
            else:
                self._relay(variable, destino)

    def _stop_stand_ins(self) -> None:
        if self.proveedores is not None:
            self.proveedores.__exit__(None, None, None)
            self.proveedores = None

    # -- between events: nothing one event did is seen by the next ----------------------------
    def reset(self) -> None:
        """Fresh stand-ins, empty tables and queues, an empty schema and Redis database."""
        import psycopg
        from mercadofresco.aws import client
        from mercadofresco.outbox.schema import apply_migrations
        from mercadofresco_local.sesion import limpiar_redis

        self._stop_stand_ins()
        self._start_stand_ins()
        dynamodb, sqs = client("dynamodb"), client("sqs")
        for tabla in dynamodb.list_tables()["TableNames"]:
            clave = [k["AttributeName"] for k in dynamodb.describe_table(TableName=tabla)["Table"]["KeySchema"]]
            for pagina in dynamodb.get_paginator("scan").paginate(TableName=tabla):
                for item in pagina["Items"]:
                    dynamodb.delete_item(TableName=tabla, Key={k: item[k] for k in clave})
        for url in sqs.list_queues().get("QueueUrls", []):
            # Not PurgeQueue: SQS (and moto) allow one a minute per queue.
            while mensajes := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
                sqs.delete_message_batch(
                    QueueUrl=url,
                    Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(mensajes)],
                )
        esquema = _schema(self.env_vars["DATABASE_URL"])
        with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{esquema}" CASCADE')
            conn.execute(f'CREATE SCHEMA "{esquema}"')
        # Migrated, as a deploy leaves it (the MigracionesAurora custom resource): the store's
        # functions expect their tables; the outbox functions' own cold-start check finds nothing to do.
        with psycopg.connect(self.database_url) as conn:
            apply_migrations(conn)
        limpiar_redis(self.redis_url)

    def _drop_schema(self) -> None:
        import psycopg
        from mercadofresco_local.sesion import limpiar_redis

        with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{_schema(self.env_vars["DATABASE_URL"])}" CASCADE')
        limpiar_redis(self.redis_url)
