"""Fault kinds of the Lambda platform (:mod:`sam_emulator.deaths`): crashes, timeouts, throttles.

They are not timed: each names a function, an order and an attempt, and :class:`PlanLambda`
(``muerte.CONTROL``'s plan) hits exactly that invocation when it arrives.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sam_emulator import deaths as muerte
from sam_emulator.platform_faults import LambdaCrashed, LambdaTimeout
from template_model import messaging as m

from mercadofresco_caos.calendario import ID_PEDIDO, FalloLambda
from mercadofresco_caos.especificacion import consumidores
from mercadofresco_caos.registro import TipoFallo, entre, registrar

if TYPE_CHECKING:
    import random

    from template_model import Template

    from mercadofresco_caos.calendario import Falta, Lienzo, ProgramaCaos

PREFIJO_FUNCION = "mercadofresco-"  # the template's FunctionName is mercadofresco-<short name>
# The workflow's functions the schedule may hit, with the share of Lambda faults each gets; the consumers
# that call a provider (the template's, :func:`.especificacion.consumidores`) share the rest equally. Only the
# chosen engine's are in the template (WorkflowEngine): the state machine's charge and claim tasks, or the
# durable saga, which claims and charges in one function (and whose every invocation may be hit).
FUNCIONES_DEL_FLUJO = {"cobro": 0.5, "reclamo": 0.15, "pedido-durable": 0.65}
FUNCIONES_QUE_COBRAN = ("cobro", "pedido-durable")
PARTE_DE_LOS_CONSUMIDORES = 0.35
DESPUES_DEL_CARGO = "after:http POST /cobros"  # the gateway charged, the answer is lost
# Named points of the charge worth hitting on purpose, besides "the k-th boundary".
PUNTOS_COBRO = (
    "before:http POST /cobros",  # before the gateway call
    DESPUES_DEL_CARGO,
    "before:dynamodb.UpdateItem",  # before the idempotency record is completed
)


def nombre_corto(plantilla: Template, funcion: str) -> str:
    """A function's short name (what a schedule names and a report prints): ``mercadofresco-erp`` -> ``erp``."""
    return m.physical_name(plantilla, funcion, "FunctionName").removeprefix(PREFIJO_FUNCION)


def consumidores_cortos(plantilla: Template) -> tuple[str, ...]:
    """The short names of the consumers that call a provider, in template order."""
    return tuple(nombre_corto(plantilla, c.function) for c in consumidores(plantilla))


def funciones_del_flujo(plantilla: Template) -> dict[str, float]:
    """The workflow's functions the stack deploys (its engine's, the durable saga in its unit) -> their share of
    the Lambda faults."""
    desplegadas = {
        nombre_corto(unidad, f) for _, unidad in plantilla.walk() for f in unidad.of_type("AWS::Serverless::Function")
    }
    return {f: parte for f, parte in FUNCIONES_DEL_FLUJO.items() if f in desplegadas}


def funcion_que_cobra(plantilla: Template) -> str:
    """The function that calls the gateway to charge: the state machine's charge task, or the durable saga."""
    return next(f for f in FUNCIONES_QUE_COBRAN if f in funciones_del_flujo(plantilla))


def funciones(plantilla: Template) -> dict[str, float]:
    """Every function the schedule may hit -> its share of the Lambda faults."""
    propios = consumidores_cortos(plantilla)
    return funciones_del_flujo(plantilla) | {c: PARTE_DE_LOS_CONSUMIDORES / len(propios) for c in propios}


def _pedidos(rng: random.Random, lienzo: Lienzo, probabilidad: float) -> list[int]:
    return [n for n in range(1, lienzo.pedidos + 1) if rng.random() < probabilidad]


class _Corte(TipoFallo):
    """An invocation of some function cut short (``tipo``) at a boundary, or at a named point of the charge."""

    tipo: str

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        nombres, pesos = zip(*funciones(lienzo.plantilla).items(), strict=True)
        cobra = funcion_que_cobra(lienzo.plantilla)
        fallos: list[Falta] = []
        for numero in _pedidos(rng, lienzo, self.p["probabilidad_por_pedido"]):
            funcion, intento = rng.choices(nombres, pesos)[0], rng.choice([1, 1, 2])
            if funcion == cobra and rng.random() < self.p["probabilidad_punto_cobro"]:
                fallos.append(FalloLambda(funcion, numero, intento, self.tipo, donde=rng.choice(PUNTOS_COBRO)))
            else:
                fallos.append(
                    FalloLambda(funcion, numero, intento, self.tipo, frontera=entre(rng, self.p["fronteras"]))
                )
        return fallos


@registrar
class LambdaCaida(_Corte):
    nombre = "lambda-caida"
    tipo = "caida"


@registrar
class LambdaTiempoAgotado(_Corte):
    nombre = "lambda-tiempo-agotado"
    tipo = "tiempo"


@registrar
class LambdaEstrangulada(TipoFallo):
    nombre = "lambda-estrangulada"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        nombres, pesos = zip(*funciones(lienzo.plantilla).items(), strict=True)
        return [
            FalloLambda(rng.choices(nombres, pesos)[0], numero, rng.choice([1, 1, 2]), "estrangular")
            for numero in _pedidos(rng, lienzo, self.p["probabilidad_por_pedido"])
        ]


@registrar
class CobroTrasCargo(TipoFallo):
    """Here: the charge function dies right after the gateway charged. With FIS: the gateway's answer becomes a 5xx."""

    nombre = "cobro-tras-cargo"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        cobra = funcion_que_cobra(lienzo.plantilla)
        return [
            FalloLambda(cobra, numero, rng.choice([1, 1, 2]), "caida", donde=DESPUES_DEL_CARGO)
            for numero in _pedidos(rng, lienzo, self.p["probabilidad_por_pedido"])
        ]


@registrar
class ConsumidorError(TipoFallo):
    """A consumer's invocation fails at a boundary (after acting, when the boundary is past the call)."""

    nombre = "consumidor-error"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        propios = consumidores_cortos(lienzo.plantilla)
        return [
            FalloLambda(
                rng.choice(propios),
                numero,
                rng.choice([1, 1, 2]),
                "caida",
                frontera=entre(rng, self.p["fronteras"]),
            )
            for numero in _pedidos(rng, lienzo, self.p["probabilidad_por_pedido"])
        ]


@registrar
class RelayMuerto(TipoFallo):
    nombre = "relay-muerto"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        primera, ultima = self.p["invocaciones"]
        invocaciones = rng.sample(range(primera, ultima + 1), entre(rng, self.p["veces"]))
        return [FalloLambda("outbox", None, n, "caida", donde="after:events.PutEvents") for n in sorted(invocaciones)]


@dataclass
class PlanLambda:
    """The schedule's Lambda faults as :data:`muerte.CONTROL`'s plan (attempts counted per function and order)."""

    programa: ProgramaCaos
    prefijo: str
    intentos: Counter[tuple[str, int | None]] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        # Two kinds may draw the same invocation: the first one drawn is the one that happens.
        self._por_clave: dict[tuple[str, int | None, int], FalloLambda] = {}
        for f in self.programa.lambdas:
            self._por_clave.setdefault((f.funcion, f.pedido, f.intento), f)
        self._golpeadas = {f.funcion for f in self.programa.lambdas}  # only their invocations need counting

    def __call__(self, inv: muerte.Invocation) -> muerte.Cut | muerte.Throttle | None:
        funcion = inv.function.removeprefix(PREFIJO_FUNCION)
        if funcion not in self._golpeadas:
            return None
        pedido = None
        if funcion != "outbox":
            encontrado = ID_PEDIDO.search(json.dumps(inv.event, default=str)[:20000])
            if encontrado is None or not encontrado.group(0).startswith(self.prefijo):
                return None
            pedido = int(encontrado.group(0)[-6:])
        with self._lock:
            self.intentos[(funcion, pedido)] += 1
            fallo = self._por_clave.get((funcion, pedido, self.intentos[(funcion, pedido)]))
        if fallo is None:
            return None
        if fallo.tipo == "estrangular":
            return muerte.Throttle()
        tipo = LambdaCrashed if fallo.tipo == "caida" else LambdaTimeout
        return muerte.Cut(tipo, at=fallo.frontera, where=fallo.donde)
