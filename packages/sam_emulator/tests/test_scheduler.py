"""Schedules from the template run their function at the compressed rate."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest
from sam_emulator.testing import wait_until

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def test_period_s_rate_in_seconds_and_cron_without_period() -> None:
    from sam_emulator.scheduler import period_s

    # GIVEN / WHEN / THEN rate expressions become seconds; cron is not run locally
    assert period_s("rate(1 minute)") == 60
    assert period_s("rate(5 minutes)") == 300
    assert period_s("cron(0 3 * * ? *)") is None


def test_schedule_invokes_its_function_again_and_again_with_its_input(tmp_path: Path) -> None:
    from sam_emulator.functions import Function
    from sam_emulator.scheduler import Schedule

    # GIVEN a function that records its inputs, scheduled every minute compressed x300 (0.2 s)
    (tmp_path / "app.py").write_text(
        textwrap.dedent(
            """
            inputs = []
            def lambda_handler(event, context):
                inputs.append(event)
            """
        )
    )
    function = Function(logical_id="Relay", name="relay", code=tmp_path)
    schedule = Schedule("RelaySchedule", function, period_s=60 / 300, event_input={"origen": "horario"})

    # WHEN it runs until the function has been called three times
    schedule.start()
    try:
        inputs = wait_until(lambda: len(function.load().inputs) >= 3 and function.load().inputs, "three runs")
    finally:
        schedule.stop()

    # THEN every run got the schedule's input, and the schedule counted its runs without errors
    assert all(e == {"origen": "horario"} for e in inputs)
    assert schedule.executions == len(inputs) and schedule.errors == 0
