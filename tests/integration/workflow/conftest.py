"""The order workflow on moto: the template provisioned, the real charge handler, a loopback gateway.

``flujo`` provisions every resource of ``template.yaml`` in moto from its own definitions
(``sam_emulator.provisioning``), creates ``mercadofresco-procesar-pedido`` through the
Step Functions API from the ASL file with the template's substitutions, and routes its Lambda
tasks to ``functions/cobro/app.py`` in this process (``sam_emulator.moto_lambda``). The
gateway is the loopback stand-in; the breaker and retry budget live in a PRIVATE Redis (a test
that opens the ``pasarela`` circuit must not open anybody else's). Step Functions' Retry waits
are recorded instead of slept (``esperas``), and so are ``Wait`` states (``pausas``); both move the
clock the charge and claim functions read (``reloj``), so a lease really lapses during a Wait that
outlasts it, and the tests still run fast and never depend on timing.

``MF_ASL_FLUJO=/path/to/old.asl.json`` runs the same tests against another definition (e.g. the
previous commit's, from ``git show HEAD~1:statemachines/procesar_pedido.asl.json``), to see a
regression test fail on the workflow it guards against.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mercadofresco_local.proveedores import Proveedores

TERMINALES = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}


def tiempos_plantilla() -> Any:
    """template.yaml's time bounds (leases, Waits, TimeoutSeconds), read where they are declared: no copies."""
    from cfn_lint_mensajeria.tiempos import tiempos
    from cfnlint.decode import decode
    from mercadofresco_local import RAIZ

    plantilla, _ = decode(str(RAIZ / "template.yaml"))
    return tiempos(plantilla, RAIZ)


@pytest.fixture(scope="session")
def redis_privado() -> Iterator[str]:
    """A redis-server of these tests only (flushed per test), on a free loopback port (the local run's own)."""
    from sam_emulator.private_redis import PrivateRedis

    with PrivateRedis() as servidor:
        yield servidor.url


@pytest.fixture
def valkey(redis_privado: str) -> Iterator[Any]:
    import redis

    cliente = redis.Redis.from_url(redis_privado)
    cliente.flushall()
    yield cliente
    cliente.close()


@dataclass
class Reloj:
    """Epoch seconds as the handlers see them: the real clock plus every wait the workflow did not sleep."""

    desfase_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def avanzar(self, segundos: float) -> None:
        with self._lock:
            self.desfase_s += segundos

    def __call__(self) -> float:
        return time.time() + self.desfase_s


@pytest.fixture
def reloj() -> Reloj:
    return Reloj()


@pytest.fixture
def esperas(monkeypatch: pytest.MonkeyPatch, reloj: Reloj) -> list[float]:
    """Seconds Step Functions' Retry asked to wait, recorded instead of slept (the handlers' clock moves)."""
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    pedidas: list[float] = []

    def dormir(segundos: float) -> None:
        pedidas.append(segundos)
        reloj.avanzar(segundos)

    sustituto = SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if not n.startswith("_")})
    sustituto.sleep = dormir
    monkeypatch.setattr(retrier_decl, "time", sustituto)
    return pedidas


@pytest.fixture
def pausas(monkeypatch: pytest.MonkeyPatch, reloj: Reloj) -> list[int]:
    """Seconds of the workflow's Wait states, recorded instead of waited (the handlers' clock moves)."""
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

    hechas: list[int] = []

    def esperar(self: Any, env: Any, wait_seconds: int) -> None:
        hechas.append(wait_seconds)
        reloj.avanzar(wait_seconds)

    monkeypatch.setattr(WaitFunction, "_wait_interval", esperar)
    return hechas


@dataclass
class Flujo:
    """The provisioned workflow and what the tests observe of it."""

    sfn: Any
    arn: str
    proveedores: Proveedores
    registro: Any  # moto_lambda.Registro
    fisicos: dict[str, Any]
    observador_bus: str  # queue receiving PedidoRechazado / PedidoCancelado / PedidoNoConfirmado
    funciones: Any = None  # sam_emulator.functions.Functions
    _n: int = field(default=0)

    def modulo(self, logical_id: str) -> Any:
        """The handler module of a template function, as loaded in this process."""
        return self.funciones.by_id[logical_id].load()

    def envolver(self, logical_id: str, envoltura: Any) -> None:
        """Run ``envoltura(manejador_real, evento, contexto)`` for every invocation of that function."""
        funcion = self.funciones.by_id[logical_id]
        real = self.registro.handler_fn(funcion.name)
        self.registro.register_handler(funcion.name, lambda evento, contexto: envoltura(real, evento, contexto))

    @property
    def pasarela(self) -> Any:
        return self.proveedores.pasarela

    def arrancar(self, entrada: Any, nombre: str | None = None) -> str:
        self._n += 1
        texto = entrada if isinstance(entrada, str) else json.dumps(entrada)
        return self.sfn.start_execution(stateMachineArn=self.arn, name=nombre or f"e{self._n}", input=texto)[
            "executionArn"
        ]

    def esperar(self, ejecucion: str) -> dict[str, Any]:
        def terminada() -> dict[str, Any] | None:
            d = self.sfn.describe_execution(executionArn=ejecucion)
            return d if d["status"] in TERMINALES else None

        return wait_until(terminada, f"{ejecucion} to end")

    def ejecutar(self, entrada: Any) -> dict[str, Any]:
        return self.esperar(self.arrancar(entrada))

    def estados(self, ejecucion: str) -> list[str]:
        """Names of the states the execution entered, in order."""
        eventos = self.sfn.get_execution_history(executionArn=ejecucion, maxResults=1000)["events"]
        return [e["stateEnteredEventDetails"]["name"] for e in eventos if "stateEnteredEventDetails" in e]

    def mensajes(self, logical_id_o_url: str, maximo: int = 10) -> list[dict[str, Any]]:
        """Receive (and delete) what a queue holds now."""
        import boto3

        sqs = boto3.client("sqs")
        url = self.fisicos[logical_id_o_url]["QueueUrl"] if logical_id_o_url in self.fisicos else logical_id_o_url
        recibidos = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=maximo,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            WaitTimeSeconds=0,
        ).get("Messages", [])
        for m in recibidos:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return recibidos

    def eventos_bus(self) -> list[dict[str, Any]]:
        return [json.loads(m["Body"]) for m in self.mensajes(self.observador_bus)]

    def reclamo(self, pedido_id: str) -> dict[str, Any] | None:
        return self.registro_idempotencia(f"pedido:{pedido_id}")

    def registro_idempotencia(self, clave: str) -> dict[str, Any] | None:
        import boto3

        tabla = self.fisicos["TablaIdempotencia"]["Ref"]
        return boto3.client("dynamodb").get_item(TableName=tabla, Key={"clave": {"S": clave}}).get("Item")


@pytest.fixture
def flujo(
    aws: None, redis_privado: str, valkey: Any, esperas: list[float], pausas: list[int], reloj: Reloj
) -> Iterator[Flujo]:
    import boto3
    from mercadofresco_local.proveedores import Proveedores
    from sam_emulator.moto_lambda import in_process
    from sam_emulator.provisioning import Provisioner
    from sam_emulator.template import Template

    plantilla = Template()
    with Proveedores() as proveedores:
        entorno = {**proveedores.entorno(), "REDIS_URL": redis_privado}
        aprovisionador = Provisioner(plantilla, local_environment=entorno).provision()
        fisicos = plantilla.physical_ids
        observador = _observar_bus(fisicos)
        arn = aprovisionador.state_machines["ProcesarPedido"]
        if otra := os.environ.get("MF_ASL_FLUJO"):
            _sustituir_definicion(plantilla, arn, otra)
        _inyectar_reloj(aprovisionador.functions, reloj)
        with in_process(aprovisionador.functions.handlers()) as registro:
            yield Flujo(
                sfn=boto3.client("stepfunctions"),
                arn=arn,
                proveedores=proveedores,
                registro=registro,
                fisicos=fisicos,
                observador_bus=observador,
                funciones=aprovisionador.functions,
            )


def _inyectar_reloj(funciones: Any, reloj: Reloj) -> None:
    """The charge and claim functions read the tests' clock (their leases lapse while a Wait is skipped)."""
    cobro = funciones.by_id["CobroFunction"].load()
    cobro.operaciones.store._now_s = reloj
    cobro.operaciones.reloj_s = reloj
    if "ReclamoFunction" in funciones.by_id:
        reclamo = funciones.by_id["ReclamoFunction"].load()
        reclamo.reloj_s = reloj
        reclamo.store._now_s = reloj


def _sustituir_definicion(plantilla: Any, arn: str, ruta: str) -> None:
    import boto3
    from sam_emulator.provisioning import asl_definition

    props = {**plantilla.resources["ProcesarPedido"]["Properties"], "DefinitionUri": ruta}
    props = plantilla.resolve(props)
    definicion = asl_definition(props, plantilla.folder)
    boto3.client("stepfunctions").update_state_machine(stateMachineArn=arn, definition=definicion)


def _observar_bus(fisicos: dict[str, Any]) -> str:
    """A test-only queue receiving the workflow's own events (PedidoRechazado, PedidoCancelado, PedidoNoConfirmado)."""
    import boto3

    sqs, events = boto3.client("sqs"), boto3.client("events")
    url = sqs.create_queue(QueueName="observador-bus")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = fisicos["BusMercadoFresco"]["Name"]
    patron = {"source": ["mercadofresco.pedidos"]}
    events.put_rule(Name="observador", EventBusName=bus, EventPattern=json.dumps(patron))
    events.put_targets(Rule="observador", EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}])
    return url
