"""The e2e suite runs ``mf-demo``'s scenarios in process, at small sizes, against the real local services."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from mercadofresco_local.informe import Informe


@pytest.fixture
def escenario() -> Callable[..., Informe]:
    """Run one scenario (report printed into a buffer); return its :class:`Informe`."""
    from mercadofresco_local.demo import ejecutar
    from rich.console import Console

    def _correr(nombre: str, pedidos: int, **kwargs: float) -> Informe:
        consola = Console(file=io.StringIO(), width=160)
        informe = ejecutar(nombre, pedidos, consola=consola, **kwargs)
        informe.imprimir(consola)
        print(consola.file.getvalue())  # shown by pytest when the test fails
        return informe

    return _correr


def comprobacion(informe: Informe, texto: str) -> bool:
    """Whether the scenario check whose name contains ``texto`` held (it must exist)."""
    encontradas = [c for c in informe.comprobaciones if texto in c.nombre]
    assert encontradas, f"no check named like {texto!r}: {[c.nombre for c in informe.comprobaciones]}"
    return all(c.cumple for c in encontradas)
