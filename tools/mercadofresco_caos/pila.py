"""``mf-caos --pila``: AWS FIS experiments against a deployed stack, judged like a local seed.

The stack must have been deployed with ``Chaos=enabled`` (its ``ExperimentoCaos*`` templates)
and the sandbox providers (``PasarelaUrl`` empty): the gateway's own records of charges and
refunds, and the providers' ``Idempotency-Key`` records, are in its ``TablaSimulador``, as the
stand-ins' are in a local run. The run starts the experiments, places orders through the store
API while they last, waits for the experiments to end and the orders to settle, reads the stack's
records into :class:`~mercadofresco_caos.juicio.Registros` and judges them with the same
code as every local seed.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco.aws import client
from mercadofresco_local import invariantes as inv
from mercadofresco_local import plantilla
from mercadofresco_local.flujo import reparto
from mercadofresco_local.observador import ejecuciones, resultados_por_pedido
from mercadofresco_ops.recursos import recursos_de_la_pila
from sam_emulator.runtime import messages_in_queue
from template_model import messaging as m

from mercadofresco_caos import especificacion, fis
from mercadofresco_caos.idempotencia import en_curso
from mercadofresco_caos.juicio import Registros, avisos_por_pedido, repeticiones

if TYPE_CHECKING:
    from collections.abc import Callable

    from mercadofresco_ops.smoke import Smoke

ESTADOS_FINALES_FIS = frozenset({"completed", "stopped", "failed", "cancelled"})


class PilaNoPreparadaError(RuntimeError):
    """The stack lacks what a chaos run needs (the message says which resource and which parameter)."""


@dataclass(frozen=True)
class Pila:
    """A deployed stack's resources (logical id -> physical id) and outputs."""

    nombre: str
    recursos: dict[str, str]
    salidas: dict[str, str] = field(default_factory=dict)

    def fisico(self, logico: str, parametro: str) -> str:
        if logico not in self.recursos:
            raise PilaNoPreparadaError(f"stack {self.nombre!r} has no {logico} (deploy it with {parametro})")
        return self.recursos[logico]


def leer_pila(nombre: str) -> Pila:
    cfn = client("cloudformation")
    recursos = recursos_de_la_pila(cfn, nombre)  # the chaos unit's experiments live in a nested stack
    pila = cfn.describe_stacks(StackName=nombre)["Stacks"][0]
    return Pila(nombre, recursos, {o["OutputKey"]: o["OutputValue"] for o in pila.get("Outputs", [])})


def _registros_sandbox(tabla: str) -> list[dict[str, Any]]:
    ddb = client("dynamodb")
    return [i for p in ddb.get_paginator("scan").paginate(TableName=tabla, ConsistentRead=True) for i in p["Items"]]


def _pedido_de_clave(clave: str) -> tuple[str, str]:
    """``cobro:PED-1`` -> (``cobro``, ``PED-1``)."""
    operacion, _, resto = clave.partition(":")
    return operacion, resto


def _pedido_de(clave: str) -> str:
    """The order of an idempotency key: ``reserva:PED-1:FRU-MAN-001`` -> ``PED-1``."""
    return _pedido_de_clave(clave)[1].split(":")[0]


def registros_de_pila(pila: Pila, pedidos: list[str]) -> Registros:
    """The stack's own records of these orders: executions, the sandbox's records, the idempotency table, SQS."""
    nuestros = set(pedidos)
    # The order workflow's queues and state machines, by the template's wiring (a pipe from a queue to a machine).
    flujos = m.workflow_queues(plantilla())
    fisico = lambda logico: pila.fisico(logico, "this project's template.yaml")  # noqa: E731
    tabla_sandbox = pila.fisico("TablaSimulador", "PasarelaUrl empty: the sandbox providers")
    lista = [e for maquina in dict.fromkeys(flujos.values()) for e in ejecuciones(fisico(maquina))]
    lista = [e for e in lista if e.pedido_id in nuestros]
    por_pedido = resultados_por_pedido(lista)
    consumidores = list(reparto(plantilla()).values())
    suyos = {d for c in consumidores for d in c.breakers}
    cobros, reembolsos, peticiones, claves = [], [], [], []
    for item in _registros_sandbox(tabla_sandbox):
        clave = item["clave"]["S"]
        if clave.startswith(("cobro:", "reembolso-de:")):
            datos = json.loads(item["datos"]["S"])
            if datos.get("pedido_id") in nuestros:
                (cobros if clave.startswith("cobro:") else reembolsos).append(datos)
        elif clave.startswith("respuesta:") and item.get("estado", {}).get("S") == "COMPLETADO":
            _, proveedor, clave_idempotencia = clave.split(":", 2)
            if _pedido_de(clave_idempotencia) not in nuestros:
                continue
            if proveedor in suyos:  # one record per provider and key: the effects of the fan-out's providers
                claves.append(clave_idempotencia)
            if "peticion" in item:  # what the provider acted on (an outcome e-mail names its template)
                peticiones.append(json.loads(item["peticion"]["S"]))
    en_marcha = sum(1 for e in lista if e.estado == "RUNNING")
    en_cola = sum(messages_in_queue(fisico(cola)) for cola in flujos) + en_marcha
    dlqs = [dlq for cola in flujos if (dlq := m.dead_letter_queue_of(plantilla(), cola))]
    en_dlq = set().union(*(_pedidos_en_dlq(fisico(dlq), nuestros) for dlq in dlqs))
    procesados = {p for p, c in por_pedido.items() if any(f in inv.PROCESADO for f in c)}
    balance = inv.Balance("pedidos", len(nuestros), len(procesados), len(en_dlq - procesados), en_cola)
    return Registros(
        comprometidos=list(pedidos),
        por_pedido=por_pedido,
        cobros=cobros,
        reembolsos=reembolsos,
        avisos=avisos_por_pedido(peticiones),
        repetidos=repeticiones(claves, consumidores, nuestros.__contains__),
        en_curso=en_curso(
            fisico("TablaIdempotencia"),
            lambda clave: _pedido_de(clave) in nuestros,
        ),
        balances=[balance],
        en_reposo=en_cola == 0,
    )


def _pedidos_en_dlq(url: str, nuestros: set[str]) -> set[str]:
    """Our orders with a message in the DLQ, peeked (a short visibility: the runbook's tools see them again)."""
    from mercadofresco_local.flujo import pedido_de

    mensajes = (
        client("sqs").receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=5).get("Messages", [])
    )
    return {p for m in mensajes if (p := pedido_de(m["Body"])) in nuestros}


@dataclass
class Experimento:
    fallo: str
    id: str
    estado: str = "initiating"
    minutos_por_accion: list[float] = field(default_factory=list)

    @property
    def coste_usd(self) -> float:
        return fis.coste_usd(self.minutos_por_accion)


def arrancar(pila: Pila, fallos: list[str]) -> list[Experimento]:
    """Start one experiment per fault kind named (FIS-capable, attached to this stack)."""
    cliente = client("fis")
    experimentos = []
    for nombre in fallos:
        plantilla = pila.fisico(fis.id_logico(nombre), "Chaos=enabled (and the sandbox gateway for its gateway faults)")
        respuesta = cliente.start_experiment(
            clientToken=str(uuid.uuid4()), experimentTemplateId=plantilla, tags={"mercadofresco:fallo": nombre}
        )
        experimentos.append(Experimento(nombre, respuesta["experiment"]["id"]))
    return experimentos


def actualizar(experimento: Experimento, espec: especificacion.Especificacion) -> None:
    """Its state, and how long each action ran (the spec's duration while it runs or when FIS does not say)."""
    datos = client("fis").get_experiment(id=experimento.id)["experiment"]
    experimento.estado = datos["state"]["status"]
    previsto = fis.minutos(espec[experimento.fallo].fis.parametros["duration"])  # type: ignore[union-attr]
    experimento.minutos_por_accion = [
        (a["endTime"] - a["startTime"]).total_seconds() / 60 if a.get("startTime") and a.get("endTime") else previsto
        for a in datos.get("actions", {}).values()
    ] or [previsto]


def correr(
    pila: Pila,
    smoke: Smoke,
    fallos: list[str],
    pedidos: int,
    espera_s: float,
    intervalo_s: float,
    avisar: Callable[[str], None],
) -> tuple[list[Experimento], Registros, list[str]]:
    """Experiments on, orders placed while they last, both settled; the stack's records of the orders."""
    espec = especificacion.cargar()
    experimentos = arrancar(pila, fallos)
    avisar(f"experimentos {', '.join(e.id for e in experimentos)}; colocando {pedidos} pedidos")
    duracion_s = max(fis.minutos(espec[f].fis.parametros["duration"]) for f in fallos) * 60  # type: ignore[union-attr]
    errores: list[str] = []
    for _ in range(pedidos):  # spread over the experiment: the extension picks a fault up within ~60 s
        errores += smoke.colocar(1)
        smoke.dormir(duracion_s / pedidos)
    limite = smoke.reloj() + duracion_s + espera_s
    while True:
        for e in experimentos:
            actualizar(e, espec)
        if all(e.estado in ESTADOS_FINALES_FIS for e in experimentos) or smoke.reloj() >= limite:
            break
        smoke.dormir(intervalo_s)
    smoke.seguir(espera_s, intervalo_s)
    ids = [s.pedido_id for s in smoke.seguimientos]
    return experimentos, registros_de_pila(pila, ids), errores
