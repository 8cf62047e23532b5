"""The messaging questions the tools ask of a template, answered from its wiring, never from a list.

A **consumer** is a function with an SQS event source (a SAM ``Events`` entry of type ``SQS`` or an
``AWS::Lambda::EventSourceMapping``): its queues, each queue's DLQ, its role and the idempotency key
prefixes the role allows (``dynamodb:LeadingKeys``), its log group, and the **providers** it calls. A
provider is an environment variable ``<DEPENDENCY>_URL`` of the function's own (the layer's
``mercadofresco.http.client_from_env`` reads it): its breaker is ``<dependency>`` (``ERP_URL`` ->
``erp``, ``CORREO_PRINCIPAL_URL`` -> ``correo-principal``), the URL parameter the deploy may give is
the ``!Ref`` in the value, and the stand-in that plays it when that parameter is empty is the function
behind the ``AWS::Lambda::Url`` the other branch names. A queue read by a pipe is the order workflow's
input: the functions behind it are the state machine's (its ``DefinitionSubstitutions``).

Answers are logical ids, in template order; :func:`physical_name` resolves a name with the template's
parameters (``NameSuffix``...). A template with nested units is asked unit by unit
(:meth:`template_model.Template.walk`): a consumer lives whole in one unit (decision 0130). The questions asked
of the whole stack (:func:`stack_consumers`, :func:`fan_out`) answer in stack paths (``Consumidores/ErpFunction``),
which :func:`physical_name` and :meth:`template_model.Template.get_att` take as they take a logical id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from template_model import wiring
from template_model.bounds import METADATA_KEY
from template_model.wiring import SAM_FUNCTION, SQS_QUEUE, STATE_MACHINES, props, redrive, ref_id, sam_events

if TYPE_CHECKING:
    from template_model.template import Template

URL_SUFFIX = "_URL"
RETAINED = ("Retain", "RetainExceptOnCreate")  # what a stack delete leaves in the account
EVENTS_KEY = "Eventos"  # under a topic's Metadata.Mensajeria: the event types it carries
_SUB_NAME = re.compile(r"\$\{([^}!]+)\}")


@dataclass(frozen=True)
class Provider:
    """An outside dependency a function calls, and what plays it when no URL is given."""

    variable: str  # the environment variable holding its base URL (ERP_URL)
    dependency: str  # its breaker's name (erp)
    parameter: str | None  # the template parameter a deploy gives the real URL in (ErpUrl)
    condition: str | None  # the condition under which the stand-in is used (SimularErp)
    stand_in: str | None  # the function that plays it (SimuladorErpFunction)
    stand_in_path: str = ""  # what the URL adds to the stand-in's (principal, for a two-provider stand-in)
    url: str | None = None  # the ``AWS::Lambda::Url`` of the stand-in that the URL names (SimuladorErpUrl)


@dataclass(frozen=True)
class Consumer:
    """A function fed by SQS queues, with everything the tools need about it."""

    function: str
    queues: tuple[str, ...]
    # each source queue's DLQ (RedrivePolicy), in the queues' order, as a stack path (a unit's is the root's)
    dead_letter_queues: tuple[str, ...]
    role: str | None  # its explicit role (Role: !GetAtt X.Arn); None when SAM generates one
    log_group: str | None  # its declared log group (LoggingConfig.LogGroup)
    key_prefixes: tuple[str, ...]  # dynamodb:LeadingKeys its role allows, as written ("aviso-erp:*")
    providers: tuple[Provider, ...]

    @property
    def breakers(self) -> tuple[str, ...]:
        """The breaker names in front of its providers."""
        return tuple(p.dependency for p in self.providers)

    def keys_for(self, identifier: str) -> tuple[str, ...]:
        """The idempotency keys its role lets it hold for one identifier: each prefix followed by it
        (``aviso-erp:*`` and ``PED-1`` -> ``aviso-erp:PED-1``)."""
        return tuple(prefix.removesuffix("*") + identifier for prefix in self.key_prefixes)

    def identifier_in(self, key: str) -> str | None:
        """The identifier a key of one of its prefixes names when it is the key's only part after the prefix
        (``aviso-erp:PED-1`` -> ``PED-1``); None for a key of another prefix or with more parts
        (``reserva:PED-1:SKU``: an operation on a part of it)."""
        for prefix in self.key_prefixes:
            stem = prefix.removesuffix("*")
            if key.startswith(stem) and (rest := key[len(stem) :]) and ":" not in rest:
                return rest
        return None


def _named(node: Any) -> set[str]:
    """Every logical id or parameter ``node`` references (Ref, GetAtt, ``${}`` of a Sub)."""
    return {name for name, _attribute in _referenced(node)}


def queues(template: Template) -> tuple[str, ...]:
    return tuple(lid for lid, r in template.resources.items() if r.get("Type") == SQS_QUEUE)


def dead_letter_queues(template: Template) -> tuple[str, ...]:
    """The queues something names as its dead-letter target (queue, pipe, rule target, subscription...), in template
    order; a nested unit's resource names one through the parameter its parent passes the queue in (what a stack
    delete retains stays in the root, decision 0130)."""
    named = set(wiring.dead_letter_queues(template.doc))
    for logical_id, unit in template.units().items():
        passed = props(template.resources[logical_id]).get("Parameters") or {}
        for parameter in wiring.dead_letter_queues(unit.doc, parameters=True):
            named |= _named(passed.get(parameter))
    return tuple(q for q in queues(template) if q in named)


def dead_letter_queue_of(template: Template, queue: str) -> str | None:
    """The DLQ of ``queue`` (its RedrivePolicy), or None."""
    policy = redrive(template.doc, template.resources.get(queue, {}))
    return policy[0] if policy else None


def dead_letter_queue_path(template: Template, queue: str) -> str | None:
    """The stack path (as :meth:`Template.walk` names it) of ``queue``'s DLQ: a unit's queue names the DLQ its
    parent keeps by the parameter the parent passes it in (``ColaProyeccionFallidos``, decision 0130)."""
    if (dlq := dead_letter_queue_of(template, queue)) is None:
        return None
    while dlq in (template.doc.get("Parameters") or {}) and template.parent is not None:
        dlq = ref_id(template.passed_by_parent(dlq))
        template = template.parent
    return None if dlq is None else template.prefix + dlq


def redrive_sources(template: Template, dlq: str) -> tuple[str, ...]:
    """The queues whose RedrivePolicy sends their dead letters to ``dlq``."""
    return tuple(q for q in queues(template) if dead_letter_queue_of(template, q) == dlq)


def queue_readers(template: Template, queue: str) -> tuple[str, ...]:
    """Functions with an SQS event on ``queue`` (SAM Events or an event source mapping), then pipes reading it."""
    readers = []
    for lid, r in template.resources.items():
        p = props(r)
        if r.get("Type") == SAM_FUNCTION and any(
            kind == "SQS" and ref_id(ep.get("Queue")) == queue for _, ep, kind in sam_events(r)
        ):
            readers.append(lid)
        elif r.get("Type") == "AWS::Lambda::EventSourceMapping" and ref_id(p.get("EventSourceArn")) == queue:
            readers.append(ref_id(p.get("FunctionName")) or lid)
        elif r.get("Type") == "AWS::Pipes::Pipe" and ref_id(p.get("Source")) == queue:
            readers.append(lid)
    return tuple(readers)


def functions_behind(template: Template, queue: str) -> tuple[str, ...]:
    """The functions that run for ``queue``'s messages: its SQS consumers, or its pipe's state machine's tasks."""
    found: list[str] = []
    for reader in queue_readers(template, queue):
        if template.resources[reader].get("Type") != "AWS::Pipes::Pipe":
            found.append(reader)
            continue
        machine = template.resources.get(ref_id(props(template.resources[reader]).get("Target")) or "", {})
        for value in (props(machine).get("DefinitionSubstitutions") or {}).values():
            if template.resources.get(ref_id(value) or "", {}).get("Type") == SAM_FUNCTION:
                found.append(ref_id(value))
    return tuple(dict.fromkeys(found))


def workflow_queues(template: Template) -> dict[str, str]:
    """Source queue -> the state machine a pipe starts for each of its messages."""
    found = {}
    for r in template.resources.values():
        p = props(r)
        source, target = ref_id(p.get("Source")), ref_id(p.get("Target"))
        machine = template.resources.get(target or "", {})
        if r.get("Type") == "AWS::Pipes::Pipe" and source and machine.get("Type") in STATE_MACHINES:
            found[source] = target
    return found


def subscribed_queues(template: Template) -> tuple[str, ...]:
    """The queues an SNS topic delivers to (the fan-out), in template order."""
    return tuple(
        q
        for r in template.resources.values()
        if r.get("Type") == "AWS::SNS::Subscription"
        and props(r).get("Protocol") == "sqs"
        and (q := ref_id(props(r).get("Endpoint")))
    )


def queues_reached_by(template: Template, event: str) -> tuple[str, ...]:
    """The queues an event of this type reaches, in template order: a bus rule's targets whose pattern lists it
    (``detail-type``), and the subscriptions of a topic that declares it carries it
    (``Metadata.Mensajeria.Eventos``: a topic's messages name their type in an attribute, not in a pattern)."""
    reached: set[str] = set()
    for r in template.resources.values():
        p = props(r)
        if r.get("Type") == "AWS::Events::Rule" and event in ((p.get("EventPattern") or {}).get("detail-type") or ()):
            reached.update(q for t in p.get("Targets") or () if (q := ref_id(t.get("Arn"))))
        elif r.get("Type") == "AWS::SNS::Subscription" and event in _events_carried(template, p.get("TopicArn")):
            reached.add(ref_id(p.get("Endpoint")) or "")
    return tuple(q for q in queues(template) if q in reached)


def _events_carried(template: Template, topic: Any) -> tuple[str, ...]:
    """What a topic declares it carries; a unit's subscription names its topic by the parameter its parent
    passes it in, so the declaration is read where the parent wrote the topic."""
    name = ref_id(topic) or ""
    if name in (template.doc.get("Parameters") or {}) and template.parent is not None:
        return _events_carried(template.parent, template.passed_by_parent(name))
    metadata = template.resources.get(name, {}).get("Metadata") or {}
    return tuple((metadata.get(METADATA_KEY) or {}).get(EVENTS_KEY) or ())


def consumers_of(template: Template, event: str) -> tuple[Consumer, ...]:
    """The consumers an event of this type reaches (:func:`queues_reached_by`), in template order."""
    reached = set(queues_reached_by(template, event))
    return tuple(c for c in consumers(template) if reached.intersection(c.queues))


def log_group_of(template: Template, resource: str) -> str | None:
    """The declared log group of a function (``LoggingConfig.LogGroup``) or a state machine (its logging)."""
    p = props(template.resources.get(resource, {}))
    if (group := ref_id((p.get("LoggingConfig") or {}).get("LogGroup"))) is not None:
        return group
    for destination in (p.get("Logging") or {}).get("Destinations") or []:
        if group := ref_id(((destination or {}).get("CloudWatchLogsLogGroup") or {}).get("LogGroupArn")):
            return group
    return None


def log_group_name(template: Template, queue: str) -> str | None:
    """The log group (a physical name) whose errors explain ``queue``'s failures: its first reader's, or the
    state machine's its pipe starts; a function without a declared one logs to ``/aws/lambda/<FunctionName>``."""
    for reader in queue_readers(template, queue):
        resource = template.resources[reader]
        owner = reader
        if resource.get("Type") == "AWS::Pipes::Pipe":
            owner = ref_id(props(resource).get("Target")) or reader
        if (group := log_group_of(template, owner)) is not None:
            return physical_name(template, group, "LogGroupName")
        if template.resources[owner].get("Type") == SAM_FUNCTION:
            return f"/aws/lambda/{physical_name(template, owner, 'FunctionName')}"
    return None


def role_of(template: Template, function: str) -> str | None:
    """A function's explicit role (``Role: !GetAtt X.Arn``), None when SAM generates it."""
    return ref_id(props(template.resources.get(function, {})).get("Role"))


def key_prefixes(template: Template, role: str | None) -> tuple[str, ...]:
    """The ``dynamodb:LeadingKeys`` a role's inline policies allow, for this template's conditions."""
    if role is None or role not in template.resources:
        return ()
    found: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "dynamodb:LeadingKeys":
                    found.extend([value] if isinstance(value, str) else value)
                else:
                    collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    for policy in props(template.resources[role]).get("Policies") or []:
        collect(template.chosen((policy or {}).get("PolicyDocument")))
    return tuple(dict.fromkeys(found))


def _function_urls(template: Template, node: Any, prefix: str = "") -> list[str]:
    """The ``AWS::Lambda::Url`` resources ``node`` reads, followed into a nested unit's output
    (``${Simuladores.Outputs.SimuladorErpUrl}`` -> ``Simuladores/SimuladorErpUrl``, as :meth:`Template.walk`
    names a unit's resources)."""
    found = []
    for name, attribute in _referenced(node):
        resource = template.resources.get(name) or {}
        if resource.get("Type") == "AWS::Lambda::Url":
            found.append(prefix + name)
        elif attribute.startswith("Outputs.") and name in (units := template.units()):
            unit = units[name]
            found += _function_urls(unit, unit.output(attribute.removeprefix("Outputs.")), f"{prefix}{name}/")
    return found


def _referenced(node: Any) -> list[tuple[str, str]]:
    """(logical id, attribute) for every Ref, GetAtt and ``${}`` of a Sub in ``node`` (attribute "" for a Ref)."""
    if isinstance(node, list):
        return [pair for item in node for pair in _referenced(item)]
    if not isinstance(node, dict):
        return []
    found: list[tuple[str, str]] = []
    for key, value in node.items():
        if key == "Ref" and isinstance(value, str):
            found.append((value, ""))
        elif key == "Fn::GetAtt":
            name, attribute = value.split(".", 1) if isinstance(value, str) else value
            found.append((name, attribute if isinstance(attribute, str) else ""))
        elif key == "Fn::Sub":
            text = value if isinstance(value, str) else value[0]
            found += [(*n.split(".", 1), "")[:2] for n in _SUB_NAME.findall(text) if not n.startswith("AWS::")]
            found += _referenced(value[1:] if isinstance(value, list) else [])
        else:
            found += _referenced(value)
    return found


def providers(template: Template, function: str) -> tuple[Provider, ...]:
    """The providers a function calls: its own ``<DEPENDENCY>_URL`` variables that name a parameter or a stand-in.

    A unit's function that reads its URL as a parameter (``PASARELA_URL: !Ref PasarelaUrl``) calls what its parent
    passes: the provider is read there (its deploy parameter and sandbox condition are the parent's), and its
    stand-in and URL are stack paths from the root, as :meth:`Template.walk` names them; ``function`` may be one too.
    """
    template, function = template.locate(function)
    variables = (props(template.resources.get(function, {})).get("Environment") or {}).get("Variables") or {}
    found = []
    for variable, written in variables.items():
        if not variable.endswith(URL_SUFFIX):
            continue
        holder, value = template.written_above(written)
        if not isinstance(value, dict):  # a literal URL passed: the unit's own parameter names the provider
            holder, value = template, written
        if not isinstance(value, dict):
            continue
        chosen = value["Fn::If"] if set(value) == {"Fn::If"} else (None, None, value)
        condition, stand_in_branch, given_branch = chosen
        parameters = [n for n in _named(given_branch) if n in (holder.doc.get("Parameters") or {})]
        urls = [holder.prefix + url for url in _function_urls(holder, stand_in_branch)]
        if not parameters and not urls:
            continue  # a resource's URL (COLA_STOCK_URL: !Ref ColaStock), not a provider's
        stand_in = None
        if urls:
            owner, url = holder.root.locate(urls[0])
            function = ref_id(props(owner.resources[url]).get("TargetFunctionArn"))
            stand_in = urls[0].removesuffix(url) + function if function else None
        path = ""
        if isinstance(stand_in_branch, dict) and isinstance(text := stand_in_branch.get("Fn::Sub"), str):
            path = _SUB_NAME.sub("", text)
        found.append(
            Provider(
                variable=variable,
                dependency=variable.removesuffix(URL_SUFFIX).lower().replace("_", "-"),
                parameter=parameters[0] if parameters else None,
                condition=condition if stand_in else None,
                stand_in=stand_in,
                stand_in_path=path,
                url=urls[0] if urls else None,
            )
        )
    return tuple(found)


def consumers(template: Template) -> tuple[Consumer, ...]:
    """Every function fed by SQS queues, in template order, each with its queues in the order of its events."""
    by_function: dict[str, list[str]] = {}
    for queue in queues(template):
        for reader in queue_readers(template, queue):
            if template.resources[reader].get("Type") != "AWS::Pipes::Pipe":
                by_function.setdefault(reader, []).append(queue)
    found = []
    for function in (lid for lid in template.resources if lid in by_function):
        # as the function lists its events (where a loop writes a queue moves it in template order)
        in_events = [
            ref_id(ep.get("Queue")) for _, ep, kind in sam_events(template.resources[function]) if kind == "SQS"
        ]
        sources = tuple(
            sorted(by_function[function], key=lambda q: in_events.index(q) if q in in_events else len(in_events))
        )
        role = role_of(template, function)
        found.append(
            Consumer(
                function=function,
                queues=sources,
                dead_letter_queues=tuple(d for q in sources if (d := dead_letter_queue_path(template, q))),
                role=role,
                log_group=log_group_of(template, function),
                key_prefixes=key_prefixes(template, role),
                providers=providers(template, function),
            )
        )
    return tuple(found)


def providers_called(template: Template) -> tuple[Provider, ...]:
    """Every provider the stack's functions call (the template's and its units'), once per dependency, in template
    order (the first function that calls it gives its variable, parameter and stand-in)."""
    found: dict[str, Provider] = {}
    for _, holder in template.walk():
        for function in holder.of_type(*wiring.FUNCTIONS):
            for provider in providers(holder, function):
                found.setdefault(provider.dependency, provider)
    return tuple(found.values())


def _at(consumer: Consumer, prefix: str) -> Consumer:
    """``consumer`` of the unit at ``prefix`` named by stack path (its DLQs and providers already are)."""
    if not prefix:
        return consumer
    return replace(
        consumer,
        function=prefix + consumer.function,
        queues=tuple(prefix + q for q in consumer.queues),
        role=None if consumer.role is None else prefix + consumer.role,
        log_group=None if consumer.log_group is None else prefix + consumer.log_group,
    )


def stack_consumers(template: Template) -> tuple[Consumer, ...]:
    """Every consumer of the stack, the root's and its created units' (:meth:`Template.walk` order), each named by
    stack path: ``Consumidores/ErpFunction`` with its queues, role and log group in that unit."""
    return tuple(_at(c, prefix) for prefix, unit in template.walk() for c in consumers(unit))


def fan_out(template: Template) -> tuple[Consumer, ...]:
    """The consumers of the queues an SNS topic delivers to (:func:`subscribed_queues`), in the root and its
    created units, in that order, named by stack path (:func:`stack_consumers`)."""
    found: dict[str, Consumer] = {}
    for prefix, unit in template.walk():
        by_function = {c.function: c for c in consumers(unit)}
        for queue in subscribed_queues(unit):
            for reader in queue_readers(unit, queue):
                if reader in by_function:
                    found.setdefault(prefix + reader, _at(by_function[reader], prefix))
    return tuple(found.values())


def retained(template: Template) -> tuple[str, ...]:
    """Resources a stack delete keeps (``DeletionPolicy`` Retain), whose Condition holds, in template order."""
    return tuple(
        lid
        for lid, r in template.resources.items()
        if r.get("DeletionPolicy") in RETAINED and template.condition(r.get("Condition"))
    )


def physical_name(template: Template, logical_id: str, property_name: str) -> str:
    """A resource's physical name (its ``QueueName``, ``FunctionName``...) resolved with its template's parameters;
    ``logical_id`` may be a stack path (``Consumidores/ColaErp``)."""
    holder, logical_id = template.locate(logical_id)
    return str(holder.resolve(props(holder.resources[logical_id])[property_name]))
