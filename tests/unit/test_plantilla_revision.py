"""What the template review found (issue 16), each pinned so it cannot come back.

No linter reports these: a wrong key-policy condition or a missing delivery alarm deploys
cleanly and loses messages in silence. The checks read ``template.yaml`` as written (the
local resolver for names and ARNs) and the helpers of the project's own rule pack.
"""

from __future__ import annotations

import fnmatch
import json
import re
from typing import Any

import pytest
from cfn_lint_mensajeria.recursos import dead_letter_queues, ref_id, sam_events
from least_privilege.evaluador import Decision, Solicitud, decidir
from least_privilege.roles import plantilla_transformada, politicas_por_principal
from mercadofresco.consumer.queues import MAX_DETAIL_CHARS
from mercadofresco.outbox.config import OutboxConfig
from mercadofresco.payload_limits import SNS_MESSAGE_MAX_BYTES, SQS_MESSAGE_MAX_BYTES
from mercadofresco_local import RAIZ
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
        and p.resolve(_props(a).get("MetricName")) == metrica  # a looped alarm's from Mappings
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
    # GIVEN every topic a queue subscribes to, in the root or in a unit (which names it by what the root passes)
    temas = set()
    for _, unidad in plantilla.walk():
        for s in _recursos(unidad, "AWS::SNS::Subscription").values():
            if _props(s).get("Protocol") == "sqs":
                donde, escrito = unidad.written_above(_props(s)["TopicArn"])
                temas.add(f"{donde.prefix}{ref_id(escrito)}")
    # THEN each has an alarm on its failed notifications
    alarmas = _alarmas_de(plantilla, "AWS/SNS", "NumberOfNotificationsFailed")
    vigilados = {ref_id(a["Dimensions"][0]["Value"]) for a in alarmas}
    assert temas and temas <= vigilados


@pytest.mark.parametrize("motor", ["StepFunctions", "DurableFunction"])
def test_alarms_every_pipe_has_an_execution_failed_alarm(motor: str) -> None:
    # GIVEN the pipes either engine of the order saga deploys (WorkflowEngine, decision 0140)
    plantilla = Template(parameters={"WorkflowEngine": motor})
    pipes = {  # the root's and each unit's (the carts pipe is the Carritos unit's)
        unidad.resolve(r["Properties"]["Name"])
        for _ruta, unidad in plantilla.walk()
        for r in unidad.of_type("AWS::Pipes::Pipe").values()
    }
    # THEN each one's name, as this deploy resolves it, is the dimension of an ExecutionFailed alarm
    vigilados = {
        plantilla.resolve(a["Dimensions"][0]["Value"])
        for a in _alarmas_de(plantilla, "AWS/EventBridge/Pipes", "ExecutionFailed")
    }
    assert len(pipes) == 2 and pipes == vigilados


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
    # GIVEN every function of the stack with an SQS event (SAM's generated role would get receive/delete on every
    # queue), with the template (root or unit) that holds it
    pollers = {
        f"{prefijo}{lid}": (unidad, r)
        for prefijo, unidad in plantilla.walk()
        for lid, r in _recursos(unidad, "AWS::Serverless::Function").items()
        if any(t == "SQS" for _, _, t in sam_events(r))
    }
    assert "Consumidores/ErpFunction" in pollers
    for lid, (unidad, funcion) in pollers.items():
        # THEN it has an explicit role, and that role receives/deletes only on the queues of its events
        rol_id = ref_id(_props(funcion).get("Role"))
        assert rol_id in unidad.resources, f"{lid} uses SAM's generated role (AWSLambdaSQSQueueExecutionRole)"
        rol = unidad.resources[rol_id]
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
    # THEN no table is created and the pipe (in the carts unit) reads the given stream
    assert not p.condition(tabla["Condition"]) and Template().condition(tabla["Condition"])
    unidad, pipe = p.locate("Carritos/PipeCarritos")
    assert unidad.resolve(_props(unidad.resources[pipe])["Source"]) == arn
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


# ---------------------------------------------------------------- issue 35: works in a real account


def test_buckets_a_bucket_with_a_fixed_name_can_be_emptied_by_its_writers_deletes(plantilla: Template) -> None:
    # GIVEN every bucket the stack names itself, in the root or a unit (sam delete must be able to delete it)
    cubos = {
        f"{ruta}{lid}": r
        for ruta, t in Template(parameters={"Chaos": "enabled"}).walk()
        for lid, r in _recursos(t, "AWS::S3::Bucket").items()
        if "BucketName" in _props(r)
    }
    assert "Caos/ChaosConfigBucket" in cubos
    for lid, cubo in cubos.items():
        # THEN it is not versioned: a writer's DeleteObject really removes the object, it leaves no
        # old version or delete marker that keeps the bucket from being empty (DELETE_FAILED)
        estado = (_props(cubo).get("VersioningConfiguration") or {}).get("Status")
        assert estado in (None, "Suspended"), f"{lid} is versioned"
        # AND what an interrupted writer leaves behind expires
        reglas = _props(cubo)["LifecycleConfiguration"]["Rules"]
        assert any(r["Status"] == "Enabled" and r.get("ExpirationInDays") for r in reglas), lid


_ARN = "arn:aws:{}:eu-south-2:123456789012:{}"


@pytest.fixture(scope="module")
def politicas() -> dict[str, list[dict[str, Any]]]:
    """Each principal's policies as deployed (SAM's transform), with physical names for what they name."""
    p = Template()
    for lid in ("CobroFunction", "ReclamoFunction"):
        nombre = p.resolve(_props(p.resources[lid])["FunctionName"])
        p.physical_ids[lid] = {"Ref": nombre, "Arn": _ARN.format("lambda", f"function:{nombre}")}
    p.physical_ids["BusMercadoFresco"] = {"Ref": "bus-mercadofresco", "Arn": _ARN.format("events", "event-bus/b")}
    p.physical_ids["TablaIdempotencia"] = {"Ref": "t", "Arn": _ARN.format("dynamodb", "table/t")}
    for lid, grupo in _recursos(p, "AWS::Logs::LogGroup").items():
        nombre = p.resolve(_props(grupo)["LogGroupName"])
        p.physical_ids[lid] = {"Ref": nombre, "Arn": _ARN.format("logs", f"log-group:{nombre}:*")}
    return politicas_por_principal(p, plantilla_transformada(p.path, p.region))


def _permitida(politicas: list[dict[str, Any]], accion: str, recurso: str, **claves: str) -> bool:
    contexto = tuple((k.replace("_", ":", 1).replace("_", "-"), (v,)) for k, v in claves.items())
    return decidir(politicas, Solicitud(accion, recurso, contexto)) is Decision.PERMITIDA


def _definicion() -> dict[str, Any]:
    return json.loads((RAIZ / "statemachines" / "procesar_pedido.asl.json").read_text())


def _tareas(nodo: Any) -> list[dict[str, Any]]:
    """Every Task state of a definition, nested ones (Map, Parallel) included."""
    if isinstance(nodo, dict):
        propias = [nodo] if nodo.get("Type") == "Task" else []
        return propias + [t for v in nodo.values() for t in _tareas(v)]
    if isinstance(nodo, list):
        return [t for v in nodo for t in _tareas(v)]
    return []


def test_state_machine_invokes_its_two_functions_and_no_other_stage_s(
    politicas: dict[str, list[dict[str, Any]]],
) -> None:
    # GIVEN the workflow's role as deployed (stage "", next to a stage "-prueba" in the same account)
    rol = politicas["ProcesarPedido"]
    funcion = _ARN.format("lambda", "function:{}")
    # THEN it invokes its own claim and charge functions
    assert _permitida(rol, "lambda:InvokeFunction", funcion.format("mercadofresco-cobro"))
    assert _permitida(rol, "lambda:InvokeFunction", funcion.format("mercadofresco-reclamo"))
    # AND not another stage's (SAM's LambdaInvokePolicy grants function:mercadofresco-cobro*)
    assert not _permitida(rol, "lambda:InvokeFunction", funcion.format("mercadofresco-cobro-prueba"))
    assert not _permitida(rol, "lambda:InvokeFunction", funcion.format("mercadofresco-reclamo-prueba"))


def test_state_machine_holds_only_the_table_actions_its_definition_calls(
    politicas: dict[str, list[dict[str, Any]]],
) -> None:
    # GIVEN the DynamoDB integrations the definition calls (arn:aws:states:::dynamodb:updateItem, ...)
    llamadas = {
        "dynamodb:" + t["Resource"].rsplit(":", 1)[1][0].upper() + t["Resource"].rsplit(":", 1)[1][1:]
        for t in _tareas(_definicion())
        if t["Resource"].startswith("arn:aws:states:::dynamodb:")
    }
    assert llamadas
    # WHEN each table write is asked of the workflow's role on an order claim
    tabla = _ARN.format("dynamodb", "table/t")
    concedidas = {
        a
        for a in ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:GetItem")
        if _permitida(politicas["ProcesarPedido"], a, tabla, dynamodb_LeadingKeys="pedido:PED-1")
    }
    # THEN it holds exactly what the definition calls
    assert concedidas == llamadas


def _fuentes_de_definicion() -> set[str]:
    return {
        e["Source"]
        for t in _tareas(_definicion())
        if t["Resource"] == "arn:aws:states:::events:putEvents"
        for e in t["Parameters"]["Entries"]
    }


def test_bus_writers_each_publish_only_as_their_own_source(
    plantilla: Template, politicas: dict[str, list[dict[str, Any]]]
) -> None:
    # GIVEN every writer to the bus and the source it really publishes: the outbox relay (its config),
    # the workflow (its definition) and the carts pipe (its target parameters)
    unidad, lid = plantilla.locate("Carritos/PipeCarritos")
    pipe = _props(unidad.resources[lid])["TargetParameters"]["EventBridgeEventBusParameters"]
    (fuente_flujo,) = _fuentes_de_definicion()
    escritores = {
        "Outbox/OutboxFunction": OutboxConfig(bus_name="b").source,
        "ProcesarPedido": fuente_flujo,
        "Carritos/PipeCarritos": pipe["Source"],
    }
    bus = _ARN.format("events", "event-bus/b")
    for principal, fuente in escritores.items():
        # THEN it may put events as itself
        assert _permitida(politicas[principal], "events:PutEvents", bus, events_source=fuente), principal
        # AND never as another writer (a relay forging PedidoCancelado, a workflow forging a cart reminder)
        for otra in set(escritores.values()) - {fuente}:
            assert not _permitida(politicas[principal], "events:PutEvents", bus, events_source=otra), principal


def test_bus_rules_match_the_source_as_well_as_the_detail_type(plantilla: Template) -> None:
    # GIVEN every rule with targets on the stack's bus
    reglas = {lid: r for lid, r in _recursos(plantilla, "AWS::Events::Rule").items() if _props(r).get("Targets")}
    assert reglas
    for lid, regla in reglas.items():
        patron = _props(regla)["EventPattern"]
        # THEN it routes an event type only from the one writer allowed to publish as that source
        assert patron.get("source") and patron.get("detail-type"), f"{lid} matches {sorted(patron)}"


@pytest.fixture
def aurora() -> Template:
    """The Aurora unit (the root creates it with no AuroraEndpoint given), its parameters at their defaults."""
    return Template(path=RAIZ / "unidades" / "aurora.yaml")


def test_aurora_exports_its_log_to_a_declared_group_with_retention_on_the_project_key(aurora: Template) -> None:
    plantilla = aurora
    # GIVEN the cluster the stack creates and the logs it exports
    cluster = plantilla.resources["AuroraCluster"]
    exportados = _props(cluster)["EnableCloudwatchLogsExports"]
    assert exportados
    identificador = plantilla.resolve(_props(cluster)["DBClusterIdentifier"])
    grupos = {
        plantilla.resolve(_props(g)["LogGroupName"]): lid
        for lid, g in _recursos(plantilla, "AWS::Logs::LogGroup").items()
    }
    for log in exportados:
        # THEN each goes to a group the stack declares (RDS's name for it), with retention and the data key
        lid = grupos.get(f"/aws/rds/cluster/{identificador}/{log}")
        assert lid, f"/aws/rds/cluster/{identificador}/{log} is left to RDS (kept forever, unencrypted)"
        grupo = _props(plantilla.resources[lid])
        assert grupo.get("RetentionInDays") and grupo.get("KmsKeyId"), lid
        # AND it exists before the cluster exports to it, under the same condition
        dependencias = cluster.get("DependsOn", [])
        assert lid in (dependencias if isinstance(dependencias, list) else [dependencias])
        assert plantilla.resources[lid].get("Condition") == cluster.get("Condition")


def test_aurora_engine_version_is_a_major_version_not_a_minor_aws_retires(aurora: Template) -> None:
    version = str(_props(aurora.resources["AuroraCluster"])["EngineVersion"])
    # THEN a major only: Aurora picks that major's default minor, and fresh deploys outlive a retired minor
    assert re.fullmatch(r"\d+", version), version


def test_functions_write_logs_only_to_their_own_log_group(
    plantilla: Template, politicas: dict[str, list[dict[str, Any]]]
) -> None:
    # GIVEN every function's role as deployed (SAM's generated roles attach AWSLambdaBasicExecutionRole)
    funciones = plantilla.of_type("AWS::Serverless::Function")  # those this deploy creates
    assert funciones
    for lid, funcion in funciones.items():
        propio = plantilla.resolve(
            _props(plantilla.resources[ref_id(_props(funcion)["LoggingConfig"]["LogGroup"])])["LogGroupName"]
        )
        flujo = _ARN.format("logs", "log-group:{}:log-stream:2026/12/05/[$LATEST]0123")
        # THEN it writes its own log group
        assert _permitida(politicas[lid], "logs:PutLogEvents", flujo.format(propio)), lid
        assert _permitida(politicas[lid], "logs:CreateLogStream", flujo.format(propio)), lid
        # AND no other group of the account, and creates none
        for accion in ("logs:PutLogEvents", "logs:CreateLogStream"):
            assert not _permitida(politicas[lid], accion, flujo.format("/aws/lambda/otra-funcion")), lid
        assert not _permitida(politicas[lid], "logs:CreateLogGroup", _ARN.format("logs", "log-group:/x")), lid


def test_provider_callers_tell_the_retry_budget_their_most_instances_at_once(plantilla: Template) -> None:
    # GIVEN every function that calls a provider (each has a <PROVIDER>_URL_AUTH variable)
    llamantes = {
        lid: r
        for lid, r in _recursos(plantilla, "AWS::Serverless::Function").items()
        if any(k.endswith("_URL_AUTH") for k in ((_props(r).get("Environment") or {}).get("Variables") or {}))
    }
    assert llamantes
    for lid, funcion in llamantes.items():
        declarado = _props(funcion)["Environment"]["Variables"].get("RETRY_BUDGET_MAX_INSTANCES")
        assert declarado is not None, f"{lid}: with Valkey down its fresh containers could not retry once"
        # THEN it is the function's concurrency bound: its reserved concurrency, or what its queue
        # mappings may run at once (the divisor of the budget's floor, mercadofresco.retry.budget)
        reservada = _props(funcion).get("ReservedConcurrentExecutions")
        if reservada is not None:
            assert declarado == reservada["Fn::If"][1], lid
        else:
            mapeos = [ev["ScalingConfig"]["MaximumConcurrency"] for _, ev, t in sam_events(funcion) if t == "SQS"]
            assert mapeos and int(declarado) == sum(mapeos), lid


def test_queues_every_queue_accepts_what_sqs_takes_since_2026(plantilla: Template) -> None:
    # GIVEN every queue of the stack (a queue created before 2026 keeps 256 KiB unless told)
    colas = _recursos(plantilla, "AWS::SQS::Queue")
    assert colas
    # THEN each says MaximumMessageSize = the layer's SQS limit: a dead letter or a deferral of a big body
    # is kept whole by the code exactly when the queue takes it
    assert {lid: plantilla.chosen(_props(c).get("MaximumMessageSize")) for lid, c in colas.items()} == dict.fromkeys(
        colas, SQS_MESSAGE_MAX_BYTES
    )
    # AND whatever SNS delivers (256 KiB at most) leaves room in that limit for a dead letter's reason
    assert SQS_MESSAGE_MAX_BYTES - SNS_MESSAGE_MAX_BYTES > 4 * 1024 + MAX_DETAIL_CHARS * 4


@pytest.mark.parametrize(
    ("motor", "ruta"), [("StepFunctions", "CobroFunction"), ("DurableFunction", "PedidoDurable/PedidoDurableFunction")]
)
def test_gateway_attempts_end_inside_the_charge_timeout(motor: str, ruta: str) -> None:
    # GIVEN a function that calls the gateway (the durable saga in its unit): its per-attempt timeouts (Plazos), its
    # attempts (Globals) and the longest Retry-After the layer honours inside an invocation
    from mercadofresco.retry.policy import RETRY_AFTER_MAX_S

    plantilla, funcion = Template(parameters={"WorkflowEngine": motor}).locate(ruta)
    recurso = plantilla.resources[funcion]["Properties"]
    variables = {
        **plantilla.doc["Globals"]["Function"]["Environment"]["Variables"],
        **recurso["Environment"]["Variables"],
    }
    conectar, leer, intentos = (
        float(plantilla.resolve(variables[v]))
        for v in ("PASARELA_CONNECT_TIMEOUT_S", "PASARELA_READ_TIMEOUT_S", "HTTP_MAX_ATTEMPTS")
    )
    timeout = plantilla.resolve(recurso["Timeout"])
    # THEN every attempt and the wait between them end before the Lambda timeout: a slow gateway is a
    # PasarelaNoDisponible the saga handles, never a timed-out invocation with the charge's outcome unknown
    assert intentos * (conectar + leer) + RETRY_AFTER_MAX_S < timeout
    # AND both gateway callers read the same declaration (one number, one place; a unit's is its parent's)
    leido = recurso["Environment"]["Variables"]["PASARELA_READ_TIMEOUT_S"]
    if plantilla.parent is not None:
        leido = plantilla.passed_by_parent(leido["Ref"])
    assert leido == {"Fn::FindInMap": ["Plazos", "CobroFunction", "ReadTimeoutS"]}
