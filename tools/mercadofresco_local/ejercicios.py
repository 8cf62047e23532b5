"""Exercises 1 and 2 of the lesson as scenarios: the duplicate charge, and the v2 deployment.

``cobro-duplicado`` reproduces exercise 1's mechanism exactly: a consumer whose queue's
visibility timeout (1 s) is shorter than the gateway's latency (1.5 s), so the same message
becomes visible again and a second poller charges the same order *in parallel*. That queue
(``mf-demo-ejercicio-1``, fed by a second rule on ``PedidoCreado``) is the scenario's test rig,
not part of ``template.yaml``; its consumer is the real charge handler, the same one the
workflow calls, so each order is charged by up to three concurrent attempts. The defence
shown: the idempotency record ``cobro:{pedido_id}`` and the gateway's ``Idempotency-Key``.

``despliegue-v2`` reproduces exercise 2: the producer starts writing ``version: 2`` halfway;
the workflow sends those events to ``mercadofresco-pedidos-fallidos`` with their reason, and
the runbook's tools (``mf-dlq``, engineer 7's CLI, a separate process against the same moto
server) classify, transform-and-reprocess, and verify.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mercadofresco.aws import client
from sam_emulator.event_sources import EventSourceMapping

from mercadofresco_local import flujo, plantilla
from mercadofresco_local.escenarios import _check, cerrar, fase
from mercadofresco_local.proveedores import Fallo

if TYPE_CHECKING:
    from sam_emulator.functions import Function

    from mercadofresco_local.escenarios import Avance
    from mercadofresco_local.informe import Informe
    from mercadofresco_local.sesion import Sesion

COLA_EJERCICIO_1 = "mf-demo-ejercicio-1"
VISIBILIDAD_EJERCICIO_1_S = 1
LATENCIA_EJERCICIO_1_S = 1.5
DLQ_PEDIDOS = "mercadofresco-pedidos-fallidos"


class _CobroDesdeCola:
    """The exercise's naive consumer: one PedidoCreado message -> the real charge handler."""

    def __init__(self, cobro: Function) -> None:
        self.cobro = cobro
        self.invocaciones = 0
        self.errores = 0

    def invoke(self, evento: dict[str, Any]) -> dict[str, Any]:
        fallos = []
        for registro in evento["Records"]:
            self.invocaciones += 1
            try:
                self.cobro.invoke({"operacion": "cobro", "pedido": json.loads(registro["body"])["detail"]})
            except Exception:  # OperacionEnCurso while the other attempt holds the claim: try again later
                self.errores += 1
                fallos.append({"itemIdentifier": registro["messageId"]})
        return {"batchItemFailures": fallos}


def _montar_ejercicio_1(sesion: Sesion) -> tuple[EventSourceMapping, _CobroDesdeCola]:
    assert sesion.runtime is not None and sesion.tienda is not None
    sqs, events = client("sqs"), client("events")
    url = sqs.create_queue(QueueName=COLA_EJERCICIO_1, Attributes={"VisibilityTimeout": str(VISIBILIDAD_EJERCICIO_1_S)})
    arn = sqs.get_queue_attributes(QueueUrl=url["QueueUrl"], AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(
        Name=COLA_EJERCICIO_1,
        EventBusName=sesion.tienda.bus,
        EventPattern=json.dumps({"detail-type": ["PedidoCreado"]}),
    )
    events.put_targets(Rule=COLA_EJERCICIO_1, EventBusName=sesion.tienda.bus, Targets=[{"Id": "rig", "Arn": arn}])
    consumidor = _CobroDesdeCola(sesion.runtime.functions.by_id["CobroFunction"])
    mapeo = EventSourceMapping(
        name=COLA_EJERCICIO_1,
        function=consumidor,
        queue_url=url["QueueUrl"],
        queue_arn=arn,  # type: ignore[arg-type]
        batch_size=1,
        concurrency=4,
        reports_failures=True,
        visibility_s=VISIBILIDAD_EJERCICIO_1_S,
    )
    return mapeo, consumidor


def cobro_duplicado(sesion: Sesion, n: int, ritmo: float, informe: Informe, avance: Avance) -> None:
    assert sesion.tienda is not None and sesion.runtime is not None
    sesion.proveedores.fallos.programar(Fallo.latencia(LATENCIA_EJERCICIO_1_S, proveedor="pasarela", ruta="/cobros"))
    mapeo, consumidor = _montar_ejercicio_1(sesion)
    mapeo.start()
    try:
        crear = lambda datos, _: sesion.tienda.crear_con_outbox(datos)  # noqa: E731
        # The workflow's Cobrar meets the naive consumer's live claim (OperacionEnCurso) on some orders and
        # resolves it as designed: a Wait past the charge's lease (EsperarFinBloqueo, Mappings.Plazos, real
        # seconds outside the chaos scenario), then the same key again. The drain allows for that wait.
        espera_s = espera_resolucion_s()
        limite_s = 120 + n / ritmo + 1.2 * n + espera_s
        _, drenaje = fase(sesion, n, ritmo, crear, "visibilidad 1 s < latencia 1,5 s", avance, timeout_s=limite_s)
        flujo.esperar_cola_vacia(mapeo.queue_url, timeout_s=60)
    finally:
        mapeo.stop()
    res = cerrar(sesion, sesion.tienda.prefijo, informe, drenaje)
    efectos = sesion.proveedores.pasarela.efectos_por_clave
    dobles = [clave for clave, k in efectos.items() if clave.startswith("cobro:") and k > 1]
    recibidos = mapeo.stats.received
    informe.anotar("ejercicio 1", f"recepciones en {COLA_EJERCICIO_1} (visibilidad 1 s)", recibidos)
    informe.anotar("ejercicio 1", "cobros intentados por el consumidor ingenuo", consumidor.invocaciones)
    informe.anotar("ejercicio 1", "de ellos rechazados por EN_CURSO (OperacionEnCurso)", consumidor.errores)
    _mostrar_un_pedido(sesion, res, informe)
    _check(
        informe,
        "el mismo mensaje se procesó dos veces en paralelo",
        recibidos > n,
        f"{recibidos} recepciones para {n} mensajes",
    )
    _check(
        informe,
        "la pasarela hizo un solo efecto por Idempotency-Key",
        not dobles,
        f"{len([c for c in efectos if c.startswith('cobro:')])} claves cobro:, {len(dobles)} con dos efectos",
    )


def espera_resolucion_s() -> float:
    """Seconds of the workflow's Wait before it asks the gateway again about an unknown outcome
    (``EsperarFinBloqueo``), read where they are declared (``Mappings.Plazos``)."""
    from template_model.bounds import time_bounds

    limites = time_bounds(plantilla().doc, plantilla().folder)
    return float(limites.workflows["ProcesarPedido"].waits_s["EsperarFinBloqueo"])


def _mostrar_un_pedido(sesion: Sesion, res: flujo.Resultados, informe: Informe) -> None:
    """One order's evidence: its idempotency record and what the gateway did with its key."""
    if not res.comprometidos:
        return
    pedido_id = sorted(res.comprometidos)[0]
    assert sesion.runtime is not None
    tabla = sesion.runtime.template.ref("TablaIdempotencia")
    item = client("dynamodb").get_item(TableName=tabla, Key={"clave": {"S": f"cobro:{pedido_id}"}}).get("Item", {})
    estado = item.get("estado", {}).get("S", "—")
    informe.anotar("ejercicio 1", f"registro cobro:{pedido_id}", f"estado {estado}")
    efectos = sesion.proveedores.pasarela.efectos_por_clave[f"cobro:{pedido_id}"]
    informe.anotar("ejercicio 1", f"pasarela, Idempotency-Key cobro:{pedido_id}", f"{efectos} cobro(s)")


def despliegue_v2(sesion: Sesion, n: int, ritmo: float, informe: Informe, avance: Avance) -> None:
    assert sesion.tienda is not None and sesion.servidor_url is not None
    tienda = sesion.tienda
    crear = lambda datos, numero: tienda.crear_con_outbox(datos, version=1 if numero <= n // 2 else 2)  # noqa: E731
    fase(sesion, n, ritmo, crear, "el productor v2 se despliega a mitad", avance)
    en_dlq = flujo.mensajes_en(DLQ_PEDIDOS)
    motivos = flujo.motivos_en(DLQ_PEDIDOS)
    informe.anotar("ejercicio 2", f"{DLQ_PEDIDOS} tras el despliegue", f"{en_dlq} ({dict(motivos)})")
    clasificacion = mf_dlq(sesion, "clasificar", "--version-esperada", "1")
    informe.anotar("ejercicio 2", "mf-dlq clasificar", f"{clasificacion['datos'].get('tipo')}")
    _check(
        informe,
        "clasificar dice envenenado",
        clasificacion["datos"].get("tipo") == "envenenado",
        str(clasificacion["datos"].get("explicacion", ""))[:160],
    )
    # clasificar samples with a 5 s visibility (never deleting): the sample is back in the DLQ
    # only after that, and reprocesar moves what it can see.
    flujo.esperar_visibles(DLQ_PEDIDOS, en_dlq, timeout_s=30)
    ya = flujo.terminadas(sesion)
    reproceso = mf_dlq(
        sesion, "reprocesar", "--transformar", "mercadofresco_ops.dlq.adaptadores:v2_a_v1", "--tasa", "50"
    )
    movidos = reproceso["datos"].get("movidos", reproceso["datos"])
    informe.anotar(
        "ejercicio 2",
        "mf-dlq reprocesar --transformar v2_a_v1 --tasa 50",
        f"código {reproceso['codigo']}, movidos {movidos}",
    )
    if reproceso["codigo"] != 0:
        informe.notas.append(f"mf-dlq reprocesar: {json.dumps(reproceso['datos'])[:400]} {reproceso['error'][-400:]}")
    drenaje = flujo.esperar_drenaje(
        sesion,
        None,
        flujo.limite_drenaje_s(sesion),
        lambda: avance("reprocesando la DLQ", flujo.terminadas(sesion) - ya, en_dlq),
    )
    verificacion = mf_dlq(sesion, "verificar")
    informe.anotar("ejercicio 2", "mf-dlq verificar", f"código {verificacion['codigo']}")
    cerrar(sesion, tienda.prefijo, informe, drenaje)
    # At least one message per v2 order: delivery is at-least-once, so an event the relay or the
    # queue delivered twice leaves two copies, and after the redrive the claim stops the second
    # (the invariants below check every order was processed exactly once).
    v2 = n - n // 2
    _check(
        informe,
        "los v2 acabaron en la DLQ con su motivo",
        en_dlq >= v2 and set(motivos) == {"version-desconocida"},
        f"{en_dlq} mensajes para {v2} pedidos v2 (de más: copias de una entrega repetida); "
        f"mf-motivo en una muestra de {sum(motivos.values())}: {dict(motivos)}",
    )
    _check(
        informe,
        "reprocesar (v2 → v1) drenó la DLQ",
        reproceso["codigo"] == 0 and flujo.mensajes_en(DLQ_PEDIDOS) == 0,
        f"quedan {flujo.mensajes_en(DLQ_PEDIDOS)}",
    )
    _check(informe, "verificar pasa", verificacion["codigo"] == 0, json.dumps(verificacion["datos"])[:160])


def mf_dlq(sesion: Sesion, orden: str, *extra: str) -> dict[str, Any]:
    """Run engineer 7's ``mf-dlq`` as the operator would: another process, ``--endpoint-url`` at this moto."""
    ejecutable = Path(sys.executable).with_name("mf-dlq")
    comando = [
        str(ejecutable),
        orden,
        "--cola",
        DLQ_PEDIDOS,
        "--endpoint-url",
        str(sesion.servidor_url),
        "--json",
        *extra,
    ]
    proceso = subprocess.run(comando, capture_output=True, text=True, timeout=120, check=False)
    try:
        datos = json.loads(proceso.stdout) if proceso.stdout.strip() else {}
    except ValueError:
        datos = {"salida": proceso.stdout[-500:]}
    return {"codigo": proceso.returncode, "datos": datos, "error": proceso.stderr[-500:]}
