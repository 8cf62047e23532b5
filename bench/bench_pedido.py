"""Latency per stage and cost per order of the local run (issue 14), as ``mf-demo`` reports them.

Runs ``mf-demo --escenario normal`` with ``BENCH_PEDIDOS`` orders (default 60) and prints only
its two measured sections: per-order stage latencies (p50/p99/max from recorded timestamps,
with the run's time compression next to each figure) and the cost per order (the run's own
counts x ``tools/mercadofresco_informes/precios-eu-south-2.json``, with the lesson's figures and
the Express alternative). How they are computed: ``mercadofresco_informes.latencias`` and
``mercadofresco_informes.costes``. Exit 1 when the run's invariants broke (the figures of a
broken run are not worth reading).
"""

from __future__ import annotations

import os
import sys

from rich.console import Console

PEDIDOS = int(os.environ.get("BENCH_PEDIDOS", "60"))
SECCIONES = ("latencia por pedido", "coste por pedido")


def main() -> int:
    from mercadofresco_local import demo

    consola = Console(file=sys.stdout, width=160)
    informe = demo.ejecutar("normal", PEDIDOS, consola=consola)
    carga = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"order bench: mf-demo normal, {PEDIDOS} orders, {os.cpu_count()} CPUs, load average {carga} (shared)")
    for seccion, filas in informe.secciones.items():
        if seccion.startswith(SECCIONES):
            print(f"  {seccion}")
            for etiqueta, valor in filas:
                print(f"    {etiqueta:<78} {valor}")
    for nota in informe.notas:
        if nota.startswith(("coste", "latencia")):
            print(f"  • {nota}")
    if not informe.correcto:
        fallos = [i for i in (*informe.invariantes, *informe.comprobaciones) if not i.cumple]
        print("  ERROR: the run broke these, so its figures are not reported as valid:", file=sys.stderr)
        for i in fallos:  # with the report's detail: a copy in a DLQ or a timed-out execution is not a lost message
            print(f"    {i.nombre}: {i.detalle}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
