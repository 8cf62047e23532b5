"""The seeded chaos campaign: ``mf-demo --escenario caos --semilla N`` and ``make caos``.

One seed = one reproducible fault schedule (:func:`programa`; every draw comes from
``random.Random(semilla)``) applied to a few orders flowing through the whole local system:

- providers (the loopback stand-ins' fault script): gateway latency, 5xx, read timeouts (a
  latency past the compressed ``PASARELA_READ_TIMEOUT_S``), a gateway outage; ERP/e-mail 5xx;
- Lambda platform faults (:mod:`mercadofresco_local.muerte`): a crash or a timeout at an
  arbitrary I/O boundary, or a throttle, for a given function, order and attempt; the outbox
  relay killed between ``PutEvents`` and its commit;
- infrastructure: the run's PRIVATE Redis frozen (SIGSTOP/SIGCONT), the run's PRIVATE
  PostgreSQL server restarted (:mod:`postgres_privado`: fast shutdown, connections refused for a
  moment, started again on the same port and data; without server binaries, only the handlers'
  connections are dropped and the report says so), the confirmation topic gone for a window (the
  step after the charge fails: the workflow must refund);
- deliveries: an order's ``PedidoCreado`` delivered again at once (duplicate) or seconds later
  (``DelaySeconds``: late and out of order), or put in ``mercadofresco-pedidos-fallidos`` and
  redriven by ``mf-dlq reprocesar`` while orders flow; on the fan-out side, an order's
  ``PedidoConfirmado`` notice delivered again, at once or late, to the ERP and e-mail queues.

The run then waits (bounded) for quiescence and checks, per order, from the gateway's records,
PostgreSQL, the idempotency table, the executions and the e-mails sent: DESIGN.md's six
invariants. A violation is printed with the seed, the order, the faults of the schedule that
touched it and the command that replays it.

Time: the run's compression applies to the platform's and handlers' bounds too
(``RuntimeLocal.plazos_comprimidos``): ``Timeout``, HTTP timeouts, leases, ``Wait`` and
``TimeoutSeconds`` all last ``1/compresion``; the schedule's latencies are chosen against the
compressed timeouts. Several seeds can share one session (``correr_semillas``): each seed has
its own order prefix, and the breaker state, fault script and plan are reset between seeds.

A campaign can also run in parallel (:func:`correr_en_paralelo`, ``mf-demo --procesos N``): the
seeds are split across N child processes, each a whole independent session (its own moto, Redis,
PostgreSQL server, stand-ins, log directory), each appending one JSON line per finished seed;
the parent merges them into one report. A seed a child did not report (it crashed, was killed)
is a failed seed in that report, with the command that replays it.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco.aws import client
from sam_emulator import deaths as muerte
from sam_emulator.background import BackgroundThread, stop_all
from sam_emulator.platform_faults import LambdaCrashed, LambdaTimeout

from mercadofresco_local import flujo
from mercadofresco_local.invariantes import Invariante
from mercadofresco_local.proveedores import Fallo

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from mercadofresco_local.informe import Informe
    from mercadofresco_local.sesion import Sesion

COMPRESION = 20.0
PEDIDOS = 30
RITMO_POR_S = 6.0
RETRASO_FLUJO_S = 5.0  # commit -> the order's workflow at the gateway, here (the relay's compressed schedule)
DRENAJE_MAX_S = 240.0  # quiescence bound per seed (compressed leases, waits and visibilities)
# A child of a parallel campaign that reports no seed for this long is hung (a seed is bounded by
# two drains plus its checks; a session starts in well under a minute): stopped, its seeds failed.
SIN_AVANCE_MAX_S = 4 * DRENAJE_MAX_S

# Functions the schedule may hit, with the share of Lambda faults each gets.
FUNCIONES = {"cobro": 0.5, "reclamo": 0.15, "erp": 0.15, "correo": 0.2}
# Named points of the charge worth hitting on purpose (the list), besides "the k-th boundary".
PUNTOS_COBRO = (
    "antes:http POST /cobros",  # before the gateway call
    "despues:http POST /cobros",  # the gateway charged, the answer is lost
    "antes:dynamodb.UpdateItem",  # before the idempotency record is completed
)
PLANTILLAS_AVISO = {"confirmacion-pedido", "pedido-no-confirmado", "pedido-rechazado", "pedido-cancelado"}
_ID_PEDIDO = re.compile(r"CAOS-S\d+-\d{6}")


# ---------------------------------------------------------------- the schedule
@dataclass(frozen=True)
class FalloLambda:
    funcion: str  # short name: cobro, reclamo, erp, correo, outbox
    pedido: int | None  # order number (None: the relay's n-th invocation is ``intento``)
    intento: int  # 1-based invocation of that function for that order
    tipo: str  # caida | tiempo | estrangular
    frontera: int | None = None
    donde: str | None = None

    def describir(self) -> str:
        punto = self.donde or (f"frontera {self.frontera}" if self.frontera else "")
        return f"{self.funcion} intento {self.intento}: {self.tipo}" + (f" en {punto}" if punto else "")


@dataclass(frozen=True)
class Suceso:
    t_s: float
    # congelar-redis | descongelar-redis | reiniciar-postgres | duplicar | tardio | a-dlq | redrive | sin-tema
    # | duplicar-aviso | tardio-aviso (PedidoConfirmado again to the ERP and e-mail queues)
    tipo: str
    pedido: int | None = None
    valor: float = 0.0

    def describir(self) -> str:
        return f"t={self.t_s:.1f}s {self.tipo}" + (f" ({self.valor:.1f}s)" if self.valor else "")


@dataclass(frozen=True)
class ProgramaCaos:
    semilla: int
    pedidos: int
    ritmo_por_s: float
    proveedores: tuple[Fallo, ...]
    lambdas: tuple[FalloLambda, ...]
    sucesos: tuple[Suceso, ...]
    rechazados: tuple[int, ...]  # orders whose card is declined

    @property
    def duracion_s(self) -> float:
        return self.pedidos / self.ritmo_por_s

    def faltas(self) -> int:
        """Faults injected by the schedule (provider windows, Lambda faults, timed events)."""
        return len(self.proveedores) + len(self.lambdas) + sum(1 for s in self.sucesos if s.tipo not in _FINALES)

    def de_pedido(self, numero: int, t_creado_s: float | None = None) -> list[str]:
        """The faults of the schedule that touched one order (its own, and the windows it may have met)."""
        propias = [f.describir() for f in self.lambdas if f.pedido == numero]
        propias += [s.describir() for s in self.sucesos if s.pedido == numero]
        if numero in self.rechazados:
            propias.append("tarjeta rechazada")
        t = numero / self.ritmo_por_s if t_creado_s is None else t_creado_s
        ventanas = [
            f"{f.proveedor}: {f.tipo.value} {f.desde_s:.1f}-{f.hasta_s:.1f}s ({f.proporcion:.0%})"
            for f in self.proveedores
            if f.desde_s - 5 <= t <= f.hasta_s + 15
        ]
        globales = [s.describir() for s in self.sucesos if s.pedido is None and t - 5 <= s.t_s <= t + 20]
        relay = [f.describir() for f in self.lambdas if f.pedido is None]
        return propias + ventanas + globales + relay


_FINALES = {"descongelar-redis"}  # the end of a window is not another fault


def programa(semilla: int, pedidos: int = PEDIDOS, ritmo_por_s: float = RITMO_POR_S) -> ProgramaCaos:
    """The fault schedule of one seed: a pure function of its arguments (same seed, same schedule)."""
    rng = random.Random(semilla)
    duracion = pedidos / ritmo_por_s

    def ventana(minimo_s: float, maximo_s: float) -> tuple[float, float]:
        """A window over the time the orders' work happens: from creation to the end of their workflow."""
        largo = rng.uniform(minimo_s, maximo_s)
        desde = rng.uniform(0, max(0.1, duracion + RETRASO_FLUJO_S - largo / 2))
        return round(desde, 2), round(desde + largo, 2)

    proveedores: list[Fallo] = []
    # Gateway: compressed read timeout is 8 s / 20 = 0.4 s; 0.6 s is past it, 0.15 s is "slow".
    d, h = ventana(1, duracion)
    proveedores.append(Fallo.latencia(0.15, proveedor="pasarela", desde_s=d, hasta_s=h, proporcion=0.5))
    for _ in range(rng.randint(1, 2)):
        d, h = ventana(0.5, duracion / 2)
        proveedores.append(
            Fallo.estado(rng.choice([500, 502, 503]), proveedor="pasarela", desde_s=d, hasta_s=h, proporcion=0.3)
        )
    d, h = ventana(0.5, duracion / 2)
    proveedores.append(Fallo.tiempo_agotado(0.6, proveedor="pasarela", desde_s=d, hasta_s=h, proporcion=0.3))
    if rng.random() < 0.5:
        d, h = ventana(0.5, 2.0)
        proveedores.append(Fallo.estado(503, proveedor="pasarela", desde_s=d, hasta_s=h))  # outage
    for nombre in ("erp", "correo-principal"):
        d, h = ventana(0.5, duracion / 2)
        proveedores.append(Fallo.estado(503, proveedor=nombre, desde_s=d, hasta_s=h, proporcion=0.3))
    proveedores.sort(key=lambda f: f.tipo.value)  # the first matching rule wins: 503 before latency

    lambdas: list[FalloLambda] = []
    nombres, pesos = zip(*FUNCIONES.items(), strict=True)
    for numero in range(1, pedidos + 1):
        if rng.random() >= 0.3:
            continue
        for _ in range(rng.choice([1, 1, 2])):
            funcion = rng.choices(nombres, pesos)[0]
            tipo = rng.choices(["caida", "tiempo", "estrangular"], [0.45, 0.35, 0.2])[0]
            intento = rng.choice([1, 1, 2])
            if tipo == "estrangular":
                lambdas.append(FalloLambda(funcion, numero, intento, tipo))
            elif funcion == "cobro" and rng.random() < 0.6:
                lambdas.append(FalloLambda(funcion, numero, intento, tipo, donde=rng.choice(PUNTOS_COBRO)))
            else:
                lambdas.append(FalloLambda(funcion, numero, intento, tipo, frontera=rng.randint(1, 6)))
    for invocacion in sorted(rng.sample(range(2, 12), rng.randint(1, 2))):  # the relay, killed after PutEvents
        lambdas.append(FalloLambda("outbox", None, invocacion, "caida", donde="despues:events.PutEvents"))

    sucesos: list[Suceso] = []
    d, h = ventana(0.5, 2.0)
    sucesos += [Suceso(d, "congelar-redis", valor=h - d), Suceso(h, "descongelar-redis")]
    for _ in range(rng.randint(1, 2)):  # value: how long the server stays down (compressed seconds)
        sucesos.append(Suceso(round(rng.uniform(0, duracion), 2), "reiniciar-postgres", valor=rng.uniform(0.2, 1.5)))
    if rng.random() < 0.7:  # the step after the charge fails for a while: that order must be refunded
        numero = rng.randint(1, pedidos)
        largo = round(rng.uniform(1.0, 3.0), 1)
        sucesos.append(Suceso(round(numero / ritmo_por_s, 2), "sin-tema", numero, valor=largo))
    for numero in rng.sample(range(1, pedidos + 1), max(1, pedidos // 10)):
        t = numero / ritmo_por_s + rng.uniform(0.5, 2.0)
        if rng.random() < 0.5:
            sucesos.append(Suceso(round(t, 2), "duplicar", numero))
        else:
            sucesos.append(Suceso(round(t, 2), "tardio", numero, valor=round(rng.uniform(2, 8), 1)))
    redrive = [n for n in rng.sample(range(1, pedidos + 1), rng.randint(1, 2))]
    for numero in redrive:
        sucesos.append(Suceso(round(numero / ritmo_por_s + 1.0, 2), "a-dlq", numero))
    sucesos.append(Suceso(round(max(n / ritmo_por_s for n in redrive) + 1.5, 2), "redrive"))
    rechazados = tuple(sorted(rng.sample(range(1, pedidos + 1), max(1, pedidos // 15))))
    # The fan-out side: a confirmed order's notice again to the ERP and e-mail queues (the
    # confirmation comes seconds after creation, so the copy is sent when it has been seen).
    confirmables = [n for n in range(1, pedidos + 1) if n not in rechazados]
    for numero in rng.sample(confirmables, min(len(confirmables), max(1, pedidos // 10))):
        t = round(numero / ritmo_por_s + rng.uniform(0.5, 2.0), 2)
        if rng.random() < 0.5:
            sucesos.append(Suceso(t, "duplicar-aviso", numero))
        else:
            sucesos.append(Suceso(t, "tardio-aviso", numero, valor=round(rng.uniform(2, 8), 1)))
    return ProgramaCaos(
        semilla=semilla,
        pedidos=pedidos,
        ritmo_por_s=ritmo_por_s,
        proveedores=tuple(proveedores),
        lambdas=tuple(lambdas),
        sucesos=tuple(sorted(sucesos, key=lambda s: s.t_s)),
        rechazados=rechazados,
    )


# ---------------------------------------------------------------- applying it
def prefijo_de(semilla: int) -> str:
    return f"CAOS-S{semilla}-"


@dataclass
class PlanLambda:
    """The schedule's Lambda faults as :data:`muerte.CONTROL`'s plan (attempts counted per function and order)."""

    programa: ProgramaCaos
    prefijo: str
    intentos: Counter[tuple[str, int | None]] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._por_clave = {(f.funcion, f.pedido, f.intento): f for f in self.programa.lambdas}

    def __call__(self, inv: muerte.Invocacion) -> muerte.Corte | muerte.Estrangular | None:
        funcion = inv.funcion.removeprefix("mercadofresco-")
        if funcion not in FUNCIONES and funcion != "outbox":
            return None
        pedido = None
        if funcion != "outbox":
            encontrado = _ID_PEDIDO.search(json.dumps(inv.evento, default=str)[:20000])
            if encontrado is None or not encontrado.group(0).startswith(self.prefijo):
                return None
            pedido = int(encontrado.group(0)[-6:])
        with self._lock:
            self.intentos[(funcion, pedido)] += 1
            fallo = self._por_clave.get((funcion, pedido, self.intentos[(funcion, pedido)]))
        if fallo is None:
            return None
        if fallo.tipo == "estrangular":
            return muerte.Estrangular()
        tipo = LambdaCrashed if fallo.tipo == "caida" else LambdaTimeout
        return muerte.Corte(tipo, en=fallo.frontera, donde=fallo.donde)


@dataclass
class Orquesta:
    """Plays the schedule's timed events against the session while the orders flow."""

    sesion: Sesion
    programa: ProgramaCaos
    prefijo: str
    copias: dict[int, dict[str, Any]] = field(default_factory=dict)  # order number -> its PedidoCreado (SQS message)
    avisos: dict[int, dict[str, Any]] = field(default_factory=dict)  # order number -> its PedidoConfirmado message
    hechos: list[str] = field(default_factory=list)
    errores: list[str] = field(default_factory=list)
    _parar: threading.Event = field(default_factory=threading.Event)  # shared by the schedule and its copies
    _hilo: BackgroundThread | None = None
    _tema_apartado: Any = None  # the confirmation topic while a "sin-tema" fault holds it out of moto
    _repeticiones: list[BackgroundThread] = field(default_factory=list)  # fan-out copies waiting for their notice
    _lock_grifo: threading.Lock = field(default_factory=threading.Lock)
    repetidos: list[str] = field(default_factory=list)  # queue <- order, for each fan-out copy sent

    def arrancar(self) -> Orquesta:
        self._hilo = BackgroundThread("caos", self._tocar, stopping=self._parar).start()
        return self

    def parar(self) -> None:
        if self._hilo is not None:
            self._hilo.stop()  # the schedule first: no copy starts after it
        stop_all(hilo.stop for hilo in self._repeticiones)
        assert self.sesion.redis_privado is not None
        self.sesion.redis_privado.descongelar()
        self._tema(crear=True)

    def _tocar(self, _parar: threading.Event) -> None:  # _parar is self._parar, which _aplicar waits on too
        inicio = time.monotonic()
        for suceso in self.programa.sucesos:
            espera = inicio + suceso.t_s - time.monotonic()
            if espera > 0 and self._parar.wait(espera):
                return
            try:
                self._aplicar(suceso)
                self.hechos.append(suceso.describir())
            except Exception as exc:  # a fault that could not be injected is reported, not fatal
                self.errores.append(f"{suceso.describir()}: {type(exc).__name__}: {exc}")

    def _aplicar(self, suceso: Suceso) -> None:
        sesion = self.sesion
        assert sesion.redis_privado is not None and sesion.runtime is not None
        if suceso.tipo == "congelar-redis":
            sesion.redis_privado.congelar()
        elif suceso.tipo == "descongelar-redis":
            sesion.redis_privado.descongelar()
        elif suceso.tipo == "reiniciar-postgres":
            sesion.reiniciar_postgres(suceso.valor)
        elif suceso.tipo == "sin-tema":
            # From the moment the gateway charged this order: its confirmation (and any other's in
            # the window) fails, and the workflow must refund.
            self._esperar_cobro(f"{self.prefijo}{suceso.pedido:06d}")
            self._tema(crear=False)
            self._parar.wait(suceso.valor)
            self._tema(crear=True)
        elif suceso.tipo in ("duplicar", "tardio", "a-dlq"):
            assert suceso.pedido is not None
            cuerpo = self._copia(suceso.pedido)
            sqs = client("sqs")
            destino = "ColaPedidosFallidos" if suceso.tipo == "a-dlq" else "ColaPedidos"
            retraso = int(suceso.valor) if suceso.tipo == "tardio" else 0
            sqs.send_message(QueueUrl=sesion.runtime.url_cola(destino), MessageBody=cuerpo, DelaySeconds=retraso)
        elif suceso.tipo in ("duplicar-aviso", "tardio-aviso"):
            # In its own thread: the notice exists only once the order is confirmed, seconds later,
            # and the schedule's next events must not wait for it.
            repetir = BackgroundThread("caos-aviso", lambda _parar: self._repetir_aviso(suceso), stopping=self._parar)
            self._repeticiones.append(repetir.start())
        elif suceso.tipo == "redrive":
            from mercadofresco_local.ejercicios import mf_dlq

            resultado = mf_dlq(sesion, "reprocesar", "--tasa", "50")
            if resultado["codigo"] != 0:
                raise RuntimeError(f"mf-dlq reprocesar exited {resultado['codigo']}: {resultado['error'][-300:]}")

    def _esperar_cobro(self, pedido_id: str, limite_s: float = 30.0) -> None:
        pasarela = self.sesion.proveedores.pasarela
        limite = time.monotonic() + limite_s
        while not pasarela.cobros_de(pedido_id) and time.monotonic() < limite and not self._parar.is_set():
            time.sleep(0.02)  # polling the stand-in's record, not a synchronisation with the workflow

    def _copia(self, numero: int) -> str:
        """The order's PedidoCreado exactly as the bus delivered it (read from the tap queue)."""
        limite = time.monotonic() + 30
        while numero not in self.copias:
            self._leer_grifo(self.sesion.grifo_url, self.copias)
            if time.monotonic() > limite:
                raise TimeoutError(f"no PedidoCreado of order {numero} reached the tap queue")
        return self.copias[numero]["Body"]

    def _repetir_aviso(self, suceso: Suceso) -> None:
        """The order's PedidoConfirmado, once seen, again to the ERP and e-mail queues (at once or late)."""
        assert suceso.pedido is not None and self.sesion.runtime is not None
        limite = time.monotonic() + DRENAJE_MAX_S
        while suceso.pedido not in self.avisos:
            if self._parar.is_set() or time.monotonic() > limite:
                return  # never confirmed (declined, refunded, not confirmed): there is no notice to repeat
            self._leer_grifo(self.sesion.grifo_avisos_url, self.avisos)
        aviso = self.avisos[suceso.pedido]
        atributos = {
            nombre: {"DataType": a["DataType"], "StringValue": a["StringValue"]}
            for nombre, a in aviso.get("MessageAttributes", {}).items()
            if "StringValue" in a
        }
        try:
            for cola in ("ColaErp", "ColaCorreo"):
                client("sqs").send_message(
                    QueueUrl=self.sesion.runtime.url_cola(cola),
                    MessageBody=aviso["Body"],
                    MessageAttributes=atributos,
                    DelaySeconds=int(suceso.valor),
                )
                self.repetidos.append(f"{cola} <- {suceso.pedido}")
        except Exception as exc:  # reported, not fatal, like every other fault that could not be injected
            self.errores.append(f"{suceso.describir()}: {type(exc).__name__}: {exc}")

    def _leer_grifo(self, url: str | None, copias: dict[int, dict[str, Any]]) -> None:
        """Move this seed's messages from a tap queue into ``copias`` (order number -> the SQS message)."""
        assert url is not None
        sqs = client("sqs")
        with self._lock_grifo:  # the schedule's thread and the fan-out copies' threads share the taps
            mensajes = sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, MessageAttributeNames=["All"]
            ).get("Messages", [])
            for m in mensajes:
                encontrado = _ID_PEDIDO.search(m["Body"])
                if encontrado is not None and encontrado.group(0).startswith(self.prefijo):
                    copias.setdefault(int(encontrado.group(0)[-6:]), m)
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])

    def _tema(self, crear: bool) -> None:
        """Take the confirmation topic out of moto's SNS backend, or put the same one back.

        While it is out, ``sns:Publish`` answers NotFound (the step after the charge fails and the
        workflow refunds). Put back, it is the same object with the same subscriptions in one dict
        assignment: deleting and recreating it (topic, then each subscription) left a window in which
        a confirmation reached a topic with no subscribers, a loss the emulation made, not the system.
        """
        from moto.sns.models import sns_backends

        rt = self.sesion.runtime
        assert rt is not None
        arn = rt.plantilla.ref("TopicPedidoConfirmado")
        _, _, _, region, cuenta, _ = arn.split(":", 5)
        temas = sns_backends[cuenta][region].topics
        if not crear:
            if arn in temas:
                self._tema_apartado = temas.pop(arn)
        elif self._tema_apartado is not None:
            temas[arn] = self._tema_apartado
            self._tema_apartado = None


# ---------------------------------------------------------------- checking
@dataclass
class Violacion:
    invariante: str
    pedido: str
    detalle: str


@dataclass
class ResultadoSemilla:
    semilla: int
    pedidos: int
    faltas: int
    muertes: int
    estrangulados: int
    violaciones: list[Violacion]
    informe_invariantes: list[Invariante]
    reembolsos: int
    notas: list[str]
    reinicios_postgres: int = 0  # real restarts of the private server (0 with the fallback)
    postgres_real: bool = True  # False: no server binaries, a "restart" only dropped connections
    avisos_repetidos: int = 0  # PedidoConfirmado copies really sent to the ERP and e-mail queues
    duracion_s: float = 0.0  # wall time of the seed in its session (schedule, drain, checks)

    @property
    def correcto(self) -> bool:
        return not self.violaciones and all(i.cumple for i in self.informe_invariantes)


def comprobar(sesion: Sesion, prefijo: str, res: flujo.Resultados, drenado: bool) -> list[Violacion]:
    """Per-order checks of the six invariants (the aggregate ones come from :mod:`flujo`)."""
    from mercadofresco_local.invariantes import PROCESADO

    violaciones: list[Violacion] = []
    cobros = Counter(c["pedido_id"] for c in res.cobros)
    reembolsados = {r["referencia_cobro"] for r in res.reembolsos}
    for c in res.cobros:
        if (
            c["referencia_cobro"] not in reembolsados
            and not res.por_pedido.get(c["pedido_id"], Counter())["Confirmado"]
        ):
            violaciones.append(Violacion("4 ningún cobro sin pedido confirmado o reembolsado", c["pedido_id"], str(c)))
    for pedido, n in cobros.items():
        if n > 1:
            violaciones.append(Violacion("2 como mucho un cobro por pedido", pedido, f"{n} cobros"))
    referencias = {c["referencia_cobro"] for c in res.cobros}
    for r in res.reembolsos:
        if r["referencia_cobro"] not in referencias:
            violaciones.append(Violacion("3 cada reembolso corresponde a un cobro", r["pedido_id"], str(r)))
    for pedido in res.comprometidos:
        procesados = sum(n for final, n in res.por_pedido.get(pedido, Counter()).items() if final in PROCESADO)
        if procesados != 1:
            finales = dict(res.por_pedido.get(pedido, Counter()))
            violaciones.append(Violacion("1 exactamente una ejecución procesa cada pedido", pedido, f"{finales}"))
    avisados = avisos_por_pedido(sesion)
    for pedido in res.comprometidos:
        if not avisados.get(pedido):
            finales = dict(res.por_pedido.get(pedido, Counter()))
            violaciones.append(Violacion("6 el cliente sabe cómo acabó su pedido", pedido, f"ningún correo; {finales}"))
    for pedido, detalle in avisos_repetidos(sesion, prefijo).items():
        violaciones.append(Violacion("un aviso al ERP y un correo por pedido y resultado", pedido, detalle))
    ahora = time.time()
    for clave, estado, caduca in registros_en_curso(sesion, prefijo):
        if caduca is None or caduca < ahora:
            pedido = (_ID_PEDIDO.search(clave) or re.search(".*", clave)).group(0)  # type: ignore[union-attr]
            violaciones.append(Violacion("6 ningún EN_CURSO pasado su plazo", pedido, f"{clave} {estado} {caduca}"))
    if not drenado or sesion.runtime.ejecuciones_en_curso():  # type: ignore[union-attr]
        violaciones.append(Violacion("6 ninguna ejecución sigue en curso", "-", "el sistema no quedó en reposo"))
    return violaciones


def avisos_por_pedido(sesion: Sesion) -> dict[str, set[str]]:
    """pedido_id -> the outcome e-mails sent for it (confirmed / not confirmed / rejected / cancelled)."""
    p = sesion.proveedores
    avisos: dict[str, set[str]] = defaultdict(set)
    for efecto in p.correo_principal.efectos + p.correo_secundario.efectos:
        cuerpo = efecto["cuerpo"]
        if cuerpo.get("plantilla") in PLANTILLAS_AVISO:
            avisos[str(cuerpo.get("datos", {}).get("pedido_id"))].add(cuerpo["plantilla"])
    return avisos


def avisos_repetidos(sesion: Sesion, prefijo: str) -> dict[str, str]:
    """Orders of this seed with more than one ERP notice, or more than one e-mail of one outcome.

    Counted from what the stand-ins did, across both e-mail providers (a fallback to the
    secondary after the primary sent would be a second e-mail the providers' own
    ``Idempotency-Key`` memory cannot see). DESIGN.md: one ERP notice and one e-mail per order.
    """
    p = sesion.proveedores
    erp = Counter(str(e["cuerpo"].get("pedido_id")) for e in p.erp.efectos if e["ruta"] == "/avisos")
    correos = Counter(
        (str(e["cuerpo"].get("datos", {}).get("pedido_id")), e["cuerpo"].get("plantilla"))
        for e in p.correo_principal.efectos + p.correo_secundario.efectos
    )
    repetidos: dict[str, list[str]] = defaultdict(list)
    for pedido, n in erp.items():
        if n > 1 and pedido.startswith(prefijo):
            repetidos[pedido].append(f"{n} avisos al ERP")
    for (pedido, plantilla), n in correos.items():
        if n > 1 and pedido.startswith(prefijo):
            repetidos[pedido].append(f"{n} correos «{plantilla}»")
    return {pedido: "; ".join(partes) for pedido, partes in repetidos.items()}


def registros_en_curso(sesion: Sesion, prefijo: str) -> list[tuple[str, str, float | None]]:
    """Idempotency records of this seed's orders still ``EN_CURSO`` (key, state, lease end)."""
    assert sesion.runtime is not None
    tabla = sesion.runtime.plantilla.ref("TablaIdempotencia")
    encontrados = []
    for pagina in client("dynamodb").get_paginator("scan").paginate(TableName=tabla, ConsistentRead=True):
        for item in pagina["Items"]:
            clave = item["clave"]["S"]
            if prefijo in clave and item.get("estado", {}).get("S") == "EN_CURSO":
                caduca = item.get("caduca_bloqueo", {}).get("N")
                encontrados.append((clave, "EN_CURSO", float(caduca) if caduca else None))
    return encontrados


# ---------------------------------------------------------------- running seeds
def correr_semilla(
    sesion: Sesion, semilla: int, pedidos: int, ritmo: float, avance: Callable[[], None] | None = None
) -> ResultadoSemilla:
    """One seed in an open chaos session: schedule, orders, quiescence, checks."""
    avance = avance or (lambda: None)
    assert sesion.tienda is not None and sesion.runtime is not None and sesion.redis_privado is not None
    inicio = time.monotonic()
    prog = programa(semilla, pedidos, ritmo)
    prefijo = prefijo_de(semilla)
    sesion.preparar_semilla(semilla)
    tienda = sesion.tienda
    tienda.prefijo = prefijo
    sesion.proveedores.fallos.programar(*prog.proveedores)
    plan = PlanLambda(prog, prefijo)
    muerte.CONTROL.planificar(plan)
    muertes_antes, estrangulados_antes = len(muerte.CONTROL.muertes), sum(muerte.CONTROL.estrangulados.values())
    pg = sesion.postgres_privado
    reinicios_antes = pg.reinicios if pg else 0
    sesion.proveedores.fallos.reiniciar_reloj()
    orquesta = Orquesta(sesion, prog, prefijo).arrancar()

    def crear(datos: dict[str, Any], numero: int) -> None:
        if numero in prog.rechazados:  # a customer of its own, whose card the gateway declines
            datos["cliente_id"] = f"CLI-RECHAZO-{semilla}-{numero}"
            sesion.proveedores.fallos.rechazar_tarjeta(datos["cliente_id"])
        crear_resistiendo_reinicios(sesion, datos)

    productor = flujo.Productor(sesion, pedidos, ritmo, crear).arrancar()
    drenado = True
    try:
        flujo.esperar_drenaje(sesion, productor, DRENAJE_MAX_S + prog.duracion_s, avance)
    except TimeoutError:
        drenado = False
    finally:
        orquesta.parar()
    if orquesta.hechos and drenado:  # the events played after the drain may have left work behind
        try:
            flujo.esperar_drenaje(sesion, None, DRENAJE_MAX_S, avance)
        except TimeoutError:
            drenado = False
    muerte.CONTROL.planificar(None)
    sesion.proveedores.fallos.limpiar()
    res = flujo.recolectar(sesion, prefijo)
    from mercadofresco_local.informe import Informe

    informe = Informe("caos")
    flujo.comprobar_invariantes(sesion, res, informe)
    violaciones = comprobar(sesion, prefijo, res, drenado)
    sesion.vaciar_dlqs()
    return ResultadoSemilla(
        semilla=semilla,
        pedidos=len(res.comprometidos),
        faltas=prog.faltas(),
        muertes=len(muerte.CONTROL.muertes) - muertes_antes,
        estrangulados=sum(muerte.CONTROL.estrangulados.values()) - estrangulados_antes,
        violaciones=violaciones,
        informe_invariantes=informe.invariantes,
        reembolsos=len(res.reembolsos),
        notas=orquesta.errores,
        reinicios_postgres=(pg.reinicios - reinicios_antes) if pg else 0,
        postgres_real=pg is not None,
        avisos_repetidos=len(orquesta.repetidos),
        duracion_s=round(time.monotonic() - inicio, 1),
    )


def crear_resistiendo_reinicios(sesion: Sesion, datos: dict[str, Any]) -> None:
    """Place an order as a store client does while PostgreSQL restarts: reconnect, ask, retry.

    A failed connection may have lost the answer to a commit that happened: the order is looked
    up by its id before placing it again (the id is the store client's idempotency key).
    """
    import psycopg

    assert sesion.tienda is not None and sesion.base is not None
    limite = time.monotonic() + DRENAJE_MAX_S
    while True:
        try:
            sesion.tienda.crear_con_outbox(datos)
            return
        except psycopg.OperationalError:
            if time.monotonic() > limite:
                raise
        while True:  # the server is restarting: wait until it accepts a connection again
            try:
                sesion.tienda.cerrar()
                sesion.tienda.abrir()
                break
            except psycopg.OperationalError:
                if time.monotonic() > limite:
                    raise
                time.sleep(0.1)  # polling the server's availability, not a synchronisation with the system
        if sesion.base.consultar("SELECT 1 FROM pedidos WHERE pedido_id = %s", datos["pedido_id"]):
            return


def comando_replay(semilla: int, pedidos: int, ritmo: float) -> str:
    return f".venv/bin/mf-demo --escenario caos --semilla {semilla} --pedidos {pedidos} --ritmo {ritmo:g}"


def describir_violaciones(resultado: ResultadoSemilla, pedidos: int, ritmo: float) -> list[str]:
    """Seed, order, the schedule's faults that touched it, and the replay command, for each violation."""
    prog = programa(resultado.semilla, pedidos, ritmo)
    lineas = []
    for v in resultado.violaciones:
        numero = int(v.pedido[-6:]) if v.pedido[-6:].isdigit() else None
        faltas = prog.de_pedido(numero) if numero is not None else []
        lineas.append(
            f"semilla {resultado.semilla} · pedido {v.pedido} · {v.invariante}: {v.detalle}\n"
            f"    fallos que lo tocaron: {'; '.join(faltas) or '—'}\n"
            f"    reproducir: {comando_replay(resultado.semilla, pedidos, ritmo)}"
        )
    for i in resultado.informe_invariantes:
        if not i.cumple:
            lineas.append(f"semilla {resultado.semilla} · {i.nombre}: {i.detalle}")
    return lineas


def caos(sesion: Sesion, n: int, ritmo: float, informe: Informe, avance: Callable[[str, int, int], None]) -> None:
    """The ``caos`` scenario: the session's seeds (``sesion.semillas``), one after another."""
    semillas = sesion.semillas or [1]
    resultados: list[ResultadoSemilla] = []
    for semilla in semillas:
        hechas = len(resultados)
        avance(f"caos: semilla {semilla}", hechas, len(semillas))
        resultado = correr_semilla(
            sesion,
            semilla,
            n,
            ritmo,
            lambda: avance(f"caos: semilla {semilla}", hechas, len(semillas)),  # noqa: B023
        )
        resultados.append(resultado)
        if sesion.resultados is not None:  # a child of a parallel campaign: the parent reads it as it goes
            with sesion.resultados.open("a") as f:
                f.write(json.dumps(asdict(resultado)) + "\n")
    anotar(informe, resultados, n, ritmo)


# ---------------------------------------------------------------- seeds in parallel processes
def leer_resultado(linea: str) -> ResultadoSemilla:
    datos = json.loads(linea)
    datos["violaciones"] = [Violacion(**v) for v in datos["violaciones"]]
    datos["informe_invariantes"] = [Invariante(**i) for i in datos["informe_invariantes"]]
    return ResultadoSemilla(**datos)


def comando_hijo(
    semillas: list[int], pedidos: int, ritmo: float, resultados: Path, registro: Path, compresion: float | None
) -> list[str]:
    """A child of a parallel campaign: ``mf-demo`` itself, on its share of the seeds."""
    comando = [sys.executable, "-m", "mercadofresco_local.demo", "--escenario", "caos"]
    comando += ["--lista-semillas", ",".join(map(str, semillas)), "--pedidos", str(pedidos), "--ritmo", f"{ritmo:g}"]
    comando += ["--resultados", str(resultados), "--registro", str(registro)]
    return comando + (["--compresion", f"{compresion:g}"] if compresion else [])


@dataclass
class Hijo:
    numero: int
    semillas: list[int]
    directorio: Path
    proceso: subprocess.Popen[bytes]
    atascado: bool = False  # stopped by the campaign: no seed reported for SIN_AVANCE_MAX_S

    @property
    def resultados(self) -> Path:
        return self.directorio / "resultados.jsonl"

    @property
    def salida(self) -> Path:
        return self.directorio / "salida.log"

    def leidos(self) -> list[ResultadoSemilla]:
        if not self.resultados.exists():
            return []
        lineas = self.resultados.read_text().splitlines()
        return [leer_resultado(linea) for linea in lineas if linea.strip()]


def correr_en_paralelo(
    semillas: list[int],
    procesos: int,
    pedidos: int,
    ritmo: float,
    directorio: Path,
    compresion: float | None = None,
    avance: Callable[[int], None] | None = None,
    comando: Callable[..., list[str]] = comando_hijo,
) -> tuple[list[ResultadoSemilla], list[str]]:
    """The seeds split round-robin across ``procesos`` children; their results merged, in seed order.

    Returns the results and notes for the report. Every seed is in the results: one its child
    did not report (the child crashed, was killed, or could not start its session) is a failed
    seed whose violation names the child, its exit code and its output file.
    """
    avance = avance or (lambda hechas: None)
    directorio.mkdir(parents=True, exist_ok=True)
    hijos: list[Hijo] = []
    for numero in range(1, procesos + 1):
        lote = semillas[numero - 1 :: procesos]
        if not lote:
            continue
        destino = directorio / f"caos-hijo-{numero}"
        destino.mkdir(parents=True, exist_ok=True)
        (destino / "resultados.jsonl").unlink(missing_ok=True)
        with (destino / "salida.log").open("wb") as salida:  # the child keeps its own copy of the descriptor
            proceso = subprocess.Popen(
                comando(lote, pedidos, ritmo, destino / "resultados.jsonl", destino, compresion),
                stdout=salida,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        hijos.append(Hijo(numero, lote, destino, proceso))
    try:
        pendientes = list(hijos)
        avances = {h.numero: (0, time.monotonic()) for h in hijos}  # seeds reported, when the count last grew
        while pendientes:
            for h in pendientes:
                hechas, desde = avances[h.numero]
                if (ahora := len(h.leidos())) != hechas:
                    avances[h.numero] = (ahora, time.monotonic())
                elif time.monotonic() - desde > SIN_AVANCE_MAX_S:  # hung: its seeds become failures
                    h.atascado = True
                    _detener(h)
            avance(sum(n for n, _ in avances.values()))
            with contextlib.suppress(subprocess.TimeoutExpired):  # wakes at its end, or in 2 s for the progress
                pendientes[0].proceso.wait(timeout=2.0)
            pendientes = [h for h in pendientes if h.proceso.poll() is None]
    finally:
        for h in hijos:  # interrupted: children do not outlive the campaign
            _detener(h)
    resultados: dict[int, ResultadoSemilla] = {}
    notas: list[str] = []
    for h in hijos:
        codigo = h.proceso.returncode
        leidos = {r.semilla: r for r in h.leidos()}
        resultados.update(leidos)
        faltan = [s for s in h.semillas if s not in leidos]
        if codigo not in (0, 1):
            notas.append(f"proceso {h.numero} (semillas {_rango(h.semillas)}) salió con código {codigo}: {h.salida}")
        for semilla in faltan:
            motivo = (
                f"detenido tras {SIN_AVANCE_MAX_S:.0f} s sin avance" if h.atascado else f"salió con código {codigo}"
            )
            detalle = f"su proceso {h.numero} {motivo} sin informarla; salida: {h.salida}"
            ultima = _ultima_linea(h.salida)
            resultados[semilla] = ResultadoSemilla(
                semilla=semilla,
                pedidos=0,
                faltas=0,
                muertes=0,
                estrangulados=0,
                violaciones=[Violacion("la semilla terminó", "-", detalle + (f" («{ultima}»)" if ultima else ""))],
                informe_invariantes=[],
                reembolsos=0,
                notas=[],
            )
    return [resultados[s] for s in semillas], notas


def _detener(hijo: Hijo) -> None:
    if hijo.proceso.poll() is not None:
        return
    hijo.proceso.send_signal(signal.SIGINT)  # as Ctrl-C: the child stops its own servers
    try:
        hijo.proceso.wait(timeout=60)
    except subprocess.TimeoutExpired:
        hijo.proceso.kill()
        hijo.proceso.wait()


def _rango(semillas: list[int]) -> str:
    return ", ".join(map(str, semillas[:5])) + (f"… ({len(semillas)})" if len(semillas) > 5 else "")


def _ultima_linea(ruta: Path) -> str:
    try:
        lineas = [linea.strip() for linea in ruta.read_text(errors="replace").splitlines() if linea.strip()]
    except OSError:
        return ""
    return lineas[-1][-200:] if lineas else ""


def anotar(informe: Informe, resultados: list[ResultadoSemilla], n: int, ritmo: float) -> None:
    malas = [r for r in resultados if not r.correcto]
    informe.anotar("caos", "semillas", len(resultados))
    informe.anotar("caos", "pedidos (creados en PostgreSQL)", sum(r.pedidos for r in resultados))
    informe.anotar("caos", "fallos programados", sum(r.faltas for r in resultados))
    informe.anotar("caos", "invocaciones muertas (caída / tiempo agotado)", sum(r.muertes for r in resultados))
    informe.anotar("caos", "invocaciones estranguladas", sum(r.estrangulados for r in resultados))
    informe.anotar("caos", "reembolsos", sum(r.reembolsos for r in resultados))
    informe.anotar("caos", "reinicios reales de PostgreSQL", sum(r.reinicios_postgres for r in resultados))
    informe.anotar(
        "caos", "avisos PedidoConfirmado repetidos (ERP, correo)", sum(r.avisos_repetidos for r in resultados)
    )
    simulados = [r.semilla for r in resultados if r.pedidos and not r.postgres_real]
    if simulados:
        informe.notas.append(
            f"semillas {_rango(simulados)}: sin binarios de PostgreSQL, «reiniciar PostgreSQL» solo cortó las "
            "conexiones de las funciones (pg_terminate_backend)"
        )
    informe.anotar("caos", "violaciones", sum(len(r.violaciones) for r in resultados))
    duraciones = sorted(r.duracion_s for r in resultados if r.duracion_s)
    if duraciones:
        informe.anotar(
            "caos",
            "segundos por semilla (mediana, máximo)",
            f"{duraciones[len(duraciones) // 2]:.0f}, {duraciones[-1]:.0f}",
        )
    informe.anotar("caos", "semillas con violaciones", ", ".join(str(r.semilla) for r in malas) or "ninguna")
    for r in malas:
        informe.notas.extend(describir_violaciones(r, n, ritmo))
    for r in resultados:
        informe.notas.extend(f"semilla {r.semilla}: fallo no inyectado: {e}" for e in r.notas)
    informe.invariantes.append(
        Invariante(
            "caos: las seis invariantes en cada semilla",
            not malas,
            f"{len(resultados) - len(malas)}/{len(resultados)} semillas sin violaciones",
        )
    )
