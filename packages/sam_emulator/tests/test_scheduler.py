"""Schedules from the template run their function at the compressed rate."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest
from sam_emulator.testing import wait_until

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def test_periodo_s_rate_in_seconds_and_cron_without_period() -> None:
    from sam_emulator.scheduler import periodo_s

    # GIVEN / WHEN / THEN rate expressions become seconds; cron is not run locally
    assert periodo_s("rate(1 minute)") == 60
    assert periodo_s("rate(5 minutes)") == 300
    assert periodo_s("cron(0 3 * * ? *)") is None


def test_schedule_invokes_its_function_again_and_again_with_its_input(tmp_path: Path) -> None:
    from sam_emulator.functions import Funcion
    from sam_emulator.scheduler import Programa

    # GIVEN a function that records its inputs, scheduled every minute compressed x300 (0.2 s)
    (tmp_path / "app.py").write_text(
        textwrap.dedent(
            """
            entradas = []
            def lambda_handler(event, context):
                entradas.append(event)
            """
        )
    )
    funcion = Funcion(logical_id="Relay", nombre="relay", codigo=tmp_path)
    programa = Programa("RelaySchedule", funcion, periodo_s=60 / 300, entrada={"origen": "horario"})

    # WHEN it runs until the function has been called three times
    programa.start()
    try:
        entradas = wait_until(lambda: len(funcion.cargar().entradas) >= 3 and funcion.cargar().entradas, "three runs")
    finally:
        programa.stop()

    # THEN every run got the schedule's input, and the schedule counted its runs without errors
    assert all(e == {"origen": "horario"} for e in entradas)
    assert programa.ejecuciones == len(entradas) and programa.errores == 0
