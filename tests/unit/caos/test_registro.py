"""The fault registry: one class per spec entry, each drawing from its own seeded stream."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco_caos import especificacion
from mercadofresco_caos.calendario import Suceso
from mercadofresco_caos.registro import CLASES, Registro, TipoFallo
from mercadofresco_caos.sorteo import por_defecto, programa

SEMILLAS = range(1, 41)


class Simulacro(TipoFallo):
    """A new fault kind, drawn first and drawing a lot, as a careless addition would."""

    nombre = "simulacro"
    sucesos = ("simulacro",)

    def sortear(self, rng, lienzo):
        return [Suceso(round(rng.uniform(0, lienzo.duracion_s), 2), "simulacro", valor=rng.random()) for _ in range(25)]


def sin_simulacro(prog):
    return dataclasses.replace(
        prog,
        sucesos=tuple(s for s in prog.sucesos if s.tipo != "simulacro"),
        por_tipo=tuple(t for t in prog.por_tipo if t[0] != "simulacro"),
    )


def test_every_spec_entry_has_a_class_and_every_class_an_entry() -> None:
    # GIVEN the repository's spec and the registered kinds
    nombres = {e.nombre for e in especificacion.cargar().entradas}
    por_defecto()  # imports the families, which register their classes
    # WHEN / THEN the two lists are the same
    assert nombres == set(CLASES)


@pytest.mark.parametrize("semilla", SEMILLAS)
def test_adding_a_fault_kind_leaves_every_existing_schedule_unchanged(semilla: int) -> None:
    # GIVEN the campaign's kinds, and the same kinds with a new one drawn before all of them
    registro = por_defecto()
    entrada = especificacion.EntradaFallo("simulacro", "a new kind", frozenset({"local"}))
    con_nuevo = Registro([Simulacro(entrada), *registro.locales()])
    # WHEN one seed's schedule is drawn with each
    antes, despues = programa(semilla, 30, 6.0, registro), programa(semilla, 30, 6.0, con_nuevo)
    # THEN the new kind added its own faults and changed nothing else
    assert any(s.tipo == "simulacro" for s in despues.sucesos)
    assert sin_simulacro(despues) == antes


def test_a_spec_entry_without_a_class_is_refused_by_name() -> None:
    # GIVEN a spec naming a kind nobody implemented
    espec = especificacion.leer("version: 1\nfallos:\n  - {nombre: inventado, ejecutores: [local], local: {}}\n")
    # WHEN / THEN binding it to the registry names the kind
    with pytest.raises(especificacion.EspecificacionInvalidaError, match="inventado"):
        Registro.desde(espec)


@pytest.mark.parametrize(
    ("entrada", "nombrado"),
    [
        ("{nombre: x, ejecutores: [nube], local: {}}", "ejecutores"),
        ("{nombre: x, ejecutores: [fis], fis: {accion: aws:lambda:invocation-error, funciones: [F]}}", "duration"),
        ("{nombre: x, ejecutores: [fis], fis: {accion: aws:ec2:stop-instances, funciones: [F]}}", "accion"),
        ("{nombre: x, ejecutores: [local], local: {}, fis: {}}", "fis"),
        ("{nombre: x, ejecutores: [local]}", "local parameters"),
    ],
)
def test_a_wrong_spec_entry_gets_an_error_naming_entry_and_field(entrada: str, nombrado: str) -> None:
    # GIVEN / WHEN a spec with one wrong entry is read  THEN the error names the entry and what is wrong
    with pytest.raises(especificacion.EspecificacionInvalidaError, match=nombrado) as error:
        especificacion.leer(f"version: 1\nfallos:\n  - {entrada}\n")
    assert "x" in str(error.value)


@given(st.text(max_size=300))
def test_any_spec_text_is_read_or_refused_with_the_named_error(texto: str) -> None:
    # GIVEN arbitrary text  WHEN it is read as a spec  THEN it is a spec, or the spec's own error
    try:
        espec = especificacion.leer(texto)
    except especificacion.EspecificacionInvalidaError:
        return
    assert isinstance(espec, especificacion.Especificacion)
