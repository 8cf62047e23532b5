"""What ``mf-dlq`` prints: rich tables for a person, ``--json`` for a script (stdout only)."""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mercadofresco_ops.dlq.mensajes import DETALLE_MAX_CHARS, recortar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mercadofresco_ops.dlq.clasificador import Diagnostico
    from mercadofresco_ops.dlq.grupos import Informe
    from mercadofresco_ops.dlq.mensajes import MensajeDlq
    from mercadofresco_ops.dlq.salud import Comprobacion

ANCHO_SIN_TERMINAL = 160  # piped into a file or a ticket: do not fold tables at 80 columns

salida = Console(width=None if sys.stdout.isatty() else ANCHO_SIN_TERMINAL)
errores = Console(stderr=True)


def imprimir_json(datos: Any) -> None:
    """Readable UTF-8 JSON; a lone surrogate read from a body is written as its ``\\uXXXX`` escape (valid JSON)."""
    texto = json.dumps(datos, ensure_ascii=False, indent=2, default=str)
    print(_SURROGADO.sub(lambda m: f"\\u{ord(m.group()):04x}", texto))


_SURROGADO = re.compile("[\ud800-\udfff]")


def mensajes(lista: Sequence[MensajeDlq], titulo: str) -> None:
    tabla = Table(title=escape(titulo), show_lines=False)
    tabla.add_column("MessageId", min_width=36, no_wrap=True)
    tabla.add_column("enviado (UTC)", min_width=19, no_wrap=True)
    tabla.add_column("recep.", min_width=6, justify="right")
    tabla.add_column("motivo", min_width=22, overflow="fold")
    tabla.add_column("version", min_width=7)
    tabla.add_column("cuerpo", overflow="ellipsis", no_wrap=True, max_width=50)
    for m in lista:
        # Everything read from a message is escaped: a body may contain "[/red]" (or worse) on purpose.
        motivo = escape(m.motivo) if m.motivo else "[dim]sin motivo (redrive)[/dim]"
        if m.detalle:
            motivo += f"\n[dim]{escape(recortar(m.detalle, DETALLE_MAX_CHARS))}[/dim]"
        tabla.add_row(
            escape(m.message_id),
            f"{m.enviado:%Y-%m-%d %H:%M:%S}" if m.enviado else "?",
            str(m.recepciones if m.recepciones is not None else "?"),
            motivo,
            "[red]ilegible[/red]" if m.cuerpo_invalido else escape(recortar(repr(m.version), 20)),
            escape(m.resumen()),
        )
    salida.print(tabla)


def diagnostico(d: Diagnostico, cola: str) -> None:
    color = COLORES.get(d.tipo, "white")
    salida.print(f"[bold]{escape(cola)}[/bold]: muestra de {d.muestra} mensajes")
    salida.print(f"Clasificación: [bold {color}]{d.tipo.upper()}[/bold {color}] (confianza {d.confianza})")
    salida.print(escape(d.explicacion))
    salida.print("\n[bold]Evidencias[/bold]")
    for evidencia in d.evidencias:
        salida.print(f"  • {escape(evidencia)}", highlight=False)
    if d.distribucion.histograma:
        salida.print("\n[bold]Entrada en la cola (SentTimestamp, UTC)[/bold]")
        for linea in d.distribucion.texto_histograma():
            salida.print(f"  {linea}", highlight=False)


COLORES = {"transitorio": "yellow", "envenenado": "red", "de datos": "magenta", "mixto": "cyan"}


def orden(linea: str) -> None:
    """A command for the operator to copy: alone on its line, at column 0, never folded by the console.

    ``soft_wrap`` leaves wrapping to the terminal, which joins the pieces again on copy; rich's own
    folding would insert real newlines and break the command at any width narrower than it.
    """
    salida.print(linea, soft_wrap=True, markup=False, highlight=False, emoji=False)


def informe(inf: Informe, cola: str) -> None:
    """The per-group answer of ``clasificar``: a summary, then each group with its evidence and command."""
    color = COLORES.get(inf.tipo, "white")
    salida.print(f"[bold]{escape(cola)}[/bold]: muestra de {inf.global_.muestra} mensajes, {len(inf.grupos)} grupo(s)")
    salida.print(f"Clasificación: [bold {color}]{inf.tipo.upper()}[/bold {color}] (confianza {inf.confianza})")
    salida.print(escape(inf.explicacion))
    for n, g in enumerate(inf.grupos, 1):
        d = g.diagnostico
        color = COLORES.get(d.tipo, "white")
        motivo = escape(g.motivo) if g.motivo else "sin motivo (redrive)"
        salida.print(
            f"\n[bold]Grupo {n}/{len(inf.grupos)}[/bold]: {d.muestra} mensajes · motivo {motivo} · "
            f"{escape(recortar(g.contenido, 200))}"
        )
        salida.print(f"  Veredicto: [bold {color}]{d.tipo.upper()}[/bold {color}] (confianza {d.confianza})")
        salida.print(f"  {escape(d.explicacion)}", highlight=False)
        salida.print("  [bold]Evidencias[/bold]")
        for evidencia in d.evidencias:
            salida.print(f"  • {escape(evidencia)}", highlight=False)
        if g.total_pedidos or g.total_clientes:
            salida.print(
                f"  Afecta a {g.total_pedidos} pedido(s): {escape(_lista(g.pedidos, g.total_pedidos))}; "
                f"{g.total_clientes} cliente(s)/carrito(s): {escape(_lista(g.clientes, g.total_clientes))}",
                highlight=False,
            )
        salida.print(f"  Ejemplos (MessageId, paso 3): {escape(', '.join(g.ejemplos))}", highlight=False)
        salida.print(
            f"  Orden ({escape(g.nota_orden)}):" if g.orden else f"  Sin orden de reprocesado: {escape(g.nota_orden)}",
            highlight=False,
        )
        if g.orden:
            orden(g.orden)
    if inf.global_.distribucion.histograma:
        salida.print("\n[bold]Entrada en la cola (SentTimestamp, UTC), toda la muestra[/bold]")
        for linea in inf.global_.distribucion.texto_histograma():
            salida.print(f"  {linea}", highlight=False)


def _lista(ids: Sequence[str], total: int) -> str:
    return ", ".join(ids) + (f" y {total - len(ids)} más" if total > len(ids) else "") if ids else "—"


def comprobaciones(lista: Sequence[Comprobacion], titulo: str) -> None:
    tabla = Table(title=escape(titulo))
    tabla.add_column("comprobación")
    tabla.add_column("")
    tabla.add_column("detalle", overflow="fold")
    for c in lista:
        tabla.add_row(escape(c.nombre), "[green]bien[/green]" if c.correcta else "[red]MAL[/red]", escape(c.detalle))
    salida.print(tabla)


def tareas(lista: Sequence[dict[str, Any]], cola: str) -> None:
    tabla = Table(title=escape(f"Tareas de movimiento de {cola}"))
    for columna in ("estado", "movidos", "a mover", "tasa/s", "destino", "TaskHandle / fallo"):
        tabla.add_column(columna, overflow="fold")
    for t in lista:
        tabla.add_row(
            t.get("Status", "?"),
            str(t.get("ApproximateNumberOfMessagesMoved", "?")),
            str(t.get("ApproximateNumberOfMessagesToMove", "?")),
            str(t.get("MaxNumberOfMessagesPerSecond", "?")),
            str(t.get("DestinationArn", "origen de cada mensaje")),
            escape(t.get("TaskHandle") or t.get("FailureReason", "")),
        )
    salida.print(tabla)
