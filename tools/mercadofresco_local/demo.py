"""``mf-demo``: the whole order flow on this machine, through one of the lesson's incidents.

    mf-demo                                   # viernes: the gateway degrades, then fails for 30 s
    mf-demo --escenario normal --pedidos 500
    mf-demo --escenario cobro-duplicado | despliegue-v2 | doble-escritura
    mf-demo --escenario caos --semilla 7        # one seed of the chaos campaign (replayable)
    mf-demo --escenario caos --semillas 200     # seeds 1..200 in one session
    mf-demo --escenario caos --semillas 200 --procesos 3   # split across 3 sessions (make caos)

Exit codes: 0 every invariant and the scenario's checks held; 1 one of them broke (the
report says which); 2 the run could not complete (a service missing, a timeout) — one line
on stderr saying what. Handler logs go to ``build/mf-demo/mf-demo-<escenario>.log``; with
``--procesos``, each child's to ``build/mf-demo/caos-hijo-<n>/`` (its log, output and results).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import mercadofresco_caos as caos
from mercadofresco_informes import latencias, medidas
from mercadofresco_ops.ayuda import ParserEspanol
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mercadofresco_local import RAIZ, argumento_motor, ejercicios, escenarios
from mercadofresco_local.escenarios import Escenario
from mercadofresco_local.informe import Informe

if TYPE_CHECKING:
    from collections.abc import Sequence

REGISTRO = RAIZ / "build" / "mf-demo"  # build/ is git-ignored

ESCENARIOS = {
    e.nombre: e
    for e in (
        Escenario(
            nombre="viernes",
            pedidos=240,
            ritmo_por_s=5.0,
            compresion=10.0,
            descripcion="la pasarela pasa de 240 ms a 4 s, devuelve 503 durante 30 s y se recupera",
            correr=escenarios.viernes,
        ),
        Escenario(
            nombre="normal",
            pedidos=500,
            ritmo_por_s=25.0,
            compresion=30.0,
            descripcion="N pedidos, todo bien",
            correr=escenarios.normal,
        ),
        Escenario(
            nombre="cobro-duplicado",
            pedidos=40,
            ritmo_por_s=4.0,
            compresion=1.0,  # the workflow's Retry must outwait the other consumer's EN_CURSO claim
            descripcion="ejercicio 1: visibilidad 1 s < latencia 1,5 s, el mismo mensaje dos veces en paralelo",
            correr=ejercicios.cobro_duplicado,
        ),
        Escenario(
            nombre="despliegue-v2",
            pedidos=200,
            ritmo_por_s=25.0,
            compresion=30.0,
            descripcion="ejercicio 2: eventos version 2 a la DLQ; clasificar, reprocesar v2→v1, verificar",
            correr=ejercicios.despliegue_v2,
        ),
        Escenario(
            nombre="doble-escritura",
            pedidos=150,
            ritmo_por_s=30.0,
            compresion=30.0,
            descripcion="ejercicio 3: la tienda cae entre COMMIT y publicar (1 de cada 900; cada N/3 si N < 900); "
            "N pedidos sin outbox y N con outbox",
            correr=escenarios.doble_escritura,
        ),
        Escenario(
            nombre="caos",
            pedidos=caos.PEDIDOS,
            ritmo_por_s=caos.RITMO_POR_S,
            compresion=caos.COMPRESION,
            descripcion="campaña de caos con semilla: pasarela, Lambda (caídas, tiempos agotados, estrangulamiento), "
            "Redis congelado, PostgreSQL reiniciado, relay muerto, duplicados y entregas tardías (pedidos y avisos), "
            "reproceso de DLQ",
            correr=caos.caos,
            caos=True,
        ),
    )
}


def construir_parser() -> argparse.ArgumentParser:
    parser = ParserEspanol(
        prog="mf-demo",
        description="Todo el flujo de pedidos en esta máquina, a través de uno de los incidentes de la lección.",
        epilog="Códigos de salida: 0 se cumplieron las invariantes y las comprobaciones del escenario, 1 alguna "
        "falló (el informe dice cuál), 2 la ejecución no pudo terminar.",
    )
    parser.add_argument(
        "--escenario",
        choices=list(ESCENARIOS),
        default="viernes",
        help="qué incidente reproducir (por defecto viernes)",
    )
    parser.add_argument("--pedidos", type=int, help="cuántos pedidos (por defecto, los del escenario)")
    parser.add_argument("--ritmo", type=float, help="pedidos por segundo que crea la tienda")
    parser.add_argument(
        "--compresion",
        type=float,
        help="factor de compresión del tiempo de la plantilla (visibilidades, horarios, Retry)",
    )
    parser.add_argument("--semilla", type=int, help="caos: la semilla del programa de fallos (reproducible)")
    parser.add_argument("--semillas", type=int, help="caos: correr las semillas 1..N (make caos)")
    parser.add_argument(
        "--procesos",
        type=int,
        default=1,
        help="caos: repartir las semillas entre N procesos, cada uno con su propia sesión (por defecto 1)",
    )
    argumento_motor(parser)
    # A child of a parallel campaign (written by the parent, not by people).
    parser.add_argument("--lista-semillas", help=argparse.SUPPRESS)
    parser.add_argument("--resultados", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--registro", type=Path, help=argparse.SUPPRESS)
    return parser


def ejecutar(
    nombre: str,
    pedidos: int | None = None,
    ritmo: float | None = None,
    compresion: float | None = None,
    consola: Console | None = None,
    semillas: list[int] | None = None,
    resultados: Path | None = None,
    registro: Path | None = None,
    motor: str | None = None,
) -> Informe:
    """Run one scenario and return its report (the e2e tests call this); ``motor``: the WorkflowEngine."""
    from mercadofresco_local.sesion import Sesion

    esc = ESCENARIOS[nombre]
    n, ritmo = pedidos or esc.pedidos, ritmo or esc.ritmo_por_s
    if n < 1:
        raise ValueError("--pedidos must be at least 1")
    consola = consola or Console(file=sys.__stdout__)
    informe = Informe(nombre)
    consola.print(
        f"[bold]mf-demo[/] «{nombre}»: {esc.descripcion} — {n} pedidos" + (f", motor {motor}" if motor else "")
    )
    columnas = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columnas, console=consola, transient=True) as progreso:
        tarea = progreso.add_task("arrancando moto, PostgreSQL, Redis y los proveedores", total=n)

        def avance(texto: str, hechos: int, total: int) -> None:
            progreso.update(tarea, description=texto, completed=hechos, total=total)

        with Sesion(
            nombre,
            compresion=compresion or esc.compresion,
            registro=registro or REGISTRO,
            caos=esc.caos,
            semillas=semillas or [],
            resultados=resultados,
            motor=motor,
        ) as sesion:
            with latencias.RegistroInvocaciones() as registro:  # times invocations for latency and cost
                esc.correr(sesion, n, ritmo, informe, avance)
            medidas.anotar_medidas(sesion, registro, informe)
            informe.notas.extend(sesion.notas)
            if sesion.runtime is not None and sesion.runtime.functions.durable:
                informe.notas.append(
                    "flujo en funciones durables: el coste de arriba cuenta transiciones y la lambda de cobro, no las "
                    "operaciones durables (bench/bench_motores.py las mide; docs/decisions/0140)"
                )
            if sesion.captura is not None:
                informe.notas.append(f"registros de las funciones: {sesion.captura.record}")
    return informe


def ejecutar_en_paralelo(
    semillas: list[int],
    procesos: int,
    pedidos: int | None = None,
    ritmo: float | None = None,
    compresion: float | None = None,
    consola: Console | None = None,
    motor: str | None = None,
) -> Informe:
    """The chaos campaign split across ``procesos`` child sessions, merged into one report."""
    esc = ESCENARIOS["caos"]
    n, ritmo = pedidos or esc.pedidos, ritmo or esc.ritmo_por_s
    consola = consola or Console(file=sys.__stdout__)
    informe = Informe("caos")
    consola.print(
        f"[bold]mf-demo[/] «caos»: {esc.descripcion} — {len(semillas)} semillas × {n} pedidos en {procesos} procesos"
        + (f", motor {motor}" if motor else "")
    )
    inicio = time.monotonic()
    columnas = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columnas, console=consola, transient=True) as progreso:
        tarea = progreso.add_task("caos: semillas terminadas", total=len(semillas))
        resultados, notas = caos.correr_en_paralelo(
            semillas,
            procesos,
            n,
            ritmo,
            REGISTRO,
            compresion,
            avance=lambda hechas: progreso.update(tarea, completed=hechas),
            comando=functools.partial(caos.comando_hijo, motor=motor),
        )
    caos.anotar(informe, resultados, n, ritmo)
    informe.anotar("caos", "procesos", procesos)
    informe.anotar("caos", "duración (s)", f"{time.monotonic() - inicio:.0f}")
    informe.notas.extend(notas)
    informe.notas.append(f"salida y registros de cada proceso: {REGISTRO}/caos-hijo-<n>/")
    return informe


def main(argv: Sequence[str] | None = None) -> int:
    args = construir_parser().parse_args(argv)
    consola = Console(file=sys.__stdout__)
    try:
        semillas = [args.semilla] if args.semilla is not None else None
        if args.semillas is not None:
            semillas = list(range(1, args.semillas + 1))
        if args.lista_semillas:
            semillas = [int(s) for s in args.lista_semillas.split(",")]
        if semillas and args.escenario != "caos":
            raise ValueError("--semilla/--semillas only apply to --escenario caos")
        if args.procesos < 1:
            raise ValueError("--procesos must be at least 1")
        if args.procesos > 1 and semillas and len(semillas) > 1:
            informe = ejecutar_en_paralelo(
                semillas, args.procesos, args.pedidos, args.ritmo, args.compresion, consola, args.motor
            )
        else:
            informe = ejecutar(
                args.escenario,
                args.pedidos,
                args.ritmo,
                args.compresion,
                consola,
                semillas,
                resultados=args.resultados,
                registro=args.registro,
                motor=args.motor,
            )
    except (TimeoutError, ValueError, OSError, ImportError) as exc:
        print(f"mf-demo: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    informe.imprimir(consola)
    return 0 if informe.correcto else 1


if __name__ == "__main__":
    sys.exit(main())
