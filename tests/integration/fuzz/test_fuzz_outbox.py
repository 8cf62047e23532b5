"""The outbox relay and clean-up handlers take a scheduler's event: any other event, or garbage, changes nothing.

Both ignore their event's content by design (they act on the database, not on the event), so any
input — AWS's sample events of every other source, any JSON — must give the same answer: a drained,
empty outbox and nothing deleted, never an exception.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.fuzz.estrategias import EVENTOS_AWS, valor_json

pytestmark = pytest.mark.integration

evento_cualquiera = st.one_of(st.sampled_from(list(EVENTOS_AWS.values())), valor_json)


@pytest.fixture
def handlers(aws, pg_dsn: str, app_module, fresh_environment: None) -> tuple[Any, Any]:
    """Both handlers on a private schema (migrated by their first invocation), pool closed afterwards."""
    env = {"DATABASE_URL": pg_dsn, "EVENT_BUS_NAME": "bus-mercadofresco", "OUTBOX_DRAIN_S": "0.05"}
    return app_module("outbox", **env), app_module("outbox_limpieza", **env)


@given(evento=evento_cualquiera)
def test_fuzz_outbox_relay_any_event_drains_and_never_raises(handlers, lambda_context, evento) -> None:
    relay, _ = handlers
    # WHEN invoked with any event THEN it drains the (empty) outbox as on a schedule
    resultado = relay.lambda_handler(evento, lambda_context)
    assert resultado["publicadas"] == 0 and resultado["errores_bd"] == 0


@given(evento=evento_cualquiera)
def test_fuzz_outbox_limpieza_any_event_deletes_nothing_and_never_raises(handlers, lambda_context, evento) -> None:
    _, limpieza = handlers
    assert limpieza.lambda_handler(evento, lambda_context) == {"borradas": 0}
