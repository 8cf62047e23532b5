"""Worst-case attempts per dependency, computed from a template (lesson 07-05, section 7).

Retry layers multiply: the function's own attempts at its provider (HTTP client or
SDK) × the times a queue redelivers the message (``maxReceiveCount``) × the attempts
of the workflow step that invokes the function (1 + its retriers' ``MaxAttempts``).
The lesson's rule: write the number down per dependency; above 15 something retries
too much.

Inputs the template cannot show are declared by the function owners:

- ``HTTP_MAX_ATTEMPTS`` (function environment variable, Globals allowed): attempts the
  function makes per invocation at its provider. Absent → ``DEFAULT_HTTP_ATTEMPTS``
  (2, the ``max_attempts=2`` the lesson sets), and the route says it was assumed.
- ``Metadata: {Mensajeria: {Dependencia: <name>, ErroresSinLlamada: [...]}}`` on the
  function: the provider's name in reports (default: the function's logical id), and the
  errors it raises *without* calling the provider (e.g. ``CircuitoAbierto``, failing fast).

How redelivery multiplies:

- SQS → Lambda (SAM ``Events: SQS`` or ``AWS::Lambda::EventSourceMapping``): each
  failed receive redelivers, so × ``maxReceiveCount``.
- SQS → Pipe → state machine: × ``maxReceiveCount`` only with ``InvocationType:
  REQUEST_RESPONSE`` (Express); a standard workflow is started ``FIRE_AND_FORGET``, the
  message is deleted once the execution starts and the workflow's failure does not
  bring it back, so × 1.
- A workflow task invoking the function: × (1 + Σ ``MaxAttempts``) of its retriers,
  counting every retrier except those matching only Lambda service errors (which fire
  before the function's code runs) or the function's declared ``ErroresSinLlamada``.
  Σ, not max: each retrier keeps its own counter.
- A task inside a bounded loop of the workflow (asked again after a ``Wait``): × the visits that
  can call, declared on the state machine as ``Metadata: {Mensajeria: {VisitasMaximas: {State: n}}}``
  (the ASL has no metadata; a test pins each number to the loop's ``Choice`` bound). Undeclared: 1.

Not counted, because the function's code never runs: Lambda's own service errors and
``Lambda.TooManyRequestsException`` (a throttled invocation never reaches the provider, however
long the workflow waits for capacity).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cfn_lint_mensajeria import asl
from cfn_lint_mensajeria.recursos import (
    FUNCTIONS,
    PIPE,
    SQS_QUEUE,
    as_int,
    consumers,
    function_env,
    props,
    redrive,
    ref_id,
    resources,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

LIMIT = 15  # the lesson's ceiling for attempts per dependency
DEFAULT_HTTP_ATTEMPTS = 2  # max_attempts=2: the SDK/HTTP layer absorbs only blips
HTTP_ATTEMPTS_ENV = "HTTP_MAX_ATTEMPTS"
# SQS's highest maxReceiveCount: a count the rule cannot read (a unit's parameter no parent passes as a number)
# is taken as the most a queue allows, not as one receive.
SQS_MAX_RECEIVE_COUNT = 1000
DEFAULT_RETRY_MAX_ATTEMPTS = 3  # ASL default when a retrier omits MaxAttempts
_PLACEHOLDER = re.compile(r"\$\{([^}.]+)(?:\.[^}]*)?\}")


@dataclass(frozen=True)
class Ruta:
    """One way a message reaches a dependency, with the attempts each layer adds."""

    dependencia: str
    funcion: str
    pasos: tuple[str, ...]
    intentos_http: int
    recepciones: int
    intentos_flujo: int
    http_supuesto: bool
    visitas: int = 1

    @property
    def total(self) -> int:
        return self.intentos_http * self.recepciones * self.intentos_flujo * self.visitas

    def describir(self) -> str:
        assumed = " assumed" if self.http_supuesto else ""
        visits = f" × {self.visitas} visits" if self.visitas != 1 else ""
        return (
            f"{self.dependencia}: {' → '.join(self.pasos)}: "
            f"{self.intentos_http} HTTP{assumed} × {self.recepciones} receives × "
            f"{self.intentos_flujo} workflow{visits} = {self.total}"
        )


def _http_attempts(template: dict, function_id: str) -> tuple[int, bool]:
    declared = as_int(function_env(template, function_id).get(HTTP_ATTEMPTS_ENV))
    return (declared, False) if declared else (DEFAULT_HTTP_ATTEMPTS, True)


def _mensajeria(template: dict, function_id: str) -> dict:
    meta = (resources(template, *FUNCTIONS).get(function_id) or {}).get("Metadata") or {}
    found = meta.get("Mensajeria") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def _dependency(template: dict, function_id: str) -> str:
    name = _mensajeria(template, function_id).get("Dependencia")
    return name if isinstance(name, str) else function_id


def _no_call_errors(template: dict, function_id: str) -> frozenset[str]:
    declared = _mensajeria(template, function_id).get("ErroresSinLlamada") or []
    return asl.LAMBDA_SERVICE_ERRORS | {e for e in declared if isinstance(e, str)}


def _ruta(template: dict, function_id: str, pasos: list[str], receives: int, workflow: int, visits: int = 1) -> Ruta:
    http, assumed = _http_attempts(template, function_id)
    pasos = [*pasos, f"{function_id} ({HTTP_ATTEMPTS_ENV} {http}{' assumed' if assumed else ''})"]
    return Ruta(
        _dependency(template, function_id), function_id, tuple(pasos), http, receives, workflow, assumed, visits
    )


def _visits(template: dict, machine_id: str) -> dict[str, int]:
    """``Metadata.Mensajeria.VisitasMaximas`` of a state machine: state name -> visits that can call."""
    meta = (resources(template).get(machine_id) or {}).get("Metadata") or {}
    found = (meta.get("Mensajeria") or {}).get("VisitasMaximas") if isinstance(meta, dict) else None
    return {k: as_int(v) or 1 for k, v in found.items()} if isinstance(found, dict) else {}


def _queue_step(template: dict, queue_id: str) -> tuple[str, int]:
    policy = redrive(template, resources(template, SQS_QUEUE).get(queue_id) or {})
    if policy is None:
        return f"{queue_id} (maxReceiveCount none)", 1
    if policy[1] is None:
        return f"{queue_id} (maxReceiveCount unknown, up to {SQS_MAX_RECEIVE_COUNT})", SQS_MAX_RECEIVE_COUNT
    return f"{queue_id} (maxReceiveCount {policy[1]})", policy[1]


def _workflow_attempts(retry: list[Any], no_call: frozenset[str]) -> int:
    total = 1
    for retrier in retry or []:
        if not isinstance(retrier, dict):
            continue
        errors = set(retrier.get("ErrorEquals") or [])
        if errors and errors <= no_call:
            continue
        total += as_int(retrier.get("MaxAttempts", DEFAULT_RETRY_MAX_ATTEMPTS)) or 0
    return total


def _invoked_function(body: dict, substitutions: dict, functions: set[str]) -> str | None:
    """The template function a Task state invokes, through DefinitionSubstitutions."""
    resource = body.get("Resource")
    if not isinstance(resource, str):
        return None
    target = resource
    if resource.startswith("arn:aws:states:::lambda:invoke"):
        params = body.get("Parameters") or body.get("Arguments") or {}
        target = params.get("FunctionName") if isinstance(params, dict) else None
    if not isinstance(target, str):
        return None
    for name in _PLACEHOLDER.findall(target):
        fid = ref_id(substitutions.get(name)) or name
        if fid in functions:
            return fid
    return None


def _machine_entries(template: dict, machine_id: str) -> list[tuple[list[str], int]]:
    """(steps, receive factor) for each way into a state machine; one direct entry if none."""
    entries = []
    for pid, pipe in resources(template, PIPE).items():
        p = props(pipe)
        if ref_id(p.get("Target")) != machine_id:
            continue
        params = (p.get("TargetParameters") or {}).get("StepFunctionStateMachineParameters") or {}
        source = ref_id(p.get("Source"))
        if source in resources(template, SQS_QUEUE):
            step, count = _queue_step(template, source)
            sync = params.get("InvocationType") == "REQUEST_RESPONSE"
            entries.append(
                ([step, f"{pid} ({'REQUEST_RESPONSE' if sync else 'FIRE_AND_FORGET'})"], count if sync else 1)
            )
    return entries or [([], 1)]


def _workflow_routes(template: dict, base_dir: Path) -> Iterator[Ruta]:
    functions = set(resources(template, *FUNCTIONS))
    for mid, definition, _ in asl.state_machines(template, base_dir):
        if definition is None:
            continue
        subs = props(resources(template)[mid]).get("DefinitionSubstitutions") or {}
        visits = _visits(template, mid)
        for estado in asl.walk(definition):
            fid = _invoked_function(estado.body, subs, functions)
            if fid is None:
                continue
            attempts = _workflow_attempts(estado.body.get("Retry"), _no_call_errors(template, fid))
            n = visits.get(estado.name, 1)
            label = f"{mid}:{estado.label} (1+retries = {attempts}{f', {n} visits' if n != 1 else ''})"
            for steps, receives in _machine_entries(template, mid):
                yield _ruta(template, fid, [*steps, label], receives, attempts, n)


def peor_caso(template: dict, base_dir: str | Path = ".") -> list[Ruta]:
    """Every route from a retry layer to a function's dependency, with its worst-case attempts.

    ``template`` is the decoded template (cfn-lint's decoder or any YAML loader that
    keeps intrinsics as ``{"Ref": ...}`` dicts); ``base_dir`` is where ``DefinitionUri``
    paths are relative to (the template's folder). Sorted worst first.
    """
    routes = list(_workflow_routes(template, Path(base_dir)))
    for consumer in consumers(template, sqs=True):
        if consumer.kind == "lambda" and consumer.function in resources(template, *FUNCTIONS):
            step, count = _queue_step(template, consumer.source)
            routes.append(_ruta(template, consumer.function, [step], count, 1))
    return sorted(routes, key=lambda r: (-r.total, r.dependencia, r.pasos))
