"""Read a decoded CloudFormation/SAM template the way the messaging rules need it.

The reading itself is the template model's (``template_model.wiring``: one reader of the template for
every tool, issue 40): this module re-exports it under the names the rules use and adds what only a
cfn-lint rule needs (RuleMatch paths, the folder of the linted file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from template_model import Template, TemplateError, messaging
from template_model.wiring import (
    ALARM,
    DEFAULT_LAMBDA_TIMEOUT_S,
    DEFAULT_VISIBILITY_TIMEOUT_S,
    ESM,
    FUNCTIONS,
    LAMBDA_FUNCTION,
    PIPE,
    SAM_FUNCTION,
    SAM_STATE_MACHINE,
    SFN_STATE_MACHINE,
    SQS_QUEUE,
    STATE_MACHINES,
    STREAM_EVENT_TYPES,
    SourceMapping,
    as_int,
    dead_letter_queues,
    find_in_map,
    function_env,
    function_props,
    function_timeout_s,
    props,
    redrive,
    ref_id,
    resources,
    sam_events,
    source_mappings,
)

# The rules' names for a queue's or stream's reader (a Lambda mapping or a pipe).
Consumer = SourceMapping
consumers = source_mappings

__all__ = [
    "ALARM",
    "DEFAULT_LAMBDA_TIMEOUT_S",
    "DEFAULT_VISIBILITY_TIMEOUT_S",
    "ESM",
    "FUNCTIONS",
    "LAMBDA_FUNCTION",
    "PIPE",
    "SAM_FUNCTION",
    "SAM_STATE_MACHINE",
    "SFN_STATE_MACHINE",
    "SQS_QUEUE",
    "STATE_MACHINES",
    "STREAM_EVENT_TYPES",
    "Consumer",
    "as_int",
    "base_dir",
    "consumers",
    "dead_letter_queues",
    "dead_letter_queues_with_units",
    "definition_path",
    "find_in_map",
    "function_env",
    "function_props",
    "function_timeout_s",
    "path_to",
    "props",
    "redrive",
    "ref_id",
    "resources",
    "sam_events",
]


def path_to(resource_id: str, *keys: str | int) -> list[str | int]:
    """A RuleMatch path under a resource."""
    return ["Resources", resource_id, *keys]


def base_dir(cfn: Any) -> Path:
    """Folder that relative paths in a template (DefinitionUri) are relative to."""
    filename = getattr(cfn, "filename", None)
    return Path(filename).parent if filename else Path()


def definition_path(resource_id: str, resource: dict) -> list[str | int]:
    """Where a state machine's definition is written, for RuleMatch paths."""
    p = props(resource)
    key = next((k for k in ("DefinitionUri", "Definition", "DefinitionString") if k in p), "Properties")
    return path_to(resource_id, "Properties", key) if key != "Properties" else path_to(resource_id)


def dead_letter_queues_with_units(cfn: Any) -> dict[str, list[str]]:
    """The linted file's DLQs (:func:`dead_letter_queues`: who sends to each), and those a nested unit of it names
    through the parameter the file passes the queue in: what a stack delete retains stays in the root while its
    senders may live in a unit (decision 0130)."""
    found = dead_letter_queues(cfn.template)
    try:
        handed = messaging.dead_letter_queues(Template.from_document(cfn.template, getattr(cfn, "filename", None)))
    except (TemplateError, OSError):
        return found  # a unit that cannot be read is cfn-lint's own finding (E3043...), not this one's
    for queue in handed:
        found.setdefault(queue, ["a nested unit"])
    return found
