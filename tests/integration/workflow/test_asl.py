"""statemachines/procesar_pedido.asl.json linted: structure, cfn-lint's E3601, retry discipline, wiring.

cfn-lint never checks the ASL of a SAM state machine; these tests do, and they also pin the
contract between the ASL and the rest of the project (error class names, substitutions, the
pipe's batch size). No AWS, no network.
"""

from __future__ import annotations

import copy
import json

import pytest
from cfn_lint_mensajeria import asl as asl_reglas
from mercadofresco.errors import NOMBRES_PARA_EL_FLUJO
from mercadofresco_local.asl import errores_de_dominio, marcadores, problemas
from mercadofresco_local.plantilla import RAIZ, Plantilla

RUTA = RAIZ / "statemachines" / "procesar_pedido.asl.json"
TRANSITORIOS = {"PasarelaNoDisponible", "OperacionEnCurso", "PresupuestoReintentosAgotado"}


@pytest.fixture(scope="module")
def definicion() -> dict:
    return json.loads(RUTA.read_text())


@pytest.fixture(scope="module")
def plantilla() -> Plantilla:
    return Plantilla()


def test_asl_definicion_del_proyecto_sin_problemas(definicion):
    # GIVEN the workflow's ASL WHEN linted (targets, reachability, cfn-lint E3601 via a native wrapper)
    # THEN it is clean
    assert problemas(definicion) == []


def test_asl_destino_inexistente_y_estado_inalcanzable_se_detectan(definicion):
    # GIVEN a copy with a Next to nowhere and an orphan state
    roto = copy.deepcopy(definicion)
    roto["States"]["Cobrar"]["Next"] = "NoExiste"
    roto["States"]["Huerfano"] = {"Type": "Succeed"}
    # WHEN linted
    encontrados = problemas(roto)
    # THEN both are reported (the checker can fail)
    assert any("NoExiste" in p for p in encontrados)
    assert any("Huerfano" in p and "unreachable" in p for p in encontrados)


def test_asl_esquema_invalido_lo_detecta_cfn_lint(definicion):
    # GIVEN a Task without its Resource and a negative MaxAttempts
    roto = copy.deepcopy(definicion)
    del roto["States"]["Cobrar"]["Resource"]
    roto["States"]["Confirmar"]["Retry"][0]["MaxAttempts"] = -1
    # WHEN linted THEN cfn-lint's E3601 reports both
    encontrados = asl_reglas.schema_problems(roto)
    assert any("Cobrar" in p and "Resource" in p for p in encontrados)
    assert any("Confirmar/Retry/0/MaxAttempts" in p for p in encontrados)


def test_asl_errores_de_dominio_existen_en_errors(definicion):
    # GIVEN every error name of ours that a Retry/Catch matches
    nombres = errores_de_dominio(definicion)
    # THEN each is a class of mercadofresco.errors (a renamed class would silently stop matching)
    assert nombres and nombres <= set(NOMBRES_PARA_EL_FLUJO)


def test_asl_todo_retry_con_backoff_tope_jitter_y_limite(definicion):
    # GIVEN every retrier WHEN inspected THEN it has the lesson's shape and never retries everything
    for estado, _, retrier in asl_reglas.retriers(definicion):
        assert retrier.get("JitterStrategy") == "FULL", estado.label
        assert retrier.get("BackoffRate", 0) >= 1 and retrier.get("IntervalSeconds", 0) >= 1, estado.label
        assert 0 < retrier.get("MaxDelaySeconds", 0) <= 300, estado.label
        assert 1 <= retrier.get("MaxAttempts", 3) <= 4, estado.label
        assert "States.ALL" not in retrier["ErrorEquals"], estado.label


def test_asl_cobrar_reintenta_solo_transitorios_y_captura_rechazo_y_circuito(definicion):
    # GIVEN the charge step
    cobrar = definicion["States"]["Cobrar"]
    reintentados = {e for r in cobrar["Retry"] for e in r["ErrorEquals"]}
    capturados = [c["ErrorEquals"] for c in cobrar["Catch"]]
    # THEN a declined card and an open circuit are never retried, only caught
    assert reintentados >= TRANSITORIOS
    assert not reintentados & {"CobroRechazado", "CircuitoAbierto", "EventoInvalido"}
    assert capturados[:2] == [["CobroRechazado"], ["CircuitoAbierto"]]


def test_asl_reclamo_condicional_y_duplicado_termina_en_exito(definicion):
    # GIVEN the claim
    reclamo = definicion["States"]["ReclamarPedido"]
    # THEN it is one conditional putItem and a refused claim ends in a Succeed, not in a compensation
    assert reclamo["Resource"] == "arn:aws:states:::dynamodb:putItem"
    assert reclamo["Parameters"]["ConditionExpression"] == "attribute_not_exists(clave)"
    (captura,) = reclamo["Catch"]
    assert captura["ErrorEquals"] == ["DynamoDB.ConditionalCheckFailedException"]
    assert definicion["States"][captura["Next"]]["Type"] == "Succeed"


def test_asl_todo_fallo_tras_el_cobro_compensa(definicion):
    # GIVEN the steps after a successful charge
    for nombre in ("RegistrarCobro", "ReservarStock", "Confirmar"):
        # THEN any error goes to the refund
        capturas = definicion["States"][nombre]["Catch"]
        assert [c["Next"] for c in capturas if "States.ALL" in c["ErrorEquals"]] == ["Reembolsar"], nombre


def test_asl_marcadores_igual_a_sustituciones_de_la_plantilla(plantilla):
    # GIVEN the template's DefinitionSubstitutions for the workflow
    sustituciones = plantilla.recursos["ProcesarPedido"]["Properties"]["DefinitionSubstitutions"]
    # THEN the ASL uses exactly those placeholders (SAM would leave an unknown one unresolved)
    assert marcadores(RUTA.read_text()) == set(sustituciones)


def test_asl_pipe_entrega_un_pedido_por_ejecucion_asincrona(plantilla):
    # GIVEN the pipe feeding the workflow (the ASL reads one record and refuses a batch)
    props = plantilla.recursos["PipePedidos"]["Properties"]
    # THEN batch size 1 and an asynchronous start of the standard workflow
    assert props["SourceParameters"]["SqsQueueParameters"]["BatchSize"] == 1
    assert props["TargetParameters"]["StepFunctionStateMachineParameters"]["InvocationType"] == "FIRE_AND_FORGET"
    assert plantilla.recursos["ProcesarPedido"]["Properties"]["Type"] == "STANDARD"
