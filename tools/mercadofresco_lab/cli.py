"""``mf-lab``: run the retry-storm lab's experiments and print their tables.

mf-lab brooker  [--seed N] [--repeats R] [--png DIR]
mf-lab tormenta [--seed N] [--png DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mercadofresco_lab import brooker, tormenta


def tabla_brooker(resultados: list[brooker.ResultadoOcc]) -> str:
    """Calls and completion time per strategy, one row per client count."""
    estrategias = list(dict.fromkeys(r.estrategia for r in resultados))
    por = {(r.estrategia, r.clientes): r for r in resultados}
    clientes = sorted({r.clientes for r in resultados})
    cab = f"{'clients':>7} | " + " | ".join(f"{e:>20}" for e in estrategias)
    filas = [cab, "-" * len(cab)]
    for n in clientes:
        celdas = (f"{por[e, n].llamadas:>8} calls {por[e, n].tiempo_s:>5.1f} s" for e in estrategias)
        filas.append(f"{n:>7} | " + " | ".join(celdas))
    return "\n".join(filas)


def tabla_tormenta(resultados: list[tormenta.Resultado]) -> str:
    """One row per set of defenses."""
    cab = (
        f"{'defenses':<32} {'calls':>6} {'retry %':>7} {'in outage':>9} {'after':>6} {'peak/s':>6} "
        f"{'relapses':>8} {'DLQ':>4} {'drain s':>7}"
    )
    filas = [cab, "-" * len(cab)]
    for r in resultados:
        filas.append(
            f"{r.defensas.nombre():<32} {r.llamadas:>6} {100 * r.cuota_reintentos:>6.0f}% "
            f"{r.llamadas_en_caida:>9} {r.llamadas_tras_caida:>6} {r.pico_recuperacion_rps:>6} "
            f"{r.recaidas:>8} {r.en_dlq:>4} {r.drenado_tras_caida_s:>7.0f}"
        )
    return "\n".join(filas)


def construir_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mf-lab", description="Retry-storm lab (lesson 07-05, section 8).")
    sub = parser.add_subparsers(dest="orden", required=True)
    for nombre, ayuda in (
        ("brooker", "Brooker's backoff-and-jitter experiment"),
        ("tormenta", "the lesson's storm with the four defenses"),
    ):
        p = sub.add_parser(nombre, help=ayuda)
        p.add_argument("--seed", type=int, default=1, help="same seed, same numbers (default 1)")
        p.add_argument("--png", type=Path, metavar="DIR", help="also write the plot into DIR")
        if nombre == "brooker":
            p.add_argument(
                "--repeats",
                type=int,
                default=3,
                choices=range(1, 21),
                metavar="R",
                help="runs averaged per point, 1-20 (default 3)",
            )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = construir_parser().parse_args(argv)
    from mercadofresco_lab import graficos  # matplotlib only when asked to run

    if args.orden == "brooker":
        resultados = brooker.experimento(args.seed, repeticiones=args.repeats)
        print(tabla_brooker(resultados))
        dibujar = lambda: graficos.brooker(resultados, args.png)  # noqa: E731
    else:
        escenario = tormenta.Escenario()
        resultados = tormenta.comparativa(args.seed, escenario)
        print(f"worst case allowed by the layers: {escenario.peor_caso_llamadas} calls")
        print(tabla_tormenta(resultados))
        dibujar = lambda: graficos.tormenta(resultados, escenario, args.png)  # noqa: E731
    if args.png is not None:
        try:
            print(f"plot: {dibujar()}")
        except OSError as exc:
            print(f"mf-lab: cannot write the plot into {args.png}: {exc.strerror}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
