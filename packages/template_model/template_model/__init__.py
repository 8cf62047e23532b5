"""One model of a SAM/CloudFormation template for every tool that reads one (issue 40).

``Template`` decodes the file with cfn-lint's decoder, expands ``Fn::ForEach`` as cfn-lint does, reads
nested units (``AWS::Serverless::Application`` with a local ``Location``) with the parameters their
parent passes, and resolves intrinsics, ``Mappings``, ``Conditions`` and parameters (a deploy profile's
through :func:`profile_parameters`). The questions live in one module each: ``messaging`` (consumers,
queues, DLQs, roles, key prefixes, providers and breakers), ``bounds`` (time bounds), ``wiring`` (the
unresolved wiring the rule pack walks), ``asl`` (state machine definitions) and ``transform`` (SAM's
own translator, imported only when asked).
"""

from __future__ import annotations

from template_model.document import TemplateError, expand, read
from template_model.messaging import Consumer, Provider, consumers
from template_model.profiles import profile_parameters, with_defaults
from template_model.template import NO_VALUE, Template, as_nested, nestings

__all__ = [
    "NO_VALUE",
    "Consumer",
    "Provider",
    "Template",
    "TemplateError",
    "as_nested",
    "consumers",
    "expand",
    "nestings",
    "profile_parameters",
    "read",
    "with_defaults",
]
