"""Driving a :class:`~mercadofresco_local.sesion.Sesion`: put orders in, wait for the system to drain,
read back what happened, and check the invariants.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco.aws import client
from sam_emulator.background import BackgroundThread
from sam_emulator.runtime import messages_in_queue
from template_model import messaging as m

from mercadofresco_local import invariantes as inv
from mercadofresco_local.observador import CORTADAS, ejecuciones_del_flujo, resultados_por_pedido
from mercadofresco_local.tienda import CaidaSimulada

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from template_model import Consumer, Template

    from mercadofresco_local.informe import Informe
    from mercadofresco_local.sesion import Sesion


@dataclass
class Productor:
    """Creates ``n`` orders at ``ritmo_por_s`` in a thread, through ``crear(datos, numero)``.

    With ``arranque``, the first order is created alone and the rest wait for that event (a
    provider's anchor: the first order reached it); their pace counts from then, so a story told
    in the provider's time and the orders that tell it start together on any machine.
    """

    sesion: Sesion
    n: int
    ritmo_por_s: float
    crear: Callable[[dict[str, Any], int], None]
    arranque: threading.Event | None = None
    creados: int = 0
    caidas: int = 0
    _hilo: BackgroundThread = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._hilo = BackgroundThread("tienda", self._producir)

    def arrancar(self) -> Productor:
        self._hilo.start()
        return self

    @property
    def terminado(self) -> threading.Event:
        """Set once every order is created, or the producer died (then :meth:`comprobar` raises)."""
        return self._hilo.done

    def comprobar(self) -> None:
        self._hilo.raise_if_failed()

    def _producir(self, parar: threading.Event) -> None:
        assert self.sesion.tienda is not None
        inicio = time.monotonic()
        for numero, datos in enumerate(self.sesion.tienda.pedidos(self.n), start=1):
            espera = inicio + numero / self.ritmo_por_s - time.monotonic()
            if espera > 0 and parar.wait(espera):
                return
            try:
                self.crear(datos, numero)
            except CaidaSimulada:
                self.caidas += 1
            self.creados += 1
            if numero == 1 and self.arranque is not None:
                # No deadline of its own: the drain that waits for this producer bounds it.
                while not self.arranque.wait(0.5):
                    if parar.is_set():
                        return
                inicio = time.monotonic() - 1 / self.ritmo_por_s


def pendientes_outbox(sesion: Sesion) -> int:
    assert sesion.base is not None
    return int(sesion.base.consultar("SELECT count(*) FROM outbox WHERE NOT publicado")[0][0])


def mensajes_en(nombre_cola: str) -> int:
    """Visible + in flight + delayed messages in a queue, by name."""
    return messages_in_queue(client("sqs").get_queue_url(QueueName=nombre_cola)["QueueUrl"])


def motivos_en(nombre_cola: str) -> Counter[str]:
    """The ``mf-motivo`` of a sample of a DLQ's messages, read without hiding them (visibility 0).

    With visibility 0 the queue keeps handing out the same first messages: a sample (about 10),
    not a census, is what this returns.
    """
    from mercadofresco.dlq import REASON_ATTRIBUTE

    sqs = client("sqs")
    url = sqs.get_queue_url(QueueName=nombre_cola)["QueueUrl"]
    vistos: dict[str, str] = {}
    for _ in range(10):
        mensajes = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0, MessageAttributeNames=[REASON_ATTRIBUTE]
        ).get("Messages", [])
        for mensaje in mensajes:
            motivo = mensaje.get("MessageAttributes", {}).get(REASON_ATTRIBUTE, {}).get("StringValue", "—")
            vistos[mensaje["MessageId"]] = motivo
        if not mensajes:
            break
    return Counter(vistos.values())


def esperar_visibles(nombre_cola: str, n: int, timeout_s: float) -> None:
    """Wait until ``n`` messages of a queue are visible again (none left in flight)."""
    sqs = client("sqs")
    url = sqs.get_queue_url(QueueName=nombre_cola)["QueueUrl"]
    limite = time.monotonic() + timeout_s
    while True:
        atributos = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
        if int(atributos["Attributes"]["ApproximateNumberOfMessages"]) >= n or time.monotonic() > limite:
            return
        time.sleep(0.5)


def esperar_cola_vacia(url: str, timeout_s: float) -> None:
    limite = time.monotonic() + timeout_s
    while messages_in_queue(url) > 0:
        if time.monotonic() > limite:
            raise TimeoutError(f"{url} did not drain in {timeout_s:.0f} s")
        time.sleep(1.0)


def terminadas(sesion: Sesion) -> int:
    """Executions that have finished (any status), for the progress bar."""
    assert sesion.runtime is not None and sesion.runtime.provisioner is not None
    sfn = client("stepfunctions")
    total = 0
    for arn in sesion.runtime.provisioner.state_machines.values():
        for pagina in sfn.get_paginator("list_executions").paginate(stateMachineArn=arn):
            total += sum(1 for e in pagina["executions"] if e["status"] != "RUNNING")
    for servicio in sesion.runtime.functions.durable.values():
        total += len(servicio.executions()) - servicio.running()
    return total


def limite_ejecucion_s(sesion: Sesion) -> float:
    """The longest an execution may run here: the workflows' ``TimeoutSeconds``, compressed as the run compresses it.

    Step Functions (and the local run) stops an execution at that bound, so no drain can
    legitimately take longer after the last execution started.
    """
    assert sesion.runtime is not None and sesion.runtime.provisioner is not None
    sfn = client("stepfunctions")
    limites = [
        json.loads(sfn.describe_state_machine(stateMachineArn=arn)["definition"]).get("TimeoutSeconds", 0)
        for arn in sesion.runtime.provisioner.state_machines.values()
    ]
    # a durable execution's ExecutionTimeout, on its runner's clock (compressed only with the deadlines)
    durables = [s.execution_timeout_s / s.compression for s in sesion.runtime.functions.durable.values()]
    return max([limite / sesion.runtime.compression for limite in limites] + durables, default=0)


def limite_drenaje_s(sesion: Sesion, produccion_s: float = 0.0) -> float:
    """The shortest drain wait that is fair: production, then the workflow's own bound, plus 120 s of margin.

    Until then a slow drain is a slow (loaded) machine, not a stuck run: an execution may rightly
    wait real seconds (a lease, a ``Retry``) for as long as its ``TimeoutSeconds`` allows.
    """
    return produccion_s + limite_ejecucion_s(sesion) + 120


def esperar_drenaje(
    sesion: Sesion, productor: Productor | None, timeout_s: float, al_avanzar: Callable[[], None]
) -> float:
    """Wait for the producer, the outbox and every queue and execution; return the drain time in s."""
    assert sesion.runtime is not None
    limite = time.monotonic() + timeout_s
    while productor is not None and not productor.terminado.is_set():
        al_avanzar()
        if time.monotonic() > limite:
            raise TimeoutError("the store did not finish creating orders in time")
        time.sleep(1.0)
    if productor is not None:
        productor.comprobar()
    fin_produccion = time.monotonic()
    while pendientes_outbox(sesion) > 0:
        al_avanzar()
        if time.monotonic() > limite:
            raise TimeoutError("the outbox relay did not publish every row in time")
        time.sleep(1.0)
    sesion.runtime.wait_for_quiet(max(1.0, limite - time.monotonic()), stable_s=1.5, on_advance=al_avanzar)
    return time.monotonic() - fin_produccion


@dataclass
class Resultados:
    """What the components recorded, for the orders whose id starts with ``prefijo``."""

    prefijo: str
    comprometidos: list[str]
    por_pedido: dict[str, Counter[str]]
    finales: Counter[str]
    cobros: list[dict[str, Any]]
    reembolsos: list[dict[str, Any]]
    dlq: dict[str, int]
    colas: dict[str, int]
    intentos_cobro: Counter[str]  # pedido_id -> charge Lambda invocations

    def es_nuestro(self, pedido_id: str | None) -> bool:
        return bool(pedido_id) and str(pedido_id).startswith(self.prefijo)


def recolectar(sesion: Sesion, prefijo: str) -> Resultados:
    assert sesion.runtime is not None and sesion.base is not None and sesion.runtime.provisioner is not None
    rt = sesion.runtime
    filas = sesion.base.consultar("SELECT pedido_id FROM pedidos WHERE pedido_id LIKE %s", f"{prefijo}%")
    lista = ejecuciones_del_flujo(rt)
    lista = [e for e in lista if e.pedido_id is None or e.pedido_id.startswith(prefijo)]
    pasarela = sesion.proveedores.pasarela
    with pasarela._lock:
        cobros = [dict(c) for c in pasarela.cobros.values() if c["pedido_id"].startswith(prefijo)]
        reembolsos = [dict(r) for r in pasarela.reembolsos.values() if r["pedido_id"].startswith(prefijo)]
    dlqs = {nombre: rt.depth(ruta) for ruta, nombre in rt.queues().items() if rt.is_dlq(ruta)}
    colas = {nombre: rt.depth(ruta) for ruta, nombre in rt.queues().items() if not rt.is_dlq(ruta)}
    return Resultados(
        prefijo=prefijo,
        comprometidos=[f[0] for f in filas],
        por_pedido=resultados_por_pedido(lista),
        finales=Counter(e.final for e in lista),
        cobros=cobros,
        reembolsos=reembolsos,
        dlq=dlqs,
        colas=colas,
        intentos_cobro=intentos_de_cobro(sesion, prefijo),
    )


def intentos_de_cobro(sesion: Sesion, prefijo: str) -> Counter[str]:
    """Charge Lambda invocations per order, from moto_lambda's record of the workflow's tasks."""
    registro = sesion.runtime.lambda_registry if sesion.runtime else None
    intentos: Counter[str] = Counter()
    for _nombre, evento in list(registro.events if registro else []):
        carga = json.loads(evento) if isinstance(evento, str) else evento
        if isinstance(carga, dict) and carga.get("operacion") == "cobro":
            pedido_id = str(carga.get("pedido", {}).get("pedido_id", ""))
            if pedido_id.startswith(prefijo):
                intentos[pedido_id] += 1
    return intentos


def comprobar_invariantes(sesion: Sesion, res: Resultados, informe: Informe) -> None:
    """The invariants of issue 8 and, at rest, no record left EN_CURSO (issue 28), from the components' own records."""
    informe.invariantes.extend(
        [
            inv.un_evento_procesado_por_pedido(res.comprometidos, res.por_pedido),
            inv.un_cobro_como_maximo(res.cobros),
            inv.reembolsos_con_cobro(res.cobros, res.reembolsos),
            inv.cobros_con_pedido(res.cobros, res.reembolsos, res.por_pedido),
            inv.ningun_mensaje_perdido(balances(sesion, res)),
            inv.ningun_registro_en_curso(registros_en_curso(sesion, res.prefijo)),
        ]
    )


def registros_en_curso(sesion: Sesion, prefijo: str) -> list[str]:
    """Keys of the run's idempotency records (those naming its orders) still ``EN_CURSO``."""
    assert sesion.runtime is not None
    tabla = sesion.runtime.template.ref("TablaIdempotencia")
    paginas = (
        client("dynamodb")
        .get_paginator("scan")
        .paginate(
            TableName=tabla,
            ConsistentRead=True,
            FilterExpression="estado = :en_curso AND contains(clave, :prefijo)",
            ExpressionAttributeValues={":en_curso": {"S": "EN_CURSO"}, ":prefijo": {"S": prefijo}},
        )
    )
    return [item["clave"]["S"] for pagina in paginas for item in pagina["Items"]]


def balances(sesion: Sesion, res: Resultados) -> list[inv.Balance]:
    """Per flow: events accepted into it = processed + in its DLQ + still queued/running."""
    assert sesion.runtime is not None and sesion.base is not None
    aceptados = {
        f[0]
        for f in sesion.base.consultar(
            "SELECT agregado_id FROM outbox WHERE publicado AND tipo_evento = 'PedidoCreado' AND agregado_id LIKE %s",
            f"{res.prefijo}%",
        )
    }
    procesados = {p for p, c in res.por_pedido.items() if any(f in inv.PROCESADO for f in c)} & aceptados
    # Which queue is which flow's comes from the template's wiring (the template model), never from a name:
    # the workflow's input is what a pipe reads, the fan-out what the SNS topic delivers to.
    rt = sesion.runtime
    plantilla = rt.template

    def nombre(cola: str) -> str:
        return rt.template.get_att(cola, "QueueName")

    def dlqs_de(colas: list[str]) -> set[str]:
        return {nombre(d) for c in colas if (d := m.dead_letter_queue_path(*plantilla.locate(c)))}

    entrada = list(m.workflow_queues(plantilla))
    en_curso = rt.executions_running() + sum(res.colas.get(nombre(c), 0) for c in entrada)
    en_dlq, copias = _en_dlq(res, dlqs_de(entrada), aceptados, procesados)
    pendientes = aceptados - procesados - en_dlq
    cortadas = {p for p in pendientes if any(f.startswith(CORTADAS) for f in res.por_pedido.get(p, ()))}
    pedidos = inv.Balance("pedidos", len(aceptados), len(procesados), len(en_dlq), en_curso, copias, len(cortadas))
    confirmados = {p for p, c in res.por_pedido.items() if c.get("Confirmado")}
    fanout = []
    for cola, consumidor in reparto(plantilla).items():
        hechos = hechos_por(consumidor, sesion.proveedores.de(consumidor.breakers))
        en_dlq, copias = _en_dlq(res, dlqs_de([cola]), confirmados, hechos & confirmados)
        fanout.append(
            inv.Balance(
                f"aviso {nombre(cola)}",
                len(confirmados),
                len(hechos & confirmados),
                len(en_dlq),
                res.colas.get(nombre(cola), 0),
                copias,
            )
        )
    return [pedidos, *fanout]


def reparto(plantilla: Template) -> dict[str, Consumer]:
    """Each queue the confirmation topic delivers to (by stack path) -> its consumer, when that consumer calls a
    provider.

    A consumer that calls none (the projection) leaves no effect outside the system to count.
    """
    consumidores = {c.function: c for c in m.fan_out(plantilla) if c.providers}
    return {
        f"{prefijo}{cola}": consumidores[f"{prefijo}{lector}"]
        for prefijo, unidad in plantilla.walk()
        for cola in m.subscribed_queues(unidad)
        for lector in m.queue_readers(unidad, cola)
        if f"{prefijo}{lector}" in consumidores
    }


def hechos_por(consumidor: Consumer, efectos: list[dict[str, Any]]) -> set[str]:
    """The identifiers (order ids) a consumer acted on, from its providers' effects: an ``Idempotency-Key``
    of its own naming one (``aviso-erp:PED-1``), not a part of one (``reserva:PED-1:SKU``)."""
    return {i for e in efectos if (i := consumidor.identifier_in(e.get("clave") or "")) is not None}


def _en_dlq(res: Resultados, dlqs: set[str], aceptados: set[str], procesados: set[str]) -> tuple[set[str], int]:
    """(accepted orders only in the flow's DLQs, DLQ messages that are copies of another one counted)."""
    mensajes: Counter[str] = Counter()
    for nombre, n in res.dlq.items():
        if nombre in dlqs and n:
            mensajes.update({p: k for p, k in pedidos_en(nombre).items() if p in aceptados})
    solo_en_dlq = {p for p in mensajes if p not in procesados}
    return solo_en_dlq, sum(mensajes.values()) - len(solo_en_dlq)


OCULTO_AL_LEER_S = 60  # long enough to read a whole DLQ before its first message is visible again


def pedidos_en(nombre_cola: str) -> Counter[str]:
    """The order id of every message in a queue (a DLQ after the run), each read once, none consumed.

    With visibility 0 SQS keeps handing out the same first messages; so every message read is
    hidden until the whole queue is read, then made visible again. A body without an order id
    (a cart reminder) counts under ``""``.
    """
    sqs = client("sqs")
    url = sqs.get_queue_url(QueueName=nombre_cola)["QueueUrl"]
    pedidos: Counter[str] = Counter()
    recibos: list[str] = []
    try:
        while mensajes := sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=OCULTO_AL_LEER_S
        ).get("Messages", []):
            recibos.extend(m["ReceiptHandle"] for m in mensajes)
            pedidos.update(pedido_de(m["Body"]) for m in mensajes)
    finally:
        # In batches, which answer per message: one that left meanwhile does not keep the rest hidden.
        for i in range(0, len(recibos), 10):
            entradas = [
                {"Id": str(n), "ReceiptHandle": r, "VisibilityTimeout": 0} for n, r in enumerate(recibos[i : i + 10])
            ]
            sqs.change_message_visibility_batch(QueueUrl=url, Entries=entradas)
    return pedidos


def pedido_de(cuerpo: str) -> str:
    """The ``pedido_id`` of a message body: raw JSON, an SNS envelope or an EventBridge one ("" if none)."""
    try:
        datos = json.loads(cuerpo)
    except ValueError:
        return ""
    if not isinstance(datos, dict):
        return ""
    if isinstance(datos.get("Message"), str):
        return pedido_de(datos["Message"])
    detalle = datos.get("detail")
    return str((detalle if isinstance(detalle, dict) else datos).get("pedido_id") or "")
