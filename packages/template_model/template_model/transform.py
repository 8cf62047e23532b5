"""A template through SAM's own translator (``samtranslator``), as ``sam deploy`` would send it.

For questions only the transformed template answers: the roles SAM generates for functions without
``Role``, the managed policies it attaches, the event source mappings an ``Events`` entry becomes.
samtranslator is installed with SAM CLI; it is imported only here.
"""

from __future__ import annotations

import copy
import json
import os
from typing import TYPE_CHECKING, Any

from template_model.document import TemplateError

if TYPE_CHECKING:
    from template_model.template import Template

ARTIFACT_PROPERTIES = ("CodeUri", "ContentUri", "DefinitionUri")


class _NoManagedPolicies:
    def load(self) -> dict[str, str]:
        return {}  # the template names managed policies by ARN only


def sam_transformed(template: Template | dict[str, Any], region: str | None = None) -> dict[str, Any]:
    """The template after the SAM transform, local artifact paths stubbed as ``sam package`` replaces them."""
    from samtranslator.model.exceptions import InvalidDocumentException
    from samtranslator.translator.transform import transform

    document = template if isinstance(template, dict) else template.doc
    region = region or (None if isinstance(template, dict) else template.region) or "us-east-1"
    document = json.loads(json.dumps(copy.deepcopy(document)))
    for resource in (document.get("Resources") or {}).values():
        properties = resource.get("Properties") or {}
        for key in ARTIFACT_PROPERTIES:
            if isinstance(properties.get(key), str) and not properties[key].startswith("s3://"):
                properties[key] = f"s3://sam-package/{properties[key]}"  # what `sam package` puts there
    previous = os.environ.get("AWS_DEFAULT_REGION")
    os.environ["AWS_DEFAULT_REGION"] = region  # the translator reads the region from boto's session
    try:
        return transform(document, {}, _NoManagedPolicies())
    except InvalidDocumentException as exc:
        raise TemplateError(f"the SAM transform refused the template: {exc}") from None
    finally:
        if previous is None:
            os.environ.pop("AWS_DEFAULT_REGION")
        else:
            os.environ["AWS_DEFAULT_REGION"] = previous
