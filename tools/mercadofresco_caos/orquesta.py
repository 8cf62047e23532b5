"""Plays a schedule's timed events against the session while the orders flow."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mercadofresco.aws import client
from sam_emulator.background import BackgroundThread, stop_all

from mercadofresco_caos.calendario import ID_PEDIDO

if TYPE_CHECKING:
    from collections.abc import Callable

    from mercadofresco_local.sesion import Sesion

    from mercadofresco_caos.calendario import ProgramaCaos, Suceso


class Repertorio(Protocol):
    """What the player asks of the fault registry (:class:`.registro.Registro`, whose kinds act on the player)."""

    def tocar(self, suceso: Suceso, orquesta: Orquesta) -> None: ...

    def parar(self, orquesta: Orquesta) -> None: ...


@dataclass
class Orquesta:
    """Runs each :class:`Suceso` at its time through the fault kind that plays it (:meth:`TipoFallo.aplicar`)."""

    sesion: Sesion
    programa: ProgramaCaos
    prefijo: str
    registro: Repertorio
    copias: dict[int, dict[str, Any]] = field(default_factory=dict)  # order number -> its PedidoCreado (SQS message)
    avisos: dict[int, dict[str, Any]] = field(default_factory=dict)  # order number -> its PedidoConfirmado message
    hechos: list[str] = field(default_factory=list)
    errores: list[str] = field(default_factory=list)
    repetidos: list[str] = field(default_factory=list)  # queue <- order, for each fan-out copy sent
    estado: dict[str, Any] = field(default_factory=dict)  # what a kind keeps between applying and stopping
    parada: threading.Event = field(default_factory=threading.Event)  # shared by the schedule and its helpers
    _hilo: BackgroundThread | None = None
    _ayudantes: list[BackgroundThread] = field(default_factory=list)
    _lock_grifo: threading.Lock = field(default_factory=threading.Lock)

    def arrancar(self) -> Orquesta:
        self._hilo = BackgroundThread("caos", self._tocar, stopping=self.parada).start()
        return self

    def parar(self) -> None:
        if self._hilo is not None:
            self._hilo.stop()  # the schedule first: no helper starts after it
        stop_all(hilo.stop for hilo in self._ayudantes)
        self.registro.parar(self)

    def en_hilo(self, nombre: str, trabajo: Callable[[], None]) -> None:
        """Run part of a fault in its own thread (it waits for something the next events must not wait for)."""
        self._ayudantes.append(BackgroundThread(nombre, lambda _parar: trabajo(), stopping=self.parada).start())

    def _tocar(self, _parar: threading.Event) -> None:  # _parar is self.parada, which the kinds wait on too
        inicio = time.monotonic()
        for suceso in self.programa.sucesos:
            espera = inicio + suceso.t_s - time.monotonic()
            if espera > 0 and self.parada.wait(espera):
                return
            try:
                self.registro.tocar(suceso, self)
                self.hechos.append(suceso.describir())
            except Exception as exc:  # a fault that could not be injected is reported, not fatal
                self.errores.append(f"{suceso.describir()}: {type(exc).__name__}: {exc}")

    def copia(self, numero: int) -> str:
        """The order's PedidoCreado exactly as the bus delivered it (read from the tap queue).

        No deadline of its own: the event arrives when the relay publishes it, seconds after the
        commit on a quiet machine, minutes under load or a relay fault (a fixed 30 s once left a
        scheduled duplicate uninjected on a loaded machine). The run's end (``parada``, set when the
        campaign stops at quiescence or at its drain bound) is the only limit.
        """
        while numero not in self.copias:
            if self.parada.is_set():
                raise RuntimeError(f"the run stopped before order {numero}'s PedidoCreado reached the tap queue")
            self.leer_grifo(self.sesion.grifo_url, self.copias)
        return self.copias[numero]["Body"]

    def leer_grifo(self, url: str | None, copias: dict[int, dict[str, Any]]) -> None:
        """Move this seed's messages from a tap queue into ``copias`` (order number -> the SQS message)."""
        assert url is not None
        sqs = client("sqs")
        with self._lock_grifo:  # the schedule's thread and the helpers' threads share the taps
            mensajes = sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, MessageAttributeNames=["All"]
            ).get("Messages", [])
            for m in mensajes:
                encontrado = ID_PEDIDO.search(m["Body"])
                if encontrado is not None and encontrado.group(0).startswith(self.prefijo):
                    copias.setdefault(int(encontrado.group(0)[-6:]), m)
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
