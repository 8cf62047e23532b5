"""A run's latency and cost sections of its report: what ``mf-demo`` prints after every scenario.

The latency report reads the executions once and the cost report reuses them, so the two are
made here, one after the other, above both modules (:mod:`.costes` reads :mod:`.latencias`'
records, never the other way round).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mercadofresco_informes import costes, latencias

if TYPE_CHECKING:
    from mercadofresco_local.informe import Informe
    from mercadofresco_local.sesion import Sesion


def anotar_medidas(sesion: Sesion, registro: latencias.RegistroInvocaciones, informe: Informe) -> None:
    """Latency and cost sections of the report; a measurement that fails says so and breaks no invariant."""
    try:
        costes.anotar(sesion, registro, latencias.anotar(sesion, registro, informe), informe)
    except Exception as exc:  # the figures are extra: the scenario's verdict must stand
        informe.notas.append(f"latencia/coste no calculados: {type(exc).__name__}: {exc}")
