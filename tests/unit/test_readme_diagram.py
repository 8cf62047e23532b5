"""The README's architecture diagram is the template's (issue 39), read through `template_model`.

The diagram is Mermaid, which GitHub draws. Its convention, which this test holds it to: a node that
is a resource of `template.yaml` has the resource's **logical id** as its Mermaid id and its
**physical name** (as the default parameters resolve it) in its label; every other node (the
customer, the providers) names no resource; every label is quoted (`ColaPedidos[["..."]]`), so none
escapes the checks. Then:

- every name of the stack in the diagram (a queue, topic, bus, table, state machine, pipe, function,
  rule, database, cache: any word made of the stack's stems, `mercadofresco`, `mf`) is a physical
  name of the template;
- every queue and dead-letter queue of the template is drawn;
- every arrow between two resources is wiring of the template: one names the other (a SAM function
  with its `Globals`; a unit's output, the resources that output names), or a rule, subscription, pipe,
  event source mapping or alarm names both.
"""

from __future__ import annotations

import itertools
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from template_model import Template

RAIZ = Path(__file__).resolve().parents[2]
README = RAIZ / "README.md"

# The property that holds each kind of resource's physical name.
NAME_PROPERTY = {
    "AWS::SQS::Queue": "QueueName",
    "AWS::SNS::Topic": "TopicName",
    "AWS::Events::EventBus": "Name",
    "AWS::Events::Rule": "Name",
    "AWS::DynamoDB::Table": "TableName",
    "AWS::Serverless::StateMachine": "Name",
    "AWS::StepFunctions::StateMachine": "StateMachineName",
    "AWS::Pipes::Pipe": "Name",
    "AWS::Serverless::Function": "FunctionName",
    "AWS::Serverless::HttpApi": "Name",
    "AWS::RDS::DBCluster": "DBClusterIdentifier",
    "AWS::RDS::DBInstance": "DBInstanceIdentifier",
    "AWS::ElastiCache::ServerlessCache": "ServerlessCacheName",
    "AWS::KMS::Alias": "AliasName",
}
# Resources whose only job is to connect two others: an arrow through them is wiring.
CONNECTORS = (
    "AWS::Events::Rule",
    "AWS::SNS::Subscription",
    "AWS::Pipes::Pipe",
    "AWS::Lambda::EventSourceMapping",
    "AWS::CloudWatch::Alarm",
)
STEMS = {"mercadofresco", "mf"}  # a word with one of these parts is a name of the stack

_BLOCK = re.compile(r"```mermaid\n(.*?)```", re.S)
_OPEN_CLOSE = r"(\[\[|\[\(|\(\[|\[/|\(\(|\{\{|\[|\(|\{)\"([^\"]*)\"(\]\]|\)\]|\]\)|/\]|\)\)|\}\}|\]|\)|\})"
_NODE = re.compile(r"\b([A-Za-z]\w*)\s*" + _OPEN_CLOSE)
_QUOTED = re.compile(r"\"([^\"]*)\"")
_ARROW = re.compile(r"-\.\s*\.->|--\s*-->|-\.->|-->|==>|---")
_WORD = re.compile(r"[a-z0-9][a-z0-9./-]*[a-z0-9]")
_KEYWORDS = ("flowchart", "graph", "subgraph", "end", "classDef", "class ", "style", "linkStyle", "direction")


# ------------------------------------------------------------------ the diagram
class Diagram:
    """Nodes (id -> label), arrows (id, id) and every label's text, from one Mermaid flowchart."""

    def __init__(self, source: str) -> None:
        self.nodes: dict[str, str] = {}
        self.arrows: list[tuple[str, str]] = []
        self.texts: list[str] = []
        for raw in source.splitlines():
            line = raw.split("%%", 1)[0].strip()
            if not line or line.startswith(_KEYWORDS):
                continue
            for node_id, _, label, _ in _NODE.findall(line):
                if self.nodes.get(node_id, label) not in ("", label):
                    raise AssertionError(f"node {node_id} drawn with two labels")
                self.nodes[node_id] = label
                self.texts.append(label)
            skeleton = _NODE.sub(lambda m: m.group(1), line)
            self.texts += _QUOTED.findall(skeleton) + re.findall(r"\|([^|]*)\|", skeleton)
            skeleton = re.sub(r"\|[^|]*\|", "", _QUOTED.sub("", skeleton))
            if unquoted := re.search(r"\w\s*[\[({>]", skeleton):
                # an unquoted label would be invisible to the checks below
                raise AssertionError(
                    f'quote every node label, as in ColaPedidos[["..."]]: {raw.strip()!r} ({unquoted[0]})'
                )
            groups = [[n.strip() for n in part.split("&")] for part in _ARROW.split(skeleton)]
            for left, right in itertools.pairwise(groups):
                self.arrows += [(a, b) for a in left for b in right]
            for node_id in (n for group in groups for n in group if n):
                self.nodes.setdefault(node_id, "")


def readme_diagram(text: str | None = None) -> Diagram:
    blocks = _BLOCK.findall(README.read_text() if text is None else text)
    assert len(blocks) == 1, f"README.md should hold one Mermaid diagram, it holds {len(blocks)}"
    return Diagram(blocks[0])


def stack_names(text: str) -> set[str]:
    """The words of ``text`` that are names of the stack (`cola-mercadofresco-pedidos`, `pipe-mf-pedidos`)."""
    words = _WORD.findall(text.replace("<br/>", " ").replace("<br>", " "))
    return {w for w in words if STEMS & set(re.split(r"[-./]", w))}


# ------------------------------------------------------------------ the template, through template_model
@cache
def walked() -> tuple[tuple[str, Template], ...]:
    """(path, template) for the root and each unit it nests, read once."""
    return tuple(Template(path=RAIZ / "template.yaml").walk())


def template_units() -> tuple[Template, ...]:
    return tuple(unit for _, unit in walked())


@cache
def unit_outputs() -> dict[str, set[str]]:
    """``Unit.Outputs.X`` -> what that output names: a parent's ``GetAtt Unit.Outputs.X`` reaches those resources."""
    return {
        f"{path.rstrip('/').rsplit('/', 1)[-1]}.Outputs.{name}": _named(output)
        for path, unit in walked()
        if path
        for name, output in (unit.doc.get("Outputs") or {}).items()
    }


@cache
def physical_names() -> dict[str, tuple[str, str]]:
    """logical id -> (type, physical name) of every named resource whose Condition holds at the defaults."""
    found = {}
    for unit in template_units():
        for logical_id, resource in unit.resources.items():
            prop = NAME_PROPERTY.get(resource.get("Type", ""))
            properties = resource.get("Properties") or {}
            if prop in properties and unit.condition(resource.get("Condition")):
                found[logical_id] = (resource["Type"], str(unit.resolve(properties[prop])))
    return found


def _target(attribute: str) -> str:
    """What ``X.Attr`` names: the resource ``X``, or a unit's output whole (``Unit.Outputs.Name``)."""
    resource, _, rest = attribute.partition(".")
    return attribute if rest.startswith("Outputs.") else resource


def _named(node: Any) -> set[str]:
    """Every logical id or parameter a definition names: Ref, GetAtt, and ``${X}``/``${X.Attr}`` in a Sub; a unit's
    output as ``Unit.Outputs.X`` (:func:`unit_outputs`)."""
    if isinstance(node, list):
        return set().union(*map(_named, node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found: set[str] = set()
    for key, value in node.items():
        if key == "Ref" and isinstance(value, str):
            found.add(value)
        elif key == "Fn::GetAtt":
            found.add(_target(value if isinstance(value, str) else ".".join(value)))
        elif key == "Fn::Sub":
            text = value if isinstance(value, str) else value[0]
            found |= {_target(n) for n in re.findall(r"\$\{([^}!]+)\}", text)}
            found |= _named(value[1:] if isinstance(value, list) else [])
        else:
            found |= _named(value)
    return found


@cache
def unit_parameters() -> dict[str, dict[str, set[str]]]:
    """A unit's logical id -> each of its parameters -> what its parent names in the value it passes: a unit's
    ``Ref Parameter`` reaches those resources."""
    return {
        logical_id: {name: _named(value) for name, value in (resource["Properties"].get("Parameters") or {}).items()}
        for _, unit in walked()
        for logical_id, resource in unit.of_type("AWS::Serverless::Application").items()
    }


@cache
def wiring() -> tuple[dict[str, set[str]], list[set[str]]]:
    """(what each resource names, what each connector names) across the template's units."""
    names: dict[str, set[str]] = {}
    connectors = []
    for path, unit in walked():
        shared = _named((unit.doc.get("Globals") or {}).get("Function") or {})
        passed = unit_parameters().get(path.rstrip("/").rsplit("/", 1)[-1], {}) if path else {}
        for logical_id, resource in unit.resources.items():
            named = _named(resource) | (shared if resource.get("Type") == "AWS::Serverless::Function" else set())
            named = named.union(*(passed.get(n, set()) for n in named))
            names[logical_id] = named.union(*(unit_outputs().get(n, set()) for n in named))
            if resource.get("Type") in CONNECTORS:
                connectors.append(named)
    return names, connectors


def connected(a: str, b: str) -> bool:
    names, connectors = wiring()
    return b in names.get(a, set()) or a in names.get(b, set()) or any({a, b} <= c for c in connectors)


# ------------------------------------------------------------------ the checks, for any diagram
def misnamed_nodes(diagram: Diagram) -> list[str]:
    found = []
    names = physical_names()
    resources = set(wiring()[0])
    for node_id, label in diagram.nodes.items():
        if node_id in names:
            kind, name = names[node_id]
            if name not in stack_names(label) and name not in label.replace("<br/>", " ").split():
                found.append(f"{node_id} ({kind}) is {name!r}, its label says {label!r}")
        elif node_id in resources:
            found.append(f"{node_id} is a resource with no name of its own: draw what it connects instead")
        elif drawn := stack_names(label) & {n for _, n in names.values()}:
            found.append(f"node {node_id!r} shows {sorted(drawn)}: give it the resource's logical id")
    return found


def unknown_names(diagram: Diagram) -> list[str]:
    known = {name for _, name in physical_names().values()}
    return sorted({n for text in diagram.texts for n in stack_names(text)} - known)


def queues_not_drawn(diagram: Diagram) -> list[str]:
    queues = [lid for lid, (kind, _) in physical_names().items() if kind == "AWS::SQS::Queue"]
    return [q for q in queues if q not in diagram.nodes]


def arrows_without_wiring(diagram: Diagram) -> list[str]:
    resources = set(wiring()[0])
    return [f"{a} --> {b}" for a, b in diagram.arrows if a in resources and b in resources and not connected(a, b)]


# ------------------------------------------------------------------ the tests
def test_every_resource_node_carries_its_logical_id_and_physical_name() -> None:
    assert not misnamed_nodes(readme_diagram())


def test_every_name_of_the_stack_in_the_diagram_is_a_resource_of_the_template() -> None:
    assert not unknown_names(readme_diagram())


def test_every_queue_and_dead_letter_queue_of_the_template_is_drawn() -> None:
    assert not queues_not_drawn(readme_diagram())


def test_a_diagram_with_an_unquoted_label_is_refused() -> None:
    # GIVEN the README's diagram as it was before issue 39: ids of its own, labels unquoted
    old = "```mermaid\nflowchart LR\n  bus{{bus-mercadofresco}} --> cola[[cola-mercadofresco-pedidos]]\n```\n"
    # WHEN read / THEN it is refused rather than read as nodes with no names
    with pytest.raises(AssertionError, match="quote every node label"):
        readme_diagram(old)


def test_every_arrow_between_two_resources_is_wiring_of_the_template() -> None:
    diagram = readme_diagram()
    assert len(diagram.arrows) > 20  # the parser found the arrows
    assert not arrows_without_wiring(diagram)


@pytest.mark.parametrize(
    ("pattern", "replacement", "check", "expected"),
    [
        # a queue renamed in the picture only
        (
            r'"cola-mercadofresco-pedidos"',
            '"cola-mercadofresco-pedido"',
            misnamed_nodes,
            [
                "ColaPedidos (AWS::SQS::Queue) is 'cola-mercadofresco-pedidos', "
                "its label says 'cola-mercadofresco-pedido'"
            ],
        ),
        (r'"cola-mercadofresco-pedidos"', '"cola-mercadofresco-pedido"', unknown_names, ["cola-mercadofresco-pedido"]),
        # a dead-letter queue left out of the picture
        (r"(?m)^.*ColaStockFallidos.*\n", "", queues_not_drawn, ["ColaStockFallidos"]),
        # an arrow the template has no wiring for
        (
            r"flowchart LR\n",
            "flowchart LR\n  ColaErp --> ProcesarPedido\n",
            arrows_without_wiring,
            ["ColaErp --> ProcesarPedido"],
        ),
    ],
)
def test_the_checks_catch_a_diagram_that_drifted_from_the_template(pattern, replacement, check, expected) -> None:
    # GIVEN the README's diagram with one drift
    text, changes = re.subn(pattern, replacement, README.read_text())
    assert changes
    # WHEN checked
    found = check(readme_diagram(text))
    # THEN the drift is reported
    assert found == expected
