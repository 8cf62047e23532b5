"""The lesson's retry storm (07-05, section 8), simulated, with the four defenses as switches.

Story (simulated seconds): 450 orders arrive in a burst while the payment gateway
degrades (latency 240 ms → 4 s, the client times out at 3 s), then returns 503 for 30 s,
then recovers with its capacity coming back over 10 s. Each order crosses the lesson's
three retry layers: the HTTP/SDK client (5 attempts in the lesson's bad example), the
workflow's Retry (1 + 3), the queue's redelivery (``maxReceiveCount`` 4, after the
visibility timeout) — 5 × 4 × 4 = 80 calls per order, 36,000 for 450 orders, at most.

The gateway serves at most ``capacidad`` calls at once and answers 503 at once beyond
that, so synchronized retries at recovery knock it over again.

Defenses (each one a flag of :class:`Defensas`):

- ``jitter``: full jitter on the HTTP and workflow backoff (else plain exponential);
- ``tope``: the function's concurrency stays at 20 (else Lambda scales it to 60 while
  orders wait);
- ``presupuesto``: the layer's :class:`~mercadofresco.retry.budget.RetryBudget` (10 %):
  a retry without a token fails now, to the next layer;
- ``breaker``: the layer's :class:`~mercadofresco.circuit_breaker.local.LocalBreaker` (one
  instance = shared by every consumer of the simulation), 20 consecutive failures open it;
  while open an invocation does not call and defers its order (``ChangeMessageVisibility``)
  without burning a receive.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from dataclasses import dataclass, field

from mercadofresco.circuit_breaker.config import BreakerConfig
from mercadofresco.circuit_breaker.local import LocalBreaker
from mercadofresco.retry.backoff import FullJitterBackoff
from mercadofresco.retry.budget import RetryBudget

from mercadofresco_lab.brooker import ExponentialBackoff
from mercadofresco_lab.eventos import Simulacion


@dataclass(frozen=True, slots=True)
class Defensas:
    """Which of the lesson's four defenses are on."""

    jitter: bool = False
    tope: bool = False
    presupuesto: bool = False
    breaker: bool = False

    @classmethod
    def todas(cls) -> Defensas:
        return cls(True, True, True, True)

    def nombre(self) -> str:
        activas = [n for n in ("jitter", "tope", "presupuesto", "breaker") if getattr(self, n)]
        return "+".join(activas) if activas else "ninguna"


@dataclass(frozen=True, slots=True)
class Escenario:
    """The incident and the retry layers (times in simulated seconds)."""

    pedidos: int = 450
    llegada_s: float = 15.0  # orders arrive uniformly over the first seconds of the incident
    degradacion_s: tuple[float, float] = (0.0, 10.0)  # latency ramps from healthy to degraded
    caida_s: tuple[float, float] = (10.0, 40.0)  # every call answers 503
    rampa_recuperacion_s: float = 10.0  # capacity comes back linearly after the outage
    recaida_s: float = 5.0  # overloaded while recovering, it falls over again for this long
    latencia_sana_s: float = 0.24
    latencia_degradada_s: float = 4.0
    latencia_503_s: float = 0.02
    timeout_s: float = 3.0  # the client's read timeout
    capacidad: int = 40  # concurrent calls the healthy gateway serves
    intentos_http: int = 5  # the lesson's "SDK retries 5 times"
    intentos_flujo: int = 4  # Step Functions Retry: 1 + MaxAttempts 3
    recepciones: int = 4  # maxReceiveCount
    visibilidad_s: float = 10.0  # compressed (real: >= 6 x the function's timeout) so redelivery acts in the run
    aplazamiento_s: float = 10.0  # ChangeMessageVisibility while the breaker is open
    concurrencia: int = 20
    concurrencia_max: int = 60  # what Lambda scales to without MaximumConcurrency
    escalado_cada_s: float = 10.0
    backoff_http: tuple[float, float] = (0.1, 1.0)  # base, cap
    backoff_flujo: tuple[float, float] = (2.0, 20.0)  # IntervalSeconds, MaxDelaySeconds (BackoffRate 2)

    @property
    def peor_caso_llamadas(self) -> int:
        return self.pedidos * self.intentos_http * self.intentos_flujo * self.recepciones


@dataclass
class Resultado:
    """What the run measured."""

    defensas: Defensas
    llamadas: int = 0
    reintentos: int = 0
    llamadas_en_caida: int = 0
    llamadas_tras_caida: int = 0
    pico_recuperacion_rps: int = 0
    recaidas: int = 0
    por_decima: Counter = field(default_factory=Counter)  # calls per 100 ms: how synchronised they are
    completados: int = 0
    en_dlq: int = 0
    fin_s: float = 0.0
    drenado_tras_caida_s: float = 0.0
    por_segundo: Counter = field(default_factory=Counter)

    @property
    def rafaga_100ms(self) -> int:
        """Most calls in any 100 ms: synchronised retries arrive as bursts."""
        return max(self.por_decima.values(), default=0)

    @property
    def cuota_reintentos(self) -> float:
        return self.reintentos / self.llamadas if self.llamadas else 0.0


class _Pasarela:
    """The gateway: latency by phase, 503 while down, a concurrency capacity and 503 beyond it.

    After the outage its capacity comes back over ``rampa_recuperacion_s``; if the load
    exceeds it meanwhile, it falls over again for ``recaida_s`` (step 8 of the storm) and
    the ramp starts over.
    """

    def __init__(self, esc: Escenario, sim: Simulacion, rng: random.Random, res: Resultado) -> None:
        self.esc, self.sim, self.rng, self.res = esc, sim, rng, res
        self.en_curso = 0
        self.caida_hasta_s = esc.caida_s[1]

    def caida(self) -> bool:
        return self.esc.caida_s[0] <= self.sim.ahora_s < self.caida_hasta_s

    def capacidad(self) -> float:
        if self.sim.ahora_s < self.esc.caida_s[1]:
            return self.esc.capacidad
        progreso = (self.sim.ahora_s - self.caida_hasta_s) / self.esc.rampa_recuperacion_s
        return self.esc.capacidad * min(1.0, 0.2 + 0.8 * progreso)  # restarts at 20 % of capacity

    def latencia_s(self) -> float:
        ini, fin = self.esc.degradacion_s
        t, sana, degradada = self.sim.ahora_s, self.esc.latencia_sana_s, self.esc.latencia_degradada_s
        base = sana + (degradada - sana) * (t - ini) / (fin - ini) if ini <= t < fin else sana
        return base * self.rng.uniform(0.8, 1.2)

    def llamar(self) -> tuple[bool, float]:
        """(answered 2xx, seconds until the client knows): occupies capacity while it works."""
        if self.caida():
            return False, self.esc.latencia_503_s
        if self.en_curso >= self.capacidad():
            if self.sim.ahora_s >= self.esc.caida_s[1] and self.capacidad() < self.esc.capacidad:
                self.caida_hasta_s = self.sim.ahora_s + self.esc.recaida_s
                self.res.recaidas += 1
            return False, self.esc.latencia_503_s
        latencia = self.latencia_s()
        self.en_curso += 1
        self.sim.en(latencia, self._terminar)  # it keeps working after the client gave up
        return latencia <= self.esc.timeout_s, min(latencia, self.esc.timeout_s)

    def _terminar(self) -> None:
        self.en_curso -= 1


@dataclass(slots=True)
class _Pedido:
    recepciones: int = 0
    intento_flujo: int = 0
    intento_http: int = 0


class _Tormenta:
    """One run: orders, consumer slots, the retry layers and the defenses around the gateway."""

    def __init__(self, esc: Escenario, defensas: Defensas, seed: int) -> None:
        self.esc, self.defensas = esc, defensas
        self.rng = random.Random(f"tormenta:{seed}")
        self.sim = Simulacion()
        self.res = Resultado(defensas)
        self.pasarela = _Pasarela(esc, self.sim, self.rng, self.res)
        self.cola: deque[_Pedido] = deque()
        self.ocupados, self.concurrencia, self.pendientes = 0, esc.concurrencia, esc.pedidos
        politica = FullJitterBackoff if defensas.jitter else ExponentialBackoff
        self.backoff_http, self.backoff_flujo = politica(*esc.backoff_http), politica(*esc.backoff_flujo)
        self.presupuesto = RetryBudget("pasarela", None) if defensas.presupuesto else None
        self.breaker = (
            LocalBreaker(
                BreakerConfig(local_consecutive_failures=20, open_base_s=5.0, open_max_s=60.0, probe_reservation_s=5.0),
                self.sim.reloj,
            )
            if defensas.breaker
            else None
        )

    def ejecutar(self) -> Resultado:
        for pedido in [_Pedido() for _ in range(self.esc.pedidos)]:
            self.sim.en(self.rng.uniform(0, self.esc.llegada_s), lambda p=pedido: self._encolar(p, True))
        if not self.defensas.tope:
            self.sim.en(self.esc.escalado_cada_s, self._escalar)
        self.sim.ejecutar()
        fin = self.esc.caida_s[1]
        self.res.pico_recuperacion_rps = max((n for s, n in self.res.por_segundo.items() if s >= fin), default=0)
        self.res.drenado_tras_caida_s = max(0.0, self.res.fin_s - fin)
        return self.res

    def _escalar(self) -> None:
        """Lambda adds pollers while messages wait (what MaximumConcurrency prevents)."""
        if self.cola:
            self.concurrencia = min(self.esc.concurrencia_max, self.concurrencia + 20)
            self._despachar()
        if self.pendientes:
            self.sim.en(self.esc.escalado_cada_s, self._escalar)

    def _encolar(self, p: _Pedido, recepcion_nueva: bool) -> None:
        if recepcion_nueva:
            p.recepciones, p.intento_flujo = p.recepciones + 1, 1
        self.cola.append(p)
        self._despachar()

    def _despachar(self) -> None:
        while self.cola and self.ocupados < self.concurrencia:
            p = self.cola.popleft()
            self.ocupados += 1
            p.intento_http = 1
            self._intentar(p)

    def _intentar(self, p: _Pedido) -> None:
        sonda = False
        if self.breaker is not None:
            decision = self.breaker.acquire()
            if not decision.admitted:  # CircuitoAbierto: defer, keep the receive and the attempts
                self._liberar()
                self.sim.en(self.esc.aplazamiento_s, lambda: self._encolar(p, False))
                return
            sonda = decision.is_probe
        self._contar_llamada(p)
        ok, duracion_s = self.pasarela.llamar()
        self.sim.en(duracion_s, lambda: self._respuesta(p, ok, sonda))

    def _contar_llamada(self, p: _Pedido) -> None:
        res, t = self.res, self.sim.ahora_s
        res.llamadas += 1
        res.por_segundo[int(t)] += 1
        res.por_decima[int(t * 10)] += 1
        ini, fin = self.esc.caida_s
        res.llamadas_en_caida += ini <= t < fin
        res.llamadas_tras_caida += t >= fin
        if p.intento_http == 1 and p.intento_flujo == 1:
            if self.presupuesto is not None:
                self.presupuesto.record_call()
        else:
            res.reintentos += 1

    def _permite_reintento(self) -> bool:
        return self.presupuesto is None or self.presupuesto.allow_retry()

    def _respuesta(self, p: _Pedido, ok: bool, sonda: bool) -> None:
        if self.breaker is not None:
            self.breaker.record(ok, is_probe=sonda)
        if ok:
            self.res.completados += 1
            self._liberar()
            self._terminar()
        elif p.intento_http < self.esc.intentos_http and self._permite_reintento():
            p.intento_http += 1
            self.sim.en(self.backoff_http.compute(p.intento_http - 2, self.rng), lambda: self._intentar(p))
        else:
            self._liberar()
            self._fallo_invocacion(p)

    def _fallo_invocacion(self, p: _Pedido) -> None:
        """The task failed: the workflow retries it, else the execution fails and the queue redelivers."""
        if p.intento_flujo < self.esc.intentos_flujo and self._permite_reintento():
            p.intento_flujo += 1
            espera_s = self.backoff_flujo.compute(p.intento_flujo - 2, self.rng)
            self.sim.en(espera_s, lambda: self._encolar(p, False))
        elif p.recepciones < self.esc.recepciones:
            self.sim.en(self.esc.visibilidad_s, lambda: self._encolar(p, True))
        else:
            self.res.en_dlq += 1
            self._terminar()

    def _liberar(self) -> None:
        self.ocupados -= 1
        self._despachar()

    def _terminar(self) -> None:
        self.pendientes -= 1
        if not self.pendientes:
            self.res.fin_s = self.sim.ahora_s


def simular(defensas: Defensas, seed: int = 1, escenario: Escenario | None = None) -> Resultado:
    """Run the storm once with the given defenses."""
    return _Tormenta(escenario or Escenario(), defensas, seed).ejecutar()


def comparativa(seed: int = 1, escenario: Escenario | None = None) -> list[Resultado]:
    """No defense, each defense alone, all four."""
    variantes = [
        Defensas(),
        Defensas(jitter=True),
        Defensas(tope=True),
        Defensas(presupuesto=True),
        Defensas(breaker=True),
        Defensas.todas(),
    ]
    return [simular(d, seed, escenario) for d in variantes]
