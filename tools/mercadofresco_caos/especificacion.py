"""The fault spec (``fallos.yaml``): which fault kinds exist, their parameters, and who can apply them."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from template_model import messaging as m

if TYPE_CHECKING:
    from template_model import Consumer, Template

RUTA = Path(__file__).with_name("fallos.yaml")
# What a kind may name instead of listing functions or providers: the template model's answer, never a list.
CONSUMIDORES = "consumidores"  # every queue consumer that calls a provider (the fan-out's, the stock's...)
EJECUTORES = frozenset({"local", "fis"})
ACCIONES_FIS = frozenset(
    {
        "aws:lambda:invocation-add-delay",
        "aws:lambda:invocation-error",
        "aws:lambda:invocation-http-integration-response",
    }
)


class EspecificacionInvalidaError(ValueError):
    """The fault spec does not say what a runner needs (the message names the entry and the field)."""


def consumidores(plantilla: Template) -> tuple[Consumer, ...]:
    """The stack's queue consumers that call a provider, in template order, by stack path (:data:`CONSUMIDORES`)."""
    return tuple(c for c in m.stack_consumers(plantilla) if c.providers)


@dataclass(frozen=True)
class AccionFis:
    """How AWS FIS applies a kind: one ``aws:lambda:*`` action on the template's functions."""

    accion: str
    funciones: tuple[str, ...]  # logical ids of AWS::Serverless::Function resources
    parametros: dict[str, str]
    condicion: str | None = None  # a template condition the targets exist under, besides Chaos
    objetivo: str | None = None  # instead of funciones: CONSUMIDORES

    def objetivos(self, plantilla: Template) -> tuple[str, ...]:
        """The functions it acts on: those named, or those the template gives for its ``objetivo``."""
        if self.objetivo == CONSUMIDORES:
            return tuple(c.function for c in consumidores(plantilla))
        return self.funciones


@dataclass(frozen=True)
class EntradaFallo:
    nombre: str
    descripcion: str
    ejecutores: frozenset[str]
    local: dict[str, Any] = field(default_factory=dict)
    fis: AccionFis | None = None


@dataclass(frozen=True)
class Especificacion:
    entradas: tuple[EntradaFallo, ...]

    def __getitem__(self, nombre: str) -> EntradaFallo:
        for entrada in self.entradas:
            if entrada.nombre == nombre:
                return entrada
        raise KeyError(f"no fault kind {nombre!r} in the spec")

    def locales(self) -> tuple[EntradaFallo, ...]:
        return tuple(e for e in self.entradas if "local" in e.ejecutores)

    def de_fis(self) -> tuple[EntradaFallo, ...]:
        return tuple(e for e in self.entradas if "fis" in e.ejecutores)


def _entrada(datos: dict[str, Any]) -> EntradaFallo:
    nombre = datos.get("nombre")
    if not isinstance(nombre, str) or not nombre:
        raise EspecificacionInvalidaError(f"a fault entry has no nombre: {datos!r}")
    ejecutores = frozenset(datos.get("ejecutores") or ())
    if not ejecutores or not ejecutores <= EJECUTORES:
        raise EspecificacionInvalidaError(f"{nombre}: ejecutores must be a non-empty subset of {sorted(EJECUTORES)}")
    fis = None
    if "fis" in ejecutores:
        bruto = datos.get("fis") or {}
        if bruto.get("accion") not in ACCIONES_FIS or not (bruto.get("funciones") or bruto.get("objetivo")):
            raise EspecificacionInvalidaError(
                f"{nombre}: fis needs an accion among {sorted(ACCIONES_FIS)} and funciones (or objetivo)"
            )
        if bruto.get("objetivo") not in (None, CONSUMIDORES) or (bruto.get("objetivo") and bruto.get("funciones")):
            raise EspecificacionInvalidaError(f"{nombre}: fis.objetivo is {CONSUMIDORES!r}, instead of funciones")
        parametros = {k: str(v) for k, v in (bruto.get("parametros") or {}).items()}
        if "duration" not in parametros:
            raise EspecificacionInvalidaError(f"{nombre}: fis.parametros needs a duration (ISO 8601, e.g. PT5M)")
        funciones = tuple(bruto.get("funciones") or ())
        fis = AccionFis(bruto["accion"], funciones, parametros, bruto.get("condicion"), bruto.get("objetivo"))
    elif "fis" in datos:
        raise EspecificacionInvalidaError(f"{nombre}: a fis section but fis is not among its ejecutores")
    if "local" in ejecutores and not isinstance(datos.get("local"), dict):
        raise EspecificacionInvalidaError(f"{nombre}: local is among its ejecutores but it has no local parameters")
    return EntradaFallo(nombre, str(datos.get("descripcion", "")), ejecutores, dict(datos.get("local") or {}), fis)


def leer(texto: str) -> Especificacion:
    """Parse a spec; :class:`EspecificacionInvalidaError` names the first entry that is wrong."""
    try:
        datos = yaml.safe_load(texto)
    except yaml.YAMLError as exc:
        raise EspecificacionInvalidaError(f"the fault spec is not YAML: {exc}") from None
    if not isinstance(datos, dict) or datos.get("version") != 1 or not isinstance(datos.get("fallos"), list):
        raise EspecificacionInvalidaError("the fault spec must be a mapping with version: 1 and a list fallos")
    if not all(isinstance(e, dict) for e in datos["fallos"]):
        raise EspecificacionInvalidaError("every entry of fallos must be a mapping")
    entradas = tuple(_entrada(e) for e in datos["fallos"])
    repetidos = sorted({e.nombre for e in entradas if sum(o.nombre == e.nombre for o in entradas) > 1})
    if repetidos:
        raise EspecificacionInvalidaError(f"fault kinds named twice: {', '.join(repetidos)}")
    return Especificacion(entradas)


@cache
def cargar(ruta: Path = RUTA) -> Especificacion:
    """The repository's spec (read once a process)."""
    return leer(ruta.read_text(encoding="utf-8"))
