"""The report a scenario ends with: what happened, and whether every invariant held."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.table import Table

if TYPE_CHECKING:
    from rich.console import Console

    from mercadofresco_local.invariantes import Invariante


@dataclass
class Informe:
    """Figures by section (``[(label, value)]``) plus the invariants and the scenario's own checks."""

    escenario: str
    secciones: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    invariantes: list[Invariante] = field(default_factory=list)
    comprobaciones: list[Invariante] = field(default_factory=list)  # the scenario's expected outcome
    notas: list[str] = field(default_factory=list)

    def anotar(self, seccion: str, etiqueta: str, valor: object) -> None:
        self.secciones.setdefault(seccion, []).append((etiqueta, str(valor)))

    @property
    def correcto(self) -> bool:
        return all(i.cumple for i in (*self.invariantes, *self.comprobaciones))

    def imprimir(self, consola: Console) -> None:
        cifras = Table(title=f"mf-demo — escenario «{self.escenario}»", show_header=False, title_justify="left")
        cifras.add_column(style="bold")
        cifras.add_column(justify="right")
        for seccion, filas in self.secciones.items():
            cifras.add_row(f"[cyan]{seccion}[/cyan]", "")
            for etiqueta, valor in filas:
                cifras.add_row(f"  {etiqueta}", valor)
        consola.print(cifras)
        consola.print(_tabla_comprobaciones("Invariantes", self.invariantes))
        if self.comprobaciones:
            consola.print(_tabla_comprobaciones(f"Lo que «{self.escenario}» debe mostrar", self.comprobaciones))
        for nota in self.notas:
            consola.print(f"[dim]• {nota}[/dim]")
        veredicto = "[bold green]TODO CORRECTO[/]" if self.correcto else "[bold red]INVARIANTE ROTO[/]"
        consola.print(veredicto)


def _tabla_comprobaciones(titulo: str, filas: list[Invariante]) -> Table:
    tabla = Table(title=titulo, title_justify="left")
    tabla.add_column("", width=2)
    tabla.add_column("comprobación")
    tabla.add_column("detalle", overflow="fold")
    for inv in filas:
        tabla.add_row("[green]✓[/]" if inv.cumple else "[red]✗[/]", inv.nombre, inv.detalle)
    return tabla
