"""``mf-caos --local``: seeds drawn from the fault spec, run on the local runtime, judged, reported."""

from __future__ import annotations

import io

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]


def test_mf_caos_local_runs_seeds_through_the_spec_with_zero_violations() -> None:
    from mercadofresco_caos import cli, especificacion
    from rich.console import Console

    # GIVEN mf-caos --local asked for two seeds of four orders
    args = cli.analizar(["--local", "--semillas", "2", "--pedidos", "4"])
    consola = Console(file=io.StringIO(), width=200)
    # WHEN it runs them and prints its report
    informe = cli.local(args, consola)
    informe.imprimir(consola)
    print(consola.file.getvalue())  # shown by pytest when the test fails
    # THEN both seeds kept every invariant, and the faults counted are the spec's local kinds
    cifras = dict(informe.secciones["caos"])
    assert informe.correcto
    assert cifras["semillas"] == "2" and cifras["violaciones"] == "0"
    contados = {parte.rsplit(" ", 1)[0] for parte in cifras["fallos por tipo"].split(", ")}
    assert contados <= {e.nombre for e in especificacion.cargar().locales()}
    assert {"pasarela-tiempo-agotado", "postgres-reiniciado"} <= contados
