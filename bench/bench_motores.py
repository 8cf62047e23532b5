"""Step Functions or Lambda durable functions: the order workflow on both engines, side by side, one run (issue 37).

One run of the contract suite (``tests/contract``: the same paths and faults on the state machine on
moto's interpreter and on the durable function on the SDK's local runner), which writes what each
execution cost (``MF_MOTORES_INFORME``), and then, from those records:

- **billed units per order, per path**: state transitions vs durable operations (the start, each step
  and wait, each step retry), for the paths confirmed, declined, circuit open, unknown outcome
  (resolved and confirmed; compensated) and refunded, with the ratio;
- **USD per month at the lesson's 240,000 orders**, as if every order took that path: Step Functions
  Standard (0.025 USD per 1,000 transitions) plus the Lambda tasks it invokes (reclamo, cobro), against
  durable operations (8 USD per million) + data written (0.25 USD/GB) + retained
  (0.15 USD/GB-month for ``RETENCION_DIAS``) plus the durable function's own invocations. Lambda
  prices from the cost report's price file (``mercadofresco_informes.costes``: arm64, the template's default);
  durations are the wall time measured here, an upper bound (moto answers in this process);
- **end-to-end latency** per path in this process (start to end, waits skipped by both engines);
- **cold start**: the import of each function the engine runs, as Lambda imports it (the artifact built
  by ``functions/Makefile``'s recipe, the layer by its own, a runtime-like site), in fresh processes
  interleaved with ``import boto3`` ones (``bench/bench_cold_start.py``'s probe);
- **the chaos campaign's Lambda faults** (an invocation dying mid-step, timing out, throttled): the
  contract suite's fault cases, passed or not per engine (a failed case is a broken invariant: each
  ends by judging the six with the campaign's own judge), and the cases an engine cannot express.

Usage: ``python bench/bench_motores.py`` (``BENCH_MOTORES_N`` fresh processes per cold-start probe,
default 5). Exit 1 when a contract case failed: the figures of a broken run are not worth reading.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

RAIZ = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(RAIZ / "bench")]

import bench_cold_start as frio  # noqa: E402  (the probe of a function's import, shared)
from template_model import Template, as_nested, read  # noqa: E402

RETENCION_DIAS = 14  # DurableConfig.RetentionPeriodInDays proposed for the component (the on-call's window)
# Durable functions' prices (AWS's pricing page as issue 37 quotes it, 2026-12): verify before relying on them.
DURABLE_USD_POR_OPERACION = 8 / 1_000_000
DURABLE_USD_POR_GB_ESCRITO = 0.25
DURABLE_USD_POR_GB_MES = 0.15
MEMORIA_GB = 512 / 1024  # Globals' MemorySize: the task functions' and the durable function's
N_FRIO = int(os.environ.get("BENCH_MOTORES_N", "5"))

# The paths, by the contract test that runs each (its name's start; its first execution is the order measured).
CAMINOS = {
    "confirmado": "test_valid_pedido_charges_once",
    "rechazado": "test_declined_card_is_not_retried",
    "circuito abierto": "test_open_circuit_fails_fast",
    "desconocido, confirmado": "test_invocation_dying_after_the_gateway_charged",
    "desconocido, compensado": "test_every_charge_answer_lost",
    "reembolsado": "test_failure_after_the_cobro_refunds_once",
}
# The chaos campaign's Lambda faults, by the contract cases that inject them.
FALLOS = {
    "muere tras cobrar (crash / timeout)": "test_invocation_dying_after_the_gateway_charged",
    "muere antes de cobrar, siempre": "test_charge_dying_before_the_gateway_every_time",
    "muere tras cobrar, siempre": "test_every_charge_answer_lost",
    "muere tras reembolsar": "test_refund_dying_after_refunding",
    "registro sin completar tras cobrar": "test_record_never_completed_after_charging",
    "lecturas agotadas en la pasarela": "test_gateway_read_timeouts_after_charging",
    "cierre del reclamo estrangulado (2)": "test_reclamo_close_throttled_twice",
    "cierre del reclamo estrangulado, siempre": "test_reclamo_close_throttled_for_good",
    "función que cobra estrangulada (3)": "test_charging_function_throttled_a_few_times",
    "función que cobra estrangulada, siempre": "test_charging_function_throttled_for_good",
    "dos arranques del mismo pedido": "test_two_starts_of_one_pedido",
    "muere tras cada paso (solo durable)": "test_a_death_after_a_steps_effect",
}


# ------------------------------------------------------------------ the contract run
def correr_contrato() -> tuple[list[dict[str, Any]], float, int]:
    """Run tests/contract once, both engines; its records, its wall time and pytest's exit code."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", prefix="mf-motores-") as informe:
        inicio = time.perf_counter()
        proceso = subprocess.run(
            # The fuzzed inputs are refusals: they would only thin out the latency figures.
            [sys.executable, "-m", "pytest", "tests/contract", "-q", "-p", "no:cacheprovider", "-k", "not fuzz"],
            cwd=RAIZ,
            env={**os.environ, "MF_MOTORES_INFORME": informe.name},
            capture_output=True,
            text=True,
        )
        segundos = time.perf_counter() - inicio
        registros = [json.loads(linea) for linea in informe.read().splitlines() if linea.strip()]
    resumen = (proceso.stdout.strip().splitlines() or ["?"])[-1]
    print(f"contract suite: {resumen} ({segundos:.0f} s)")
    if proceso.returncode not in (0, 5):
        print(proceso.stdout[-4000:], file=sys.stderr)
    return registros, segundos, proceso.returncode


def _primera(registros: list[dict[str, Any]], prueba: str, motor: str) -> dict[str, Any] | None:
    for r in registros:
        if r["prueba"].startswith(prueba) and r["motor"] == motor and r["ejecuciones"]:
            return r["ejecuciones"][0]
    return None


# ------------------------------------------------------------------ prices
def _precios() -> tuple[dict[str, float], int]:
    """The cost report's prices, and the lesson's orders a month (both from its price file)."""
    from mercadofresco_informes.costes import cargar_precios

    datos = cargar_precios()
    return datos["precios_usd"], datos["pedidos_por_mes_leccion"]


def usd_mes(motor: str, ejecucion: dict[str, Any], precios: dict[str, float], pedidos_mes: int) -> float:
    """What one order of this path costs on this engine, times the lesson's orders a month."""
    lambda_usd = (
        ejecucion["invocaciones"] * precios["lambda_por_peticion"]
        + ejecucion["lambda_s"] * MEMORIA_GB * precios["lambda_arm64_por_gb_s"]
    )
    if motor == "step_functions":
        motor_usd = ejecucion["unidades"] * precios["step_functions_standard_por_transicion"]
    else:
        gb = ejecucion["datos_bytes"] / 1e9
        motor_usd = (
            ejecucion["unidades"] * DURABLE_USD_POR_OPERACION
            + gb * DURABLE_USD_POR_GB_ESCRITO
            + gb * DURABLE_USD_POR_GB_MES * RETENCION_DIAS / 30
        )
    return (motor_usd + lambda_usd) * pedidos_mes


# ------------------------------------------------------------------ cold start


def _construir(destino: Path, objetivo: str, makefile: Path, fuente: Path | None) -> None:
    """One artifact by its own recipe (SAM copies CodeUri following links: so does this copy)."""
    destino.mkdir(parents=True)
    trabajo = destino.parent / f"{destino.name}-src"
    if fuente is not None:
        subprocess.run(["cp", "-RL", f"{fuente}/.", str(trabajo)], check=True)
    else:
        trabajo.mkdir()
    construido = subprocess.run(
        ["make", "-s", "-f", str(makefile), objetivo, f"ARTIFACTS_DIR={destino}"],
        cwd=trabajo,
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
    )
    if construido.returncode != 0:
        raise SystemExit(f"make {objetivo} failed:\n{construido.stderr[-3000:]}")


def arranque_en_frio() -> dict[str, dict[str, float]]:
    """Median import of each function (CPU, wall, against import boto3) and its first use, as Lambda starts it."""
    funciones = {"reclamo": "ReclamoFunction", "cobro": "CobroFunction", "pedido_durable": "PedidoDurableFunction"}
    with tempfile.TemporaryDirectory(prefix="mf-motores-frio-") as tmp:
        raiz = Path(tmp)
        arquitectura = "arm64" if platform.machine() in ("aarch64", "arm64") else "x86_64"  # this machine's wheels
        _construir(raiz / "capa", "build-ComunLayer", RAIZ / "layers" / arquitectura / "Makefile", None)
        for carpeta, objetivo in funciones.items():
            _construir(
                raiz / carpeta, f"build-{objetivo}", RAIZ / "functions" / "Makefile", RAIZ / "functions" / carpeta
            )
        frio._sitio_runtime(raiz / "runtime")
        python = [sys.executable]
        # Each function's environment as the template sets it (the durable one's in its unit, with the leases and
        # wait the root passes it from Plazos).
        plantilla = read(RAIZ / "template.yaml")
        pila = Template(path=RAIZ / "template.yaml", parameters={"WorkflowEngine": "DurableFunction"})
        documentos = {}
        for _, t in pila.walk():
            documento = t.doc if t.parent is None else as_nested(t.doc, t)  # once per unit, not per resource
            documentos |= dict.fromkeys(t.resources, documento)
        entornos = {}
        for carpeta, objetivo in funciones.items():
            documento = documentos[objetivo]
            globales = documento.get("Globals", {}).get("Function", {})
            propiedades = {**globales, **documento["Resources"][objetivo]["Properties"]}
            entornos[carpeta] = frio._entorno(documento, propiedades, objetivo)
        entorno_base = frio._entorno(plantilla, {"Handler": "none"}, "bench")
        base, medidas = [], defaultdict(list)
        rutas_base = [str(raiz / "runtime")]
        for _ in range(N_FRIO):
            for carpeta in funciones:
                base.append(frio._sonda(python, raiz, rutas_base, None, entorno_base))
                rutas = [str(raiz / carpeta), str(raiz / "capa" / "python"), str(raiz / "runtime")]
                medidas[carpeta].append(frio._sonda(python, raiz / carpeta, rutas, "app", entornos[carpeta]))
    fallos = {c: m[0]["fallo"] for c, m in medidas.items() if "fallo" in m[0]}
    if fallos:
        raise SystemExit(f"a function did not import: {fallos}")
    base_cpu = statistics.median(b["importar_cpu_s"] for b in base)
    base_wall = statistics.median(b["importar_s"] for b in base)
    return {
        "import boto3": {"cpu_ms": base_cpu * 1000, "wall_ms": base_wall * 1000, "ratio": 1.0, "uso_ms": 0.0},
        **{
            carpeta: {
                "cpu_ms": statistics.median(m["importar_cpu_s"] for m in filas) * 1000,
                "wall_ms": statistics.median(m["importar_s"] for m in filas) * 1000,
                "ratio": statistics.median(m["importar_cpu_s"] for m in filas) / base_cpu,
                "uso_ms": statistics.median(m["uso_s"] for m in filas) * 1000,
            }
            for carpeta, filas in medidas.items()
        },
    }


# ------------------------------------------------------------------ printing
def _ratio(a: float, b: float) -> str:
    return f"{b / a:5.2f}x" if a else "    -"


def main() -> int:
    carga = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"engines bench: {os.cpu_count()} CPUs, load average {carga} (shared); durable = Lambda durable functions")
    registros, _, codigo = correr_contrato()
    precios, pedidos_mes = _precios()

    print(
        f"\n  per order, by path (2 order lines). USD/month: as if all {pedidos_mes:,} orders of a month took the path;"
        f" Lambda arm64 {MEMORIA_GB * 1024:.0f} MB at the wall time measured here (an upper bound); durable data"
        f" retained {RETENCION_DIAS} days"
    )
    print(f"  {'':<26} {'Step Functions':>31} {'durable':>31}   durable/SFN")
    columnas = f"{'units':>8} {'USD/month':>10} {'latency ms':>11}"
    print(f"  {'path':<26} {columnas} {columnas}   units   USD")
    for camino, prueba in CAMINOS.items():
        sfn, dur = _primera(registros, prueba, "step_functions"), _primera(registros, prueba, "durable")
        if sfn is None or dur is None:
            print(f"  {camino:<26} (no record: the case failed or did not run)")
            continue
        usd_sfn, usd_dur = (usd_mes(m, e, precios, pedidos_mes) for m, e in (("step_functions", sfn), ("durable", dur)))
        print(
            f"  {camino:<26} {sfn['unidades']:>8} {usd_sfn:>10.2f} {sfn['latencia_s'] * 1000:>11.0f}"
            f" {dur['unidades']:>8} {usd_dur:>10.2f} {dur['latencia_s'] * 1000:>11.0f}"
            f"  {_ratio(sfn['unidades'], dur['unidades'])} {_ratio(usd_sfn, usd_dur)}"
        )
    print("  what each line is made of (confirmed path):")
    for motor in ("step_functions", "durable"):
        e = _primera(registros, CAMINOS["confirmado"], motor)
        if e is not None:
            print(
                f"    {motor:<15} {e['invocaciones']} Lambda invocations, {e['lambda_s'] * 1000:.0f} ms of them;"
                f" {e['datos_bytes']} bytes checkpointed; {' > '.join(e['pasos'])}"
            )
    todas = defaultdict(list)
    for r in registros:
        for e in r["ejecuciones"]:
            todas[r["motor"]].append(e["latencia_s"] * 1000)
    for motor, ms in todas.items():
        ms.sort()
        print(
            f"  latency over all {len(ms)} {motor} executions of the run: median {statistics.median(ms):.0f} ms,"
            f" p90 {ms[int(0.9 * (len(ms) - 1))]:.0f} ms (waits skipped; moto and the gateway in this process)"
        )

    print("\n  chaos campaign's Lambda faults (contract cases; a failure is a broken invariant)")
    print(f"  {'fault':<44} {'Step Functions':>16} {'durable':>16}")
    violaciones = {"step_functions": 0, "durable": 0}
    for fallo, prueba in FALLOS.items():
        celdas = []
        for motor in ("step_functions", "durable"):
            vistos = [r["resultado"] for r in registros if r["prueba"].startswith(prueba) and r["motor"] == motor]
            fallidos = sum(1 for v in vistos if v == "failed")
            violaciones[motor] += fallidos
            celdas.append(
                "no se expresa"
                if not vistos or set(vistos) == {"skipped"}
                else f"{len(vistos) - fallidos}/{len(vistos)} ok"
            )
        print(f"  {fallo:<44} {celdas[0]:>16} {celdas[1]:>16}")
    print(f"  violations: Step Functions {violaciones['step_functions']}, durable {violaciones['durable']}")

    print("\n  cold start: import of each function, as Lambda starts it (median of fresh processes)")
    frio_ = arranque_en_frio()
    for nombre, m in frio_.items():
        print(
            f"  {nombre:<16} {m['cpu_ms']:6.0f} ms CPU {m['ratio']:5.2f}x boto3  {m['wall_ms']:6.0f} ms wall"
            f"  first use {m['uso_ms']:4.0f} ms"
        )
    print(
        "  per order the state machine cold-starts up to two functions (reclamo, cobro), each with its own warm pool;"
        " the durable engine one, re-invoked after every wait and retry (a replay: its steps are not run again)"
    )
    return 0 if codigo == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
