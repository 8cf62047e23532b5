"""sam_emulator.moto_lambda: moto's Lambda runs registered handlers in process, Lambda's way."""

from __future__ import annotations

import io
import json
import zipfile

import boto3
import pytest
from mercadofresco.dominio.errores import CobroRechazado
from sam_emulator.moto_lambda import in_process

pytestmark = pytest.mark.integration


def _funcion(nombre: str, timeout_s: int = 7) -> None:
    iam = boto3.client("iam")
    confianza = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole"}]}
    rol = iam.create_role(RoleName=f"rol-{nombre}", AssumeRolePolicyDocument=json.dumps(confianza))["Role"]["Arn"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("app.py", "")
    boto3.client("lambda").create_function(
        FunctionName=nombre, Runtime="python3.13", Role=rol, Handler="app.lambda_handler",
        Code={"ZipFile": buffer.getvalue()}, Timeout=timeout_s,
    )  # fmt: skip


def _invocar(nombre: str, evento: dict) -> tuple[dict | str, str | None]:
    respuesta = boto3.client("lambda").invoke(FunctionName=nombre, Payload=json.dumps(evento))
    texto = respuesta["Payload"].read().decode()
    try:
        return json.loads(texto), respuesta.get("FunctionError")
    except ValueError:
        return texto, respuesta.get("FunctionError")


def test_moto_lambda_registered_handler_returns_its_result_with_a_context(aws):
    # GIVEN a function whose handler echoes the event and the remaining time
    _funcion("eco", timeout_s=7)

    def manejador(evento, contexto):
        return {"recibido": evento, "restante_ms": contexto.get_remaining_time_in_millis(), "f": contexto.function_name}

    # WHEN invoked while the hook is active
    with in_process({"eco": manejador}) as registro:
        resultado, error = _invocar("eco", {"pedido_id": "P1"})
    # THEN the handler ran here, with Lambda's context, and was counted
    assert error is None
    assert resultado["recibido"] == {"pedido_id": "P1"} and resultado["f"] == "eco"
    assert 0 < resultado["restante_ms"] <= 7000
    assert registro.invocations["eco"] == 1


def test_moto_lambda_exception_becomes_a_result_with_errortype(aws):
    # GIVEN a handler raising a domain error
    _funcion("cobro")

    def manejador(evento, contexto):
        raise CobroRechazado("the gateway declined the card")

    # WHEN invoked
    with in_process({"cobro": manejador}) as registro:
        resultado, error = _invocar("cobro", {})
    # THEN Lambda's error contract: FunctionError, errorType = the class name Step Functions matches
    assert error == "Handled"
    assert resultado["errorType"] == "CobroRechazado"
    assert resultado["errorMessage"] == "the gateway declined the card"
    assert registro.errors["cobro"] == 1


def test_moto_lambda_unregistered_function_and_after_exit_behaves_like_moto(aws):
    # GIVEN two functions, only one registered
    _funcion("registrada")
    _funcion("otra")
    with in_process({"registrada": lambda e, c: {"ok": True}}):
        # WHEN the other is invoked THEN moto's Docker-less echo answers, untouched
        assert _invocar("otra", {"x": 1}) == ({"x": 1}, None)
    # WHEN the hook is gone THEN the registered one echoes again too
    assert _invocar("registrada", {"y": 2}) == ({"y": 2}, None)


def test_moto_lambda_is_not_reentrant(aws):
    # GIVEN an active hook WHEN another is activated THEN it refuses (two runs would share handlers)
    with in_process({}), pytest.raises(RuntimeError, match="already active"), in_process({}):
        pass
    # AND once released it can be activated again
    with in_process({}) as registro:
        assert registro.invocations == {}
