"""Cold start of every function as Lambda imports it, from the ``sam build`` output, against ``import boto3``.

What is measured, per function, in N fresh processes (interleaved with N processes that only
``import boto3``, so both see the same machine load):

- ``import app`` (the function's init phase, minus the interpreter's own start, which is the
  same for both) with ``sys.path`` as Lambda's python3.13 bootstrap sets it: the function's
  directory (``/var/task``), the layer's ``python/`` directory (``/opt/python``), then a
  runtime-like site holding only what the runtime ships (below). Stdlib only otherwise
  (``-I -S``), and ``-B``: ``/var/task`` and ``/opt`` are read-only in Lambda, so a module
  the artifact ships without its ``.pyc`` is compiled again on every cold start, as here;
- the peak memory of that process (``ru_maxrss``);
- what the first invocation still pays (``first use``), timed in the same process after
  ``import app``: the packages deferred out of the import (Valkey client, PostgreSQL driver,
  X-Ray SDK) and the objects a handler builds on first use (``_consumidor``/``_operaciones``:
  its boto3 and Valkey clients; no network). Deferring moves that cost out of the init phase;
  it does not remove it for a path that needs it, and this column shows it.

The runtime-like site: Lambda's python3.13 runtime ships boto3 with its dependencies
(botocore, s3transfer, jmespath, python-dateutil, six, urllib3) outside ``/opt``; this
bench links the same packages from the interpreter running it (its versions are printed).
Anything the layer ships under those names shadows the runtime's copy (``/opt/python``
comes first), so the layer must not ship them.

Goals (issue 14): every function's import <= 1.3x ``import boto3``; layer <= 20 MB unzipped;
no package in the layer that the runtime already provides.

Usage: ``python bench/bench_cold_start.py [--build-dir DIR] [--n 7]``. Without ``--build-dir``
it uses ``.aws-sam/build`` when it is newer than the sources, otherwise it runs ``sam build``
into a private directory. The template builds for arm64; on another machine the layer's
compiled extensions are replaced, in a private copy, by the same packages built for this
machine (same versions, checked), and the bench says so.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

RAIZ = Path(__file__).resolve().parent.parent
GOAL_RATIO = 1.3
GOAL_LAYER_MB = 20.0
# What Lambda's python3.13 runtime ships besides the standard library (boto3 and its dependency tree).
RUNTIME_DISTRIBUTIONS = ("boto3", "botocore", "s3transfer", "jmespath", "python-dateutil", "six", "urllib3")
# Packages a function may load on its first invocation rather than at import: timed as "first use".
DEFERRED = {
    "redis": "Valkey client (breaker, retry budget)",
    "psycopg": "PostgreSQL driver (outbox)",
    "psycopg_pool": "PostgreSQL pool (outbox)",
    "aws_xray_sdk.core": "X-Ray SDK (tracer)",
}

SONDA = r"""
import json, resource, sys, time
sys.path[:0] = __RUTAS__
inicio = time.perf_counter()
__IMPORT__
importar_s = time.perf_counter() - inicio
pesados = [m for m in __DIFERIDOS__ if m in sys.modules]
inicio = time.perf_counter()
for m in __USO__:
    __import__(m)
if __USO__:
    for constructor in ("_consumidor", "_operaciones"):  # what a function builds on its first invocation
        if hasattr(sys.modules.get("app"), constructor):
            getattr(sys.modules["app"], constructor)()
uso_s = time.perf_counter() - inicio
print(json.dumps({"importar_s": importar_s, "uso_s": uso_s, "pesados": pesados,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


# ------------------------------------------------------------------ the artifact
def _cargar_plantilla(ruta: Path) -> dict[str, Any]:
    class Cargador(yaml.SafeLoader):
        pass

    def intrinseca(cargador: yaml.SafeLoader, sufijo: str, nodo: yaml.Node) -> dict[str, Any]:
        if isinstance(nodo, yaml.ScalarNode):
            return {sufijo: cargador.construct_scalar(nodo)}
        if isinstance(nodo, yaml.SequenceNode):
            return {sufijo: cargador.construct_sequence(nodo, deep=True)}
        return {sufijo: cargador.construct_mapping(nodo, deep=True)}  # type: ignore[arg-type]

    Cargador.add_multi_constructor("!", intrinseca)
    return yaml.load(ruta.read_text(), Loader=Cargador)


def _fuentes_mtime() -> float:
    rutas = [RAIZ / "template.yaml", *(RAIZ / "functions").rglob("*"), *(RAIZ / "layers" / "comun").rglob("*")]
    return max(p.stat().st_mtime for p in rutas if p.is_file() and "__pycache__" not in p.parts)


def _directorio_build(pedido: str | None) -> Path:
    if pedido:
        return Path(pedido)
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
    """The function's environment as the template sets it; references become inert placeholders."""
    variables = {
        **plantilla.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {}),
        **funcion.get("Environment", {}).get("Variables", {}),
    }

    def valor(clave: str, v: Any) -> str:
        if isinstance(v, str | int | float):
            return str(v)
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
        props = {**globales, **recurso.get("Properties", {})}
        if not str(props.get("Runtime", "")).startswith("python") or not (build / nombre).is_dir():
            continue
        funciones[nombre] = props
    return funciones


# ------------------------------------------------------------------------- probes
def _primer_uso(entorno: dict[str, str]) -> list[str]:
    """What the first invocation imports: the tracer always, the pool where a database is set, redis with a provider."""
    uso = ["aws_xray_sdk.core"]
    if "AURORA_ENDPOINT" in entorno:
        uso += ["psycopg", "psycopg_pool"]
    if any(k.endswith("_URL") for k in entorno):
        uso.append("redis")
    return uso


def _sonda(cwd: Path, rutas: list[str], modulo: str | None, entorno: dict[str, str]) -> dict[str, Any]:
    codigo = (
        SONDA.replace("__RUTAS__", repr(rutas))
        .replace("__IMPORT__", f"import {modulo}" if modulo else "import boto3")
        .replace("__DIFERIDOS__", repr(list(DEFERRED)))
        .replace("__USO__", repr(_primer_uso(entorno) if modulo else []))
    )
    salida = subprocess.run(
        [sys.executable, "-B", "-I", "-S", "-c", codigo], cwd=cwd, env=entorno, capture_output=True, text=True
    )
    if salida.returncode != 0:
        if modulo is None:  # without the baseline nothing can be compared
            raise SystemExit(f"import boto3 failed:\n{salida.stderr[-3000:]}")
        return {"fallo": (salida.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(salida.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("BENCH_BUILD_DIR"))
    parser.add_argument("--n", type=int, default=int(os.environ.get("BENCH_COLD_N", "7")))
    args = parser.parse_args()

    build = _directorio_build(args.build_dir)
    plantilla = _cargar_plantilla(build / "template.yaml")
    capas = [n for n, r in plantilla["Resources"].items() if r["Type"] == "AWS::Serverless::LayerVersion"]
    capa_python = build / capas[0] / "python"
    tamano_capa_mb = _tamano_mb(capa_python.parent)
    en_capa = {p.name for p in capa_python.iterdir()}
    del_runtime = sorted(
        d for d in RUNTIME_DISTRIBUTIONS if _nombres_de(d) & en_capa - {n for n in en_capa if n.endswith("-info")}
    )
    sin_pyc = sum(1 for p in capa_python.rglob("*.py") if not any((p.parent / "__pycache__").glob(f"{p.stem}.*.pyc")))

    with tempfile.TemporaryDirectory(prefix="mf-cold-") as tmp:
        versiones = _sitio_runtime(Path(tmp) / "runtime")
        opt = Path(tmp) / "opt" / "python"
        opt.parent.mkdir()
        cambiados = _capa_para_esta_maquina(capa_python, opt)
        funciones = _funciones(plantilla, build)
        base: list[float] = []
        medidas: dict[str, list[dict[str, Any]]] = {n: [] for n in funciones}
        rutas_base = [str(Path(tmp) / "runtime")]
        entorno_base = _entorno(plantilla, {"Handler": "none"}, "bench")
        for _ in range(args.n):
            for nombre, props in funciones.items():
                base.append(_sonda(Path(tmp), rutas_base, None, entorno_base)["importar_s"])
                fdir = build / nombre
                rutas = [str(fdir), str(opt), str(Path(tmp) / "runtime")]
                modulo = props["Handler"].rsplit(".", 1)[0]
                medidas[nombre].append(_sonda(fdir, rutas, modulo, _entorno(plantilla, props, nombre)))

    base_ms = statistics.median(base) * 1000
    carga = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"cold start bench: {build} ({platform.machine()}, {os.cpu_count()} CPUs, load average {carga};"
        f" the CPUs are shared: ratios are robust, milliseconds are not); {args.n} fresh processes each"
    )
    print("  runtime site (as Lambda python3.13 ships): " + ", ".join(f"{d} {v}" for d, v in versiones.items()))
    if cambiados:
        print(f"  layer's compiled packages replaced by this machine's build (same version): {', '.join(cambiados)}")
    print(f"  import boto3 alone: median {base_ms:.0f} ms over {len(base)} processes")
    print(
        f"  {'function':<26} {'import ms':>9} {'ratio':>6} {'goal':>5} {'maxrss MB':>9}  first use ms  loaded at import"
    )
    todos = True
    for nombre, filas in medidas.items():
        if fallo := next((f["fallo"] for f in filas if "fallo" in f), None):
            todos = False
            print(f"  {nombre:<26} import FAILED in the built artifact: {fallo}")
            continue
        ms = statistics.median(f["importar_s"] for f in filas) * 1000
        ratio = statistics.median(f["importar_s"] for f in filas) / statistics.median(base)
        rss = statistics.median(f["maxrss_kb"] for f in filas) / 1024
        uso = statistics.median(f["uso_s"] for f in filas) * 1000
        pesados = ", ".join(filas[0]["pesados"]) or "-"
        ok = ratio <= GOAL_RATIO
        todos &= ok
        print(f"  {nombre:<26} {ms:9.0f} {ratio:6.2f} {'met' if ok else 'NOT':>5} {rss:9.0f}  {uso:12.0f}  {pesados}")
    print(
        f"  layer {capas[0]}: {tamano_capa_mb:.1f} MB unzipped (goal <= {GOAL_LAYER_MB:.0f} MB:"
        f" {'met' if tamano_capa_mb <= GOAL_LAYER_MB else 'NOT met'}); {sin_pyc} modules without .pyc;"
        f" runtime packages in it: {', '.join(del_runtime) or 'none'} (goal none:"
        f" {'met' if not del_runtime else 'NOT met'})"
    )
    print(
        f"  goal every function <= {GOAL_RATIO}x import boto3: {'met' if todos else 'NOT met'}"
        "  ('first use' = deferred packages the first invocation still imports, not in the ratio)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
