"""``mf-caos``'s arguments: what each run is given, and what it refuses before anything starts."""

from __future__ import annotations

from typing import Any

import pytest
from mercadofresco_caos import cli
from mercadofresco_local import demo


@pytest.mark.parametrize("procesos", [1, 3])
def test_a_local_campaign_runs_on_the_engine_it_is_given(monkeypatch: pytest.MonkeyPatch, procesos: int) -> None:
    # GIVEN mf-caos --local on the durable engine, in one process or split across several
    llamadas: list[dict[str, Any]] = []
    monkeypatch.setattr(demo, "ejecutar", lambda *a, **k: llamadas.append(k))
    monkeypatch.setattr(demo, "ejecutar_en_paralelo", lambda *a, **k: llamadas.append(k))
    args = cli.analizar(["--local", "--semillas", "2", "--procesos", str(procesos), "--motor", "DurableFunction"])
    # WHEN it starts the campaign  THEN the local run is asked for that engine
    cli.local(args, consola=None)
    assert [k["motor"] for k in llamadas] == ["DurableFunction"]


def test_a_local_campaign_without_an_engine_runs_on_the_templates_default() -> None:
    assert cli.analizar(["--local"]).motor is None


@pytest.mark.parametrize(
    ("argv", "motivo"),
    [
        (["--pila", "mercadofresco", "--motor", "DurableFunction"], "--motor elige el motor de la ejecución local"),
        (["--local", "--motor", "Lambda"], "valor no válido: 'Lambda'"),
    ],
)
def test_an_engine_for_a_stack_or_an_unknown_engine_is_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str], argv: list[str], motivo: str
) -> None:
    # GIVEN an engine given to a stack's campaign (the stack runs its own), or one the template does not offer
    # WHEN parsed  THEN mf-caos exits 2 with one line saying why
    with pytest.raises(SystemExit) as salida:
        cli.analizar(argv)
    assert salida.value.code == 2
    assert motivo in capsys.readouterr().err
