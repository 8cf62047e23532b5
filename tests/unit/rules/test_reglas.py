"""The rule pack on small templates: each bad one fires its rule and only it; the good one fires none."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cfn_lint_mensajeria import RULES_DIR
from cfn_lint_mensajeria.intentos import peor_caso
from cfnlint.api import lint_file
from template_model import read

RAIZ = Path(__file__).resolve().parents[3]
PLANTILLAS = RAIZ / "tests" / "fixtures" / "templates"
MALAS = sorted(PLANTILLAS.glob("*_malo.yaml"))


def _lint(path: Path) -> list:
    return lint_file(path, config={"append_rules": [RULES_DIR], "regions": ["eu-south-2"]})


def _ids_del_paquete(matches: list) -> set[str]:
    return {m.rule.id for m in matches if m.rule.id[1:3] == "91"}


def test_package_every_rule_has_a_bad_template():
    # GIVEN the rule modules WHEN listing their ids THEN each has a bad template fixture
    ids = {p.name.split("_", 1)[0] for p in MALAS}
    assert ids == {
        "E9101",
        "E9102",
        "E9103",
        "E9104",
        "E9105",
        "E9106",
        "E9107",
        "E9108",
        "W9109",
        "E9110",
        "E9111",
        "E9112",
        "E9113",
        "E9114",
    }


@pytest.mark.parametrize("plantilla", MALAS, ids=lambda p: p.stem)
def test_rule_bad_template_fires_only_its_id(plantilla):
    # GIVEN a template breaking exactly one rule WHEN linted with the pack
    matches = _lint(plantilla)
    # THEN that rule fires, no other rule of the pack does, and cfn-lint's own rules stay quiet
    esperado = plantilla.name.split("_", 1)[0]
    assert _ids_del_paquete(matches) == {esperado}
    assert {m.rule.id for m in matches} == {esperado}


def test_rule_good_template_fires_nothing():
    # GIVEN a template with every feature done right (SAM and native spellings, DefinitionUri)
    # WHEN linted THEN nothing matches
    assert [str(m) for m in _lint(PLANTILLAS / "bueno.yaml")] == []


def test_e9111_bad_template_names_the_path_and_the_total():
    # GIVEN 5 HTTP attempts behind a queue with maxReceiveCount 4 WHEN linted
    (match,) = _lint(PLANTILLAS / "E9111_malo.yaml")
    # THEN the message names the path and the product
    assert "Cola (maxReceiveCount 4) → Consumidor (HTTP_MAX_ATTEMPTS 5)" in match.message
    assert "= 20" in match.message


def test_suppression_metadata_ignore_checks_silences_only_that_resource(tmp_path):
    # GIVEN the E9101 bad template with the documented per-resource suppression on the queue
    texto = (PLANTILLAS / "E9101_malo.yaml").read_text()
    texto = texto.replace(
        "  Cola:\n    Type: AWS::SQS::Queue\n",
        "  Cola:\n    Type: AWS::SQS::Queue\n    Metadata:\n      cfn-lint:\n        config:\n"
        "          ignore_checks: [E9101]\n",
        1,
    )
    plantilla = tmp_path / "suprimida.yaml"
    plantilla.write_text(texto)
    # WHEN linted THEN E9101 no longer fires
    assert _ids_del_paquete(_lint(plantilla)) == set()


def test_e9101_consumed_dlq_is_exempt(tmp_path):
    # GIVEN a DLQ that a redrive function consumes (it is a DLQ: no DLQ of its own needed)
    texto = (PLANTILLAS / "bueno.yaml").read_text() + (
        "  Redrive:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n        Dlq:\n"
        "          Type: SQS\n          Properties:\n            Queue: !GetAtt Fallidos.Arn\n"
        "            FunctionResponseTypes: [ReportBatchItemFailures]\n"
        "            ScalingConfig: {MaximumConcurrency: 2}\n"
    )
    shutil.copy(PLANTILLAS / "bueno.asl.json", tmp_path)
    plantilla = tmp_path / "con_redrive.yaml"
    plantilla.write_text(
        texto.replace(
            "      MessageRetentionPeriod: 1209600\n",
            "      MessageRetentionPeriod: 1209600\n      VisibilityTimeout: 180\n",
        )
    )
    # WHEN linted THEN neither E9101 nor anything else fires
    assert _ids_del_paquete(_lint(plantilla)) == set()


_RAIZ_CON_UNIDAD = """
Transform: AWS::Serverless-2016-10-31
Resources:
  Alertas:
    Type: AWS::SNS::Topic
  Fallidos:
    Type: AWS::SQS::Queue
    Properties: {MessageRetentionPeriod: 1209600}
  Vigilancia:
    Type: AWS::CloudWatch::Alarm
    Properties:
      Namespace: AWS/SQS
      MetricName: ApproximateNumberOfMessagesVisible
      Dimensions: [{Name: QueueName, Value: !GetAtt Fallidos.QueueName}]
      Statistic: Maximum
      Period: 300
      EvaluationPeriods: 1
      Threshold: 0
      ComparisonOperator: GreaterThanThreshold
      AlarmActions: [!Ref Alertas]
  Unidad:
    Type: AWS::Serverless::Application
    Properties:
      Location: unidad.yaml
      Parameters: {DlqArn: !GetAtt Fallidos.Arn}
"""

_UNIDAD_QUE_RECIBE_SU_DLQ = """
Parameters:
  DlqArn: {Type: String}
Resources:
  Origen:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 30
      RedrivePolicy: {deadLetterTargetArn: !Ref DlqArn, maxReceiveCount: 4}
"""


@pytest.mark.parametrize("con_alarma", [True, False])
def test_e9102_sees_a_dlq_the_root_passes_to_the_unit_that_sends_to_it(tmp_path, con_alarma):
    # GIVEN a DLQ in the root (with what a delete retains, decision 0130) that only a nested unit's queue names,
    # through the parameter the root passes it in; with its alarm or without
    raiz = _RAIZ_CON_UNIDAD if con_alarma else _RAIZ_CON_UNIDAD.replace("AlarmActions: [!Ref Alertas]", "")
    (tmp_path / "template.yaml").write_text(raiz)
    (tmp_path / "unidad.yaml").write_text(_UNIDAD_QUE_RECIBE_SU_DLQ)
    # WHEN the root is linted  THEN the DLQ is one: it needs its alarm, and the alarm satisfies it
    e9102 = [m for m in _lint(tmp_path / "template.yaml") if m.rule.id == "E9102"]
    assert [m.message.split(" (")[0] for m in e9102] == ([] if con_alarma else ["DLQ Fallidos"])


# A root nesting one consumer unit twice, handing each nesting its DLQ, its redrive count (Mappings.Entrega) and
# its function's bounds (Mappings.Plazos); the unit's consumer makes 5 HTTP attempts.
_ANIDADA = """
  {nombre}:
    Type: AWS::Serverless::Application
    Properties:
      Location: unidades/consumidor.yaml
      Parameters:
        DlqArn: !GetAtt Fallidos.Arn
        MaxReceiveCount: !FindInMap [Entrega, Cola, maxReceiveCount]
        TimeoutS: !FindInMap [Plazos, {nombre}Function, TimeoutS]
        LeaseS: !FindInMap [Plazos, {nombre}Function, LeaseS]
"""
_RAIZ_CON_UNIDADES = """
Transform: AWS::Serverless-2016-10-31
Parameters:
  LeaseErp: {Type: String, Default: "90"}
Mappings:
  Plazos:
    ErpFunction: {TimeoutS: 30, LeaseS: "90"}
    CorreoFunction: {TimeoutS: 30, LeaseS: "90"}
  Entrega:
    Cola: {maxReceiveCount: 3}
Resources:
  Fallidos:
    Type: AWS::SQS::Queue""" + "".join(_ANIDADA.format(nombre=nombre) for nombre in ("Erp", "Correo"))

_UNIDAD_CONSUMIDORA = """
Transform: AWS::Serverless-2016-10-31
Parameters:
  DlqArn: {Type: String}
  MaxReceiveCount: {Type: Number}
  TimeoutS: {Type: Number}
  LeaseS: {Type: String}
Resources:
  Cola:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 180
      RedrivePolicy: {deadLetterTargetArn: !Ref DlqArn, maxReceiveCount: !Ref MaxReceiveCount}
  ConsumidorFunction:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.13
      Handler: app.handler
      InlineCode: "def handler(event, context): pass"
      Timeout: !Ref TimeoutS
      Environment:
        Variables: {HTTP_MAX_ATTEMPTS: "5", IDEMPOTENCY_LEASE_S: !Ref LeaseS}
      Events:
        Cola:
          Type: SQS
          Properties:
            Queue: !GetAtt Cola.Arn
            FunctionResponseTypes: [ReportBatchItemFailures]
            ScalingConfig: {MaximumConcurrency: 5}
"""


def _de_la_unidad(tmp_path: Path, regla: str, raiz: str | None = _RAIZ_CON_UNIDADES) -> list[str]:
    """``regla``'s messages on the consumer unit linted alone, under ``raiz`` (None: no root nests it)."""
    (tmp_path / "unidades").mkdir(exist_ok=True)
    if raiz is not None:
        (tmp_path / "template.yaml").write_text(raiz)
    (tmp_path / "unidades" / "consumidor.yaml").write_text(_UNIDAD_CONSUMIDORA)
    return [m.message for m in _lint(tmp_path / "unidades" / "consumidor.yaml") if m.rule.id == regla]


def test_e9114_judges_a_unit_linted_alone_by_the_bounds_each_parent_passes_it(tmp_path):
    # GIVEN a unit nested twice, its function's Timeout and lease parameters passed from the root's Plazos
    # WHEN the unit is linted alone THEN the relations hold on the root's numbers
    assert _de_la_unidad(tmp_path, "E9114") == []
    # AND one nesting's lease declared at its Timeout fails for that nesting only, naming it
    corta = _RAIZ_CON_UNIDADES.replace(
        'CorreoFunction: {TimeoutS: 30, LeaseS: "90"}',
        'CorreoFunction: {TimeoutS: 30, LeaseS: "30"}',
    )
    (mensaje,) = _de_la_unidad(tmp_path, "E9114", corta)
    assert "Timeout 30 s is not below its IDEMPOTENCY_LEASE_S 30 s" in mensaje and "nested as Correo" in mensaje
    # AND a parent passing a literal, or its own parameter, is a bound written outside Plazos
    literal = _RAIZ_CON_UNIDADES.replace("LeaseS: !FindInMap [Plazos, ErpFunction, LeaseS]", 'LeaseS: "90"')
    (mensaje,) = _de_la_unidad(tmp_path, "E9114", literal)
    assert "written outside Mappings.Plazos" in mensaje and "nested as Erp" in mensaje
    parametro = _RAIZ_CON_UNIDADES.replace("LeaseS: !FindInMap [Plazos, ErpFunction, LeaseS]", "LeaseS: !Ref LeaseErp")
    (mensaje,) = _de_la_unidad(tmp_path, "E9114", parametro)
    assert "IDEMPOTENCY_LEASE_S" in mensaje and "nested as Erp" in mensaje


def test_e9114_on_a_unit_no_template_nests_reads_only_what_it_writes(tmp_path):
    # GIVEN the same unit with no root above it WHEN linted THEN its bounds are parameters, not Plazos
    (mensaje,) = _de_la_unidad(tmp_path, "E9114", None)
    assert "written outside Mappings.Plazos" in mensaje


@pytest.mark.parametrize(("recepciones", "peor"), [(3, None), (4, 20)])
def test_e9111_multiplies_the_redrive_count_the_parent_passes_a_unit_linted_alone(tmp_path, recepciones, peor):
    # GIVEN the unit's queue's maxReceiveCount a parameter the root passes from its Mappings (5 HTTP attempts)
    raiz = _RAIZ_CON_UNIDADES.replace("maxReceiveCount: 3}", f"maxReceiveCount: {recepciones}}}")
    # WHEN the unit is linted alone
    e9111 = _de_la_unidad(tmp_path, "E9111", raiz)
    # THEN 5 x 3 = 15 passes, 5 x 4 = 20 fails, for each nesting, naming it
    if peor is None:
        assert e9111 == []
    else:
        assert all(f"Worst case {peor} attempts" in m for m in e9111)
        assert sorted(m.rsplit("nested as ", 1)[-1] for m in e9111) == ["Correo)", "Erp)"]


def test_e9111_takes_a_redrive_count_nobody_passes_as_the_most_sqs_allows(tmp_path):
    # GIVEN the same unit with no root above it WHEN linted THEN its count is unknown, so not 1: E9111 fires
    (mensaje,) = _de_la_unidad(tmp_path, "E9111", None)
    assert "maxReceiveCount unknown, up to 1000" in mensaje


def test_worst_case_lesson_5x4x4_is_80():
    # GIVEN the lesson's numbers: SDK 5, maxReceiveCount 4, workflow Retry MaxAttempts 3 (1 + 3 = 4),
    # the queue redelivering what the workflow fails (a synchronous Pipe)
    plantilla = read(PLANTILLAS / "bueno.yaml")
    plantilla["Globals"]["Function"]["Environment"]["Variables"]["HTTP_MAX_ATTEMPTS"] = "5"
    tubo = plantilla["Resources"]["PipePedidos"]["Properties"]
    tubo["TargetParameters"]["StepFunctionStateMachineParameters"]["InvocationType"] = "REQUEST_RESPONSE"
    # WHEN computing the worst case
    rutas = {r.dependencia: r for r in peor_caso(plantilla, PLANTILLAS)}
    # THEN the charge's route is 5 x 4 x 4 = 80 and names every hop
    assert rutas["pasarela"].total == 80
    assert rutas["pasarela"].pasos[:3] == (
        "Pedidos (maxReceiveCount 4)",
        "PipePedidos (REQUEST_RESPONSE)",
        "Flujo:Cobrar (1+retries = 4)",
    )


def test_worst_case_good_template_paths_and_totals():
    # GIVEN the good template WHEN computing THEN one route per consumer, FIRE_AND_FORGET not multiplied,
    # Lambda-service-only retriers not counted, undeclared HTTP attempts assumed 2
    plantilla = read(PLANTILLAS / "bueno.yaml")
    rutas = [
        (r.dependencia, r.intentos_http, r.recepciones, r.intentos_flujo, r.http_supuesto)
        for r in peor_caso(plantilla, PLANTILLAS)
    ]
    assert rutas == [("erp", 2, 4, 1, False), ("pasarela", 2, 1, 4, False), ("Nativa", 2, 3, 1, True)]


def test_worst_case_declared_errors_without_a_call_do_not_count():
    # GIVEN a retrier on CircuitoAbierto (fail fast: the gateway is not called) added to Cobrar
    plantilla = read(PLANTILLAS / "bueno.yaml")
    definicion = json.loads((PLANTILLAS / "bueno.asl.json").read_text())
    definicion["States"]["Cobrar"]["Retry"].append(
        {"ErrorEquals": ["CircuitoAbierto"], "MaxAttempts": 2, "MaxDelaySeconds": 300, "JitterStrategy": "FULL"}
    )
    maquina = plantilla["Resources"]["Flujo"]["Properties"]
    del maquina["DefinitionUri"]
    maquina["Definition"] = definicion

    def cobro() -> int:
        return next(r.intentos_flujo for r in peor_caso(plantilla, PLANTILLAS) if r.dependencia == "pasarela")

    # WHEN undeclared THEN it counts (1 + 3 + 2); WHEN the function declares it THEN it does not (1 + 3)
    assert cobro() == 6
    plantilla["Resources"]["Cobro"]["Metadata"]["Mensajeria"]["ErroresSinLlamada"] = ["CircuitoAbierto"]
    assert cobro() == 4


def test_worst_case_loop_visits_multiply_and_throttling_does_not_count():
    # GIVEN Cobrar asked again in a bounded loop (VisitasMaximas 3) and retrying throttling 6 times
    plantilla = read(PLANTILLAS / "bueno.yaml")
    definicion = json.loads((PLANTILLAS / "bueno.asl.json").read_text())
    definicion["States"]["Cobrar"]["Retry"].append(
        {
            "ErrorEquals": ["Lambda.TooManyRequestsException"],
            "MaxAttempts": 6,
            "MaxDelaySeconds": 60,
            "JitterStrategy": "FULL",
        }
    )
    maquina = plantilla["Resources"]["Flujo"]
    del maquina["Properties"]["DefinitionUri"]
    maquina["Properties"]["Definition"] = definicion
    maquina["Metadata"] = {"Mensajeria": {"VisitasMaximas": {"Cobrar": 3}}}
    # WHEN computing
    (ruta,) = [r for r in peor_caso(plantilla, PLANTILLAS) if r.dependencia == "pasarela"]
    # THEN a throttled invocation never reaches the gateway (not counted) and each visit multiplies: 2 x 1 x 4 x 3
    assert (ruta.intentos_flujo, ruta.visitas, ruta.total) == (4, 3, 24)
    assert "3 visits" in ruta.describir()


@pytest.mark.slow
def test_cfnlintrc_cli_and_sam_validate_run_the_package(tmp_path):
    # GIVEN the repo's .cfnlintrc and a bad template inside the repo (paths are relative to the root)
    malo = RAIZ / f".tmp-reglas-{tmp_path.name}.yaml"
    malo.write_text((PLANTILLAS / "E9101_malo.yaml").read_text())
    venv = RAIZ / ".venv" / "bin"
    try:
        # WHEN cfn-lint and sam validate --lint run from the root with no --append-rules
        cli = subprocess.run([venv / "cfn-lint", malo.name], cwd=RAIZ, capture_output=True, text=True, timeout=120)
        sam = subprocess.run(
            [venv / "sam", "validate", "--lint", "-t", malo.name],
            cwd=RAIZ,
            capture_output=True,
            text=True,
            timeout=180,
            env={"PATH": f"{venv}:/usr/bin:/bin", "HOME": str(tmp_path)},
        )
    finally:
        malo.unlink()
    # THEN both report E9101
    assert "E9101" in cli.stdout
    assert "E9101" in sam.stdout + sam.stderr


@pytest.mark.slow
def test_cfnlintrc_runs_the_pack_from_a_cfn_lint_that_does_not_have_it_installed(tmp_path):
    # GIVEN a cfn-lint that cannot import cfn_lint_mensajeria: the venv's site-packages without its
    # .pth files (-S), where the pack's editable install lives, as a global `pip install cfn-lint` would be
    import sysconfig

    malo = RAIZ / f".tmp-reglas-{tmp_path.name}.yaml"
    malo.write_text((PLANTILLAS / "E9101_malo.yaml").read_text())
    sitio = sysconfig.get_paths()["purelib"]
    sin_pack = f"import sys; sys.path.append({sitio!r}); from cfnlint.runner import main; sys.exit(main())"
    python = RAIZ / ".venv" / "bin" / "python"
    try:
        comprobar = subprocess.run([python, "-S", "-c", "import cfn_lint_mensajeria"], capture_output=True, timeout=60)
        # WHEN it lints from the root with only the repo's .cfnlintrc
        cli = subprocess.run(
            [python, "-S", "-c", sin_pack, malo.name],
            cwd=RAIZ,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        malo.unlink()
    # THEN the pack is really absent there, and its rule still reports, with no traceback
    assert comprobar.returncode != 0
    assert "E9101" in cli.stdout, cli.stderr
    assert "Traceback" not in cli.stderr


def _problemas_de_la_pila(raiz: dict, saga: dict | None = None) -> list[tuple[list, str]]:
    """E9114's problems in the root document ``raiz`` and in the durable saga's unit (``saga``, else as written)
    as that root nests it with WorkflowEngine=DurableFunction: what cfn-lint reports, file by file."""
    from cfn_lint_mensajeria.tiempos import problemas
    from template_model import Template, as_nested
    from template_model.bounds import time_bounds

    pila = Template.from_document(raiz, RAIZ / "template.yaml", parameters={"WorkflowEngine": "DurableFunction"})
    unidad = pila.units()["PedidoDurable"]
    anidada = as_nested(saga if saga is not None else unidad.doc, unidad)
    return problemas(time_bounds(raiz, RAIZ)) + problemas(time_bounds(anidada, unidad.folder))


def _saga() -> dict:
    """The durable saga's unit as written (WorkflowEngine=DurableFunction, decision 0140)."""
    return read(RAIZ / "unidades" / "pedido_durable.yaml")


def test_e9114_project_bounds_hold_and_a_raised_timeout_without_its_lease_fails(tmp_path):
    # GIVEN the project's template: Mappings.Plazos declares the bounds, the functions and the ASL use them
    from dataclasses import replace

    from cfn_lint_mensajeria.tiempos import problemas
    from template_model.bounds import BOUNDS_MAPPING, time_bounds

    def plantilla() -> dict:
        return read(RAIZ / "template.yaml")

    actuales = time_bounds(plantilla(), RAIZ)
    # WHEN checked THEN every relation holds, and it did read the bounds it relates
    assert problemas(actuales) == []
    flujo = actuales.workflows["ProcesarPedido"]
    assert flujo.waits_after_lease and flujo.claim_function in actuales.leases_s
    # AND every function with a lease reads its Timeout and lease from the declaration (no literal beside it)
    assert actuales.literals == {}
    assert actuales.leases_s == {f: int(actuales.declared[f]["LeaseS"]) for f in actuales.leases_s}
    assert _problemas_de_la_pila(plantilla()) == []
    # AND raising CobroFunction's declared Timeout past its lease (the lease left as it is) fails, naming both,
    # for each function that reads that entry (the durable saga's, in its unit: the charge runs inside it)
    p = plantilla()
    p["Mappings"][BOUNDS_MAPPING]["CobroFunction"]["TimeoutS"] = actuales.leases_s["CobroFunction"] + 20
    encontrados = _problemas_de_la_pila(p)
    assert sorted(ruta[1] for ruta, _ in encontrados) == ["CobroFunction", "PedidoDurableFunction"]
    assert all("IDEMPOTENCY_LEASE_S" in mensaje for _, mensaje in encontrados)
    # AND a literal Timeout beside the declaration fails even while its relations hold
    p = plantilla()
    p["Resources"]["CobroFunction"]["Properties"]["Timeout"] = actuales.timeouts_s["CobroFunction"]
    ((ruta, mensaje),) = problemas(time_bounds(p, RAIZ))
    assert ruta[:2] == ["Resources", "CobroFunction"] and f"outside Mappings.{BOUNDS_MAPPING}" in mensaje
    # AND so does a re-ask Wait that no longer outlasts the lease (declared and written so in the ASL)
    ts = time_bounds(plantilla(), RAIZ)
    ts.declared["ProcesarPedido"]["EsperarFinBloqueo"] = ts.leases_s["CobroFunction"]
    corta = {**flujo.waits_s, "EsperarFinBloqueo": ts.leases_s["CobroFunction"]}
    ts.workflows["ProcesarPedido"] = replace(flujo, waits_s=corta)
    ((_, mensaje),) = problemas(ts)
    assert "EsperarFinBloqueo" in mensaje and "does not outlast" in mensaje
    # AND the re-ask Wait reads its declaration: lowering the declared seconds below the lease fails, on both
    # engines (the durable saga's RECONSULTA_WAIT_S reads the same entry)
    p = plantilla()
    p["Mappings"][BOUNDS_MAPPING]["ProcesarPedido"]["EsperarFinBloqueo"] = str(actuales.leases_s["CobroFunction"] - 1)
    encontrados = _problemas_de_la_pila(p)
    assert sorted(ruta[1] for ruta, _ in encontrados) == ["PedidoDurableFunction", "ProcesarPedido"]
    assert all("does not outlast" in mensaje for _, mensaje in encontrados)
    # AND so does a substitution that no longer reads it (a literal beside the declaration)
    p = plantilla()
    p["Resources"]["ProcesarPedido"]["Properties"]["DefinitionSubstitutions"]["EsperarFinBloqueoS"] = "130"
    ((ruta, mensaje),) = problemas(time_bounds(p, RAIZ))
    assert ruta[-1] == "DefinitionSubstitutions" and "EsperarFinBloqueo" in mensaje and "not its declaration" in mensaje
    # AND an ASL whose TimeoutSeconds or a literal Wait was changed without its declaration fails, naming each
    asl = json.loads((RAIZ / "statemachines" / "procesar_pedido.asl.json").read_text())
    asl["TimeoutSeconds"] += 1
    asl["States"]["EsperarFinBloqueo"]["Seconds"] = flujo.waits_s["EsperarFinBloqueo"] + 1
    (tmp_path / "statemachines").mkdir()
    (tmp_path / "statemachines" / "procesar_pedido.asl.json").write_text(json.dumps(asl))
    mensajes = sorted(m for _, m in problemas(time_bounds(plantilla(), tmp_path)))
    assert len(mensajes) == 2 and all("differs from its declaration" in m for m in mensajes)
    assert "EsperarFinBloqueo" in mensajes[0] and "TimeoutSeconds" in mensajes[1]


def test_e9114_reads_the_bounds_as_written_in_a_template_with_loops() -> None:
    # GIVEN the project's template with its consumers written as Fn::ForEach loops (decision 0130), beside it:
    # cfn-lint's transform then resolves every Fn::FindInMap it can, the bounds' reads from Plazos included
    import uuid

    from template_model import Template

    from tests.plantilla_en_bucle import consumidores_en_bucle

    copia = RAIZ / f".template-en-bucle-{uuid.uuid4().hex[:8]}.json"
    copia.write_text(json.dumps(consumidores_en_bucle(Template(path=RAIZ / "template.yaml"))))
    try:
        # WHEN cfn-lint checks it with the pack
        e9114 = [str(m) for m in _lint(copia) if m.rule.id == "E9114"]
    finally:
        copia.unlink()
    # THEN the bounds are read where they are declared, as in the template written out: nothing to report
    assert e9114 == []


def _lint_text(texto: str) -> list[str]:
    """The pack's E9114 on a template's text, as ``sam validate --lint`` runs cfn-lint: no file name."""
    from cfnlint.api import ManualArgs, lint

    return [str(m) for m in lint(texto, config=ManualArgs(append_rules=[RULES_DIR])) if m.rule.id == "E9114"]


def test_e9114_in_sam_validate_reads_the_bounds_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the template's text (it loops with Fn::ForEach), and the consumers' unit as the root nests it (its bounds
    # the root's Fn::FindInMap into Plazos) with its consumers' functions looped too; sam validate hands cfn-lint
    # the text alone, whose transform resolves every bound's Fn::FindInMap into a literal
    from template_model import Template, as_nested

    from tests.plantilla_en_bucle import consumidores_en_bucle

    monkeypatch.chdir(RAIZ)  # the state machine's DefinitionUri, as sam validate resolves it
    texto = (RAIZ / "template.yaml").read_text()
    unidad = Template(path=RAIZ / "template.yaml").units()["Consumidores"]
    anidada = Template.from_document(as_nested(unidad.doc, unidad), unidad.path)
    en_bucle = json.dumps(consumidores_en_bucle(anidada))
    # WHEN linted as sam validate --lint does THEN the bounds read from Plazos are not taken for literals
    assert _lint_text(texto) == []
    assert _lint_text(en_bucle) == []
    # AND a bound written as a literal beside its declaration is still caught, in a loop or out of one
    fuera = texto.replace("Timeout: !FindInMap [Plazos, CobroFunction, TimeoutS]", "Timeout: 40")
    assert any("CobroFunction: Timeout written outside Mappings.Plazos" in m for m in _lint_text(fuera))
    dentro = en_bucle.replace('{"Fn::FindInMap": ["Plazos", "ErpFunction", "LeaseS"]}', '"90"')
    assert dentro != en_bucle and '"Fn::ForEach::' in dentro
    assert any("ErpFunction: IDEMPOTENCY_LEASE_S written outside" in m for m in _lint_text(dentro))


def test_e9114_relates_the_durable_sagas_claim_and_re_ask_to_its_execution_and_lease() -> None:
    # GIVEN the durable saga's unit (WorkflowEngine=DurableFunction, decision 0140) as the root nests it: its
    # Metadata names the claim's lease and the re-ask wait, both variables of the function, which the root passes
    # from Plazos
    from template_model import Template, as_nested
    from template_model.bounds import BOUNDS_MAPPING, time_bounds

    def plantilla() -> dict:
        return read(RAIZ / "template.yaml")

    pila = Template(path=RAIZ / "template.yaml", parameters={"WorkflowEngine": "DurableFunction"})
    unidad = pila.units()["PedidoDurable"]
    actuales = time_bounds(as_nested(unidad.doc, unidad), unidad.folder)
    saga = actuales.durables["PedidoDurableFunction"]
    assert (saga.claim_variable, saga.waits_after_lease) == (
        "RECLAMO_LEASE_S",
        {"RECONSULTA_WAIT_S": "PedidoDurableFunction"},
    )
    assert (
        saga.claim_lease_s > saga.timeout_s
        and saga.waits_s["RECONSULTA_WAIT_S"] > actuales.leases_s["PedidoDurableFunction"]
    )
    # WHEN the execution's bound is raised to the claim's lease THEN the claim would lapse mid-execution
    p = plantilla()
    p["Mappings"][BOUNDS_MAPPING]["ProcesarPedido"]["TimeoutSeconds"] = saga.claim_lease_s
    mensajes = [m for ruta, m in _problemas_de_la_pila(p) if ruta[1] == "PedidoDurableFunction"]
    assert mensajes == [
        f"PedidoDurableFunction: the claim's lease (RECLAMO_LEASE_S {saga.claim_lease_s}) must exceed "
        f"DurableConfig.ExecutionTimeout ({saga.claim_lease_s}): a live execution would lose its order's claim"
    ]
    # AND a re-ask wait the charge's lease outlasts fails, as the state machine's Wait does
    p = plantilla()
    p["Mappings"][BOUNDS_MAPPING]["CobroFunction"]["LeaseS"] = str(saga.waits_s["RECONSULTA_WAIT_S"])
    mensajes = [m for ruta, m in _problemas_de_la_pila(p) if ruta[1] == "PedidoDurableFunction"]
    assert any(m.startswith("PedidoDurableFunction: RECONSULTA_WAIT_S (130 s) does not outlast") for m in mensajes)
    # AND a literal in the unit beside the declaration fails even while the relations hold
    escrita = _saga()
    escrita["Resources"]["PedidoDurableFunction"]["Properties"]["Environment"]["Variables"]["RECLAMO_LEASE_S"] = "7500"
    ((ruta, mensaje),) = _problemas_de_la_pila(plantilla(), escrita)
    assert ruta[1] == "PedidoDurableFunction" and mensaje.startswith(
        f"PedidoDurableFunction: RECLAMO_LEASE_S written outside Mappings.{BOUNDS_MAPPING}"
    )
    # AND a relation naming a variable the function does not have is reported, not skipped
    escrita = _saga()
    escrita["Resources"]["PedidoDurableFunction"]["Metadata"]["Mensajeria"]["Tiempos"]["EsperasTrasBloqueo"] = {
        "ESPERA_QUE_NO_EXISTE_S": "PedidoDurableFunction"
    }
    mensajes = [m for _, m in _problemas_de_la_pila(plantilla(), escrita)]
    assert any("ESPERA_QUE_NO_EXISTE_S" in m and "no seconds" in m for m in mensajes)


def test_e9114_on_the_durable_sagas_unit_follows_the_literal_a_root_passes(tmp_path: Path) -> None:
    # GIVEN a copy of the root passing the durable claim's lease as a literal below the execution's bound, and the
    # unit beside it as the root nests it
    texto = (RAIZ / "template.yaml").read_text()
    roto = texto.replace("ReclamoLeaseS: !FindInMap [Plazos, ReclamoFunction, LeaseS]", 'ReclamoLeaseS: "7000"')
    assert roto != texto
    (tmp_path / "unidades").mkdir()
    (tmp_path / "template.yaml").write_text(roto)
    shutil.copy(RAIZ / "unidades" / "pedido_durable.yaml", tmp_path / "unidades")
    # WHEN the unit is linted alone, as make lint does THEN both the literal and the broken relation are reported
    mensajes = [m.message for m in _lint(tmp_path / "unidades" / "pedido_durable.yaml") if m.rule.id == "E9114"]
    assert any("RECLAMO_LEASE_S written outside Mappings.Plazos" in m for m in mensajes)
    assert any("the claim's lease (RECLAMO_LEASE_S 7000) must exceed" in m for m in mensajes)
