"""The wiring of a template as written, before anything is resolved: who sends what to which queue.

These read a decoded document (a plain ``dict``, loops expanded) without resolving intrinsics: a
reference is followed by the logical id it names (:func:`ref_id`). cfn-lint 1.58 does not run the SAM
transform, so its rules get the template as written, ``Globals`` merged into each written
``AWS::Serverless::*`` resource; a queue consumer can then be spelt two ways (a SAM function's
``Events`` entry of type ``SQS``, or a native ``AWS::Lambda::EventSourceMapping``) and every helper here
understands both. The rule pack (``cfn_lint_mensajeria.recursos``) re-exports them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

SQS_QUEUE = "AWS::SQS::Queue"
ESM = "AWS::Lambda::EventSourceMapping"
SAM_FUNCTION = "AWS::Serverless::Function"
LAMBDA_FUNCTION = "AWS::Lambda::Function"
FUNCTIONS = (SAM_FUNCTION, LAMBDA_FUNCTION)
PIPE = "AWS::Pipes::Pipe"
ALARM = "AWS::CloudWatch::Alarm"
SAM_STATE_MACHINE = "AWS::Serverless::StateMachine"
SFN_STATE_MACHINE = "AWS::StepFunctions::StateMachine"
STATE_MACHINES = (SAM_STATE_MACHINE, SFN_STATE_MACHINE)

DEFAULT_LAMBDA_TIMEOUT_S = 3  # CloudFormation's and SAM's default function timeout
DEFAULT_VISIBILITY_TIMEOUT_S = 30  # SQS default
STREAM_EVENT_TYPES = ("DynamoDB", "Kinesis")


def resources(template: dict, *types: str) -> dict[str, dict]:
    """Resources of the given types (all when none), by logical id."""
    found = template.get("Resources") or {}
    return {rid: res for rid, res in found.items() if isinstance(res, dict) and (not types or res.get("Type") in types)}


def props(resource: dict | None) -> dict:
    """A resource's Properties (empty when absent or not a mapping)."""
    value = (resource or {}).get("Properties")
    return value if isinstance(value, dict) else {}


def ref_id(value: Any) -> str | None:
    """The logical id a Ref / GetAtt / simple Sub points at, else None."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    ((key, arg),) = value.items()
    if key == "Ref" and isinstance(arg, str):
        return arg
    if key == "Fn::GetAtt":
        if isinstance(arg, list) and arg and isinstance(arg[0], str):
            return arg[0]
        if isinstance(arg, str):
            return arg.split(".", 1)[0]
    if key == "Fn::Sub" and isinstance(arg, str) and arg.startswith("${") and arg.endswith("}"):
        return arg[2:-1].split(".", 1)[0]
    return None


def as_int(value: Any) -> int | None:
    """An integer property value, or None when it is an intrinsic or absent."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def redrive(template: dict, queue: dict) -> tuple[str | None, int | None] | None:
    """(DLQ logical id, maxReceiveCount, read from ``Mappings`` when written so) of a queue, or None without a
    RedrivePolicy. A unit's count is its parent's: read the unit as nested (:func:`template_model.as_nested`)."""
    policy = props(queue).get("RedrivePolicy")
    if isinstance(policy, str):
        try:
            policy = json.loads(policy)
        except ValueError:
            return None
    if not isinstance(policy, dict):
        return None
    return ref_id(policy.get("deadLetterTargetArn")), as_int(find_in_map(template, policy.get("maxReceiveCount")))


def dead_letter_queues(template: dict, parameters: bool = False) -> dict[str, list[str]]:
    """Queues that receive dead letters, mapped to who sends them there.

    A queue counts as a DLQ when another queue's RedrivePolicy, an event source
    mapping's OnFailure destination, a Pipe's DeadLetterConfig, a function's
    DeadLetterQueue, an EventBridge rule target's DeadLetterConfig or an SNS
    subscription's RedrivePolicy points at it. ``parameters``: the template's parameters
    pointed at instead (a nested unit handed its DLQ by its parent).
    """
    queues = resources(template, SQS_QUEUE)
    candidates = (template.get("Parameters") or {}) if parameters else queues
    found: dict[str, list[str]] = {}

    def add(target: Any, source: str) -> None:
        qid = ref_id(target)
        if qid in candidates:
            found.setdefault(qid, []).append(source)

    for qid, queue in queues.items():
        policy = redrive(template, queue)
        if policy:
            add({"Ref": policy[0]} if policy[0] else None, qid)
    for rid, res in resources(template).items():
        p = props(res)
        add(((p.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination"), rid)
        add((p.get("DeadLetterQueue") or {}).get("TargetArn"), rid)
        add((p.get("DeadLetterConfig") or {}).get("TargetArn"), rid)
        if res.get("Type") == "AWS::SNS::Subscription":
            add((p.get("RedrivePolicy") or {}).get("deadLetterTargetArn"), rid)
        targets = p.get("Targets") if res.get("Type") == "AWS::Events::Rule" else None
        for target in targets if isinstance(targets, list) else []:
            if isinstance(target, dict):
                add((target.get("DeadLetterConfig") or {}).get("Arn"), rid)
        for params in (p.get("SourceParameters") or {}).values():
            if isinstance(params, dict):
                add((params.get("DeadLetterConfig") or {}).get("Arn"), rid)
        for event in sam_events(res):
            dest = ((event[1].get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
            add(dest, rid)
    return found


def sam_events(resource: dict) -> list[tuple[str, dict, str]]:
    """(event name, event Properties, event Type) of a SAM function's Events."""
    events = props(resource).get("Events")
    if resource.get("Type") != SAM_FUNCTION or not isinstance(events, dict):
        return []
    out = []
    for name, event in events.items():
        if isinstance(event, dict):
            ep = event.get("Properties")
            out.append((name, ep if isinstance(ep, dict) else {}, str(event.get("Type"))))
    return out


@dataclass(frozen=True)
class SourceMapping:
    """Something that receives from a queue or stream: a Lambda mapping or a Pipe."""

    source: str  # logical id of the queue / table / stream
    kind: str  # "lambda" or "pipe"
    resource: str  # logical id of the function (SAM event) / mapping / pipe
    path: tuple[str | int, ...]  # where the mapping's properties sit, for RuleMatch
    mapping: dict = field(hash=False)  # the mapping's properties (FunctionResponseTypes, ScalingConfig...)
    function: str | None = None  # consuming function's logical id, when a Lambda


def source_mappings(template: dict, sqs: bool = True) -> list[SourceMapping]:
    """SQS consumers (``sqs=True``) or stream consumers (DynamoDB/Kinesis) of the template."""
    out: list[SourceMapping] = []
    queues = resources(template, SQS_QUEUE)
    for rid, res in resources(template, SAM_FUNCTION).items():
        for name, ep, etype in sam_events(res):
            if sqs and etype == "SQS":
                source = ref_id(ep.get("Queue"))
            elif not sqs and etype in STREAM_EVENT_TYPES:
                source = ref_id(ep.get("Stream"))
            else:
                continue
            path = ("Resources", rid, "Properties", "Events", name, "Properties")
            out.append(SourceMapping(source or "?", "lambda", rid, path, ep, rid))
    for rid, res in resources(template, ESM).items():
        p = props(res)
        source = ref_id(p.get("EventSourceArn"))
        if (source in queues) == sqs and _is_known_source(template, p.get("EventSourceArn"), sqs):
            out.append(
                SourceMapping(
                    source or "?", "lambda", rid, ("Resources", rid, "Properties"), p, ref_id(p.get("FunctionName"))
                )
            )
    for rid, res in resources(template, PIPE).items():
        p = props(res)
        source = ref_id(p.get("Source"))
        if (source in queues) == sqs and _is_known_source(template, p.get("Source"), sqs):
            out.append(SourceMapping(source or "?", "pipe", rid, ("Resources", rid, "Properties"), p))
    return out


def _is_known_source(template: dict, value: Any, sqs: bool) -> bool:
    """Whether an ARN value is a queue (sqs) or a stream (not sqs) we can recognise."""
    rid = ref_id(value)
    if rid is not None and rid in resources(template):
        if sqs:
            return True
        rtype = resources(template)[rid].get("Type", "")
        return rtype in ("AWS::DynamoDB::Table", "AWS::Kinesis::Stream", "AWS::Serverless::SimpleTable")
    text = json.dumps(value)
    return (":sqs:" in text) if sqs else (":dynamodb:" in text or ":kinesis:" in text)


def function_props(template: dict, function_id: str | None) -> dict | None:
    """A function's Properties with SAM Globals applied (cfn-lint has merged them already;
    a template read by a plain decoder has not), None when the id is not a function."""
    res = resources(template, *FUNCTIONS).get(function_id or "")
    if res is None:
        return None
    own = props(res)
    glob = ((template.get("Globals") or {}).get("Function") or {}) if res.get("Type") == SAM_FUNCTION else {}
    if not isinstance(glob, dict) or not glob:
        return own
    merged = {**glob, **own}
    variables = {**_variables(glob), **_variables(own)}
    if variables:
        merged["Environment"] = {**(merged.get("Environment") or {}), "Variables": variables}
    return merged


def _variables(properties: dict) -> dict:
    variables = (properties.get("Environment") or {}).get("Variables")
    return variables if isinstance(variables, dict) else {}


def find_in_map(template: dict, value: Any) -> Any:
    """The value a ``Fn::FindInMap`` of plain keys names in ``Mappings``; anything else unchanged."""
    if not isinstance(value, dict) or set(value) != {"Fn::FindInMap"}:
        return value
    keys = value["Fn::FindInMap"]
    if not isinstance(keys, list) or len(keys) < 3 or not all(isinstance(k, str) for k in keys[:3]):
        return value
    second = ((template.get("Mappings") or {}).get(keys[0]) or {}).get(keys[1])
    return second[keys[2]] if isinstance(second, dict) and keys[2] in second else value


def function_timeout_s(template: dict, function_id: str | None) -> int | None:
    """A function's Timeout (with Globals, or from Mappings), its default when unset, None when unknown."""
    p = function_props(template, function_id)
    return None if p is None else as_int(find_in_map(template, p.get("Timeout", DEFAULT_LAMBDA_TIMEOUT_S)))


def function_env(template: dict, function_id: str | None) -> dict:
    """A function's environment variables (with Globals; a value from Mappings resolved)."""
    return {k: find_in_map(template, v) for k, v in _variables(function_props(template, function_id) or {}).items()}
