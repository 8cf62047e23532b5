from __future__ import annotations

import pytest
from template_cases import LOOPED, TEMPLATE
from template_model import Template, consumers
from template_model import messaging as m
from template_model.bounds import time_bounds
from template_model.wiring import dead_letter_queues


@pytest.fixture(scope="module")
def template() -> Template:
    return Template(path=TEMPLATE)


def test_consumers_of_the_template_with_their_queues_dlqs_roles_and_key_prefixes(template: Template) -> None:
    # GIVEN the repository's template  WHEN its consumers are asked for, in the root and in its units
    found = {c.function: c for c in consumers(template.units()["Consumidores"])}
    store = {c.function: c for c in consumers(template.units()["Tienda"])}
    # THEN the three fan-out consumers are there, each wired as the template writes it: the ERP and the e-mail in
    # the consumers' unit, the projection in the store's, their DLQs the parameters the root hands them (what a
    # stack delete retains stays in the root)
    assert consumers(template) == ()
    assert list(found) == ["ErpFunction", "CorreoFunction"]
    assert template.paths(lambda t: [c.function for c in consumers(t)]) == (
        "Tienda/ProyeccionFunction", "Consumidores/ErpFunction", "Consumidores/CorreoFunction"
    )  # fmt: skip
    erp = found["ErpFunction"]
    assert erp.queues == ("ColaErp", "ColaStock")
    assert erp.dead_letter_queues == ("ColaErpFallidos", "ColaStockFallidos")
    assert (erp.role, erp.log_group) == ("ErpFunctionRole", "ErpLogs")
    # ...and asked of the whole stack, each is named by its stack path
    (en_pila,) = (c for c in m.stack_consumers(template) if c.function == "Consumidores/ErpFunction")
    assert en_pila.queues == ("Consumidores/ColaErp", "Consumidores/ColaStock")
    assert (en_pila.role, en_pila.log_group) == ("Consumidores/ErpFunctionRole", "Consumidores/ErpLogs")
    assert en_pila.dead_letter_queues == erp.dead_letter_queues
    assert erp.key_prefixes == ("aviso-erp:*", "reserva:*", "liberacion:*")
    proyeccion = store["ProyeccionFunction"]
    assert (proyeccion.queues, proyeccion.dead_letter_queues) == (("ColaProyeccion",), ("ColaProyeccionFallidos",))
    assert proyeccion.providers == ()


def test_providers_name_their_breaker_parameter_and_stand_in(template: Template) -> None:
    # GIVEN the e-mail consumer (two providers behind one sandbox simulator)
    correo = next(c for c in m.stack_consumers(template) if c.function == "Consumidores/CorreoFunction")
    # WHEN its providers are read  THEN each names its breaker, its URL parameter and what plays it, in the
    # sandbox unit (its resources named as SAM names them)
    assert correo.breakers == ("correo-principal", "correo-secundario")
    principal, secundario = correo.providers
    assert (principal.variable, principal.parameter, principal.condition) == (
        "CORREO_PRINCIPAL_URL", "CorreoPrincipalUrl", "SimularCorreoPrincipal"
    )  # fmt: skip
    assert (principal.stand_in, principal.stand_in_path) == ("Simuladores/SimuladorCorreoFunction", "principal")
    assert (secundario.stand_in, secundario.stand_in_path) == ("Simuladores/SimuladorCorreoFunction", "secundario")
    assert principal.url == secundario.url == "Simuladores/SimuladorCorreoUrl"
    # ...and the charge function, which is no queue consumer, is asked directly
    (pasarela,) = m.providers(template, "CobroFunction")
    assert (pasarela.dependency, pasarela.stand_in) == ("pasarela", "Simuladores/SimuladorPasarelaFunction")
    # ...and a given URL needs no stand-in: the sandbox unit is not created
    given = Template(
        TEMPLATE,
        parameters={
            "PasarelaUrl": "https://pasarela.example",
            "ErpUrl": "https://erp.example",
            "CorreoPrincipalUrl": "https://a.example",
            "CorreoSecundarioUrl": "https://b.example",
        },
    )
    assert "Simuladores" not in given.units()
    assert [p.stand_in for p in m.providers(given, "CobroFunction")] == [None]


def test_a_units_function_calls_the_provider_its_parent_passes_it() -> None:
    # GIVEN the durable saga in its unit (WorkflowEngine=DurableFunction), its PASARELA_URL a parameter the root
    # passes: the sandbox gateway's URL, or the deploy's PasarelaUrl
    durable = Template(TEMPLATE, parameters={"WorkflowEngine": "DurableFunction"})
    # WHEN its providers are read
    (pasarela,) = m.providers(durable.units()["PedidoDurable"], "PedidoDurableFunction")
    # THEN the provider is the root's: its deploy parameter and sandbox condition, its stand-in and URL as stack
    # paths from the root
    assert (pasarela.variable, pasarela.dependency) == ("PASARELA_URL", "pasarela")
    assert (pasarela.parameter, pasarela.condition) == ("PasarelaUrl", "SimularPasarela")
    assert (pasarela.stand_in, pasarela.url) == (
        "Simuladores/SimuladorPasarelaFunction",
        "Simuladores/SimuladorPasarelaUrl",
    )
    # AND the stack's providers include it, with no function of the root calling the gateway
    assert "pasarela" in {p.dependency for p in m.providers_called(durable)}
    assert not any(m.providers(durable, f) for f in durable.of_type("AWS::Serverless::Function") if "Cobro" in f)


def test_key_prefixes_follow_the_conditions_of_the_deploy(write) -> None:
    # GIVEN a role whose grant depends on a condition
    path = write(
        """
        Parameters:
          Extra: {Type: String, Default: "no"}
        Conditions:
          WithExtra: !Equals [!Ref Extra, "yes"]
        Resources:
          Role:
            Type: AWS::IAM::Role
            Properties:
              Policies:
                - PolicyDocument:
                    Statement:
                      - Condition:
                          ForAllValues:StringLike:
                            dynamodb:LeadingKeys: !If [WithExtra, ["a:*", "b:*"], ["a:*"]]
        """
    )
    # WHEN read with each value of the parameter  THEN the prefixes are the branch the deploy takes
    assert m.key_prefixes(Template(path=path), "Role") == ("a:*",)
    assert m.key_prefixes(Template(path=path, parameters={"Extra": "yes"}), "Role") == ("a:*", "b:*")


def test_every_dlq_is_found_from_the_wiring(template: Template) -> None:
    # GIVEN the queues the template names as a dead-letter target (queues, pipes, rule targets, subscriptions)
    dlqs = set(m.dead_letter_queues(template))
    # THEN they are the six fallidos queues, each the DLQ of the queues that redrive to it
    assert dlqs == {"ColaPedidosFallidos", "ColaErpFallidos", "ColaCorreoFallidos", "ColaStockFallidos",
                    "ColaCarritosFallidos", "ColaProyeccionFallidos"}  # fmt: skip
    # AND only the order DLQ is named in the root's file: the others by their units (the carts pipe, the consumers'
    # queues, rules and subscriptions), through the parameter the root passes each in
    assert set(dead_letter_queues(template.doc)) == {"ColaPedidosFallidos"}
    assert m.redrive_sources(template.units()["Consumidores"], "ErpDlqArn") == ("ColaErp",)
    assert m.redrive_sources(template, "ColaCarritosFallidos") == ()  # the carts pipe's DLQ: no queue redrives


def test_the_order_queue_leads_to_the_workflow_and_its_functions(template: Template) -> None:
    # GIVEN the order queue, read by a pipe that starts the workflow
    assert m.workflow_queues(template) == {"ColaPedidos": "ProcesarPedido"}
    # WHEN the functions behind it are asked for  THEN they are the workflow's tasks, not the pipe
    assert {"CobroFunction", "ReclamoFunction"} <= set(m.functions_behind(template, "ColaPedidos"))
    assert m.log_group_of(template, "ProcesarPedido") == "ProcesarPedidoLogs"
    assert template.paths(m.subscribed_queues) == (
        "Tienda/ColaProyeccion", "Consumidores/ColaErp", "Consumidores/ColaCorreo"
    )  # fmt: skip


def test_an_outcome_reaches_the_consumers_its_rules_and_topics_deliver_it_to(template: Template) -> None:
    # GIVEN the template's outcomes: the confirmation through the topic (which declares it carries it), the others
    # through bus rules  WHEN each outcome's consumers are asked for, in the whole stack  THEN they are the ones
    # its wiring reaches (a unit's subscription names the topic by a parameter: read where the root wrote it)
    def reached(outcome: str) -> tuple[str, ...]:
        return template.paths(lambda t: [c.function for c in m.consumers_of(t, outcome)])

    assert reached("PedidoConfirmado") == (
        "Tienda/ProyeccionFunction", "Consumidores/ErpFunction", "Consumidores/CorreoFunction"
    )  # fmt: skip
    for outcome in ("PedidoRechazado", "PedidoNoConfirmado", "PedidoCancelado"):
        assert reached(outcome) == ("Tienda/ProyeccionFunction", "Consumidores/CorreoFunction")
    assert template.paths(lambda t: m.queues_reached_by(t, "CarritoAbandonado")) == ("Consumidores/ColaCorreo",)
    assert m.consumers_of(template, "PedidoCreado") == ()  # a pipe's input, no consumer's


def test_a_topic_that_declares_no_events_reaches_no_consumer_by_event(write) -> None:
    # GIVEN two topics delivering to two queues, only one declaring what it carries
    template = Template(
        path=write(
            """
            Resources:
              Dicho: {Type: AWS::SNS::Topic, Metadata: {Mensajeria: {Eventos: [Hecho]}}}
              Callado: {Type: AWS::SNS::Topic}
              A: {Type: AWS::SQS::Queue}
              B: {Type: AWS::SQS::Queue}
              SubA:
                Type: AWS::SNS::Subscription
                Properties: {TopicArn: !Ref Dicho, Protocol: sqs, Endpoint: !GetAtt A.Arn}
              SubB:
                Type: AWS::SNS::Subscription
                Properties: {TopicArn: !Ref Callado, Protocol: sqs, Endpoint: !GetAtt B.Arn}
            """
        )
    )
    # WHEN the event is asked for  THEN only the declaring topic's queue is reached (nothing guessed from a name)
    assert m.queues_reached_by(template, "Hecho") == ("A",)
    assert m.queues_reached_by(template, "Otro") == ()


def test_physical_names_resolve_with_the_deploy_suffix() -> None:
    # GIVEN a stage suffix  WHEN a queue's name is resolved  THEN it carries it
    template = Template(path=TEMPLATE, parameters={"NameSuffix": "-prueba"})
    assert m.physical_name(template, "ColaErpFallidos", "QueueName") == "mercadofresco-erp-fallidos-prueba"
    assert "ColaErpFallidos" in m.retained(template)
    # ...and so do the log groups that explain a queue's failures: its consumer's, or the workflow's
    assert m.physical_name(template, "Consumidores/ColaErp", "QueueName") == "mercadofresco-erp-prueba"
    assert m.log_group_name(*template.locate("Consumidores/ColaErp")) == "/aws/lambda/mercadofresco-erp-prueba"
    assert m.log_group_name(template, "ColaPedidos") == m.physical_name(template, "ProcesarPedidoLogs", "LogGroupName")
    assert m.log_group_name(template, "ColaErpFallidos") is None


def test_a_consumer_written_once_in_a_loop_is_seen_per_instance(write) -> None:
    # GIVEN two consumers generated by one Fn::ForEach body
    template = Template(path=write(LOOPED))
    # WHEN the consumers are asked for  THEN each instance is one, with its own queue, DLQ and key prefixes
    found = {c.function: c for c in consumers(template)}
    assert found["ErpFunction"].queues == ("QueueErp",)
    assert found["CorreoFunction"].dead_letter_queues == ("QueueCorreoDlq",)
    assert found["ErpFunction"].key_prefixes == ("aviso-erp:*", "reserva:*")
    assert found["CorreoFunction"].role == "CorreoFunctionRole"


def test_time_bounds_come_from_their_declaration(template: Template) -> None:
    # GIVEN the bounds mapping  WHEN the bounds are read
    bounds = time_bounds(template.doc, template.folder)
    declared = template.mapping("Plazos")
    # THEN a bounded function's timeout and lease are its declaration, and the workflow's are read from its ASL
    assert bounds.timeouts_s["CobroFunction"] == declared["CobroFunction"]["TimeoutS"]
    assert bounds.leases_s["CobroFunction"] == int(declared["CobroFunction"]["LeaseS"])
    workflow = bounds.workflows["ProcesarPedido"]
    assert workflow.timeout_s == declared["ProcesarPedido"]["TimeoutSeconds"]
    assert workflow.claim_function == "ReclamoFunction"
    assert bounds.literals == {}


def test_a_queue_only_a_rule_target_or_a_subscription_dead_letters_to_is_a_dlq() -> None:
    # GIVEN two queues no queue redrives to: one a rule target's DLQ, one a subscription's
    document = {
        "Resources": {
            "RuleDlq": {"Type": "AWS::SQS::Queue"},
            "TopicDlq": {"Type": "AWS::SQS::Queue"},
            "Rule": {"Type": "AWS::Events::Rule", "Properties": {"Targets": [
                {"Id": "t", "Arn": "arn", "DeadLetterConfig": {"Arn": {"Fn::GetAtt": ["RuleDlq", "Arn"]}}}]}},
            "Subscription": {"Type": "AWS::SNS::Subscription", "Properties": {
                "RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": ["TopicDlq", "Arn"]}}}},
        }
    }  # fmt: skip
    # WHEN the DLQs are found  THEN both are, each with who sends to it
    assert dead_letter_queues(document) == {"RuleDlq": ["Rule"], "TopicDlq": ["Subscription"]}


def test_a_redrive_count_declared_in_mappings_is_read_from_there(write) -> None:
    from template_model.wiring import redrive

    # GIVEN a looped queue whose maxReceiveCount is read from Mappings, as the repository's queues are
    declared = LOOPED.replace("Mappings:\n", "Mappings:\n  Delivery:\n    Queue: {maxReceiveCount: 4}\n", 1).replace(
        "maxReceiveCount: 4\n", "maxReceiveCount: !FindInMap [Delivery, Queue, maxReceiveCount]\n"
    )
    template = Template(path=write(declared))
    assert template.resources["QueueErp"]["Properties"]["RedrivePolicy"]["maxReceiveCount"] == {
        "Fn::FindInMap": ["Delivery", "Queue", "maxReceiveCount"]}  # fmt: skip
    # WHEN a queue's redrive is asked for  THEN its DLQ and the count the mapping declares
    assert redrive(template.doc, template.resources["QueueErp"]) == ("QueueErpDlq", 4)
