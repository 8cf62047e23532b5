"""One seed's fault schedule: what each fault kind drew, as plain data (same seed, same schedule)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mercadofresco_local.proveedores import Fallo

if TYPE_CHECKING:
    import random

    from template_model import Template

PEDIDOS = 30
RITMO_POR_S = 6.0
ID_PEDIDO = re.compile(r"CAOS-S\d+-\d{6}")  # an order of a seed (its prefix: ``local.prefijo_de``)
RETRASO_FLUJO_S = 5.0  # commit -> the order's workflow at the gateway, here (the relay's compressed schedule)


@dataclass(frozen=True)
class FalloLambda:
    funcion: str  # short name: its FunctionName without "mercadofresco-" (cobro, reclamo, outbox...)
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
    """A timed event the campaign plays while the orders flow; ``tipo`` names the fault class that plays it."""

    t_s: float
    tipo: str
    pedido: int | None = None
    valor: float = 0.0
    final: bool = False  # the end of a window (not another fault)

    def describir(self) -> str:
        return f"t={self.t_s:.1f}s {self.tipo}" + (f" ({self.valor:.1f}s)" if self.valor else "")


@dataclass(frozen=True)
class Rechazo:
    """An order whose customer's card the gateway declines."""

    pedido: int


Falta = Fallo | FalloLambda | Suceso | Rechazo


@dataclass(frozen=True)
class ProgramaCaos:
    semilla: int
    pedidos: int
    ritmo_por_s: float
    proveedores: tuple[Fallo, ...]
    lambdas: tuple[FalloLambda, ...]
    sucesos: tuple[Suceso, ...]
    rechazados: tuple[int, ...]  # orders whose card is declined
    por_tipo: tuple[tuple[str, int], ...] = ()  # fault kind -> faults it drew (rejections and window ends aside)

    @property
    def duracion_s(self) -> float:
        return self.pedidos / self.ritmo_por_s

    def faltas(self) -> int:
        """Faults injected by the schedule (provider windows, Lambda faults, timed events)."""
        return sum(n for _, n in self.por_tipo)

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


@dataclass
class Lienzo:
    """The schedule being drawn: what the kinds drawn so far put on it (a later kind may read it), and the
    template whose functions and providers the kinds draw from."""

    semilla: int
    pedidos: int
    ritmo_por_s: float
    plantilla: Template
    proveedores: list[Fallo] = field(default_factory=list)
    lambdas: list[FalloLambda] = field(default_factory=list)
    sucesos: list[Suceso] = field(default_factory=list)
    rechazados: list[int] = field(default_factory=list)
    por_tipo: Counter[str] = field(default_factory=Counter)

    @property
    def duracion_s(self) -> float:
        return self.pedidos / self.ritmo_por_s

    def ventana(self, rng: random.Random, minimo_s: float, maximo_s: float) -> tuple[float, float]:
        """A window over the time the orders' work happens: from creation to the end of their workflow."""
        largo = rng.uniform(minimo_s, maximo_s)
        desde = rng.uniform(0, max(0.1, self.duracion_s + RETRASO_FLUJO_S - largo / 2))
        return round(desde, 2), round(desde + largo, 2)

    def poner(self, tipo: str, faltas: list[Falta]) -> None:
        for f in faltas:
            if isinstance(f, Fallo):
                self.proveedores.append(f)
            elif isinstance(f, FalloLambda):
                self.lambdas.append(f)
            elif isinstance(f, Suceso):
                self.sucesos.append(f)
            else:
                self.rechazados.append(f.pedido)
        self.por_tipo[tipo] += sum(1 for f in faltas if not isinstance(f, Rechazo) and not getattr(f, "final", False))

    def programa(self) -> ProgramaCaos:
        return ProgramaCaos(
            semilla=self.semilla,
            pedidos=self.pedidos,
            ritmo_por_s=self.ritmo_por_s,
            proveedores=tuple(sorted(self.proveedores, key=lambda f: f.tipo.value)),  # first rule wins: 503 first
            lambdas=tuple(self.lambdas),
            sucesos=tuple(sorted(self.sucesos, key=lambda s: s.t_s)),
            rechazados=tuple(sorted(self.rechazados)),
            por_tipo=tuple(sorted(self.por_tipo.items())),
        )
