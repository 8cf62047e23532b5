"""``events/env-vars.json``: every variable SAM cannot resolve locally is given a reachable value.

``sam local invoke`` resolves a ``Ref`` to a resource as its logical id and leaves ``{{resolve:...}}``
as text: a function would get ``TablaIdempotencia`` as its table's name. The file must name the
local value of each such variable (it only overrides variables the template declares), and
point every address at the Docker bridge, never at this host's loopback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from sam_emulator.template import Template
from sam_local.environment import lane_env_vars

RAIZ = Path(__file__).resolve().parents[3]
ENV_VARS = json.loads((RAIZ / "events" / "env-vars.json").read_text())
PLANTILLA = Template()
FUNCIONES = PLANTILLA.of_type("AWS::Serverless::Function")


def _unresolvable(valor: Any) -> bool:
    """A reference to a resource (not a parameter) or a dynamic reference, anywhere in the value."""
    if isinstance(valor, str):
        return "{{resolve:" in valor
    if isinstance(valor, list):
        return any(_unresolvable(v) for v in valor)
    if isinstance(valor, dict):
        if "Ref" in valor:
            return valor["Ref"] in PLANTILLA.resources
        if "Fn::GetAtt" in valor:
            return True
        if "Fn::Sub" in valor:
            texto = valor["Fn::Sub"] if isinstance(valor["Fn::Sub"], str) else valor["Fn::Sub"][0]
            return "{{resolve:" in texto or any(f"${{{r}" in texto for r in PLANTILLA.resources)
        return any(_unresolvable(v) for v in valor.values())
    return False


def _variables(logical_id: str) -> dict[str, Any]:
    globales = PLANTILLA.doc.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    propias = FUNCIONES[logical_id]["Properties"].get("Environment", {}).get("Variables", {})
    return {**globales, **propias}


@pytest.mark.parametrize("logical_id", sorted(FUNCIONES))
def test_env_vars_gives_each_unresolvable_variable_a_local_value(logical_id: str) -> None:
    # GIVEN the function's declared variables that SAM cannot resolve locally
    faltan = {n for n, v in _variables(logical_id).items() if _unresolvable(v)}
    # WHEN the env-vars file's global and per-function values are applied
    dados = set(ENV_VARS["Parameters"]) | set(ENV_VARS.get(logical_id, {}))
    # THEN none is left to a logical id or an unresolved reference
    assert sorted(faltan - dados) == []


def test_env_vars_addresses_point_at_the_docker_bridge_not_loopback() -> None:
    # GIVEN every URL in the file
    urls = [v for seccion in ENV_VARS.values() for v in seccion.values() if "://" in v]
    # WHEN their hosts are read  # THEN each is the bridge, with an explicit port (the run relays it)
    assert {urlsplit(u).hostname for u in urls} == {"172.17.0.1"}
    assert all(urlsplit(u).port for u in urls)


def test_lane_env_vars_moves_every_port_schema_and_redis_database(tmp_path: Path) -> None:
    # GIVEN lane 2 of the parallel sam local tests
    # WHEN its env-vars file is derived
    lane = json.loads(lane_env_vars(2, tmp_path).read_text())["Parameters"]
    # THEN it shares no address, schema or database with lane 0 (events/env-vars.json itself)
    base = ENV_VARS["Parameters"]
    for nombre, valor in base.items():
        if "://" in valor:
            assert urlsplit(lane[nombre]).port == urlsplit(valor).port + 20
    assert "mf_sam_local_2" in lane["DATABASE_URL"]
    assert urlsplit(lane["REDIS_URL"]).path == f"/{int(urlsplit(base['REDIS_URL']).path.strip('/')) + 2}"
