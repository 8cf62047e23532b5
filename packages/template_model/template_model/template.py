"""A template and what resolving it needs: parameters, conditions, mappings, intrinsics, nested units.

Everything that reads ``template.yaml`` reads it through :class:`Template`: the emulator (with the
local run's parameters and the physical ids it creates), the rule pack (cfn-lint's already-decoded
template, :meth:`Template.from_document`), the operator and deploy tools. Anything it cannot resolve
raises :class:`TemplateError` instead of guessing.
"""

from __future__ import annotations

import re
from copy import deepcopy
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from template_model.document import TemplateError, expand, read

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

_SUB_VAR = re.compile(r"\$\{([^}!]+)\}")
#: Resources that hold another template file (a unit, decision 0130) and the property naming it.
UNIT_TYPES = {"AWS::Serverless::Application": "Location", "AWS::CloudFormation::Stack": "TemplateURL"}
SAM_FUNCTION = "AWS::Serverless::Function"


class _NoValue:
    def __repr__(self) -> str:
        return "AWS::NoValue"


#: What ``!Ref AWS::NoValue`` resolves to; dropped from the mapping or list that holds it.
NO_VALUE = _NoValue()


@dataclass
class Template:
    """A decoded template (loops expanded) plus what resolving it needs."""

    # As ``sam`` reads it: template.yaml in the current directory unless told otherwise.
    path: Path = field(default_factory=lambda: Path("template.yaml"))
    parameters: dict[str, Any] = field(default_factory=dict)
    region: str = "eu-south-2"
    account: str = "123456789012"
    stack_name: str = "sam-emulator"  # AWS::StackName
    # logical id -> physical value for Ref / GetAtt, filled by whoever creates resources
    physical_ids: dict[str, Any] = field(default_factory=dict)
    # values used instead of a parameter's declared Default (the local run's, a deploy profile's)
    parameter_defaults: dict[str, Any] = field(default_factory=dict)
    # logical id -> the unit as whoever created it holds it (the emulator: with its physical ids)
    created_units: dict[str, Template] = field(default_factory=dict)
    # a unit's parent and the unit's logical id there: where a parameter's value was written (:meth:`passed_by_parent`)
    parent: Template | None = field(default=None, repr=False, compare=False)
    id_in_parent: str = ""

    @classmethod
    def from_document(cls, document: dict[str, Any], path: str | Path | None = None, **options: Any) -> Template:
        """A template already decoded (a cfn-lint rule's ``cfn.template``, a transformed copy)."""
        template = cls(path=Path(path) if path else Path("template.yaml"), **options)
        template.__dict__["doc"] = expand(document, path)
        return template

    @cached_property
    def doc(self) -> dict[str, Any]:
        return read(self.path)

    @property
    def folder(self) -> Path:
        """Where CodeUri, DefinitionUri and a unit's Location are relative to, as SAM resolves them."""
        return self.path.resolve().parent

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return self.doc.get("Resources") or {}

    def mapping(self, name: str) -> dict[str, Any]:
        """One of the template's ``Mappings`` as written (empty when absent)."""
        return (self.doc.get("Mappings") or {}).get(name) or {}

    def of_type(self, *type_names: str) -> dict[str, dict[str, Any]]:
        """Resources of these CloudFormation/SAM types whose Condition holds, by logical id."""
        return {
            lid: r
            for lid, r in self.resources.items()
            if r.get("Type") in type_names and self.condition(r.get("Condition"))
        }

    def properties(self, logical_id: str) -> dict[str, Any]:
        """A resource's Properties with every intrinsic resolved."""
        return self.resolve(self._resource(logical_id).get("Properties", {}))

    def function_properties(self, logical_id: str) -> dict[str, Any]:
        """A SAM function's Properties with ``Globals.Function`` under them (its own win), resolved."""
        own = self._resource(logical_id).get("Properties", {})
        if self._resource(logical_id).get("Type") != SAM_FUNCTION:
            return self.resolve(own)
        shared = (self.doc.get("Globals") or {}).get("Function") or {}
        variables = {**_variables(shared), **_variables(own)}
        merged = {**shared, **own}
        if variables:
            merged["Environment"] = {**(merged.get("Environment") or {}), "Variables": variables}
        return self.resolve(merged)

    def _resource(self, logical_id: str) -> dict[str, Any]:
        try:
            return self.resources[logical_id]
        except KeyError:
            raise TemplateError(f"no resource {logical_id!r} in {self.path.name}") from None

    # ------------------------------------------------------------------ nested units (decision 0130)
    def units(self) -> dict[str, Template]:
        """Each nested unit whose Condition holds (a local ``Location``), read with what its parent passes;
        a unit already created (:attr:`created_units`) as it was created."""
        found = {}
        for lid, resource in self.of_type(*UNIT_TYPES).items():
            if lid in self.created_units:
                found[lid] = self.created_units[lid]
                continue
            props = resource.get("Properties", {})
            location = props.get(UNIT_TYPES[resource["Type"]])
            if not is_local_unit(location):
                continue  # a published application or an S3 URL: nothing local to read
            passed = {k: self._passed(v) for k, v in (props.get("Parameters") or {}).items()}
            found[lid] = self.unit(lid, location, passed)
        return found

    def unit(self, logical_id: str, location: str, parameters: dict[str, Any]) -> Template:
        """The unit at ``location`` (relative to this template) with these parameters, as CloudFormation hands
        them over (a list joined with commas); the same kind of template as this one, its stack named as a
        nested stack's."""
        return type(self)(
            path=self.folder / location,
            parameters={k: _as_parameter(v) for k, v in parameters.items()},
            region=self.region,
            account=self.account,
            stack_name=f"{self.stack_name}-{logical_id}",
            parameter_defaults=self.parameter_defaults,
            parent=self,
            id_in_parent=logical_id,
        )

    @property
    def prefix(self) -> str:
        """This template's stack path prefix, as :meth:`walk` names it: "" for the root, ``Tienda/`` for a unit."""
        return "" if self.parent is None else f"{self.parent.prefix}{self.id_in_parent}/"

    def passed_by_parent(self, parameter: str) -> Any:
        """What the parent wrote for one of this unit's parameters (``!Ref TopicPedidoConfirmado``), read in the
        parent (:attr:`parent`); None for a root template or a parameter the parent does not pass."""
        if self.parent is None:
            return None
        unit = self.parent.resources.get(self.id_in_parent) or {}
        return ((unit.get("Properties") or {}).get("Parameters") or {}).get(parameter)

    def written_above(self, value: Any) -> tuple[Template, Any]:
        """Where ``value`` is written: a ``!Ref`` to one of this unit's parameters is what its parent passes for it,
        followed up through the parent's own parameters; (the template holding it, the value as written there).
        Anything else, or a parameter no parent passes, is this template's own."""
        holder = self
        while (
            holder.parent is not None
            and isinstance(value, dict)
            and set(value) == {"Ref"}
            and value["Ref"] in (holder.doc.get("Parameters") or {})
            and (passed := holder.passed_by_parent(value["Ref"])) is not None
        ):
            value, holder = passed, holder.parent
        return holder, value

    @property
    def root(self) -> Template:
        """The stack's root template (this one, for a root)."""
        return self if self.parent is None else self.parent.root

    def _passed(self, value: Any) -> Any:
        """What the parent hands a unit's parameter: resolved when it can be here, else as written with its
        conditions taken (an ARN of a resource not created yet stays ``Fn::GetAtt``, not a guess)."""
        try:
            return self.resolve(value)
        except TemplateError:
            return self.chosen(value)

    def walk(self, prefix: str = "") -> Iterator[tuple[str, Template]]:
        """(stack path, template) for this template and every unit below it (``Sandbox/`` as SAM names it)."""
        yield prefix, self
        for lid, unit in self.units().items():
            yield from unit.walk(f"{prefix}{lid}/")

    def paths(self, answer: Callable[[Template], Iterable[str]]) -> tuple[str, ...]:
        """The stack path (as :meth:`walk` names it) of each logical id ``answer`` gives, asked of this template and
        of every unit below it: a question about one template answered for the whole stack."""
        return tuple(f"{prefix}{lid}" for prefix, template in self.walk() for lid in answer(template))

    def locate(self, path: str) -> tuple[Template, str]:
        """The template holding ``path`` (``Simuladores/SimuladorErpUrl``: a unit's resource, as :meth:`walk`
        names it) and the resource's logical id there."""
        *units, logical_id = path.split("/")
        holder = self
        for unit in units:
            try:
                holder = holder.units()[unit]
            except KeyError:
                raise TemplateError(f"no unit {unit!r} in {holder.path.name} (for {path!r})") from None
        return holder, logical_id

    def output(self, name: str) -> Any:
        """An output's ``Value`` as written (the node a unit's parent reads as ``Outputs.<name>``)."""
        try:
            return self.doc["Outputs"][name]["Value"]
        except (KeyError, TypeError):
            raise TemplateError(f"no output {name!r} in {self.path.name}") from None

    # ------------------------------------------------------------------ parameters and intrinsics
    def parameter(self, name: str) -> Any:
        declaration = (self.doc.get("Parameters") or {}).get(name)
        if name in self.parameters:
            value = self.parameters[name]
        elif declaration is None:
            raise TemplateError(f"unknown parameter {name!r}")
        else:
            value = self.parameter_defaults.get(name, declaration.get("Default", ""))
        if (declaration or {}).get("Type") == "CommaDelimitedList" and isinstance(value, str):
            return [v for v in value.split(",") if v]
        return value

    def condition(self, name: str | None) -> bool:
        if name is None:
            return True
        try:
            declared = self.doc["Conditions"][name]
        except KeyError:
            raise TemplateError(f"unknown condition {name!r}") from None
        return bool(self.resolve(declared))

    def _pseudo(self, name: str) -> Any:
        pseudo_parameters = {
            "AWS::Region": self.region,
            "AWS::AccountId": self.account,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": self.stack_name,
            "AWS::NoValue": NO_VALUE,
        }
        try:
            return pseudo_parameters[name]
        except KeyError:
            raise TemplateError(f"pseudo parameter {name} has no local value") from None

    def ref(self, name: str) -> Any:
        if not isinstance(name, str):
            raise TemplateError(f"Ref takes a name, not {name!r}")
        if name.startswith("AWS::"):
            return self._pseudo(name)
        if name in (self.doc.get("Parameters") or {}):
            return self.parameter(name)
        if name in self.physical_ids:
            value = self.physical_ids[name]
            return value["Ref"] if isinstance(value, dict) else value
        raise TemplateError(f"Ref {name!r} has no local value yet")

    def find_in_map(self, map_name: Any, key: Any, second: Any) -> Any:
        """``Fn::FindInMap``: a value of the template's ``Mappings`` (keys may be intrinsics)."""
        map_name, key, second = (self.resolve(x) for x in (map_name, key, second))
        try:
            return self.doc.get("Mappings", {})[map_name][key][second]
        except (KeyError, TypeError):
            raise TemplateError(f"FindInMap [{map_name}, {key}, {second}]: not in Mappings") from None

    def get_att(self, name: str, attribute_name: str) -> Any:
        if "/" in name:  # a stack path: the unit's resource, as that unit created it
            holder, name = self.locate(name)
            return holder.get_att(name, attribute_name)
        value = self.physical_ids.get(name)
        if isinstance(value, dict) and attribute_name in value:
            return value[attribute_name]
        raise TemplateError(f"GetAtt {name}.{attribute_name} has no local value yet")

    def chosen(self, node: Any) -> Any:
        """``node`` with every ``Fn::If`` taken by the template's conditions and ``Fn::FindInMap`` read; other
        intrinsics (ARNs the run has not created yet) left as written."""
        if isinstance(node, list):
            return [c for c in (self.chosen(x) for x in node) if c != {"Ref": "AWS::NoValue"}]
        if not isinstance(node, dict):
            return node
        if set(node) == {"Fn::If"}:
            condition, yes, no = node["Fn::If"]
            return self.chosen(yes if self.condition(condition) else no)
        if set(node) == {"Fn::FindInMap"}:
            return self.resolve(node)
        return {k: self.chosen(v) for k, v in node.items()}

    def resolve(self, node: Any) -> Any:
        """Resolve Ref, Fn::Sub, Fn::GetAtt, Fn::If, Fn::Join, Fn::Split, Fn::Equals, Fn::Not, Fn::And, Fn::Or,
        Fn::Select, Fn::FindInMap and Condition."""
        if isinstance(node, list):
            return [v for v in (self.resolve(x) for x in node) if v is not NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, arg),) = node.items()
            function = _INTRINSICS.get(key)
            if function is not None:
                try:
                    return function(self, arg)
                except (TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
                    raise TemplateError(f"{key} {arg!r}: {exc}") from None
        return {k: r for k, v in node.items() if (r := self.resolve(v)) is not NO_VALUE}

    def _sub(self, arg: Any) -> str:
        if isinstance(arg, list):
            text, variables = arg[0], {k: self.resolve(v) for k, v in arg[1].items()}
        else:
            text, variables = arg, {}

        def value(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in variables:
                return str(variables[name])
            if "." in name and not name.startswith("AWS::"):
                return str(self.get_att(*name.split(".", 1)))
            return str(self.ref(name))

        return _SUB_VAR.sub(value, text)


def nestings(path: str | Path, root_name: str = "template.yaml") -> list[Template]:
    """Each place a stack nests the template file at ``path``: the unit as its parent holds it (so
    :meth:`Template.passed_by_parent` reads what that parent writes), whatever the parent's conditions.

    The stack's root is the nearest ``root_name`` above the file that nests it, at any depth; empty when
    none does (a template that stands alone). A tool that checks one file at a time (cfn-lint) asks this to
    judge a unit by what its parents hand it.
    """
    target = Path(path).resolve()
    for folder in target.parents:
        candidate = folder / root_name
        if candidate.is_file() and candidate.resolve() != target:
            found = [unit for unit in _every_unit(Template(path=candidate)) if unit.path.resolve() == target]
            if found:
                return found
    return []


def as_nested(document: dict[str, Any], unit: Template) -> dict[str, Any]:
    """A unit's ``document`` with what its parent passes written in: each parameter the parent hands it as a
    ``Fn::FindInMap`` of plain keys (followed up through a parent's own parameter) or a literal, put in place
    of the unit's ``!Ref`` to it, and the mapping entries those read beside the unit's own.

    A rule that lints a unit alone then checks the numbers the deploy uses (a queue's maxReceiveCount, a
    function's Timeout and lease) and still tells a value the root declares in its ``Mappings`` from one
    written beside it: a literal the parent passes is a literal here.
    """
    passed: dict[str, Any] = {}
    mappings: dict[str, dict[str, Any]] = {}
    for name in document.get("Parameters") or {}:
        holder, value = unit.written_above({"Ref": name})
        if holder is unit:
            continue  # no parent passes it
        if (keys := _plain_find_in_map(value)) is not None:
            entry = holder.mapping(keys[0]).get(keys[1])
            if entry is None:
                continue
            mappings.setdefault(keys[0], {})[keys[1]] = deepcopy(entry)
        elif not isinstance(value, str | int | float | bool):
            continue
        passed[name] = value
    nested = _replace_refs(deepcopy(document), passed)
    for name, entries in mappings.items():
        own = nested.setdefault("Mappings", {}).get(name) or {}
        nested["Mappings"][name] = {**own, **entries}
    return nested


def _plain_find_in_map(value: Any) -> list[str] | None:
    keys = value.get("Fn::FindInMap") if isinstance(value, dict) and set(value) == {"Fn::FindInMap"} else None
    plain = isinstance(keys, list) and len(keys) == 3 and all(isinstance(k, str) for k in keys)
    return keys if plain else None


def _replace_refs(node: Any, values: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if set(node) == {"Ref"} and node["Ref"] in values:
            return deepcopy(values[node["Ref"]])
        return {k: _replace_refs(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace_refs(v, values) for v in node]
    return node


def _every_unit(template: Template) -> Iterator[Template]:
    """Every local unit below ``template``, under a condition that holds or not, with its parent set; a unit that
    cannot be read nests nothing here (its own check reports why)."""
    try:
        resources = template.resources
    except TemplateError:
        return
    for lid, resource in resources.items():
        location = (resource.get("Properties") or {}).get(UNIT_TYPES.get(resource.get("Type"), ""))
        if is_local_unit(location) and (template.folder / location).is_file():
            unit = template.unit(lid, location, {})
            yield unit
            yield from _every_unit(unit)


def _variables(properties: dict[str, Any]) -> dict[str, Any]:
    variables = (properties.get("Environment") or {}).get("Variables")
    return variables if isinstance(variables, dict) else {}


def is_local_unit(location: Any) -> bool:
    """Whether a unit's ``Location``/``TemplateURL`` is a file beside the template (not an S3 URL or an app)."""
    return isinstance(location, str) and "://" not in location


def _as_parameter(value: Any) -> Any:
    """A value a parent passes to a unit, as CloudFormation hands it over (a list of values joins with commas;
    one still holding an intrinsic, not resolvable here, stays as written)."""
    if isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value):
        return ",".join(str(v) for v in value)
    return value


def _get_att(p: Template, arg: Any) -> Any:
    name, attribute_name = arg.split(".", 1) if isinstance(arg, str) else (p.resolve(x) for x in arg)
    return p.get_att(name, attribute_name)


_INTRINSICS = {
    "Ref": lambda p, a: p.ref(a),
    "Fn::Sub": lambda p, a: p._sub(a),
    "Fn::GetAtt": _get_att,
    "Fn::If": lambda p, a: p.resolve(a[1] if p.condition(a[0]) else a[2]),
    "Fn::Equals": lambda p, a: p.resolve(a[0]) == p.resolve(a[1]),
    "Fn::Not": lambda p, a: not p.resolve(a[0]),
    "Fn::And": lambda p, a: all(p.resolve(x) for x in a),
    "Fn::Or": lambda p, a: any(p.resolve(x) for x in a),
    "Fn::Join": lambda p, a: a[0].join(str(x) for x in p.resolve(a[1])),
    "Fn::Select": lambda p, a: p.resolve(a[1])[int(p.resolve(a[0]))],
    "Fn::Split": lambda p, a: str(p.resolve(a[1])).split(p.resolve(a[0])),
    "Fn::FindInMap": lambda p, a: p.find_in_map(*a[:3]),
    "Condition": lambda p, a: p.condition(a),
}
