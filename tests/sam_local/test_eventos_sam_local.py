"""Every sample event in ``events/`` run by ``sam local invoke`` in Lambda's container, its outcome asserted.

The functions run as built by ``sam build`` (layer included) in the locally built Python 3.13
image; moto's server, the provider stand-ins, PostgreSQL and Redis are reached through the
Docker bridge with the addresses of ``events/env-vars.json``, as ``make invoke`` does. Each
event starts from an empty world; the runs happen once per session (``observaciones``, in
parallel lanes), each test asserts one event's outcome.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sam_local.cases import CASES

pytestmark = [
    pytest.mark.sam_local,
    pytest.mark.slow,
    # the first test waits for the whole session's invokes (~10 s each, in lanes): not a hang bound
    pytest.mark.timeout(3600),
]

EVENTOS = Path(__file__).resolve().parents[2] / "events"


def _sample_events() -> list[str]:
    """The functions' events: every file in events/ but the env-vars files (events/flujo/ is the workflow's)."""
    return sorted(p.name for p in EVENTOS.glob("*.json") if not p.name.startswith("env-vars"))


def test_every_sample_event_has_a_declared_outcome() -> None:
    # GIVEN the functions' sample events
    eventos = _sample_events()
    # WHEN compared with the table of outcomes
    sin_caso = [e for e in eventos if e not in CASES]
    # THEN each has one (a new event needs its expected outcome in events/casos.yaml)
    assert sin_caso == []
    assert sorted(CASES) == eventos


@pytest.mark.parametrize("evento", sorted(CASES))
def test_sample_event_in_container_ends_as_declared(observaciones: dict[str, dict[str, Any]], evento: str) -> None:
    # GIVEN an empty world plus what the event refers to (a charge to refund, a declined card)
    caso = CASES[evento]
    # WHEN sam local invoke ran the function with the event (session fixture, as the README shows)
    visto = observaciones.get(evento)
    assert visto is not None, f"{evento} was not run (see the lane's output above)"
    # THEN it answered, or raised the named error it must
    assert visto["error_type"] == caso.error, visto["logs"]
    for campo, valor in caso.answer.items():
        assert visto["payload"][campo] == valor, visto["payload"]
    # AND the provider saw each operation once; what could not be read is in the DLQ with its reason
    if caso.effects is not None:
        assert visto["effects"] == caso.effects
    assert tuple(visto["dead_letters"]) == caso.dead_letters
