"""What the deployed stack itself recorded, read from the emulated account: the deploy level's evidence.

Nothing here is what the level meant to do: each order's state is the store API's answer (``GET
/pedidos/{id}``, the projection's column in Aurora); its executions and the states they entered are Step
Functions' history; the idempotency records are ``mercadofresco-idempotencia``'s; what the providers did
is the sandbox table the simulators write (a charge, a refund, each ERP notice, reservation and release,
each e-mail, by its ``Idempotency-Key``); the breaker is its key in the stack's Valkey; a DLQ's depth is
SQS's. Names come from the template (:mod:`template_model`) and the deployed functions' configuration.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from mercadofresco.dominio.proyeccion import ESTADO_POR_EVENTO
from mercadofresco_ops.smoke import ESTADOS_FINALES, ClienteTienda, buscar_pedido_id
from template_model import Template, messaging

from emulated_account.despliegue import RAIZ, cliente, url_valkey

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from botocore.client import BaseClient
    from mercadofresco.circuit_breaker import Decision
    from template_model.messaging import Consumer

    from emulated_account.cuenta import Estado

ESPERA_S = 600  # a hang guard for anything awaited here (the slowest path waits 2 x 130 s in the workflow)


def esperar(condicion: Callable[[], Any], que: str, limite_s: float = ESPERA_S, cada_s: float = 2) -> Any:
    """``condicion()``'s first answer that is neither None nor False; ``TimeoutError`` naming ``que`` after
    ``limite_s`` (a hang guard).

    The account announces nothing (an order's state, a drained queue, a breaker's transition): it is
    polled, at ``cada_s``.
    """
    limite = time.monotonic() + limite_s
    while (valor := condicion()) is None or valor is False:
        if time.monotonic() > limite:
            raise TimeoutError(f"{que}: not seen within {limite_s:.0f} s")
        time.sleep(cada_s)
    return valor


@dataclass
class Cuenta:
    """The deployed stack in the running emulated account, and its store API."""

    estado: Estado
    url_tienda: str
    parametros: dict[str, str]
    plantilla: Template = field(init=False)

    def __post_init__(self) -> None:
        self.plantilla = Template(RAIZ / "template.yaml", parameters=self.parametros, region=self.estado.region)
        self.cliente: Callable[[str], BaseClient] = cliente(self.estado)
        self.tienda = ClienteTienda(self.url_tienda, firmar=True, region=self.estado.region)
        self._entradas: dict[str, str] = {}  # execution ARN -> its input (it never changes)

    # ------------------------------------------------------------------ names (the template's, resolved)
    def _por_unidad(self, pregunta: Callable[[Template], Iterable[str]]) -> list[str]:
        return [nombre for _ruta, unidad in self.plantilla.walk() for nombre in pregunta(unidad)]

    @cached_property
    def dlqs(self) -> list[str]:
        return self._por_unidad(
            lambda t: [messaging.physical_name(t, q, "QueueName") for q in messaging.dead_letter_queues(t)]
        )

    @cached_property
    def colas_de_consumidores(self) -> list[str]:
        """Every queue a function consumes (the fan-out's, the stock FIFO queue...): drained, the work is done."""
        return self._por_unidad(
            lambda t: [messaging.physical_name(t, q, "QueueName") for c in messaging.consumers(t) for q in c.queues]
        )

    @cached_property
    def avisados(self) -> dict[str, list[Consumer]]:
        """Final state -> the consumers its outcome event reaches that keep an idempotency record of what they
        did (each one's own key naming the order, ``Consumer.identifier_in``), by the template's wiring."""
        return {
            estado.nombre: [c for _ruta, t in self.plantilla.walk() for c in messaging.consumers_of(t, evento)
                            if c.key_prefixes]
            for evento, estado in ESTADO_POR_EVENTO.items()
        }  # fmt: skip

    @cached_property
    def colas_del_reparto(self) -> list[str]:
        """The queues the confirmation topic delivers to (ERP, e-mail, projection)."""
        return self._por_unidad(
            lambda t: [messaging.physical_name(t, q, "QueueName") for q in messaging.subscribed_queues(t)]
        )

    def _funcion(self, pregunta: Callable[[Template, str], bool], que: str) -> str:
        """The deployed name of the first function of the template ``pregunta`` says yes to."""
        for _ruta, t in self.plantilla.walk():
            for funcion in t.of_type("AWS::Serverless::Function"):
                if pregunta(t, funcion):
                    return messaging.physical_name(t, funcion, "FunctionName")
        raise LookupError(f"no function {que} in the template")

    def llamante(self, dependencia: str) -> str:
        """The deployed name of a function that calls the provider ``dependencia`` (its breaker's name)."""
        return self._funcion(
            lambda t, f: any(p.dependency == dependencia for p in messaging.providers(t, f)),
            f"calls {dependencia}",
        )

    def simulador(self, dependencia: str) -> str:
        """The deployed name of the sandbox function that plays ``dependencia`` when no URL is given."""
        for _ruta, t in self.plantilla.walk():
            for funcion in t.of_type("AWS::Serverless::Function"):
                for p in messaging.providers(t, funcion):
                    if p.dependency == dependencia and p.stand_in:
                        unidad, simulador = t.locate(p.stand_in)  # in the sandbox unit
                        return messaging.physical_name(unidad, simulador, "FunctionName")
        raise LookupError(f"no function in the template plays {dependencia}")

    def variables(self, funcion: str) -> dict[str, str]:
        """A deployed function's environment, as the account holds it."""
        configuracion = self.cliente("lambda").get_function_configuration(FunctionName=funcion)
        return configuracion.get("Environment", {}).get("Variables", {})

    @cached_property
    def tabla_simulador(self) -> str:
        return self.variables(self.simulador("pasarela"))["SIMULADOR_TABLA"]

    @cached_property
    def tabla_idempotencia(self) -> str:
        return self.variables(self.llamante("pasarela"))["TABLA_IDEMPOTENCIA"]

    @cached_property
    def maquina(self) -> str:
        from mercadofresco_ops.smoke import Nombres

        nombre = Nombres(self.parametros.get("NameSuffix", "")).maquina
        sfn = self.cliente("stepfunctions")
        return next(m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"] if m["name"] == nombre)

    # ------------------------------------------------------------------ orders and their records
    def estado_pedido(self, pedido_id: str) -> str | None:
        codigo, cuerpo = self.tienda.leer(pedido_id)
        return cuerpo.get("estado") if codigo == 200 else None

    def finales(self, pedidos: Iterable[str]) -> dict[str, str] | None:
        """Each order's final state once every one has one; None while some has not."""
        estados = {p: self.estado_pedido(p) for p in pedidos}
        return estados if all(e in ESTADOS_FINALES for e in estados.values()) else None

    def _ejecuciones_de(self, pedidos: Iterable[str]) -> dict[str, list[tuple[dict[str, Any], str]]]:
        """Order -> [(ListExecutions' entry, the execution's input)] (inputs read once per execution)."""
        sfn, buscados = self.cliente("stepfunctions"), set(pedidos)
        vistas: dict[str, list[tuple[dict[str, Any], str]]] = {p: [] for p in buscados}
        for pagina in sfn.get_paginator("list_executions").paginate(stateMachineArn=self.maquina):
            for ejecucion in pagina["executions"]:
                arn = ejecucion["executionArn"]
                if arn not in self._entradas:
                    self._entradas[arn] = sfn.describe_execution(executionArn=arn).get("input", "")
                if (pedido := buscar_pedido_id(self._entradas[arn])) in buscados:
                    vistas[pedido].append((ejecucion, self._entradas[arn]))
        return vistas

    def entradas(self, pedidos: Iterable[str]) -> dict[str, list[str]]:
        """Order -> the input of each of its executions (the batch the pipe started it with)."""
        return {p: [entrada for _e, entrada in es] for p, es in self._ejecuciones_de(pedidos).items()}

    def ejecuciones(self, pedidos: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """Order -> its executions: status, the states entered, how many records its input batch had."""
        sfn = self.cliente("stepfunctions")
        vistas: dict[str, list[dict[str, Any]]] = {}
        for pedido, ejecuciones in self._ejecuciones_de(pedidos).items():
            vistas[pedido] = []
            for ejecucion, entrada in ejecuciones:
                historia = sfn.get_execution_history(executionArn=ejecucion["executionArn"], maxResults=1000)
                estados = [
                    e["stateEnteredEventDetails"]["name"] for e in historia["events"] if "stateEnteredEventDetails" in e
                ]
                vistas[pedido].append(
                    {"estado": ejecucion["status"], "estados": estados, "registros": len(json.loads(entrada or "[]"))}
                )
        return vistas

    def _escanear(self, tabla: str) -> list[dict[str, Any]]:
        ddb, items = self.cliente("dynamodb"), []
        for pagina in ddb.get_paginator("scan").paginate(TableName=tabla, ConsistentRead=True):
            items.extend(pagina["Items"])
        return items

    def idempotencia(self, pedidos: Iterable[str]) -> dict[str, dict[str, str]]:
        """Order -> {idempotency key: its record's state}, every key of ``mercadofresco-idempotencia`` naming it."""
        pedidos = list(pedidos)
        vistas: dict[str, dict[str, str]] = {p: {} for p in pedidos}
        for item in self._escanear(self.tabla_idempotencia):
            clave = item["clave"]["S"]
            for p in pedidos:
                if p in clave:
                    vistas[p][clave] = item.get("estado", {}).get("S", "PRESENTE")
        return vistas

    def proveedores(self, pedidos: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Order -> what the sandbox providers did for it: charges, refunds, and each request key they served.

        ``respuesta:<provider>:<Idempotency-Key>`` is kept once per key the provider acted on: an ERP notice,
        a reservation, a release, an e-mail. A duplicate sent with the same key is answered from it; one
        sent with another key would be a second item.
        """
        pedidos = list(pedidos)
        vistas = {p: {"cobros": 0, "reembolsos": 0, "peticiones": []} for p in pedidos}
        for item in self._escanear(self.tabla_simulador):
            clave = item["clave"]["S"]
            datos = json.loads(item["datos"]["S"]) if "datos" in item else {}
            for p in pedidos:
                if clave.startswith("cobro:") and datos.get("pedido_id") == p:
                    vistas[p]["cobros"] += 1
                elif clave.startswith("reembolso-de:") and datos.get("pedido_id") == p:
                    vistas[p]["reembolsos"] += 1
                elif clave.startswith("respuesta:") and p in clave:
                    vistas[p]["peticiones"].append(clave.removeprefix("respuesta:"))
        for vista in vistas.values():
            vista["peticiones"].sort()
        return vistas

    def profundidades(self, colas: Iterable[str]) -> dict[str, int]:
        """Each queue's messages, visible and in flight."""
        sqs, profundidad = self.cliente("sqs"), {}
        for cola in colas:
            url = sqs.get_queue_url(QueueName=cola)["QueueUrl"]
            atributos = sqs.get_queue_attributes(
                QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
            )["Attributes"]
            profundidad[cola] = sum(int(v) for v in atributos.values())
        return profundidad

    # ------------------------------------------------------------------ the breaker, in the stack's Valkey
    @cached_property
    def _valkey(self) -> Any:
        import redis

        return redis.Redis.from_url(url_valkey(self.estado), socket_timeout=5)  # as the functions reach it

    def breaker(self, dependencia: str) -> Decision:
        """The shared breaker of ``dependencia`` as Valkey holds it (what ``mf-circuito estado`` prints)."""
        from mercadofresco.circuit_breaker import CircuitBreaker

        return CircuitBreaker(dependencia, self._valkey).shared_state()
