"""Brooker's "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015), re-simulated.

N clients start together and each wants one conditional write on the same item
(optimistic concurrency: the write carries the version the client last saw). A write
that finds a newer version fails and returns the current one; the client backs off and
tries again. Base 5 ms, cap 2 s, one-way network delay |N(10 ms, 2 ms)|.

What the essay reports (and ``tests/unit/lab`` asserts): without backoff the work grows
with N²; plain exponential backoff still does a lot of work, because clients that
collided keep colliding; full jitter does far less work than either; equal jitter does
more work than full jitter and takes longest of the jittered ones; full jitter does
slightly less work than decorrelated jitter.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from mercadofresco.retry.backoff import Backoff, EqualJitterBackoff, FullJitterBackoff, NoBackoff

from mercadofresco_lab.eventos import Simulacion

BASE_S = 0.005
CAP_S = 2.0
RED_MEDIA_S = 0.010
RED_DESVIACION_S = 0.002
CLIENTES = tuple(range(10, 200, 20))  # 10, 30, ..., 190 as in the essay's figures


@dataclass(frozen=True, slots=True)
class ExponentialBackoff(Backoff):
    """``min(cap, base * 2**attempt)``: backoff without jitter (the layer has no such policy: it is the mistake)."""

    base_s: float = BASE_S
    cap_s: float = CAP_S

    def compute(self, attempt: int, rng: random.Random) -> float:
        return min(self.cap_s, self.base_s * 2 ** min(attempt, 62))


class DecorrelatedJitterBackoff(Backoff):
    """``min(cap, uniform(base, previous * 3))``: stateful, so one instance per client."""

    def __init__(self, base_s: float = BASE_S, cap_s: float = CAP_S) -> None:
        self.base_s, self.cap_s, self._anterior_s = base_s, cap_s, base_s

    def compute(self, attempt: int, rng: random.Random) -> float:
        self._anterior_s = min(self.cap_s, rng.uniform(self.base_s, self._anterior_s * 3))
        return self._anterior_s


ESTRATEGIAS = {
    "none": lambda: NoBackoff(),
    "exponential": lambda: ExponentialBackoff(),
    "equal": lambda: EqualJitterBackoff(BASE_S, CAP_S),
    "full": lambda: FullJitterBackoff(BASE_S, CAP_S),
    "decorrelated": lambda: DecorrelatedJitterBackoff(),
}


@dataclass(frozen=True, slots=True)
class ResultadoOcc:
    """One run: how many calls N clients needed and when the last one finished."""

    estrategia: str
    clientes: int
    llamadas: int
    tiempo_s: float


def simular(estrategia: str, clientes: int, seed: int) -> ResultadoOcc:
    """Run N clients with one backoff strategy until every one has written once."""
    rng = random.Random(f"{seed}:{estrategia}:{clientes}")
    sim = Simulacion()
    version = [0]
    llamadas = [0]
    fin_s = [0.0]

    def red_s() -> float:
        return abs(rng.normalvariate(RED_MEDIA_S, RED_DESVIACION_S))

    def cliente(backoff: Backoff) -> None:
        estado = {"visto": 0, "fallos": 0}

        def enviar() -> None:
            llamadas[0] += 1
            sim.en(red_s(), llegar)

        def llegar() -> None:
            exito = version[0] == estado["visto"]
            if exito:
                version[0] += 1
            else:
                estado["visto"] = version[0]  # the failed conditional write returns the current item
            sim.en(red_s(), lambda: responder(exito))

        def responder(exito: bool) -> None:
            if exito:
                fin_s[0] = max(fin_s[0], sim.ahora_s)
                return
            sim.en(backoff.compute(estado["fallos"], rng), enviar)
            estado["fallos"] += 1

        sim.en(0.0, enviar)

    for _ in range(clientes):
        cliente(ESTRATEGIAS[estrategia]())
    sim.ejecutar()
    return ResultadoOcc(estrategia, clientes, llamadas[0], fin_s[0])


def experimento(seed: int = 1, clientes: tuple[int, ...] = CLIENTES, repeticiones: int = 3) -> list[ResultadoOcc]:
    """Every strategy at every client count, averaged over ``repeticiones`` seeds."""
    out = []
    for nombre in ESTRATEGIAS:
        for n in clientes:
            runs = [simular(nombre, n, seed * 1000 + r) for r in range(repeticiones)]
            out.append(
                ResultadoOcc(
                    nombre,
                    n,
                    round(sum(r.llamadas for r in runs) / repeticiones),
                    sum(r.tiempo_s for r in runs) / repeticiones,
                )
            )
    return out
