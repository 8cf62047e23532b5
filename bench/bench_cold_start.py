"""Cold start of every function as Lambda imports it, from the ``sam build`` output, against ``import boto3``.

What is measured, per function, in N fresh processes (interleaved with N processes that only
``import boto3``, so both see the same machine load):

- ``import app`` (the function's init phase, minus the interpreter's own start, which is the
  same for both), in CPU time (what the goal is judged on: on Lambda's dedicated CPU an
  import's wall time is its CPU time; on this shared machine wall time also counts the wait
  for a CPU, printed next to it) with ``sys.path`` as Lambda's python3.13 bootstrap sets it: the function's
  directory (``/var/task``), its layers' ``python/`` directories merged in the template's
  order (``/opt/python``: ComunLayer, plus PostgresLayer for the functions that use the
  database), then a runtime-like site holding only what the runtime ships (below). Stdlib
  only otherwise (``-I -S``), and ``-B``: ``/var/task`` and ``/opt`` are read-only in Lambda, so a module
  the artifact ships without its ``.pyc`` is compiled again on every cold start, as here;
- the peak memory of that process (``ru_maxrss``);
- what the first invocation still pays (``first use``), timed in the same process after
  ``import app``: the packages deferred out of the import (Valkey client, PostgreSQL driver,
  X-Ray SDK) and the objects a handler builds on first use (``_consumidor``/``_operaciones``/
  ``_store``/``_pasos_de_la_saga``: its boto3 and Valkey clients; ``_api``: the store API's Powertools
  resolver; no network). Deferring moves that cost out of the init phase;
  it does not remove it for a path that needs it, and this column shows it.
- the instructions ``import app`` executes against ``import boto3``'s, counted by valgrind's
  callgrind (one process each, minus an interpreter that imports nothing with the same
  ``sys.path``): the same count whatever else the machine is doing, so this ratio does not move
  with the load as the CPU-time ratio does (±0.1x between runs on a quiet machine). It leaves out
  what the kernel does for the process (opening and reading the extra modules' files) and cache
  misses, so it reads a little below the CPU-time ratio. Printed when valgrind is installed;
  ``BENCH_COLD_INSTRUCCIONES=0`` skips it (it takes ~20 s of CPU per function).

The runtime-like site: Lambda's python3.13 runtime ships boto3 with its dependencies
(botocore, s3transfer, jmespath, python-dateutil, six, urllib3) outside ``/opt``; this
bench links the same packages from the interpreter running it (its versions are printed).
Anything the layer ships under those names shadows the runtime's copy (``/opt/python``
comes first), so the layer must not ship them.

The interpreter: ``--python`` (or ``BENCH_COLD_PYTHON``, a command line), this one by default;
``make bench`` passes the current CPython 3.13 that ``bench/lambda-python.sh`` takes from Debian's
packages, as Lambda's runtime follows the 3.13 patch releases. An interpreter older than 3.13.14
lacks the fix of gh-142183 and the bench prints a note: it unmaps a frame-stack chunk whenever a
call returns below its edge, so an import that recurses there (urllib3's regexes, compiled as deep
as a handler's imports reach) maps and unmaps 16 KB per call. Measured on pyenv's 3.13.0 here:
~3,000 times in the outbox functions, ~1,250 in erp/correo, once for ``import boto3``; their
CPU-time ratio read up to 0.16x above their instruction ratio, and with 3.13.18 the two agree.

Goals (issue 14): every function's import <= 1.3x ``import boto3`` (median over the N processes,
each against the median of the boto3 processes; and in instructions); each layer <= 20 MB
unzipped; no package in a layer that the runtime already provides.

Usage: ``python bench/bench_cold_start.py [--build-dir DIR] [--n 7] [--python CMD]``. Without ``--build-dir``
it uses ``.aws-sam/build`` when it is newer than the sources, otherwise it runs ``sam build``
into a private directory. The template builds for arm64; on another machine the layers'
compiled extensions are replaced, in a private copy, by the same packages built for this
machine (same versions, checked), and the bench says so. ``python -X importtime`` with the
same layout shows where a function's import time goes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from template_model import read

RAIZ = Path(__file__).resolve().parent.parent
GOAL_RATIO = 1.3
GOAL_LAYER_MB = 20.0
# The first 3.13 release that keeps a freed frame-stack chunk for reuse (bench/lambda-python.sh says why).
PYTHON_WITH_GH_142183_FIX = (3, 13, 14)
# What Lambda's python3.13 runtime ships besides the standard library (boto3 and its dependency tree).
RUNTIME_DISTRIBUTIONS = ("boto3", "botocore", "s3transfer", "jmespath", "python-dateutil", "six", "urllib3")
# Packages a function may load on its first invocation rather than at import: timed as "first use".
DEFERRED = {
    "redis": "Valkey client (breaker, retry budget)",
    "psycopg": "PostgreSQL driver (outbox)",
    "psycopg_pool": "PostgreSQL pool (outbox)",
    "aws_xray_sdk.core": "X-Ray SDK (tracer)",
    "aws_lambda_powertools.event_handler": "Powertools' resolvers (store API)",
}

SONDA = r"""
import json, resource, sys, time
sys.path[:0] = __RUTAS__
inicio, inicio_cpu = time.perf_counter(), time.process_time()
__IMPORT__
importar_s, importar_cpu_s = time.perf_counter() - inicio, time.process_time() - inicio_cpu
pesados = [m for m in __DIFERIDOS__ if m in sys.modules]
inicio = time.perf_counter()
for m in __USO__:
    __import__(m)
if __USO__:
    for constructor in ("_consumidor", "_operaciones", "_store", "_api", "_pasos_de_la_saga"):  # first invocation
        if hasattr(sys.modules.get("app"), constructor):
            getattr(sys.modules["app"], constructor)()
uso_s = time.perf_counter() - inicio
print(json.dumps({"importar_s": importar_s, "importar_cpu_s": importar_cpu_s, "uso_s": uso_s, "pesados": pesados,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


# ------------------------------------------------------------------ the artifact
def _fuentes_mtime() -> float:
    rutas = [RAIZ / "template.yaml", *(RAIZ / "functions").rglob("*"), *(RAIZ / "layers").rglob("*")]
    return max(p.stat().st_mtime for p in rutas if p.is_file() and "__pycache__" not in p.parts)


def _directorio_build(pedido: str | None) -> Path:
    if pedido:
        return Path(pedido).resolve()  # the probes run with the function's directory as cwd
    compartido = RAIZ / ".aws-sam" / "build"
    if (compartido / "template.yaml").exists() and (compartido / "template.yaml").stat().st_mtime > _fuentes_mtime():
        return compartido
    destino = Path(tempfile.gettempdir()) / f"mf-bench-build-{os.getuid()}"
    venv_bin = Path(sys.executable).parent
    print(f"sam build -> {destino} (.aws-sam/build is missing or older than the sources)", flush=True)
    subprocess.run(
        [str(venv_bin / "sam"), "build", "--build-dir", str(destino), "--cache-dir", f"{destino}-cache"],
        cwd=RAIZ,
        check=True,
        env={**os.environ, "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}"},
        stdout=subprocess.DEVNULL,
    )
    return destino


def _tamano_mb(directorio: Path) -> float:
    return sum(p.stat().st_size for p in directorio.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6


def _nombres_de(distribucion: str) -> set[str]:
    """Top-level import names (and dist-info dirs) a distribution installs."""
    dist = importlib.metadata.distribution(distribucion)
    nombres = {Path(str(f)).parts[0] for f in dist.files or []}
    return {n for n in nombres if n != ".." and not n.endswith(".pth")} - {"__pycache__", "bin"}


def _sitio_runtime(destino: Path) -> dict[str, str]:
    """A site with only the runtime's distributions, linked from this interpreter; returns their versions."""
    destino.mkdir()
    origen = Path(importlib.metadata.distribution("boto3").locate_file(""))
    for distribucion in RUNTIME_DISTRIBUTIONS:
        for nombre in _nombres_de(distribucion):
            if (origen / nombre).exists():
                (destino / nombre).symlink_to(origen / nombre)
    return {d: importlib.metadata.version(d) for d in RUNTIME_DISTRIBUTIONS}


def _capa_para_esta_maquina(capa: Path, destino: Path) -> list[str]:
    """Copy the layer; replace compiled packages built for another machine by this one's (same version)."""
    shutil.copytree(capa, destino, symlinks=True)
    maquina = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(platform.machine(), platform.machine())
    cambiados = []
    for so in list(destino.rglob("*.so")):
        if maquina in so.name or not so.exists():
            continue
        paquete = so.relative_to(destino).parts[0]
        info = next(destino.glob(f"{paquete.replace('-', '_')}-*.dist-info"), None)
        if info is None:
            raise SystemExit(f"cannot tell which distribution ships {so}: no dist-info for {paquete}")
        nombre, version = info.name.removesuffix(".dist-info").rsplit("-", 1)
        if importlib.metadata.version(nombre) != version:
            raise SystemExit(f"{nombre} {version} in the layer, {importlib.metadata.version(nombre)} here")
        for parte in _nombres_de(nombre):
            shutil.rmtree(destino / parte, ignore_errors=True)
            origen = Path(importlib.metadata.distribution(nombre).locate_file(parte))
            if origen.is_dir():
                shutil.copytree(origen, destino / parte)
            elif origen.exists():
                shutil.copy2(origen, destino / parte)
        cambiados.append(f"{nombre} {version}")
    return cambiados


def _entorno(plantilla: dict[str, Any], funcion: dict[str, Any], nombre: str) -> dict[str, str]:
    """The function's environment as the template sets it: ``Mappings`` and parameters' defaults resolved,
    references to resources become inert placeholders."""
    variables = {
        **plantilla.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {}),
        **funcion.get("Environment", {}).get("Variables", {}),
    }

    def valor(clave: str, v: Any) -> str:
        if isinstance(v, str | int | float):
            return str(v)
        if isinstance(v, dict) and all(isinstance(k, str) for k in v.get("Fn::FindInMap", [None])):
            mapa, clave_1, clave_2 = v["Fn::FindInMap"]
            return str(plantilla["Mappings"][mapa][clave_1][clave_2])  # a declared bound (Plazos): a real number
        if isinstance(v, dict) and "Default" in plantilla.get("Parameters", {}).get(v.get("Ref"), {}):
            return str(plantilla["Parameters"][v["Ref"]]["Default"])
        if isinstance(v, dict) and isinstance(v.get("Fn::If", [None, None])[1], str):
            return v["Fn::If"][1]  # the production branch (e.g. POWERTOOLS_LOG_LEVEL INFO)
        if clave.endswith("_URL"):
            return "http://127.0.0.1:9"
        if clave.endswith("_ARN"):
            return f"arn:aws:secretsmanager:eu-south-2:123456789012:secret:{clave.lower()}"
        return f"bench-{clave.lower()}"

    entorno = {k: valor(k, v) for k, v in variables.items()}
    entorno.update(
        PATH="/usr/bin:/bin",
        LANG="C.UTF-8",
        AWS_REGION="eu-south-2",
        AWS_DEFAULT_REGION="eu-south-2",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_SESSION_TOKEN="bench",
        AWS_LAMBDA_FUNCTION_NAME=nombre,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE=str(funcion.get("MemorySize", 128)),
        LAMBDA_TASK_ROOT="/var/task",  # Powertools' Tracer is enabled only where this is set, as in Lambda
        _HANDLER=funcion["Handler"],
    )
    return entorno


def _funciones(plantilla: dict[str, Any], build: Path) -> dict[str, dict[str, Any]]:
    globales = plantilla.get("Globals", {}).get("Function", {})
    funciones = {}
    for nombre, recurso in plantilla["Resources"].items():
        if recurso["Type"] != "AWS::Serverless::Function":
            continue
        propias = recurso.get("Properties", {})
        props = {**globales, **propias}
        if not str(props.get("Runtime", "")).startswith("python") or not (build / nombre).is_dir():
            continue
        # SAM appends a function's Layers to the global ones; Lambda extracts them into /opt in that order.
        props["Layers"] = [c["Ref"] for c in (*globales.get("Layers", []), *propias.get("Layers", []))]
        funciones[nombre] = props
    return funciones


def _opt(capas: dict[str, Path], nombres: list[str], destino: Path) -> Path:
    """``/opt/python`` as Lambda lays out these layers: one directory, later layers over earlier ones."""
    if not destino.exists():
        destino.mkdir(parents=True)
        for nombre in nombres:
            for entrada in capas[nombre].iterdir():
                (destino / entrada.name).unlink(missing_ok=True)
                (destino / entrada.name).symlink_to(entrada)
    return destino


def _informe_capa(nombre: str, python: Path) -> str:
    """Size, goal, modules without ``.pyc`` and runtime packages of one built layer."""
    tamano = _tamano_mb(python.parent)
    en_capa = {p.name for p in python.iterdir()}
    codigo = en_capa - {n for n in en_capa if n.endswith("-info")}
    del_runtime = sorted(d for d in RUNTIME_DISTRIBUTIONS if _nombres_de(d) & codigo)
    sin_pyc = sum(1 for p in python.rglob("*.py") if not any((p.parent / "__pycache__").glob(f"{p.stem}.*.pyc")))
    return (
        f"  layer {nombre:<14} {tamano:5.1f} MB unzipped  goal <= {GOAL_LAYER_MB:.0f} MB:"
        f" {'MET' if tamano <= GOAL_LAYER_MB else 'NOT MET'};  {sin_pyc} modules without .pyc;"
        f"  runtime packages in it: {', '.join(del_runtime) or 'none'} ({'MET' if not del_runtime else 'NOT MET'})"
    )


# ------------------------------------------------------------------------- probes
def _primer_uso(entorno: dict[str, str], opt: Path) -> list[str]:
    """What the first invocation imports: the tracer, the driver where a layer ships it, redis with a provider."""
    uso = ["aws_xray_sdk.core"]
    if (opt / "psycopg").is_dir():
        uso += ["psycopg", "psycopg_pool"]
    if any(k.endswith("_URL") for k in entorno):
        uso.append("redis")
    return uso


def _version(python: list[str]) -> tuple[int, ...]:
    """The probes' interpreter's version; it must be the runtime's minor version (the ``.pyc`` are 3.13's)."""
    salida = subprocess.run(
        [*python, "-I", "-S", "-c", "import sys; print(*sys.version_info[:3])"], capture_output=True, text=True
    )
    if salida.returncode != 0:
        raise SystemExit(f"the probes' interpreter does not run: {shlex.join(python)}\n{salida.stderr[-2000:]}")
    version = tuple(int(x) for x in salida.stdout.split())
    if version[:2] != (3, 13):
        raise SystemExit(f"the probes' interpreter is {version}: the functions are built for python3.13")
    return version


def _sonda(
    python: list[str], cwd: Path, rutas: list[str], modulo: str | None, entorno: dict[str, str]
) -> dict[str, Any]:
    codigo = (
        SONDA.replace("__RUTAS__", repr(rutas))
        .replace("__IMPORT__", f"import {modulo}" if modulo else "import boto3")
        .replace("__DIFERIDOS__", repr(list(DEFERRED)))
        .replace("__USO__", repr(_primer_uso(entorno, Path(rutas[1])) if modulo else []))
    )
    salida = subprocess.run(
        [*python, "-B", "-I", "-S", "-c", codigo], cwd=cwd, env=entorno, capture_output=True, text=True
    )
    if salida.returncode != 0:
        if modulo is None:  # without the baseline nothing can be compared
            raise SystemExit(f"import boto3 failed:\n{salida.stderr[-3000:]}")
        return {"fallo": (salida.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(salida.stdout.strip().splitlines()[-1])


def _instrucciones(python: list[str], cwd: Path, rutas: list[str], modulo: str | None, entorno: dict[str, str]) -> int:
    """Instructions ``import <modulo>`` (``import boto3`` without one) executes, by callgrind.

    Counted twice, with and without the import, in processes started alike: the difference is the
    import's alone, not the interpreter's start.
    """

    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]

    def contar(codigo: str) -> int:
        salida = subprocess.run(
            [*valgrind, *python, "-B", "-I", "-S", "-c", codigo],
            cwd=cwd,
            env=entorno,
            capture_output=True,
            text=True,
        )
        if salida.returncode != 0 or not (cuenta := re.search(r"Collected : (\d+)", salida.stderr)):
            raise SystemExit(f"callgrind failed on {codigo!r}:\n{salida.stderr[-2000:]}")
        return int(cuenta.group(1))

    ruta = f"import sys; sys.path[:0] = {rutas!r}"
    return contar(f"{ruta}; import {modulo or 'boto3'}") - contar(ruta)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("BENCH_BUILD_DIR"))
    parser.add_argument("--n", type=int, default=int(os.environ.get("BENCH_COLD_N", "7")))
    parser.add_argument("--python", default=os.environ.get("BENCH_COLD_PYTHON") or sys.executable)
    args = parser.parse_args()
    python = shlex.split(args.python)
    version_python = _version(python)
    contar_instrucciones = os.environ.get("BENCH_COLD_INSTRUCCIONES", "1") != "0" and shutil.which("valgrind")

    build = _directorio_build(args.build_dir)
    plantilla = read(build / "template.yaml")  # the template model: `sam build`'s output, loops expanded
    capas = [n for n, r in plantilla["Resources"].items() if r["Type"] == "AWS::Serverless::LayerVersion"]
    informes_capa = [_informe_capa(nombre, build / nombre / "python") for nombre in capas]

    with tempfile.TemporaryDirectory(prefix="mf-cold-") as tmp:
        versiones = _sitio_runtime(Path(tmp) / "runtime")
        copias: dict[str, Path] = {}
        cambiados: list[str] = []
        for nombre in capas:
            copias[nombre] = Path(tmp) / "capas" / nombre / "python"
            copias[nombre].parent.mkdir(parents=True)
            cambiados += _capa_para_esta_maquina(build / nombre / "python", copias[nombre])
        funciones = _funciones(plantilla, build)
        base: list[dict[str, Any]] = []
        medidas: dict[str, list[dict[str, Any]]] = {n: [] for n in funciones}
        rutas_base = [str(Path(tmp) / "runtime")]
        entorno_base = _entorno(plantilla, {"Handler": "none"}, "bench")
        # Each function as Lambda starts it: (cwd = /var/task, sys.path, handler module, environment).
        arranques = {
            nombre: (
                build / nombre,
                [
                    str(build / nombre),
                    str(_opt(copias, props["Layers"], Path(tmp) / "opt" / "+".join(props["Layers"]) / "python")),
                    str(Path(tmp) / "runtime"),
                ],
                props["Handler"].rsplit(".", 1)[0],
                _entorno(plantilla, props, nombre),
            )
            for nombre, props in funciones.items()
        }
        for _ in range(args.n):
            for nombre, arranque in arranques.items():  # each function's process right after a boto3 one
                base.append(_sonda(python, Path(tmp), rutas_base, None, entorno_base))
                medidas[nombre].append(_sonda(python, *arranque))
        instrucciones: dict[str | None, int] = {}
        if contar_instrucciones:
            instrucciones[None] = _instrucciones(python, Path(tmp), rutas_base, None, entorno_base)
            for nombre, arranque in arranques.items():
                instrucciones[nombre] = _instrucciones(python, *arranque)

    base_s = statistics.median(b["importar_s"] for b in base)
    base_cpu_s = statistics.median(b["importar_cpu_s"] for b in base)
    carga = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"cold start bench: {build} ({platform.machine()}, {os.cpu_count()} CPUs, load average {carga}"
        f" at the end); {args.n} fresh processes each, interleaved with as many that only import boto3"
    )
    print(f"  interpreter: CPython {'.'.join(map(str, version_python))} ({python[-1]})")
    if version_python < PYTHON_WITH_GH_142183_FIX:
        print(
            "  NOTE: this CPython predates gh-142183 (3.13.14): a call returning below a frame-stack chunk's edge"
            " frees it, so imports that recurse there mmap/munmap 16 KB per call, up to ~12 ms per function here"
            " that Lambda's current python3.13 does not pay; bench/lambda-python.sh gives a current one"
        )
    print("  runtime site (as Lambda python3.13 ships): " + ", ".join(f"{d} {v}" for d, v in versiones.items()))
    if cambiados:
        print(f"  layers' compiled packages replaced by this machine's build (same version): {', '.join(cambiados)}")
    print(
        f"  import boto3 alone: median {base_cpu_s * 1000:.0f} ms CPU, {base_s * 1000:.0f} ms wall over {len(base)}"
        " processes. The goal is judged on CPU time: on a dedicated Lambda CPU an import's wall time is its CPU"
        " time, on a shared machine wall time also counts the time spent waiting for a CPU (shown too)."
    )
    if instrucciones:
        print(
            f"  instructions (callgrind, the same whatever the load): import boto3 {instrucciones[None] / 1e6:.0f} M;"
            " 'instr' is each function's import against it"
        )
    else:
        print("  instructions: not counted (valgrind not installed, or BENCH_COLD_INSTRUCCIONES=0)")
    print(
        f"  {'function':<26} {'CPU ms':>6} {'ratio':>6}  {'goal <= ' + str(GOAL_RATIO) + 'x':<12}"
        f" {'wall ms':>7} {'ratio':>6} {'instr':>6} {'peak MB':>7}  first use ms  loaded at import  layers"
    )
    todos = todos_instr = True
    for nombre, filas in medidas.items():
        if fallo := next((f["fallo"] for f in filas if "fallo" in f), None):
            todos = False
            print(f"  {nombre:<26} import FAILED in the built artifact: {fallo}")
            continue
        cpu_s = statistics.median(f["importar_cpu_s"] for f in filas)
        wall_s = statistics.median(f["importar_s"] for f in filas)
        rss = statistics.median(f["maxrss_kb"] for f in filas) / 1024
        uso = statistics.median(f["uso_s"] for f in filas) * 1000
        pesados = ", ".join(filas[0]["pesados"]) or "-"
        ok = cpu_s / base_cpu_s <= GOAL_RATIO
        todos &= ok
        instr = f"{instrucciones[nombre] / instrucciones[None]:5.2f}x" if instrucciones else "    -"
        todos_instr &= not instrucciones or instrucciones[nombre] / instrucciones[None] <= GOAL_RATIO
        print(
            f"  {nombre:<26} {cpu_s * 1000:6.0f} {cpu_s / base_cpu_s:5.2f}x  {'MET' if ok else 'NOT MET':<12}"
            f" {wall_s * 1000:7.0f} {wall_s / base_s:5.2f}x {instr:>6} {rss:7.0f}  {uso:12.0f}"
            f"  {pesados:<16}  {' + '.join(funciones[nombre]['Layers'])}"
        )
    for informe in informes_capa:
        print(informe)
    print(
        f"  goal every function <= {GOAL_RATIO}x import boto3: in CPU time {'MET' if todos else 'NOT MET'};"
        + (f" in instructions {'MET' if todos_instr else 'NOT MET'}" if instrucciones else "")
        + "  ('first use' = deferred packages and clients the first invocation still pays, not in the ratio)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
