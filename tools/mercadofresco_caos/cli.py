"""``mf-caos``: the chaos campaign's spec, on the local runtime or, through AWS FIS, on a deployed stack.

    mf-caos --local --semillas 20               # seeds 1..20 through the spec, on this machine
    mf-caos --local --semillas 200 --procesos 3
    mf-caos --local --semillas 20 --motor DurableFunction   # the order saga on Lambda durable functions
    mf-caos --pila mercadofresco                # FIS experiments against a stack deployed with Chaos=enabled
    mf-caos --pila mercadofresco --fallo consumidor-error --pedidos 40
    mf-caos --plantillas                        # the FIS experiment templates template.yaml holds

Both runs end with the same report and the same invariants, judged by the same code
(:mod:`mercadofresco_caos.juicio`). Exit codes: 0 every invariant held; 1 one broke (the
report says which); 2 the run could not start or complete (one line on stderr saying why).
Output is in Spanish, like the other operator commands.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

from mercadofresco_local import argumento_motor
from mercadofresco_ops.ayuda import ParserEspanol
from rich.console import Console

from mercadofresco_caos import especificacion, fis

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from mercadofresco_local.informe import Informe


def construir_parser() -> argparse.ArgumentParser:
    p = ParserEspanol(
        prog="mf-caos",
        description="La campaña de caos de la especificación, en la ejecución local o, con AWS FIS, en una pila "
        "desplegada.",
        epilog="Códigos de salida: 0 se cumplieron todas las invariantes, 1 alguna falló (el informe dice cuál), "
        "2 la campaña no pudo empezar o terminar.",
    )
    donde = p.add_mutually_exclusive_group(required=True)
    donde.add_argument("--local", action="store_true", help="correr semillas en la ejecución local")
    donde.add_argument("--pila", help="pila desplegada con Chaos=enabled: experimentos FIS")
    donde.add_argument(
        "--plantillas", action="store_true", help="imprimir las plantillas FIS que genera la especificación"
    )
    p.add_argument("--semillas", type=int, default=10, help="local: las semillas 1..N (10)")
    p.add_argument("--procesos", type=int, default=1, help="local: repartir las semillas entre N procesos (1)")
    p.add_argument("--pedidos", type=int, help="pedidos por semilla (local, 30) o colocados en la pila (20)")
    p.add_argument("--ritmo", type=float, help="local: pedidos por segundo")
    argumento_motor(p, "local: ")
    p.add_argument(
        "--fallo", action="append", help="pila: tipo de fallo a inyectar (repetible; por defecto, todos los de FIS)"
    )
    p.add_argument("--espera-s", type=float, default=600, help="pila: segundos máximos esperando el reposo (600)")
    p.add_argument("--intervalo-s", type=float, default=10, help="pila: segundos entre observaciones (10)")
    p.add_argument("--url", help="pila: URL de la tienda (por defecto, la salida TiendaApiUrl de la pila)")
    p.add_argument("--sufijo", default="", help="pila: su NameSuffix (vacío por defecto)")
    p.add_argument("--endpoint-url", metavar="URL", help="pila: endpoint de AWS alternativo")
    p.add_argument("--region", help="pila: región (por defecto la de la configuración de AWS)")
    return p


def analizar(argv: Sequence[str] | None) -> argparse.Namespace:
    p = construir_parser()
    args = p.parse_args(argv)
    if args.semillas < 1 or args.procesos < 1 or (args.pedidos is not None and args.pedidos < 1):
        p.error("--semillas, --procesos y --pedidos deben ser al menos 1")
    if args.motor and not args.local:
        p.error("--motor elige el motor de la ejecución local (--local); una pila usa el suyo (WorkflowEngine)")
    de_fis = [e.nombre for e in especificacion.cargar().de_fis()]
    desconocidos = sorted(set(args.fallo or ()) - set(de_fis))
    if desconocidos:
        p.error(f"--fallo {', '.join(desconocidos)}: FIS solo aplica {', '.join(de_fis)}")
    args.fallo = args.fallo or de_fis
    return args


def local(args: argparse.Namespace, consola: Console) -> Informe:
    from mercadofresco_local import demo

    from mercadofresco_caos import permisos

    semillas = list(range(1, args.semillas + 1))
    if args.procesos > 1 and len(semillas) > 1:  # each child records its own requests (caos.hijo)
        return demo.ejecutar_en_paralelo(
            semillas, args.procesos, args.pedidos, args.ritmo, consola=consola, motor=args.motor
        )
    with permisos.registrando():  # every seed's AWS requests checked against their roles
        return demo.ejecutar("caos", args.pedidos, args.ritmo, consola=consola, semillas=semillas, motor=args.motor)


def pila(args: argparse.Namespace, consola: Console) -> Informe:
    from mercadofresco.aws import client
    from mercadofresco_local.informe import Informe
    from mercadofresco_ops.smoke import REINTENTOS_TIENDA, ClienteTienda, Nombres, Observador, Smoke, url_de_pila

    from mercadofresco_caos import pila as en_pila
    from mercadofresco_caos.informe import anotar_pila
    from mercadofresco_caos.juicio import juzgar

    if args.endpoint_url:
        os.environ["AWS_ENDPOINT_URL"] = args.endpoint_url  # every client of the run, the layer's included
    if args.region:
        os.environ["AWS_DEFAULT_REGION"] = args.region
    desplegada = en_pila.leer_pila(args.pila)
    url = args.url or url_de_pila(args.pila, args.endpoint_url, args.region)
    smoke = Smoke(
        ClienteTienda(url, firmar=ClienteTienda.es_execute_api(url), region=args.region, reintentos=REINTENTOS_TIENDA),
        Observador(client("stepfunctions"), client("dynamodb"), client("sqs"), Nombres(args.sufijo)),
    )
    consola.print(f"[bold]mf-caos[/] «{args.pila}»: {', '.join(args.fallo)} con AWS FIS")
    experimentos, registros, errores = en_pila.correr(
        desplegada, smoke, args.fallo, args.pedidos or 20, args.espera_s, args.intervalo_s, consola.print
    )
    informe = Informe("caos en la pila")
    anotar_pila(informe, args.pila, experimentos, registros, juzgar(registros, time.time()), errores)
    return informe


def main(argv: Sequence[str] | None = None) -> int:
    args = analizar(argv)
    consola = Console(file=sys.__stdout__)
    if args.plantillas:
        return fis.main()
    from mercadofresco_caos.pila import PilaNoPreparadaError

    try:
        informe = local(args, consola) if args.local else pila(args, consola)
    except (TimeoutError, ValueError, OSError, ImportError, PilaNoPreparadaError) as exc:
        print(f"mf-caos: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    informe.imprimir(consola)
    return 0 if informe.correcto else 1


if __name__ == "__main__":
    sys.exit(main())
