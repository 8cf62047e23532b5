"""Least privilege over the chaos campaign: every AWS request of every seed against its principal's role.

Faults make the functions take the paths a healthy run does not (refunds, stock releases, "not
confirmed" e-mails, dead letters, redrives), so the campaign is where a role that is too narrow for
what the code really does shows up. The request recorder (:mod:`least_privilege.registro`) is
installed before the session builds any client, by :func:`registrando`: ``mf-caos --local`` does it
around its in-process run, and every child of a parallel campaign runs :mod:`.hijo`, which does it
around ``mf-demo``. Then each seed (:func:`~mercadofresco_caos.local.correr_semilla`) takes
the calls recorded since the previous seed and evaluates them against the roles of the
*transformed* template, resolved with the session's physical ids:

- a request its role would deny is a violation of that seed (so it fails the campaign, is
  reported with the seed and its replay command, and crosses processes in the seed's JSON line);
- the seed records which Allow statements no request of it needed; the campaign's report lists
  the ones no seed needed (:func:`sin_usar_en_campana`).

A seed run without the recorder (``mf-demo --escenario caos --semilla N``, the e2e fixture of
``test_caos.py``) is not checked, and its result says so (``solicitudes_iam is None``).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from least_privilege.comprobacion import Cuenta, comprobar
from least_privilege.local import destino, registro_local, resuelta

from mercadofresco_caos.juicio import Violacion

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from least_privilege.acciones import Destino
    from least_privilege.registro import Llamada, Registro
    from template_model import Template

__all__ = [
    "INVARIANTE",
    "Comprobador",
    "PermisosSemilla",
    "activo",
    "comprobar_semilla",
    "registrando",
    "sin_usar_en_campana",
]

INVARIANTE = "permiso: toda solicitud a AWS la permite el rol de quien la hace"

_ACTIVO: Registro | None = None
_COMPROBADOR: tuple[Template, Comprobador] | None = None  # the session's, built on its first seed


@contextmanager
def registrando(plantilla: Template | None = None) -> Iterator[Registro]:
    """Record every call made on a principal's behalf until the block ends (enter it before the session)."""
    global _ACTIVO
    if plantilla is None:
        from mercadofresco_local import plantilla as plantilla_del_repositorio

        plantilla = plantilla_del_repositorio()
    with registro_local(plantilla) as registro:
        _ACTIVO = registro
        try:
            yield registro
        finally:
            _ACTIVO = None


def activo() -> Registro | None:
    """The recorder of this process's campaign, if :func:`registrando` installed one."""
    return _ACTIVO


@dataclass(frozen=True, slots=True)
class PermisosSemilla:
    solicitudes: int  # IAM requests evaluated (a batch call may be several)
    violaciones: list[Violacion]  # one per distinct denied request
    principales: list[str]  # who made requests in this seed
    sin_usar: list[str]  # "Principal · Sid: actions" of every Allow statement no request of the seed needed


class Comprobador:
    """One session's account (transformed once), and the check of each seed's calls against it."""

    def __init__(self, plantilla: Template) -> None:
        resuelta_ = resuelta(plantilla)
        self.destino: Destino = destino(plantilla, resuelta_)
        self.cuenta = Cuenta.de_resuelta(resuelta_)

    def semilla(self, llamadas: Iterable[Llamada]) -> PermisosSemilla:
        """The calls one seed made (``Registro.tomar()``): denied requests, and the statements none needed."""
        informe = comprobar(
            (peticion for llamada in llamadas for peticion in llamada.peticiones(self.destino)), self.cuenta, todos=True
        )
        violaciones = [Violacion(INVARIANTE, "-", f"{p} no tiene rol en la plantilla") for p in sorted(informe.sin_rol)]
        for d in informe.denegadas:
            contexto = ", ".join(f"{k}={list(v)}" for k, v in d.solicitud.contexto)
            violaciones.append(
                Violacion(
                    INVARIANTE,
                    "-",
                    f"{d.principal}: {d.solicitud.accion} sobre {d.solicitud.recurso}"
                    + (f" [{contexto}]" if contexto else "")
                    + f" — {d.decision.value}"
                    + (f": {d.motivo}" if d.motivo else "")
                    + f" ({d.veces} veces)",
                )
            )
        return PermisosSemilla(
            solicitudes=informe.solicitudes,
            violaciones=violaciones,
            principales=sorted(informe.activos),
            sin_usar=[s.etiqueta() for s in informe.sin_uso + informe.acciones_sin_uso],
        )


def comprobar_semilla(plantilla: Template) -> PermisosSemilla | None:
    """The calls recorded since the previous seed against the roles (``None``: no recorder installed)."""
    global _COMPROBADOR
    registro = activo()
    if registro is None:
        return None
    if _COMPROBADOR is None or _COMPROBADOR[0] is not plantilla:
        _COMPROBADOR = (plantilla, Comprobador(plantilla))
    return _COMPROBADOR[1].semilla(registro.tomar())


def sin_usar_en_campana(
    por_semilla: Iterable[tuple[list[str], list[str]]],
) -> tuple[list[str], list[str]]:
    """``(principals, unused)`` of each checked seed -> (statements no seed needed, principals no seed saw).

    A statement is unused by the campaign when every seed left it unused; its principal is listed
    apart when it made no request at all (a function the campaign never runs, e.g. the migrations).
    """
    activos: set[str] = set()
    comunes: set[str] | None = None
    for principales, sin_usar in por_semilla:
        activos.update(principales)
        comunes = set(sin_usar) if comunes is None else comunes & set(sin_usar)
    comunes = comunes or set()
    sin_uso = sorted(s for s in comunes if s.split(" · ", 1)[0] in activos)
    sin_solicitudes = sorted({s.split(" · ", 1)[0] for s in comunes} - activos)
    return sin_uso, sin_solicitudes
