"""EventBridge Pipes run locally (moto creates pipes but never runs them).

Each ``AWS::Pipes::Pipe`` of the template is read for its source, filters, input template
and target, and run with Pipes' semantics:

- SQS source: polled like an event source mapping (``SqsQueueParameters.BatchSize``); a
  batch whose target call fails is not deleted, so the queue's own redrive applies;
- DynamoDB stream source: every shard read from ``StartingPosition``; a failed batch is
  retried ``MaximumRetryAttempts`` times, then sent to ``DeadLetterConfig`` (an SQS queue);
- ``FilterCriteria``: EventBridge patterns (moto's matcher) on each record; a record no
  filter matches is dropped (and, for SQS, deleted);
- ``InputTemplate``: ``<$.path>`` placeholders (the SQS body and DynamoDB images are JSON
  paths too) and ``<aws.pipes.event.json>``; inside quotes a value is inserted as text;
- targets: Step Functions (``StartExecution``, ``FIRE_AND_FORGET``, a unique name per
  batch), an event bus (``PutEvents`` with the target's ``Source``/``DetailType``), an
  SQS queue, or a function of the template. The target receives the batch as a JSON array.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sam_emulator.aws import client
from sam_emulator.background import BackgroundPart, BackgroundThread
from sam_emulator.event_sources import Mapeo, cola_de

if TYPE_CHECKING:
    from sam_emulator.functions import Funciones
    from sam_emulator.template import Plantilla
    from sam_emulator.ttl import BarredorTtl

_MARCADOR = re.compile(r"<(\$(?:\.[^<>]*)?|aws\.pipes\.[a-z.\-]+)>")
ESPERA_STREAM_S = 0.2
POLLERS_SQS = 5  # Pipes scales its SQS pollers by itself; five keep up with a laptop's workflow


class PipeError(Exception):
    """A pipe's target refused a batch."""


def aplicar_plantilla(plantilla: str | None, evento: dict[str, Any], nombre_pipe: str = "") -> Any:
    """Render a Pipes ``InputTemplate`` for one event; without a template the event passes as is."""
    if plantilla is None:
        return evento

    def sustituir(m: re.Match[str]) -> str:
        valor = _valor(m.group(1), evento, nombre_pipe)
        if _dentro_de_cadena(plantilla, m.start()):
            return json.dumps(valor if isinstance(valor, str) else json.dumps(valor))[1:-1]
        return json.dumps(valor)

    texto = _MARCADOR.sub(sustituir, plantilla)
    try:
        return json.loads(texto)
    except ValueError:
        return texto


def _dentro_de_cadena(texto: str, posicion: int) -> bool:
    """Whether ``posicion`` falls inside a JSON string literal of the template."""
    dentro, escapado = False, False
    for caracter in texto[:posicion]:
        if escapado:
            escapado = False
        elif caracter == "\\":
            escapado = True
        elif caracter == '"':
            dentro = not dentro
    return dentro


def _valor(ruta: str, evento: dict[str, Any], nombre_pipe: str) -> Any:
    if ruta == "aws.pipes.event.json":
        return evento
    if ruta == "aws.pipes.pipe-name":
        return nombre_pipe
    if ruta == "aws.pipes.event":
        return json.dumps(evento)
    valor: Any = evento
    for parte in [p for p in ruta[2:].split(".") if p]:
        if isinstance(valor, str):  # an SQS body is a JSON path too
            valor = json.loads(valor)
        valor = valor[int(parte)] if isinstance(valor, list) else valor[parte]
    return valor


@dataclass
class Destino:
    """A pipe's target, called with one batch (a JSON array after the input template)."""

    nombre_pipe: str
    arn: str
    parametros: dict[str, Any]
    plantilla_entrada: str | None
    funciones: Funciones
    llamadas: int = 0
    _cerrojo: threading.Lock = field(default_factory=threading.Lock)

    def enviar(self, eventos: list[dict[str, Any]]) -> None:
        cuerpos = [aplicar_plantilla(self.plantilla_entrada, e, self.nombre_pipe) for e in eventos]
        servicio = self.arn.split(":")[2]
        with self._cerrojo:
            self.llamadas += 1
        if servicio == "states":
            client("stepfunctions").start_execution(
                stateMachineArn=self.arn, name=f"{self.nombre_pipe}-{uuid.uuid4().hex}"[-80:], input=json.dumps(cuerpos)
            )
        elif servicio == "events":
            self._poner_eventos(cuerpos)
        elif servicio == "sqs":
            url = client("sqs").get_queue_url(QueueName=self.arn.rsplit(":", 1)[1])["QueueUrl"]
            for cuerpo in cuerpos:
                client("sqs").send_message(QueueUrl=url, MessageBody=_texto(cuerpo))
        elif servicio == "lambda":
            self.funciones.por_nombre(self.arn).invocar(cuerpos)
        else:
            raise PipeError(f"{self.nombre_pipe}: target {self.arn} is not run locally")

    def _poner_eventos(self, cuerpos: list[Any]) -> None:
        p = self.parametros.get("EventBridgeEventBusParameters", {})
        entradas = [
            {
                "EventBusName": self.arn,
                "Source": p.get("Source", f"Pipe {self.nombre_pipe}"),
                "DetailType": p.get("DetailType", "Event from aws:pipes"),
                "Detail": _texto(c),
                **({"Resources": p["Resources"]} if "Resources" in p else {}),
            }
            for c in cuerpos
        ]
        for i in range(0, len(entradas), 10):
            respuesta = client("events").put_events(Entries=entradas[i : i + 10])
            if respuesta.get("FailedEntryCount"):
                raise PipeError(f"{self.nombre_pipe}: PutEvents rejected {respuesta['FailedEntryCount']} entries")


def _epoch_s(valor: Any) -> float:
    return valor.timestamp()


def _texto(cuerpo: Any) -> str:
    return cuerpo if isinstance(cuerpo, str) else json.dumps(cuerpo)


class _DestinoComoFuncion:
    """Lets a :class:`Mapeo` poll an SQS source for a pipe: the 'function' is the target."""

    def __init__(self, destino: Destino, logical_id: str | None) -> None:
        self.destino = destino
        self.logical_id = logical_id  # the pipe's: its role makes the calls (sam_emulator.principal)
        self.errores = 0

    def invocar(self, evento: dict[str, Any]) -> None:
        try:
            self.destino.enviar(evento["Records"])
        except Exception:
            self.errores += 1
            raise


@dataclass
class PipeStream(BackgroundPart):
    """A DynamoDB stream → target pipe: shard readers with retry and a DLQ for a failed batch."""

    nombre: str
    stream_arn: str
    destino: Destino
    filtros: list[Any]
    tamano_lote: int = 10
    reintentos_max: int = 0
    dlq_arn: str | None = None
    posicion_inicial: str = "TRIM_HORIZON"
    barredor: BarredorTtl | None = None
    leidos: int = 0
    enviados: int = 0
    a_dlq: int = 0
    errores: list[str] = field(default_factory=list)  # reads lost to an API error (the next poll retries)
    _hilo: BackgroundThread = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._hilo = BackgroundThread(f"pipe-{self.nombre}", self._leer)

    def _leer(self, stop: threading.Event) -> None:
        streams = client("dynamodbstreams")
        iteradores: dict[str, str] = {}
        while not stop.is_set():
            try:
                iteradores = iteradores or self._iteradores(streams)
                for shard, iterador in list(iteradores.items()):
                    respuesta = streams.get_records(ShardIterator=iterador, Limit=self.tamano_lote)
                    iteradores[shard] = respuesta["NextShardIterator"]
                    if respuesta["Records"]:
                        self._entregar([self._completar(r) for r in respuesta["Records"]])
            except Exception as exc:  # Pipes keeps polling after an API error; the same iterator reads again
                self.errores.append(f"{type(exc).__name__}: {exc}")
            stop.wait(ESPERA_STREAM_S)

    def _iteradores(self, streams: Any) -> dict[str, str]:
        return {
            s["ShardId"]: streams.get_shard_iterator(
                StreamArn=self.stream_arn, ShardId=s["ShardId"], ShardIteratorType=self.posicion_inicial
            )["ShardIterator"]
            for s in streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"]
        }

    def _completar(self, registro: dict[str, Any]) -> dict[str, Any]:
        # boto3 parses ApproximateCreationDateTime; Pipes hands the target epoch seconds (JSON).
        registro = json.loads(json.dumps({**registro, "eventSourceARN": self.stream_arn}, default=_epoch_s))
        if self.barredor is not None and self.barredor.fue_ttl(registro):
            registro["userIdentity"] = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
        return registro

    def _entregar(self, registros: list[dict[str, Any]]) -> None:
        from moto.events.models import EventPattern

        self.leidos += len(registros)
        patrones = [EventPattern.load(json.dumps(f)) for f in self.filtros]
        elegidos = [r for r in registros if not patrones or any(p.matches_event(r) for p in patrones)]
        if not elegidos:
            return
        for intento in range(self.reintentos_max + 1):
            try:
                self.destino.enviar(elegidos)
                self.enviados += len(elegidos)
                return
            except Exception as exc:
                if intento == self.reintentos_max:
                    self._a_dlq(elegidos, exc)

    def _a_dlq(self, registros: list[dict[str, Any]], exc: Exception) -> None:
        if self.dlq_arn is None:
            return
        url = client("sqs").get_queue_url(QueueName=self.dlq_arn.rsplit(":", 1)[1])["QueueUrl"]
        client("sqs").send_message(QueueUrl=url, MessageBody=json.dumps({"error": str(exc), "registros": registros}))
        self.a_dlq += len(registros)


def pipes_de_plantilla(
    plantilla: Plantilla, funciones: Funciones, barredor: BarredorTtl | None = None, compresion: float = 1.0
) -> list[Mapeo | PipeStream]:
    """Every ``AWS::Pipes::Pipe`` of the template, ready to start."""
    resultado: list[Mapeo | PipeStream] = []
    for lid in plantilla.de_tipo("AWS::Pipes::Pipe"):
        props = plantilla.propiedades(lid)
        nombre = props.get("Name", lid)
        destino = Destino(
            nombre_pipe=nombre,
            arn=props["Target"],
            parametros=props.get("TargetParameters", {}),
            plantilla_entrada=props.get("TargetParameters", {}).get("InputTemplate"),
            funciones=funciones,
        )
        fuente = props.get("SourceParameters", {})
        filtros = [json.loads(f["Pattern"]) for f in fuente.get("FilterCriteria", {}).get("Filters", [])]
        if props["Source"].startswith("arn:aws:sqs:"):
            resultado.append(pipe_sqs(nombre, props["Source"], destino, fuente, filtros, compresion, logical_id=lid))
        else:
            resultado.append(_pipe_stream(nombre, props["Source"], destino, fuente, filtros, barredor))
    return resultado


def pipe_sqs(
    nombre: str,
    arn: str,
    destino: Destino,
    fuente: dict[str, Any],
    filtros: list[Any],
    compresion: float,
    logical_id: str | None = None,
) -> Mapeo:
    url, visibilidad_s = cola_de(arn, compresion)
    parametros = fuente.get("SqsQueueParameters", {})
    return Mapeo(
        nombre=f"pipe:{nombre}",
        funcion=_DestinoComoFuncion(destino, logical_id),  # type: ignore[arg-type]
        cola_url=url,
        cola_arn=arn,
        tamano_lote=int(parametros.get("BatchSize", 10)),
        concurrencia=POLLERS_SQS,
        visibilidad_s=visibilidad_s,
        filtros=filtros,
    )


def _pipe_stream(
    nombre: str, arn: str, destino: Destino, fuente: dict[str, Any], filtros: list[Any], barredor: BarredorTtl | None
) -> PipeStream:
    parametros = fuente.get("DynamoDBStreamParameters", {})
    reintentos = int(parametros.get("MaximumRetryAttempts", 0))
    return PipeStream(
        nombre=nombre,
        stream_arn=arn,
        destino=destino,
        filtros=filtros,
        tamano_lote=int(parametros.get("BatchSize", 10)),
        reintentos_max=max(0, reintentos),
        dlq_arn=parametros.get("DeadLetterConfig", {}).get("Arn"),
        posicion_inicial=parametros.get("StartingPosition", "TRIM_HORIZON"),
        barredor=barredor,
    )
