"""Read a decoded CloudFormation/SAM template the way the messaging rules need it.

The reading itself is the template model's (``template_model.wiring``: one reader of the template for
every tool, issue 40): this module re-exports it under the names the rules use and adds what only a
cfn-lint rule needs (RuleMatch paths, the folder of the linted file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from template_model import Template, TemplateError, as_nested, messaging, nestings
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


def as_nestings(cfn: Any, document: dict | None = None) -> list[tuple[str, dict]]:
    """The linted template (``document``, else cfn-lint's) as each parent nests it: (stack path, the document
    with what that parent passes, :func:`template_model.as_nested`) for a unit, ``[("", document)]`` for a
    template that stands alone. cfn-lint lints a unit alone; its numbers are its parent's."""
    document = cfn.template if document is None else document
    filename = getattr(cfn, "filename", None)
    units = nestings(filename) if filename and Path(filename).is_file() else []
    return [(u.prefix.rstrip("/"), as_nested(document, u)) for u in units] or [("", document)]


def nested_as(message: str, nesting: str) -> str:
    """A rule's message for one nesting of a unit (:func:`as_nestings`)."""
    return f"{message} (nested as {nesting})" if nesting else message


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
