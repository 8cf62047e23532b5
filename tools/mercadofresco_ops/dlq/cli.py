"""``mf-dlq``: the DLQ runbook's commands (``runbooks/dlq.md``).

Exit codes a script can rely on:

- 0  done / the check passed;
- 1  a check failed: ``verificar`` found messages left or too few processed, ``reprocesar``
     refused because the source's consumer is failing, some messages could not be moved, or
     an AWS call failed mid-run (what moved stays moved, the rest is still in the DLQ), or
     ``clasificar`` could read no message (all in flight): never exit 0 without a verdict;
- 2  usage error, unknown queue, missing permissions or credentials (one line on stderr);
- 130 interrupted (Ctrl-C): what was moved is in the source, the rest is still in the DLQ.
"""

from __future__ import annotations

import math
import shlex
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from mercadofresco_ops.dlq import grupos, nativo, presentacion, reproceso, salud, verificacion
from mercadofresco_ops.dlq.argumentos import construir_parser
from mercadofresco_ops.dlq.conexion import Opciones, contar, muestrear, resolver_cola
from mercadofresco_ops.dlq.mensajes import leer
from mercadofresco_ops.dlq.tasa import TokenBucket
from mercadofresco_ops.errores import ErrorOperador, errores_de_aws

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

OK, FALLO, USO, INTERRUMPIDO = 0, 1, 2, 130
VISIBILIDAD_INSPECCION_S = 5  # the lesson's detail: messages come back to the DLQ at once if the tool dies


def _positivo(valor: int | None, opcion: str) -> None:
    if valor is not None and valor < 1:
        raise ErrorOperador(f"{opcion} debe ser 1 o más, no {valor}")


def inspeccionar(args: argparse.Namespace, opciones: Opciones) -> int:
    _positivo(args.maximo, "-n/--maximo")
    sqs = opciones.cliente("sqs")
    dlq = resolver_cola(sqs, args.cola)
    antes = contar(sqs, dlq)
    lista = [leer(m) for m in muestrear(sqs, dlq, args.maximo, VISIBILIDAD_INSPECCION_S)]
    if args.json:
        presentacion.imprimir_json({"cola": dlq.nombre, "cuentas": antes, "mensajes": [m.a_dict() for m in lista]})
    else:
        presentacion.mensajes(
            lista,
            f"{dlq.nombre}: {antes['visibles']} visibles, {antes['en_vuelo']} en vuelo "
            f"(se muestran {len(lista)}; nada se borra)",
        )
    return OK


def clasificar(args: argparse.Namespace, opciones: Opciones) -> int:
    """Exit 0 only with a verdict (or a DLQ that is really empty); nothing classified is exit 1, never silence."""
    _positivo(args.muestra, "--muestra")
    sqs = opciones.cliente("sqs")
    dlq = resolver_cola(sqs, args.cola)
    lista = [leer(m) for m in muestrear(sqs, dlq, args.muestra, VISIBILIDAD_INSPECCION_S)]
    if not lista:
        cuentas = contar(sqs, dlq)
        vacia = not any(cuentas.values())
        texto = (
            f"{dlq.nombre} está vacía: nada que clasificar."
            if vacia
            else f"{dlq.nombre}: ningún mensaje visible ({cuentas['en_vuelo']} en vuelo, {cuentas['retrasados']} "
            "retrasados: otra lectura o un reprocesado en curso): sin clasificación; repite en unos segundos."
        )
        if args.json:
            presentacion.imprimir_json(
                {
                    "cola": dlq.nombre,
                    "tipo": "vacía" if vacia else "sin muestra",
                    "explicacion": texto,
                    "muestra": 0,
                    "cuentas": cuentas,
                    "grupos": [],
                }
            )
        else:
            presentacion.salida.print(escape(texto))
        return OK if vacia else FALLO
    informe = grupos.clasificar_grupos(lista, args.version_esperada, dlq.nombre)
    if args.json:
        presentacion.imprimir_json({"cola": dlq.nombre, **informe.a_dict()})
    else:
        presentacion.informe(informe, dlq.nombre)
    return OK


def reprocesar(args: argparse.Namespace, opciones: Opciones) -> int:
    if args.nativo and (args.filtro or args.transformar or args.maximo or args.motivo):
        raise ErrorOperador(
            "--nativo mueve todo tal cual: --filtro, --motivo, --transformar y --maximo exigen el modo normal"
        )
    _positivo(args.maximo, "--maximo")
    transformar = reproceso.cargar_transformacion(args.transformar) if args.transformar else None
    if args.filtro:
        reproceso.compilar_filtro(args.filtro)
    if not math.isfinite(args.tasa) or args.tasa <= 0 or args.visibilidad_s < 1:
        raise ErrorOperador("--tasa y --visibilidad-s deben ser positivas")
    sqs = opciones.cliente("sqs")
    dlq = resolver_cola(sqs, args.cola)
    destino = reproceso.resolver_destino(sqs, dlq, args.destino)
    if not args.simulacro and not _consumidor_sano(args, opciones, dlq, destino):
        return FALLO
    if args.nativo:
        return _reprocesar_nativo(args, sqs, dlq, destino)
    plan = reproceso.Plan(
        dlq, destino, args.filtro, transformar, args.maximo, args.visibilidad_s, args.simulacro, args.motivo
    )
    inicio = datetime.now(UTC)
    total = contar(sqs, dlq)["visibles"]
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=presentacion.errores,
        disable=args.simulacro,
    ) as barra:
        tarea = barra.add_task(f"{dlq.nombre} → {destino.nombre} a {args.tasa:g}/s", total=args.maximo or total)
        resultado = reproceso.reprocesar(sqs, plan, TokenBucket(args.tasa), lambda n: barra.advance(tarea, n))
    quedan = contar(sqs, dlq)
    _informe_reproceso(args, dlq, destino, resultado, quedan, inicio)
    if resultado.detenido:
        print(f"mf-dlq: detenido a mitad: {resultado.detenido}; repite la orden cuando se resuelva", file=sys.stderr)
    return FALLO if resultado.fallidos or resultado.detenido else OK


def _consumidor_sano(args: argparse.Namespace, opciones: Opciones, dlq: Any, destino: Any) -> bool:
    if args.forzar:
        presentacion.errores.print("--forzar: no se comprueba si el consumidor de origen falla")
        return True
    clientes = salud.Clientes(opciones.cliente("cloudwatch"), opciones.cliente("lambda"), opciones.cliente("pipes"))
    resultado = salud.comprobar(clientes, dlq, destino, args.edad_max_s)
    if all(c.correcta for c in resultado):
        return True
    if args.json:
        presentacion.imprimir_json({"rechazado": True, "comprobaciones": [c.__dict__ for c in resultado]})
    else:
        presentacion.comprobaciones(resultado, f"El consumidor de {destino.nombre} parece fallar")
        presentacion.errores.print("No se reprocesa: corrige primero (paso 4) o usa --forzar si sabes por qué.")
    return False


def _informe_reproceso(
    args: argparse.Namespace, dlq: Any, destino: Any, resultado: Any, quedan: dict, inicio: datetime
) -> None:
    verificar = shlex.join(
        [
            "mf-dlq",
            "verificar",
            "--cola",
            dlq.nombre,
            "--destino",
            destino.nombre,
            "--esperados",
            str(resultado.movidos),
            "--desde",
            f"{inicio:%Y-%m-%dT%H:%M:%SZ}",
        ]
    )
    if args.json:
        presentacion.imprimir_json(
            {
                "simulacro": args.simulacro,
                "destino": destino.nombre,
                **resultado.a_dict(),
                "quedan_en_dlq": quedan,
                "verificar": verificar,
            }
        )
        return
    verbo = "se moverían" if args.simulacro else "movidos"
    presentacion.salida.print(
        f"{verbo}: {resultado.movidos}  omitidos por el filtro: {resultado.omitidos}  "
        f"fallidos: {len(resultado.fallidos)}  quedan en la DLQ: {quedan}"
    )
    for message_id, error in resultado.fallidos.items():
        presentacion.salida.print(f"  [red]{message_id}[/red]: {escape(error)} (sigue en la DLQ)")
    for ejemplo in resultado.ejemplos:
        presentacion.salida.print(f"  ejemplo: {escape(ejemplo)}", highlight=False)
    if quedan["en_vuelo"]:
        presentacion.salida.print(
            f"{quedan['en_vuelo']} mensajes en vuelo (otra lectura o un corte): vuelven a la "
            "DLQ al vencer su visibilidad; entonces repite la orden."
        )
    if not args.simulacro:
        presentacion.salida.print("Siguiente paso (verificar, en ~5 min):")
        presentacion.orden(verificar)


def _reprocesar_nativo(args: argparse.Namespace, sqs: Any, dlq: Any, destino: Any) -> int:
    if args.simulacro:
        presentacion.salida.print(f"StartMessageMoveTask {dlq.arn} → {destino.arn} a {int(args.tasa)}/s (simulacro)")
        return OK
    handle = nativo.iniciar(sqs, dlq, destino, args.tasa)
    presentacion.errores.print(f"tarea iniciada: {handle}")
    if args.sin_esperar:
        if args.json:
            presentacion.imprimir_json({"TaskHandle": handle})
        return OK
    with Progress(console=presentacion.errores) as barra:
        tarea = barra.add_task(f"{dlq.nombre} → {destino.nombre} (nativo)", total=None)
        final = nativo.esperar(sqs, dlq, lambda movidos, total: barra.update(tarea, completed=movidos, total=total))
    if args.json:
        presentacion.imprimir_json(final)
    else:
        presentacion.tareas([final], dlq.nombre)
    return OK if final["Status"] == "COMPLETED" else FALLO


def verificar(args: argparse.Namespace, opciones: Opciones) -> int:
    sqs = opciones.cliente("sqs")
    dlq = resolver_cola(sqs, args.cola)
    resultado = [verificacion.dlq_vacia(sqs, dlq)]
    if args.esperados is not None:
        destino = reproceso.resolver_destino(sqs, dlq, args.destino)
        desde = args.desde or datetime.now(UTC) - timedelta(minutes=30)
        resultado.append(verificacion.procesados(opciones.cliente("cloudwatch"), destino, args.esperados, desde))
    correcto = all(c.correcta for c in resultado)
    if args.json:
        presentacion.imprimir_json({"correcto": correcto, "comprobaciones": [c.__dict__ for c in resultado]})
    else:
        presentacion.comprobaciones(resultado, f"Verificación de {dlq.nombre}")
        if not correcto:
            presentacion.salida.print("Si los mensajes vuelven a la DLQ: para y vuelve al paso 2 (clasificar).")
    return OK if correcto else FALLO


def tareas(args: argparse.Namespace, opciones: Opciones) -> int:
    sqs = opciones.cliente("sqs")
    dlq = resolver_cola(sqs, args.cola)
    lista = nativo.tareas(sqs, dlq)
    if args.json:
        presentacion.imprimir_json(lista)
    else:
        presentacion.tareas(lista, dlq.nombre)
    return OK


def cancelar(args: argparse.Namespace, opciones: Opciones) -> int:
    movidos = nativo.cancelar(opciones.cliente("sqs"), args.tarea)
    presentacion.salida.print(f"cancelada; ya se habían movido ~{movidos} mensajes")
    return OK


ORDENES = {
    "inspeccionar": inspeccionar,
    "clasificar": clasificar,
    "reprocesar": reprocesar,
    "verificar": verificar,
    "tareas": tareas,
    "mover-estado": tareas,
    "cancelar": cancelar,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = construir_parser().parse_args(argv)
    opciones = Opciones(args.region, args.perfil, args.endpoint_url)
    try:
        with errores_de_aws("AWS"):  # a last net: any AWS/botocore failure is one line, never a traceback
            return ORDENES[args.orden](args, opciones)
    except ErrorOperador as exc:
        print(f"mf-dlq: {' '.join(str(exc).split())}", file=sys.stderr)  # one line, whatever the library said
        return USO
    except KeyboardInterrupt:
        print("mf-dlq: interrumpido; lo movido está en la cola de origen, lo demás sigue en la DLQ", file=sys.stderr)
        return INTERRUMPIDO


if __name__ == "__main__":
    sys.exit(main())
