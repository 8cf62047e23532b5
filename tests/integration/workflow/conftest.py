"""The order workflow on moto: the template provisioned, the real charge handler, a loopback gateway.

``flujo`` provisions every resource of ``template.yaml`` in moto from its own definitions
(``mercadofresco_local.aprovisionar``), creates ``mercadofresco-procesar-pedido`` through the
Step Functions API from the ASL file with the template's substitutions, and routes its Lambda
tasks to ``functions/cobro/app.py`` in this process (``mercadofresco_local.moto_lambda``). The
gateway is the loopback stand-in; the breaker and retry budget live in a PRIVATE Redis (a test
that opens the ``pasarela`` circuit must not open anybody else's). Step Functions' Retry waits
are recorded instead of slept (``esperas``), so a test can assert them and still run fast.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mercadofresco_local.proveedores import Proveedores

TERMINALES = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}


@pytest.fixture(scope="session")
def redis_privado() -> Iterator[str]:
    """A redis-server of these tests only (flushed per test), on a free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        puerto = s.getsockname()[1]
    proceso = subprocess.Popen(
        ["redis-server", "--port", str(puerto), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{puerto}/0"
    import redis

    cliente = redis.Redis.from_url(url)
    for _ in range(100):
        try:
            cliente.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    yield url
    cliente.close()
    proceso.terminate()
    proceso.wait(timeout=5)


@pytest.fixture
def valkey(redis_privado: str) -> Iterator[Any]:
    import redis

    cliente = redis.Redis.from_url(redis_privado)
    cliente.flushall()
    yield cliente
    cliente.close()


@pytest.fixture
def esperas(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Seconds Step Functions' Retry asked to wait, recorded instead of slept."""
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    pedidas: list[float] = []
    reloj = SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if not n.startswith("_")})
    reloj.sleep = pedidas.append
    monkeypatch.setattr(retrier_decl, "time", reloj)
    return pedidas


@dataclass
class Flujo:
    """The provisioned workflow and what the tests observe of it."""

    sfn: Any
    arn: str
    proveedores: Proveedores
    registro: Any  # moto_lambda.Registro
    fisicos: dict[str, Any]
    observador_bus: str  # queue receiving PedidoRechazado / PedidoCancelado
    _n: int = field(default=0)

    @property
    def pasarela(self) -> Any:
        return self.proveedores.pasarela

    def arrancar(self, entrada: Any, nombre: str | None = None) -> str:
        self._n += 1
        texto = entrada if isinstance(entrada, str) else json.dumps(entrada)
        return self.sfn.start_execution(stateMachineArn=self.arn, name=nombre or f"e{self._n}", input=texto)[
            "executionArn"
        ]

    def esperar(self, ejecucion: str, limite_s: float = 30) -> dict[str, Any]:
        fin = time.monotonic() + limite_s
        while time.monotonic() < fin:
            d = self.sfn.describe_execution(executionArn=ejecucion)
            if d["status"] in TERMINALES:
                return d
            time.sleep(0.05)
        raise AssertionError(f"{ejecucion} still running after {limite_s} s")

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
        import boto3

        tabla = self.fisicos["TablaIdempotencia"]["Ref"]
        return (
            boto3.client("dynamodb").get_item(TableName=tabla, Key={"clave": {"S": f"pedido:{pedido_id}"}}).get("Item")
        )


@pytest.fixture
def flujo(aws: None, redis_privado: str, valkey: Any, esperas: list[float]) -> Iterator[Flujo]:
    import boto3
    from mercadofresco_local.aprovisionar import Aprovisionador
    from mercadofresco_local.moto_lambda import en_proceso
    from mercadofresco_local.plantilla import Plantilla
    from mercadofresco_local.proveedores import Proveedores

    plantilla = Plantilla()
    with Proveedores() as proveedores:
        entorno = {**proveedores.entorno(), "REDIS_URL": redis_privado}
        aprovisionador = Aprovisionador(plantilla, entorno_local=entorno).aprovisionar()
        fisicos = plantilla.fisicos
        observador = _observar_bus(fisicos)
        with en_proceso(aprovisionador.funciones.handlers()) as registro:
            yield Flujo(
                sfn=boto3.client("stepfunctions"),
                arn=aprovisionador.maquinas["ProcesarPedido"],
                proveedores=proveedores,
                registro=registro,
                fisicos=fisicos,
                observador_bus=observador,
            )


def _observar_bus(fisicos: dict[str, Any]) -> str:
    """A test-only queue receiving the workflow's own events (PedidoRechazado, PedidoCancelado)."""
    import boto3

    sqs, events = boto3.client("sqs"), boto3.client("events")
    url = sqs.create_queue(QueueName="observador-bus")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = fisicos["BusMercadoFresco"]["Name"]
    patron = {"source": ["mercadofresco.pedidos"]}
    events.put_rule(Name="observador", EventBusName=bus, EventPattern=json.dumps(patron))
    events.put_targets(Rule="observador", EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}])
    return url
