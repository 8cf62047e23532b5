"""What the template review found (issue 16), each pinned so it cannot come back.

No linter reports these: a wrong key-policy condition or a missing delivery alarm deploys
cleanly and loses messages in silence. The checks read ``template.yaml`` as written (the
local resolver for names and ARNs) and the helpers of the project's own rule pack.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

import pytest
from cfn_lint_mensajeria.recursos import dead_letter_queues, ref_id, sam_events
from sam_emulator.template import Template

_NOMBRES = (
    "AliasName",
    "TopicName",
    "QueueName",
    "TableName",
    "FunctionName",
    "LayerName",
    "LogGroupName",
    "AlarmName",
    "DashboardName",
    "ArchiveName",
    "DBClusterIdentifier",
    "DBProxyName",
    "ServerlessCacheName",
    "UserGroupId",
    "UserId",
    "DBInstanceIdentifier",
    "DBSubnetGroupName",
    "Name",
)


@pytest.fixture(scope="module")
def plantilla() -> Template:
    return Template()


def _recursos(p: Template, *tipos: str) -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in p.resources.items() if r.get("Type") in tipos}


def _props(r: dict[str, Any]) -> dict[str, Any]:
    return r.get("Properties") or {}


def _sub_texto(valor: Any) -> str | None:
    if isinstance(valor, dict) and "Fn::Sub" in valor:
        arg = valor["Fn::Sub"]
        return arg[0] if isinstance(arg, list) else arg
    return None


def _declaracion_clave(p: Template, servicio: str) -> dict[str, Any]:
    politica = _props(p.resources["DatosKey"])["KeyPolicy"]
    encontradas = []
    for st in politica["Statement"]:
        principales = (st.get("Principal") or {}).get("Service", [])
        principales = p.resolve(principales if isinstance(principales, list) else [principales])
        if servicio in principales:
            encontradas.append(st)
    assert len(encontradas) <= 1, f"{servicio} appears in more than one key-policy statement"
    return encontradas[0] if encontradas else {}


def _condiciones(st: dict[str, Any]) -> dict[str, Any]:
    return {k: v for op in (st.get("Condition") or {}).values() for k, v in op.items()}


def test_names_every_named_resource_carries_the_name_suffix(plantilla: Template) -> None:
    # GIVEN every resource that sets its own physical name (two stages in one account must not collide)
    sin_sufijo = []
    for lid, r in plantilla.resources.items():
        for prop in _NOMBRES:
            valor = _props(r).get(prop)
            if valor is None or ref_id(valor) in plantilla.resources:
                continue  # not set, or a reference to another resource's name
            # WHEN its name is read THEN it is a !Sub that appends ${NameSuffix}
            texto = _sub_texto(valor)
            if texto is None or "${NameSuffix}" not in texto:
                sin_sufijo.append(f"{lid}.{prop}")
    assert sin_sufijo == []


def test_key_policy_eventbridge_statement_has_no_source_conditions(plantilla: Template) -> None:
    # GIVEN the key policy statement for EventBridge rules delivering to encrypted queues
    st = _declaracion_clave(plantilla, "events.amazonaws.com")
    # THEN it allows what SQS needs from the sender and carries no aws:Source* condition: the KMS
    # requests of those deliveries do not carry the keys, so a condition denies every delivery
    assert {"kms:GenerateDataKey", "kms:Decrypt"} <= set(st["Action"])
    assert not [k for k in _condiciones(st) if k.lower().startswith("aws:source")]


def test_key_policy_sns_statement_names_every_topic_feeding_a_queue(plantilla: Template) -> None:
    # GIVEN every SNS topic with an SQS subscription (its deliveries and redrives go to encrypted queues)
    temas = {
        ref_id(_props(s)["TopicArn"])
        for s in _recursos(plantilla, "AWS::SNS::Subscription").values()
        if _props(s).get("Protocol") == "sqs"
    }
    st = _declaracion_clave(plantilla, "sns.amazonaws.com")
    fuentes = plantilla.resolve(_condiciones(st)["aws:SourceArn"])
    fuentes = fuentes if isinstance(fuentes, list) else [fuentes]
    # THEN the sns.amazonaws.com statement's aws:SourceArn matches each of those topics by name
    for tema in temas:
        nombre = plantilla.resolve(_props(plantilla.resources[tema])["TopicName"])
        arn = f"arn:aws:sns:{plantilla.region}:{plantilla.account}:{nombre}"
        assert any(fnmatch.fnmatchcase(arn, f) for f in fuentes), f"{tema}: {arn} not in {fuentes}"
    assert {"kms:GenerateDataKey*", "kms:Decrypt"} <= set(st["Action"])


def test_key_policy_cloudwatch_statement_matches_every_alarm_name(plantilla: Template) -> None:
    # GIVEN the statement letting CloudWatch alarms publish to the encrypted alerts topic
    st = _declaracion_clave(plantilla, "cloudwatch.amazonaws.com")
    patron = plantilla.resolve(_condiciones(st)["aws:SourceArn"])
    # THEN every alarm of the stack matches its aws:SourceArn pattern (a renamed alarm would page nobody)
    for lid, alarma in _recursos(plantilla, "AWS::CloudWatch::Alarm").items():
        nombre = plantilla.resolve(_props(alarma)["AlarmName"])
        arn = f"arn:aws:cloudwatch:{plantilla.region}:{plantilla.account}:alarm:{nombre}"
        assert fnmatch.fnmatchcase(arn, patron), f"{lid}: {arn} does not match {patron}"


def test_key_policy_services_acting_through_roles_get_no_service_grant(plantilla: Template) -> None:
    # GIVEN Pipes and Step Functions, which call KMS with their execution roles
    # THEN the key policy grants their service principals nothing (least privilege)
    assert _declaracion_clave(plantilla, "pipes.amazonaws.com") == {}
    assert _declaracion_clave(plantilla, "states.amazonaws.com") == {}


def _alarmas_de(p: Template, namespace: str, metrica: str) -> list[dict[str, Any]]:
    return [
        _props(a)
        for a in _recursos(p, "AWS::CloudWatch::Alarm").values()
        if _props(a).get("Namespace") == namespace
        and _props(a).get("MetricName") == metrica
        and _props(a).get("AlarmActions")
    ]


def _dimension(p: Template, alarma: dict[str, Any], nombre: str) -> Any:
    for d in alarma.get("Dimensions", []):
        if d["Name"] == nombre:
            return p.resolve(d["Value"])
    return None


@pytest.mark.parametrize("metrica", ["FailedInvocations", "InvocationsFailedToBeSentToDlq"])
def test_alarms_every_bus_rule_has_a_delivery_failure_alarm(plantilla: Template, metrica: str) -> None:
    # GIVEN every rule with targets on the stack's bus
    reglas = {lid: r for lid, r in _recursos(plantilla, "AWS::Events::Rule").items() if _props(r).get("Targets")}
    vigiladas = {_dimension(plantilla, a, "RuleName") for a in _alarmas_de(plantilla, "AWS/Events", metrica)}
    # THEN each rule's name is the RuleName dimension of an alarm on the metric, which notifies someone
    faltan = [lid for lid, r in reglas.items() if plantilla.resolve(_props(r)["Name"]) not in vigiladas]
    assert reglas and faltan == []


def test_alarms_every_topic_feeding_queues_has_a_failed_notifications_alarm(plantilla: Template) -> None:
    temas = {
        ref_id(_props(s)["TopicArn"])
        for s in _recursos(plantilla, "AWS::SNS::Subscription").values()
        if _props(s).get("Protocol") == "sqs"
    }
    alarmas = _alarmas_de(plantilla, "AWS/SNS", "NumberOfNotificationsFailed")
    vigilados = {ref_id(a["Dimensions"][0]["Value"]) for a in alarmas}
    assert temas and temas <= vigilados


def test_alarms_every_pipe_has_an_execution_failed_alarm(plantilla: Template) -> None:
    pipes = set(_recursos(plantilla, "AWS::Pipes::Pipe"))
    vigilados = {
        ref_id(a["Dimensions"][0]["Value"]) for a in _alarmas_de(plantilla, "AWS/EventBridge/Pipes", "ExecutionFailed")
    }
    assert pipes and pipes <= vigilados


def test_alarms_page_somebody_through_an_email_subscription_parameter(plantilla: Template) -> None:
    # GIVEN an alerts e-mail at deploy time
    con_email = Template(parameters={"AlertsEmail": "guardia@example.com"})
    ((_lid, sub),) = [
        (k, r)
        for k, r in _recursos(con_email, "AWS::SNS::Subscription").items()
        if _props(r).get("Protocol") == "email"
    ]
    # THEN the alerts topic gets that subscription; without one, none is created
    assert con_email.condition(sub["Condition"]) and not plantilla.condition(sub["Condition"])
    assert _props(sub)["TopicArn"]["Fn::If"][1] == {"Ref": "AlertasTopic"}
    assert con_email.resolve(_props(sub)["Endpoint"]) == "guardia@example.com"


def _sentencias(rol: dict[str, Any]) -> list[dict[str, Any]]:
    """Every statement the role may hold: both branches of a conditional one (``!If [c, st, NoValue]``)."""
    sentencias = []
    for pol in _props(rol).get("Policies", []):
        for st in pol["PolicyDocument"]["Statement"]:
            ramas = st["Fn::If"][1:] if "Fn::If" in st else [st]
            sentencias += [r for r in ramas if "Action" in r]
    return sentencias


def test_sqs_pollers_have_own_role_reading_only_their_queues(plantilla: Template) -> None:
    # GIVEN every function with an SQS event (SAM's generated role would get receive/delete on every queue)
    pollers = {
        lid: r
        for lid, r in _recursos(plantilla, "AWS::Serverless::Function").items()
        if any(t == "SQS" for _, _, t in sam_events(r))
    }
    assert pollers
    for lid, funcion in pollers.items():
        # THEN it has an explicit role, and that role receives/deletes only on the queues of its events
        rol_id = ref_id(_props(funcion).get("Role"))
        assert rol_id in plantilla.resources, f"{lid} uses SAM's generated role (AWSLambdaSQSQueueExecutionRole)"
        rol = plantilla.resources[rol_id]
        colas = {ref_id(ev["Queue"]) for _, ev, t in sam_events(funcion) if t == "SQS"}
        leidas: set[str | None] = set()
        for st in _sentencias(rol):
            acciones = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            if {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:*"} & set(acciones):
                recursos = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
                leidas |= {ref_id(r) if r != "*" else "*" for r in recursos}
        assert leidas == colas, f"{lid} reads {leidas}, its events are {colas}"
        assert not [m for m in _props(rol).get("ManagedPolicyArns", []) if "SQS" in str(m)]


def test_log_groups_every_function_has_a_declared_encrypted_group_with_retention(plantilla: Template) -> None:
    grupos = _recursos(plantilla, "AWS::Logs::LogGroup")
    por_nombre = {plantilla.resolve(_props(g)["LogGroupName"]): lid for lid, g in grupos.items()}
    for lid, funcion in _recursos(plantilla, "AWS::Serverless::Function").items():
        # GIVEN a function WHEN its log group is looked up (LoggingConfig or its /aws/lambda/<name> group)
        grupo = ref_id((_props(funcion).get("LoggingConfig") or {}).get("LogGroup"))
        grupo = grupo or por_nombre.get(f"/aws/lambda/{plantilla.resolve(_props(funcion)['FunctionName'])}")
        # THEN it is declared, keeps events LogRetentionDays and is encrypted with the data key
        assert grupo in grupos, f"{lid} logs to an implicit group (kept forever, unencrypted)"
        assert _props(grupos[grupo]).get("RetentionInDays"), grupo
        assert _props(grupos[grupo]).get("KmsKeyId"), grupo


def test_reserved_concurrency_is_behind_the_parameter(plantilla: Template) -> None:
    # GIVEN every function that reserves concurrency
    for lid, funcion in _recursos(plantilla, "AWS::Serverless::Function").items():
        reservada = _props(funcion).get("ReservedConcurrentExecutions")
        if reservada is None:
            continue
        # THEN the reservation disappears with ReservedConcurrency=disabled (accounts with a low quota)
        assert isinstance(reservada, dict) and reservada.get("Fn::If", [None])[0] == "ReserveConcurrency", lid
        assert reservada["Fn::If"][2] == {"Ref": "AWS::NoValue"}, lid


def test_dlqs_are_retained_on_delete_and_replace(plantilla: Template) -> None:
    # GIVEN every dead-letter queue (redrive targets, rule/pipe/subscription DLQs)
    dlqs = dead_letter_queues(plantilla.doc)
    assert dlqs
    # THEN deleting or replacing the stack keeps the messages in them
    for lid in dlqs:
        r = plantilla.resources[lid]
        assert (r.get("DeletionPolicy"), r.get("UpdateReplacePolicy")) == ("Retain", "Retain"), lid


@pytest.mark.parametrize("url", ["http://erp.example/api", "ftp://x", "https://a b"])
def test_provider_url_parameters_refuse_anything_but_https(plantilla: Template, url: str) -> None:
    parametros = {k: v for k, v in plantilla.doc["Parameters"].items() if k.endswith("Url")}
    assert parametros
    for nombre, definicion in parametros.items():
        patron = re.compile(definicion["AllowedPattern"])
        assert patron.fullmatch("https://erp.mercadofresco.example/api"), nombre
        assert patron.fullmatch(""), f"{nombre}: empty must stay valid (sandbox provider)"
        assert not patron.fullmatch(url), f"{nombre} accepts {url}"


def test_carts_table_an_existing_stream_is_reused_instead_of_a_new_table() -> None:
    # GIVEN the stream ARN of an existing carts table
    arn = "arn:aws:dynamodb:eu-south-2:123456789012:table/mercadofresco-carritos/stream/2026-01-01T00:00:00.000"
    p = Template(parameters={"CarritosStreamArn": arn})
    tabla = p.resources["TablaCarritos"]
    # THEN no table is created and the pipe reads the given stream
    assert not p.condition(tabla["Condition"]) and Template().condition(tabla["Condition"])
    assert p.resolve(_props(p.resources["PipeCarritos"])["Source"]) == arn
    assert re.fullmatch(p.doc["Parameters"]["CarritosStreamArn"]["AllowedPattern"], arn)


def test_sqs_pollers_sam_transform_attaches_no_account_wide_queue_policy(
    plantilla: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the template through SAM's own transform (what CloudFormation deploys), code URIs stubbed
    import json

    from samtranslator.translator.transform import transform

    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-south-2")
    texto = json.dumps(plantilla.doc)
    for clave in ("CodeUri", "DefinitionUri", "ContentUri"):
        texto = re.sub(rf'"{clave}": "[^"]*"', f'"{clave}": "s3://b/k"', texto)

    class _SinPoliticasGestionadas:
        def load(self) -> dict[str, str]:
            return {}

    generado = transform(json.loads(texto), {}, _SinPoliticasGestionadas())
    # THEN no generated role carries AWSLambdaSQSQueueExecutionRole (receive/delete on every queue)
    roles = {lid: r for lid, r in generado["Resources"].items() if r["Type"] == "AWS::IAM::Role"}
    assert roles
    assert [lid for lid, r in roles.items() if "SQSQueueExecutionRole" in json.dumps(r)] == []
