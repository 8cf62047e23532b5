"""One seed's fault schedule, drawn by the repository's fault kinds (same seed, same schedule).

This module sits above the registry (:mod:`.registro`) and the kinds' modules (:mod:`.proveedores`,
:mod:`.lambdas`, :mod:`.infraestructura`, :mod:`.entregas`), which import the registry to register
their classes: importing them here is what registers them.
"""

from __future__ import annotations

import random
from functools import cache
from typing import TYPE_CHECKING

from mercadofresco_local import plantilla as plantilla_del_repositorio

from mercadofresco_caos import entregas, especificacion, infraestructura, lambdas, proveedores  # noqa: F401  (register)
from mercadofresco_caos.calendario import PEDIDOS, RITMO_POR_S, Lienzo, ProgramaCaos
from mercadofresco_caos.registro import Registro

if TYPE_CHECKING:
    from template_model import Template


@cache
def por_defecto() -> Registro:
    """The repository's spec bound to the kinds in this package."""
    return Registro.desde(especificacion.cargar())


def flujo_de(semilla: int, nombre: str) -> random.Random:
    """A fault kind's own random stream: seeded by (seed, kind), independent of every other kind's draws."""
    return random.Random(f"{semilla}:{nombre}")


def programa(
    semilla: int,
    pedidos: int = PEDIDOS,
    ritmo_por_s: float = RITMO_POR_S,
    registro: Registro | None = None,
    plantilla: Template | None = None,
) -> ProgramaCaos:
    """The fault schedule of one seed: a pure function of its arguments (same seed, same schedule).

    ``plantilla`` (the repository's by default) gives the functions and providers the kinds draw from.
    """
    lienzo = Lienzo(semilla, pedidos, ritmo_por_s, plantilla or plantilla_del_repositorio())
    for tipo in (registro or por_defecto()).locales():
        lienzo.poner(tipo.nombre, tipo.sortear(flujo_de(semilla, tipo.nombre), lienzo))
    return lienzo.programa()
