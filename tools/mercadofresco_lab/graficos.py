"""The lab's pictures (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # after use(): the backend must be chosen first

if TYPE_CHECKING:
    from pathlib import Path

    from mercadofresco_lab.brooker import ResultadoOcc
    from mercadofresco_lab.tormenta import Escenario, Resultado

BROOKER_PNG = "lab-brooker.png"
TORMENTA_PNG = "lab-tormenta.png"


def brooker(resultados: list[ResultadoOcc], carpeta: Path) -> Path:
    """Calls and completion time vs clients, one line per strategy."""
    fig, (llamadas, tiempo) = plt.subplots(1, 2, figsize=(11, 4.2))
    for nombre in dict.fromkeys(r.estrategia for r in resultados):
        serie = [r for r in resultados if r.estrategia == nombre]
        clientes = [r.clientes for r in serie]
        llamadas.plot(clientes, [r.llamadas for r in serie], marker="o", label=nombre)
        tiempo.plot(clientes, [r.tiempo_s for r in serie], marker="o", label=nombre)
    llamadas.set(title="Work: total calls", xlabel="contending clients", ylabel="calls")
    tiempo.set(title="Completion time", xlabel="contending clients", ylabel="seconds (log)", yscale="log")
    llamadas.legend(title="backoff")
    fig.suptitle("Optimistic concurrency, base 5 ms, cap 2 s, network N(10 ms, 2 ms)")
    fig.tight_layout()
    return _guardar(fig, carpeta / BROOKER_PNG)


def tormenta(resultados: list[Resultado], escenario: Escenario, carpeta: Path) -> Path:
    """Gateway calls per second over time: no defense vs all four (top), each defense alone (bottom)."""
    fig, (juntas, solas) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    fin_s = int(max(max(r.por_segundo, default=0) for r in resultados)) + 1
    segundos = list(range(fin_s))
    extremos = ("ninguna", "jitter+tope+presupuesto+breaker")
    for r in resultados:
        nombre = r.defensas.nombre()
        eje = juntas if nombre in extremos else solas
        eje.plot(segundos, [r.por_segundo.get(s, 0) for s in segundos], label=_etiqueta(nombre))
    for eje in (juntas, solas):
        eje.axvspan(*escenario.degradacion_s, color="orange", alpha=0.15, label="latency 240 ms → 4 s")
        eje.axvspan(*escenario.caida_s, color="red", alpha=0.12, label="503 for 30 s")
        eje.set(ylabel="gateway calls / s")
        eje.legend(fontsize=8, ncol=3)
    juntas.set_title(
        f"Retry storm: {escenario.pedidos} orders, SDK {escenario.intentos_http} × workflow "
        f"{escenario.intentos_flujo} × maxReceiveCount {escenario.recepciones}; gateway capacity "
        f"{escenario.capacidad} concurrent"
    )
    solas.set(title="each defense alone", xlabel="simulated seconds")
    fig.tight_layout()
    return _guardar(fig, carpeta / TORMENTA_PNG)


def _etiqueta(nombre: str) -> str:
    return {"ninguna": "no defense", "jitter+tope+presupuesto+breaker": "all four defenses"}.get(nombre, nombre)


def _guardar(fig, destino: Path) -> Path:
    destino.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(destino, dpi=110)
    plt.close(fig)
    return destino
