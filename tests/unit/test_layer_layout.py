"""The layer is importable exactly the way Lambda lays it out: ``/opt/python/<package>``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

RAIZ = Path(__file__).resolve().parents[2]
CAPA_CONSTRUIDA = RAIZ / ".aws-sam" / "build" / "ComunLayer" / "python"


@pytest.fixture(scope="module")
def capa() -> Path:
    """The layer as ``sam build`` produced it (``make test`` builds before pytest)."""
    if not CAPA_CONSTRUIDA.is_dir():
        venv_bin = Path(sys.executable).parent
        env = {**os.environ, "PATH": f"{venv_bin}:{os.environ['PATH']}"}
        subprocess.run([str(venv_bin / "sam"), "build"], cwd=RAIZ, env=env, check=True, capture_output=True)
    return CAPA_CONSTRUIDA


def test_layer_package_sits_under_python(capa: Path) -> None:
    assert (capa / "mercadofresco" / "__init__.py").is_file()
    assert (capa / "aws_lambda_powertools").is_dir(), "the layer must carry its pinned dependencies"


def test_function_imports_the_layer_from_opt_python(capa: Path, tmp_path: Path) -> None:
    # GIVEN a process whose only path to the project is the built layer (as /opt/python)
    codigo = (
        "import mercadofresco, mercadofresco.errors, mercadofresco.aws, mercadofresco.dlq;print(mercadofresco.__file__)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(capa)
    # WHEN it imports the layer's package from somewhere else on disk
    salida = subprocess.run([sys.executable, "-c", codigo], cwd=tmp_path, env=env, capture_output=True, text=True)
    # THEN the module comes from the built layer, not from the source tree
    assert salida.returncode == 0, salida.stderr
    assert salida.stdout.strip().startswith(str(capa))


def test_postgres_driver_ships_only_in_its_own_layer(capa: Path) -> None:
    # GIVEN the built layers
    postgres = capa.parents[1] / "PostgresLayer" / "python"
    # THEN the shared layer carries no PostgreSQL driver, and the driver's layer carries nothing else
    assert not list(capa.glob("psycopg*")), "psycopg belongs in layers/postgres (PostgresLayer)"
    codigo = {p.name for p in postgres.iterdir() if not p.name.endswith(".dist-info")}
    assert codigo == {"psycopg", "psycopg_binary", "psycopg_binary.libs", "psycopg_pool"}
    assert list((postgres / "psycopg" / "__pycache__").glob("*.cpython-313.pyc")), "compiled once, at build"


def _funciones() -> list[tuple[str, Path, dict]]:
    """``(stack path, folder of its template, Properties)`` of every function of the stack, in the root or in a
    nested unit (``Simuladores/SimuladorErpFunction``, as ``sam build`` lays it out); CodeUri is relative to
    that folder."""
    from sam_emulator.template import Template

    return [
        (prefijo + nombre, plantilla.folder, recurso["Properties"])
        for prefijo, plantilla in Template().walk()
        for nombre, recurso in plantilla.resources.items()
        if recurso["Type"] == "AWS::Serverless::Function"
    ]


def test_postgres_layer_only_on_the_functions_that_use_the_database() -> None:
    # GIVEN every function of the stack and the layer modules its code imports
    for nombre, carpeta, props in _funciones():
        fuentes = " ".join(p.read_text() for p in (carpeta / props["CodeUri"]).glob("*.py"))
        usa_bd = bool(re.search(r"mercadofresco\.(db|outbox|dominio\.(pedidos|solicitudes|proyeccion))\b", fuentes))
        # THEN the driver's layer is added exactly where the database is used (ComunLayer comes from Globals)
        assert ({"Ref": "PostgresLayer"} in props.get("Layers", [])) == usa_bd, nombre


def test_simulator_layer_only_on_the_simulador_functions(capa: Path) -> None:
    from sam_emulator.template import Template

    # GIVEN every function of the stack (the simulators live in the Simuladores unit) and whether its code
    # imports the simulators
    funciones = _funciones()
    assert {n for n, _, _ in funciones} >= {
        "Simuladores/SimuladorPasarelaFunction",
        "Simuladores/SimuladorErpFunction",
        "Simuladores/SimuladorCorreoFunction",
    }
    for nombre, carpeta, props in funciones:
        fuentes = " ".join(p.read_text() for p in (carpeta / props["CodeUri"]).glob("*.py"))
        usa_simulador = bool(re.search(r"^(from|import) simulador\b", fuentes, re.MULTILINE))
        # THEN the simulators' layer (its template's own) is attached exactly there
        assert ({"Ref": "SimuladorLayer"} in props.get("Layers", [])) == usa_simulador, nombre
    # AND it is declared once, in the unit, whose build sits where `sam build` puts a unit's resources
    recursos = {prefijo + lid for prefijo, plantilla in Template().walk() for lid in plantilla.resources}
    assert {lid for lid in recursos if lid.rsplit("/", 1)[-1] == "SimuladorLayer"} == {"Simuladores/SimuladorLayer"}
    construidas = capa.parents[1]
    assert (construidas / "Simuladores" / "SimuladorLayer" / "python" / "simulador" / "__init__.py").is_file()
    # AND no build of the shared layer carries them (the root's, nor the unit's own copy)
    comunes = [construidas / lid / "python" for lid in recursos if lid.rsplit("/", 1)[-1] == "ComunLayer"]
    assert capa in comunes and len(comunes) > 1
    for comun in comunes:
        assert (comun / "mercadofresco" / "__init__.py").is_file(), comun
        assert not (comun / "mercadofresco" / "sandbox").exists(), comun
        assert not (comun / "simulador").exists(), comun


def test_every_built_function_ships_its_modules_compiled(capa: Path) -> None:
    # GIVEN every function of the stack, in the root or in a unit, as `sam build` (functions/Makefile) produced it
    for nombre, carpeta, props in _funciones():
        construida = capa.parents[1] / nombre
        codigo = carpeta / props["CodeUri"]
        fuentes = sorted(p.relative_to(codigo).as_posix() for p in codigo.rglob("*.py"))
        # THEN it ships exactly its modules (and what its requirements.txt installs, as pip's RECORD lists it),
        # each with the runtime's .pyc (/var/task is read-only in Lambda)
        instalados = {
            linea.split(",", 1)[0]
            for record in construida.glob("*.dist-info/RECORD")
            for linea in record.read_text().splitlines()
        }
        propios = (p.relative_to(construida).as_posix() for p in construida.rglob("*.py"))
        assert sorted(p for p in propios if p not in instalados) == fuentes, nombre
        for fuente in fuentes:
            pyc = (construida / fuente).parent / "__pycache__" / f"{Path(fuente).stem}.cpython-313.pyc"
            assert pyc.is_file(), f"{nombre}: {fuente} without {pyc.name}"
            # unchecked-hash: valid whatever mtime the deployment zip leaves on the source
            assert int.from_bytes(pyc.read_bytes()[4:8], "little") == 0b01, f"{nombre}: {pyc.name} not unchecked-hash"
