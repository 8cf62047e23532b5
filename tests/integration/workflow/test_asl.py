"""statemachines/procesar_pedido.asl.json linted: structure, cfn-lint's E3601, retry discipline, wiring.

cfn-lint never checks the ASL of a SAM state machine; these tests do, and they also pin the
contract between the ASL and the rest of the project (error class names, substitutions, the
pipe's batch size). No AWS, no network.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from cfn_lint_mensajeria import asl as asl_reglas
from mercadofresco.dominio.errores import NOMBRES_PARA_EL_FLUJO
from mercadofresco_lint.asl import errores_de_dominio, marcadores, problemas
from sam_emulator.template import Template

from tests.conftest import RAIZ
from tests.fixtures.flujo import tiempos_plantilla

RUTA = RAIZ / "statemachines" / "procesar_pedido.asl.json"
LIBERADOS = {"PasarelaNoDisponible", "PresupuestoReintentosAgotado"}  # the function released the key: ask again now
ANTES_DEL_CODIGO = {"Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException"}
ESTRANGULADO = "Lambda.TooManyRequestsException"


@pytest.fixture(scope="module")
def definicion() -> dict:
    return json.loads(RUTA.read_text())


@pytest.fixture(scope="module")
def plantilla() -> Template:
    return Template()


def test_asl_project_definition_has_no_problems(definicion):
    # GIVEN the workflow's ASL WHEN linted (targets, reachability, cfn-lint E3601 via a native wrapper)
    # THEN it is clean
    assert problemas(definicion) == []


def test_asl_missing_target_and_unreachable_state_are_detected(definicion):
    # GIVEN a copy with a Next to nowhere and an orphan state
    roto = copy.deepcopy(definicion)
    roto["States"]["Cobrar"]["Next"] = "NoExiste"
    roto["States"]["Huerfano"] = {"Type": "Succeed"}
    # WHEN linted
    encontrados = problemas(roto)
    # THEN both are reported (the checker can fail)
    assert any("NoExiste" in p for p in encontrados)
    assert any("Huerfano" in p and "unreachable" in p for p in encontrados)


def test_asl_invalid_schema_is_caught_by_cfn_lint(definicion):
    # GIVEN a Task without its Resource and a negative MaxAttempts
    roto = copy.deepcopy(definicion)
    del roto["States"]["Cobrar"]["Resource"]
    roto["States"]["Confirmar"]["Retry"][0]["MaxAttempts"] = -1
    # WHEN linted THEN cfn-lint's E3601 reports both
    encontrados = asl_reglas.schema_problems(roto)
    assert any("Cobrar" in p and "Resource" in p for p in encontrados)
    assert any("Confirmar/Retry/0/MaxAttempts" in p for p in encontrados)


def test_asl_error_names_matched_are_the_flows_error_names(definicion):
    # GIVEN every error name of ours that a Retry/Catch matches
    nombres = errores_de_dominio(definicion)
    # THEN each is one of the flow's error names (a renamed class would silently stop matching)
    assert nombres and nombres <= set(NOMBRES_PARA_EL_FLUJO)


def test_asl_every_retry_has_backoff_cap_jitter_and_limit(definicion):
    # GIVEN every retrier WHEN inspected THEN it has the lesson's shape and never retries everything
    for estado, _, retrier in asl_reglas.retriers(definicion):
        assert retrier.get("JitterStrategy") == "FULL", estado.label
        assert retrier.get("BackoffRate", 0) >= 1 and retrier.get("IntervalSeconds", 0) >= 1, estado.label
        assert 0 < retrier.get("MaxDelaySeconds", 0) <= 300, estado.label
        # waiting for capacity may take more attempts: a throttled invocation never reaches a provider
        limite = 6 if retrier["ErrorEquals"] == [ESTRANGULADO] else 4
        assert 1 <= retrier.get("MaxAttempts", 3) <= limite, estado.label
        assert "States.ALL" not in retrier["ErrorEquals"], estado.label


def _reintentados(estado: dict) -> set[str]:
    return {e for r in estado.get("Retry", []) for e in r["ErrorEquals"]}


def _capturas(estado: dict) -> dict[str, str]:
    return {e: c["Next"] for c in estado.get("Catch", []) for e in c["ErrorEquals"]}


def test_asl_cobrar_first_attempt_retries_only_what_never_reaches_the_code(definicion):
    # GIVEN the first charge attempt
    cobrar = definicion["States"]["Cobrar"]
    # THEN it retries only errors raised before the function's code runs, so an open circuit caught here
    # proves this execution never called the gateway (fail fast), and a declined card is never retried
    assert _reintentados(cobrar) == ANTES_DEL_CODIGO | {ESTRANGULADO}
    capturas = _capturas(cobrar)
    assert list(capturas)[:2] == ["CobroRechazado", "CircuitoAbierto"]
    assert capturas[ESTRANGULADO] == "QuedaEsperaCapacidad"  # busy platform: wait, do not fail
    assert {capturas[e] for e in LIBERADOS} == {"ReintentarCobro"}
    assert capturas["States.ALL"] == "QuedaReconsulta"  # anything else: the outcome is unknown


def _entradas_al_bucle(definicion: dict) -> dict[str, str]:
    """(state, the Output of its catcher) for every Catch that enters the re-ask loop."""
    return {
        nombre: c["Output"]
        for nombre, cuerpo in definicion["States"].items()
        for c in cuerpo.get("Catch", [])
        if c["Next"] == "QuedaReconsulta"
    }


def test_asl_resultado_desconocido_is_asked_again_after_the_lease_never_abandoned(definicion):
    # GIVEN the charge's lease (CobroFunction's, declared in Mappings.Plazos) and the resolution loop
    bloqueo_s = tiempos_plantilla().leases_s["CobroFunction"]
    estados = definicion["States"]
    # THEN OperacionEnCurso and the platform's errors are never retried by a jittered Retry (its waits can
    # all be short): every charge and refund step sends them to one loop that waits past the lease, then
    # asks again with the same operation and key
    for nombre in ("Cobrar", "ReintentarCobro", "Reembolsar", "Reconsultar"):
        assert not _reintentados(estados[nombre]) & {"OperacionEnCurso", "Sandbox.Timedout", "Lambda.Unknown"}
        assert _capturas(estados[nombre])["States.ALL"] == "QuedaReconsulta", nombre
    assert tiempos_plantilla().workflows["ProcesarPedido"].waits_s["EsperarFinBloqueo"] > bloqueo_s
    assert estados["QuedaReconsulta"]["Choices"][0]["Next"] == "EsperarFinBloqueo"
    assert estados["EsperarFinBloqueo"]["Next"] == "Reconsultar"

    # AND each entry starts the loop for its own operation, with its own count
    def entra(operacion: str) -> str:
        return f"{{% $merge([$states.input, {{'reconsulta': {{'operacion': '{operacion}', 'n': 0}}}}]) %}}"

    assert _entradas_al_bucle(definicion) == {
        "Cobrar": entra("cobro"),
        "ReintentarCobro": entra("cobro"),
        "Reembolsar": entra("reembolso"),
        "Reconsultar": "{% $states.input %}",  # a re-ask that failed again: the same operation, its count goes on
    }
    assert estados["Reconsultar"]["Arguments"]["Payload"]["operacion"] == "{% $states.input.reconsulta.operacion %}"
    # AND when the bound is reached an unknown charge is compensated (refund), never dropped
    assert estados["QuedaReconsulta"]["Choices"][1] == {
        "Condition": "{% $states.input.reconsulta.operacion = 'cobro' %}", "Next": "Reembolsar",
    }  # fmt: skip
    assert estados["QuedaReconsulta"]["Default"] == "ReembolsoPendiente"
    for nombre in ("Reembolsar", "Reconsultar"):
        assert _capturas(estados[nombre])["ReembolsoRechazado"] == "ComprobarSinCobro"


def test_asl_the_re_ask_loop_is_written_once(definicion):
    # GIVEN every Wait state and every state a Catch sends an unknown outcome to
    esperas = [e.name for e in asl_reglas.walk(definicion) if e.body["Type"] == "Wait"]
    capturas = [c for e in asl_reglas.walk(definicion) for c in e.body.get("Catch", [])]
    destinos = {c["Next"] for c in capturas if "States.ALL" in c["ErrorEquals"]}
    # THEN one Wait asks again past a lease (the other waits for capacity, a different idea), and the
    # charge and refund steps share it: no second loop for one of them
    assert sorted(esperas) == ["EsperarCapacidad", "EsperarFinBloqueo"]
    assert {"QuedaReconsulta"} == {d for d in destinos if d.startswith("Queda")}
    # AND a counting Pass is gone: the Catch that enters a loop and its Choice count in the state's data
    assert not [e.name for e in asl_reglas.walk(definicion) if e.name.startswith("Contar")]


def test_asl_uses_no_workflow_variables(definicion):
    # GIVEN every state, its catchers and its Choice rules
    texto = json.dumps(definicion["States"])
    # THEN none assigns or reads a workflow variable ("$name" other than $states and functions): MiniStack
    # 1.5.33 (the deploy level) drops a Catch's or a Choice rule's Assign unless the whole machine is
    # JSONata and fails on a $var in a JSONPath state, while moto runs them: the loop would pass here and
    # break deployed (docs/decisions/0101-transiciones-del-flujo.md, the reproduction)
    assert '"Assign"' not in texto
    assert re.findall(r"\$(?!states\b)[a-z_]+\b(?!\()", " ".join(re.findall(r"\{%.*?%\}", texto))) == []


def test_asl_both_claim_closes_are_the_same_write(definicion):
    # GIVEN the confirmed order's close (Confirmado, which ends the execution) and every other outcome's
    estados = definicion["States"]
    # THEN they write the same record the same way and both alarm when they cannot (ReclamoSinCerrar)
    for campo in ("Resource", "Parameters", "Retry", "Catch"):
        assert estados["Confirmado"][campo] == estados["CerrarReclamo"][campo], campo
    assert estados["Confirmado"].get("End") is True
    assert {c["Next"] for c in estados["Confirmado"]["Catch"]} == {"ReclamoSinCerrar"}
    assert estados["ReclamoSinCerrar"]["Type"] == "Fail" and "runbooks/" in estados["ReclamoSinCerrar"]["Cause"]


def test_asl_every_stored_outcome_has_one_schema(definicion):
    # GIVEN every state that names the order's outcome ($.desenlace)
    desenlaces = [
        e.body.get("ResultSelector") or e.body.get("Result") or e.body.get("Parameters")
        for e in asl_reglas.walk(definicion)
        if e.body.get("ResultPath") == "$.desenlace"
    ]
    # THEN each stores the same two fields, estado named as pedidos.estado names it
    from mercadofresco.dominio.proyeccion import ESTADO_POR_EVENTO

    assert len(desenlaces) >= 6
    for carga in desenlaces:
        assert {k.removesuffix(".$") for k in carga} == {"estado", "motivo"}, carga
        assert carga["estado"] in {e.nombre for e in ESTADO_POR_EVENTO.values()}, carga


def test_asl_template_max_visits_are_the_loop_bounds(definicion, plantilla):
    # GIVEN the visits the worst-case rule multiplies (template Metadata) and the loops' Choice bounds
    visitas = plantilla.resources["ProcesarPedido"]["Metadata"]["Mensajeria"]["VisitasMaximas"]
    condicion = definicion["States"]["QuedaReconsulta"]["Choices"][0]["Condition"]
    (por_operacion,) = re.fullmatch(r"\{% \$states\.input\.reconsulta\.n < (\d+) %\}", condicion).groups()
    # THEN they are the same numbers: Reconsultar asks again that many times about the charge, then as many
    # about its refund (a bigger loop would silently exceed the documented attempts)
    assert visitas == {"Reconsultar": 2 * int(por_operacion)}


def test_asl_every_task_retries_and_the_execution_is_bounded(definicion):
    # GIVEN every Task state (Liberar*, CerrarReclamo, the notices included)
    sin_retry = [e.label for e in asl_reglas.walk(definicion) if e.body["Type"] == "Task" and not e.body.get("Retry")]
    # THEN each retries its transient errors, and the execution is bounded below the claim's lease, so a
    # timed-out execution's order can be taken over by a redrive
    assert sin_retry == []
    assert 0 < definicion["TimeoutSeconds"] < tiempos_plantilla().leases_s["ReclamoFunction"]


def test_asl_reclamo_with_lease_and_duplicate_ends_in_success(definicion):
    # GIVEN the claim
    estados = definicion["States"]
    reclamo = estados["ReclamarPedido"]
    # THEN it is the reclamo function (reads the batch, lease + TTL), it is the first state, a refused claim
    # ends in a Succeed (never a compensation) and an unreadable order goes to the DLQ
    assert definicion["StartAt"] == "ReclamarPedido"
    assert reclamo["Arguments"]["FunctionName"] == "${ReclamoFunctionArn}"
    assert reclamo["Arguments"]["Payload"] == {
        "registros": "{% $states.input %}", "ejecucion": "{% $states.context.Execution.Id %}",
    }  # fmt: skip
    capturas = _capturas(reclamo)
    assert estados[capturas["PedidoDuplicado"]]["Type"] == "Succeed" and reclamo["Next"] == "Cobrar"
    assert estados[capturas["EventoInvalido"]]["Next"] == "EnviarAFallidos"


def test_asl_every_failure_after_the_cobro_compensates(definicion):
    # GIVEN the steps after a successful charge
    for nombre in ("ReservarStock", "Confirmar"):
        # THEN any error goes to the refund
        capturas = definicion["States"][nombre]["Catch"]
        assert [c["Next"] for c in capturas if "States.ALL" in c["ErrorEquals"]] == ["Reembolsar"], nombre


def test_asl_confirmation_has_an_explicit_payload_without_token(definicion):
    # GIVEN the confirmation published to the fan-out topic
    estados = definicion["States"]
    # THEN it is the reclamo function's explicit payload merged with the charge's reference and time, never
    # the order as a whole (which carries the card token)
    assert estados["Confirmar"]["Parameters"]["Message.$"] == (
        "States.JsonToString(States.JsonMerge($.confirmacion, $.cobro, false))"
    )
    # and every state that may charge stores the charge the same way (the reference and the charge's time)
    proyeccion = (
        "{'cobro': {'referencia_cobro': $states.result.Payload.referencia_cobro, "
        "'confirmado_en': $states.result.Payload.cobrado_en_utc}}"
    )
    for nombre in ("Cobrar", "ReintentarCobro", "Reconsultar"):
        assert proyeccion in estados[nombre]["Output"], nombre


def test_asl_placeholders_match_the_template_substitutions(plantilla):
    # GIVEN the template's DefinitionSubstitutions for the workflow
    sustituciones = plantilla.resources["ProcesarPedido"]["Properties"]["DefinitionSubstitutions"]
    # THEN the ASL uses exactly those placeholders (SAM would leave an unknown one unresolved)
    assert marcadores(RUTA.read_text()) == set(sustituciones)


def test_asl_pipe_delivers_one_pedido_per_async_execution(plantilla):
    # GIVEN the pipe feeding the workflow (the ASL reads one record and refuses a batch)
    props = plantilla.resources["PipePedidos"]["Properties"]
    # THEN batch size 1 and an asynchronous start of the standard workflow
    assert props["SourceParameters"]["SqsQueueParameters"]["BatchSize"] == 1
    assert props["TargetParameters"]["StepFunctionStateMachineParameters"]["InvocationType"] == "FIRE_AND_FORGET"
    assert plantilla.resources["ProcesarPedido"]["Properties"]["Type"] == "STANDARD"
