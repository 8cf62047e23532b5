"""functions/cobro/app.py without any backend: bad payloads are refused before any I/O."""

from __future__ import annotations

import pytest
from mercadofresco.errors import EventoInvalido

from tests.conftest import load_event

# Nothing listens here: a handler that tried to reach the gateway would fail with another error.
SIN_PASARELA = "http://127.0.0.1:9"


@pytest.fixture
def app(app_module):
    return app_module(
        "cobro", PASARELA_URL=SIN_PASARELA, TABLA_IDEMPOTENCIA="mercadofresco-idempotencia", PASARELA_SECRET_ARN=""
    )


@pytest.mark.parametrize("evento", ["cobro-version-2.json", "cobro-malformado.json"])
def test_handler_invalid_event_fails_with_eventoinvalido_without_calling(app, lambda_context, evento, capsys):
    # GIVEN a payload the function cannot read WHEN invoked THEN EventoInvalido (the workflow's Catch ends it)
    with pytest.raises(EventoInvalido):
        app.lambda_handler(load_event(evento), lambda_context)
    # AND nothing of the order (card token, customer) was logged
    salida = capsys.readouterr().out
    assert "tok_" not in salida and "CLI-0193" not in salida


def test_handler_dispatches_by_operation_to_cobro_and_reembolso(app):
    # GIVEN the dispatch table WHEN inspected THEN each operation the workflow sends has exactly one method
    assert set(app.DESPACHO) == {"cobro", "reembolso"}
    assert app.DESPACHO["cobro"] is type(app.operaciones).cobro
    assert app.DESPACHO["reembolso"] is type(app.operaciones).reembolso
