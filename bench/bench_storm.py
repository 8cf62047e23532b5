"""The retry-storm lab's two experiments, with the ratios the lesson's claims rest on.

1. Brooker's "Exponential Backoff And Jitter" (optimistic-concurrency clients on one item,
   base 5 ms, cap 2 s, network N(10 ms, 2 ms), 10..190 clients, 3 runs a point): calls and
   completion time per strategy; ratios full/none and full/exponential in work at 190 clients.
2. The lesson's storm (450 orders, gateway 240 ms → 4 s then 503 for 30 s, SDK 5 ×
   workflow 4 × maxReceiveCount 4): each defense alone and all four, against no defense.

Writes ``docs/img/lab-brooker.png`` and ``docs/img/lab-tormenta.png`` (or ``--png DIR``).
Simulated time only: runs in a few seconds. Same seed, same figures.

Usage: ``python bench/bench_storm.py [--seed 1] [--png docs/img]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mercadofresco_lab import brooker, graficos, tormenta
from mercadofresco_lab.cli import tabla_brooker, tabla_tormenta

RAIZ = Path(__file__).resolve().parents[1]


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def bench_brooker(seed: int, carpeta: Path) -> None:
    resultados = brooker.experimento(seed)
    por = {(r.estrategia, r.clientes): r for r in resultados}
    n = max(brooker.CLIENTES)
    print("== Brooker: optimistic concurrency, calls and completion time per backoff strategy")
    print(tabla_brooker(resultados))
    print(
        f"work at {n} clients: full/none = {_ratio(por['full', n].llamadas, por['none', n].llamadas)}, "
        f"full/exponential = {_ratio(por['full', n].llamadas, por['exponential', n].llamadas)}, "
        f"equal/full = {_ratio(por['equal', n].llamadas, por['full', n].llamadas)}, "
        f"decorrelated/full = {_ratio(por['decorrelated', n].llamadas, por['full', n].llamadas)}"
    )
    print(
        f"time at {n} clients: equal/full = {_ratio(por['equal', n].tiempo_s, por['full', n].tiempo_s)}, "
        f"exponential/full = {_ratio(por['exponential', n].tiempo_s, por['full', n].tiempo_s)}"
    )
    print(f"plot: {graficos.brooker(resultados, carpeta)}")


def bench_tormenta(seed: int, carpeta: Path) -> None:
    escenario = tormenta.Escenario()
    resultados = tormenta.comparativa(seed, escenario)
    base = resultados[0]
    print(f"\n== Storm: {escenario.pedidos} orders; worst case the layers allow: {escenario.peor_caso_llamadas} calls")
    print(tabla_tormenta(resultados))
    print("ratio to no defense (calls / calls in outage / peak after recovery):")
    for r in resultados[1:]:
        print(
            f"  {r.defensas.nombre():<32} {_ratio(r.llamadas, base.llamadas):>5} "
            f"{_ratio(r.llamadas_en_caida, base.llamadas_en_caida):>5} "
            f"{_ratio(r.pico_recuperacion_rps, base.pico_recuperacion_rps):>5}"
        )
    print(f"plot: {graficos.tormenta(resultados, escenario, carpeta)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--png", type=Path, default=RAIZ / "docs" / "img")
    args = parser.parse_args()
    inicio = time.perf_counter()
    bench_brooker(args.seed, args.png)
    bench_tormenta(args.seed, args.png)
    print(f"\nwall time {time.perf_counter() - inicio:.1f} s (simulated clock; no sleeps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
