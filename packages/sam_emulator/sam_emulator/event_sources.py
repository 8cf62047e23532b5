"""SQS event source mappings with Lambda's semantics (moto's own mapping ignores partial failures).

What Lambda does, and this does, for each SAM ``Events`` entry of ``Type: SQS`` (or a native
``AWS::Lambda::EventSourceMapping`` on a queue):

- ``ScalingConfig.MaximumConcurrency`` pollers, each a thread that receives up to
  ``BatchSize`` messages (waiting at most ``MaximumBatchingWindowInSeconds`` to fill it)
  and invokes the handler with the batch as an SQS event;
- the queue's own ``VisibilityTimeout`` applies while a batch is in flight (divided by the
  run's time-compression factor, at least 1 s), but never less than the function's
  ``Timeout``: AWS refuses an SQS trigger whose queue's visibility is shorter than the
  function's timeout, so a live invocation never sees its messages handed to another one.
  The run compresses the visibility, not the function's ``Timeout`` nor the time a batch
  takes on a starved CPU; without this floor (180 s / 30 = 6 s against a 30 s consumer) a
  batch slower than 6 s is received again while still running, the copies fail on the
  idempotency claim, burn ``maxReceiveCount`` and end in the DLQ though processed once.
  Failed records therefore come back after the floor, not after the compressed visibility;
- the handler raising fails the whole batch; with ``FunctionResponseTypes:
  [ReportBatchItemFailures]`` only the records in ``batchItemFailures`` fail (a malformed
  response fails the whole batch, as Lambda does); every other record is deleted;
- a failed record is simply not deleted: it becomes visible again when its visibility
  expires, and SQS's redrive (moto implements it) moves it to the DLQ after
  ``maxReceiveCount`` receives;
- ``FilterCriteria``: a record no filter matches is deleted without invoking.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sam_emulator.aws import client
from sam_emulator.background import BackgroundThread, stop_all
from sam_emulator.principal import acting_as

if TYPE_CHECKING:
    from sam_emulator.functions import Funcion, Funciones
    from sam_emulator.template import Plantilla

CONCURRENCIA_POR_DEFECTO = 2  # Lambda scales far higher; a laptop does not
ESPERA_SONDEO_S = 1  # long-poll wait, so stop() is answered within a second
ESPERA_FIFO_S = 0.1  # pause between empty short polls of a FIFO queue


@dataclass
class Estadisticas:
    lotes: int = 0
    recibidos: int = 0
    borrados: int = 0
    fallidos: int = 0
    filtrados: int = 0
    errores_sondeo: list[str] = field(default_factory=list)
    _cerrojo: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def registrar_error(self, exc: Exception) -> None:
        with self._cerrojo:
            self.errores_sondeo.append(f"{type(exc).__name__}: {exc}")

    def sumar(self, **valores: int) -> None:
        with self._cerrojo:
            for clave, valor in valores.items():
                setattr(self, clave, getattr(self, clave) + valor)


@dataclass
class Mapeo:
    """One queue → function mapping, run by ``concurrencia`` poller threads."""

    nombre: str
    funcion: Funcion
    cola_url: str
    cola_arn: str
    tamano_lote: int = 10
    window_s: float = 0.0
    concurrencia: int = CONCURRENCIA_POR_DEFECTO
    reporta_fallos: bool = False
    visibilidad_s: int = 30
    filtros: list[Any] = field(default_factory=list)
    estadisticas: Estadisticas = field(default_factory=Estadisticas)
    _parar: threading.Event = field(default_factory=threading.Event, repr=False)  # shared by the pollers
    _hilos: list[BackgroundThread] = field(default_factory=list, repr=False)

    def start(self) -> None:
        self._parar.clear()
        self._hilos = [
            BackgroundThread(f"esm-{self.nombre}-{i}", self._sondear, stopping=self._parar).start()
            for i in range(self.concurrencia)
        ]

    def stop(self) -> None:
        hilos, self._hilos = self._hilos, []
        stop_all(hilo.stop for hilo in hilos)

    def comprobar(self) -> None:
        for hilo in self._hilos:
            hilo.raise_if_failed()

    def _sondear(self, _parar: threading.Event) -> None:  # _parar is self._parar, which _recibir waits on too
        sqs = client("sqs")
        # Lambda (or the pipe) polls with the consumer's own role: its calls are that role's (sam_emulator.principal).
        with acting_as(getattr(self.funcion, "logical_id", None)):
            while not self._parar.is_set():
                try:
                    mensajes = self._recibir(sqs)
                    if mensajes:
                        self.procesar(sqs, mensajes)
                except Exception as exc:  # a poller never dies: Lambda's keeps polling after an API error
                    self.estadisticas.registrar_error(exc)
                    self._parar.wait(ESPERA_SONDEO_S)

    def _recibir(self, sqs: Any) -> list[dict[str, Any]]:
        mensajes: list[dict[str, Any]] = []
        while len(mensajes) < self.tamano_lote and not self._parar.is_set():
            respuesta = sqs.receive_message(
                QueueUrl=self.cola_url,
                MaxNumberOfMessages=min(10, self.tamano_lote - len(mensajes)),
                WaitTimeSeconds=self._espera_s() if not mensajes else 0,
                VisibilityTimeout=self.visibilidad_s,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            mensajes.extend(respuesta)
            if not respuesta or self.window_s <= 0:
                break
        if not mensajes and self.cola_url.endswith(".fifo"):
            self._parar.wait(ESPERA_FIFO_S)
        return mensajes

    def _espera_s(self) -> int:
        # moto's long poll on a FIFO queue whose groups are all in flight sleeps the whole wait:
        # a delete that frees a group does not wake it. Short polls keep FIFO consumers moving.
        return 0 if self.cola_url.endswith(".fifo") else ESPERA_SONDEO_S

    def procesar(self, sqs: Any, mensajes: list[dict[str, Any]]) -> None:
        """Invoke the function with one batch and settle each record as Lambda does."""
        registros = [registro_sqs(m, self.cola_arn) for m in mensajes]
        elegidos = [r for r in registros if self._pasa_filtros(r)]
        self.estadisticas.sumar(lotes=1, recibidos=len(registros), filtrados=len(registros) - len(elegidos))
        fallidos = self._invocar(elegidos) if elegidos else set()
        a_borrar = [r for r in registros if r["messageId"] not in fallidos]
        for i in range(0, len(a_borrar), 10):
            entradas = [{"Id": str(n), "ReceiptHandle": r["receiptHandle"]} for n, r in enumerate(a_borrar[i : i + 10])]
            sqs.delete_message_batch(QueueUrl=self.cola_url, Entries=entradas)
        self.estadisticas.sumar(borrados=len(a_borrar) - (len(registros) - len(elegidos)), fallidos=len(fallidos))

    def _invocar(self, registros: list[dict[str, Any]]) -> set[str]:
        ids = {r["messageId"] for r in registros}
        try:
            respuesta = self.funcion.invocar({"Records": registros})
        except Exception:  # the function errored: Lambda fails the whole batch
            return ids
        if not self.reporta_fallos:
            return set()
        return ids_fallidos(respuesta, ids)

    def _pasa_filtros(self, registro: dict[str, Any]) -> bool:
        if not self.filtros:
            return True
        from moto.events.models import EventPattern

        candidato = {**registro, "body": _json_o_texto(registro["body"])}
        return any(EventPattern.load(json.dumps(f)).matches_event(candidato) for f in self.filtros)


def ids_fallidos(respuesta: Any, ids: set[str]) -> set[str]:
    """The records a partial batch response fails; all of them when the response is malformed."""
    if respuesta is None:
        return set()
    if not isinstance(respuesta, dict) or not isinstance(respuesta.get("batchItemFailures", []), list):
        return ids
    fallidos = {
        f.get("itemIdentifier") if isinstance(f, dict) else None for f in respuesta.get("batchItemFailures", [])
    }
    return ids if not fallidos <= ids else fallidos


def registro_sqs(mensaje: dict[str, Any], cola_arn: str) -> dict[str, Any]:
    """One SQS message as Lambda puts it in an event record."""
    atributos = {
        nombre: {
            "stringValue": valor.get("StringValue"),
            "binaryValue": valor.get("BinaryValue"),
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": valor["DataType"],
        }
        for nombre, valor in mensaje.get("MessageAttributes", {}).items()
    }
    return {
        "messageId": mensaje["MessageId"],
        "receiptHandle": mensaje["ReceiptHandle"],
        "body": mensaje["Body"],
        "attributes": mensaje.get("Attributes", {}),
        "messageAttributes": atributos,
        "md5OfBody": mensaje.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": cola_arn,
        "awsRegion": cola_arn.split(":")[3],
    }


def _json_o_texto(cuerpo: str) -> Any:
    try:
        return json.loads(cuerpo)
    except ValueError:
        return cuerpo


def mapeos_de_plantilla(plantilla: Plantilla, funciones: Funciones, compresion: float = 1.0) -> list[Mapeo]:
    """Every SQS event source of the template's functions, ready to start."""
    mapeos = []
    for lid, recurso in plantilla.de_tipo("AWS::Serverless::Function").items():
        eventos = plantilla.resolver(recurso.get("Properties", {}).get("Events", {}))
        for nombre, evento in eventos.items():
            if evento.get("Type") == "SQS":
                mapeos.append(mapeo_sqs(f"{lid}.{nombre}", funciones.por_id[lid], evento["Properties"], compresion))
    for lid in plantilla.de_tipo("AWS::Lambda::EventSourceMapping"):
        props = plantilla.propiedades(lid)
        if props.get("EventSourceArn", "").startswith("arn:aws:sqs:"):
            props["Queue"] = props["EventSourceArn"]
            mapeos.append(mapeo_sqs(lid, funciones.por_nombre(props["FunctionName"]), props, compresion))
    return mapeos


def cola_de(arn: str, compresion: float, minimo_s: float = 1) -> tuple[str, int]:
    """An SQS queue's URL, and its visibility timeout divided by the run's compression (at least ``minimo_s``)."""
    sqs = client("sqs")
    url = sqs.get_queue_url(QueueName=arn.rsplit(":", 1)[1])["QueueUrl"]
    atributos = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
    return url, math.ceil(max(minimo_s, 1, int(atributos["VisibilityTimeout"]) / compresion))


def mapeo_sqs(nombre: str, funcion: Funcion, props: dict[str, Any], compresion: float) -> Mapeo:
    """One SQS event source of ``funcion`` (SAM ``Events`` properties), its times compressed.

    The visibility is floored at the function's ``Timeout`` (see the module's docstring).
    """
    cola_arn = props["Queue"]
    url, visibilidad_s = cola_de(cola_arn, compresion, minimo_s=funcion.timeout_s)
    return Mapeo(
        nombre=nombre,
        funcion=funcion,
        cola_url=url,
        cola_arn=cola_arn,
        tamano_lote=int(props.get("BatchSize", 10)),
        window_s=float(props.get("MaximumBatchingWindowInSeconds", 0)) / compresion,
        concurrencia=int(props.get("ScalingConfig", {}).get("MaximumConcurrency", CONCURRENCIA_POR_DEFECTO)),
        reporta_fallos="ReportBatchItemFailures" in props.get("FunctionResponseTypes", []),
        visibilidad_s=visibilidad_s,
        filtros=[json.loads(f["Pattern"]) for f in props.get("FilterCriteria", {}).get("Filters", [])],
    )
