"""The fault registry: one class per fault kind, bound to its entry in the spec.

A kind says how it is drawn (:meth:`TipoFallo.sortear`, from its own seeded stream), and, when
it is a timed event, how it is applied and stopped (:meth:`aplicar`, :meth:`parar`). Counting
and reporting come with the schedule (:attr:`ProgramaCaos.por_tipo`, ``describir``). Adding a
kind is one class registered under the name of a new spec entry, in a module :mod:`.sorteo` imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from mercadofresco_caos import especificacion

if TYPE_CHECKING:
    import random

    from mercadofresco_caos.calendario import Falta, Lienzo, Suceso
    from mercadofresco_caos.orquesta import Orquesta

CLASES: dict[str, type[TipoFallo]] = {}


def registrar(clase: type[TipoFallo]) -> type[TipoFallo]:
    """Class decorator: the class implements the spec entry named ``clase.nombre``."""
    if clase.nombre in CLASES:
        raise ValueError(f"fault kind {clase.nombre!r} registered twice ({CLASES[clase.nombre].__name__})")
    CLASES[clase.nombre] = clase
    return clase


class TipoFallo:
    """One fault kind. ``p`` holds its spec entry's local parameters."""

    nombre: ClassVar[str]
    sucesos: ClassVar[tuple[str, ...]] = ()  # the Suceso.tipo values this kind plays

    def __init__(self, entrada: especificacion.EntradaFallo) -> None:
        self.entrada = entrada
        self.p: dict[str, Any] = entrada.local

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        """This kind's faults for one seed, drawn from ``rng`` only (its own stream)."""
        raise NotImplementedError

    def aplicar(self, suceso: Suceso, orquesta: Orquesta) -> None:
        """Inject one of this kind's timed events into the running session."""
        raise NotImplementedError(f"{self.nombre} plays no timed events")

    def parar(self, orquesta: Orquesta) -> None:
        """Undo what a window of this kind may have left on when the seed ends (idempotent)."""


class Registro:
    """The kinds of one campaign, in the spec's order."""

    def __init__(self, tipos: list[TipoFallo]) -> None:
        self.tipos = tipos
        self._por_suceso = {s: t for t in tipos for s in t.sucesos}

    @classmethod
    def desde(cls, espec: especificacion.Especificacion) -> Registro:
        faltan = [e.nombre for e in espec.entradas if e.nombre not in CLASES]
        if faltan:
            raise especificacion.EspecificacionInvalidaError(f"fault kinds without a class: {', '.join(faltan)}")
        return cls([CLASES[e.nombre](e) for e in espec.locales()])

    def locales(self) -> list[TipoFallo]:
        return self.tipos

    def tocar(self, suceso: Suceso, orquesta: Orquesta) -> None:
        """Play one timed event through the kind that plays it (what :class:`Orquesta` asks of its registry)."""
        self._por_suceso[suceso.tipo].aplicar(suceso, orquesta)

    def parar(self, orquesta: Orquesta) -> None:
        """Undo what each kind's windows may have left on (:meth:`TipoFallo.parar`)."""
        for tipo in self.tipos:
            tipo.parar(orquesta)


def entre(rng: random.Random, limites: list[int]) -> int:
    """An integer in the spec's ``[min, max]`` (both included)."""
    return rng.randint(limites[0], limites[1])
