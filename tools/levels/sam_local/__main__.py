"""``python -m sam_local``: one sample event through ``sam local invoke``, or the local world kept up.

    invoke FUNCTION EVENT  build (cached), start what EVENT needs, run the README's
                           ``sam local invoke`` line, print the answer; exit 1 on an error the
                           event is not declared to raise (events/casos.yaml)
    serve                  start the same world and keep it up (Ctrl-C stops it), for running
                           the README's ``sam local invoke`` lines by hand

Docker and the base image come first (``make invoke`` / ``make sam-local`` run
``ensure-docker.sh`` and ``build-image.sh`` before this).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mercadofresco_local import plantilla
from template_model.wiring import FUNCTIONS

from sam_local.cases import CASES, observe, prepare
from sam_local.environment import RAIZ, LocalEnvironment, lane_env_vars
from sam_local.invoke import BUILD_DIR, SamLocalError, build, invoke, invoke_command


def functions() -> list[str]:
    """Every function ``sam local invoke`` can run: logical ids, ``Unit/Function`` inside a nested unit."""
    return [f"{ruta}{lid}" for ruta, unidad in plantilla().walk() for lid in unidad.of_type(*FUNCTIONS)]


def _invoke(function: str, event: str) -> int:
    if function not in (conocidas := functions()):
        print(f"{function} is no function of template.yaml: {', '.join(conocidas)}", file=sys.stderr)
        return 2
    case = CASES.get(event.removeprefix("events/"))
    build()
    with LocalEnvironment() as env:
        prepare(env, case)
        try:
            answer = invoke(function, event, echo=True)
        except SamLocalError as error:
            print(error, file=sys.stderr)
            return 2
    print(answer.logs, file=sys.stderr)
    print(json.dumps(answer.payload, indent=2, ensure_ascii=False))
    esperado = case.error if case is not None and case.function == function else None
    if answer.error_type is None or answer.error_type == esperado:
        if answer.error_type:
            print(f"{function} raised {answer.error_type}, the error {event} is declared to raise", file=sys.stderr)
        return 0
    print(f"{function} raised {answer.error_type} (unexpected for {event})", file=sys.stderr)
    return 1


def _run(lane: int, salida: Path, eventos: list[str]) -> int:
    """A lane of the tests: each event from an empty world, observed, written to ``salida`` (JSON)."""
    env_vars = lane_env_vars(lane, RAIZ / "build" / "sam-local")  # build/ is git-ignored
    resultados: dict[str, Any] = {}
    with LocalEnvironment(env_vars_path=env_vars) as env:
        for evento in eventos:
            case = CASES[evento]
            inicio = time.monotonic()
            env.reset()
            prepare(env, case)
            try:
                answer = invoke(case.function, f"events/{evento}", env_vars=str(env_vars))
            except SamLocalError as error:
                resultados[evento] = {"error_type": "SamLocalError", "payload": None, "logs": str(error)}
                continue
            resultados[evento] = {
                "error_type": answer.error_type,
                "payload": answer.payload,
                "logs": answer.logs[-4000:],
                "seconds": round(time.monotonic() - inicio, 1),
                **observe(env, case),
            }
            visto = resultados[evento]
            print(
                f"lane {lane}: {evento} {visto['seconds']} s {visto['error_type'] or ''}", file=sys.stderr, flush=True
            )
            salida.write_text(json.dumps(resultados, indent=2, default=str))  # after each: a killed lane keeps its part
    salida.write_text(json.dumps(resultados, indent=2, default=str))
    return 0


def _serve() -> int:
    build()
    parado = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: parado.set())
    with LocalEnvironment():
        ejemplo = invoke_command("CobroFunction", "events/cobro-pedido.json", BUILD_DIR)
        print("moto, the stand-ins and the relays are up; in another terminal, for example:")
        linea = shlex.join(ejemplo).replace(sys.prefix + "/bin/", "")
        print(f"  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing {linea}")
        print("Ctrl-C stops them.", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            parado.wait()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sam_local", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="orden", required=True)
    uno = sub.add_parser("invoke", help="one event through sam local invoke")
    uno.add_argument("function", help="logical id in template.yaml, e.g. CobroFunction")
    uno.add_argument("event", help="events/<file>.json")
    sub.add_parser("serve", help="keep moto, the stand-ins and the relays up")
    carril = sub.add_parser("run", help="(tests) run events in lane N, observations to a JSON file")
    carril.add_argument("--lane", type=int, default=0)
    carril.add_argument("--out", type=Path, required=True)
    carril.add_argument("events", nargs="+", help="file names in events/")
    args = parser.parse_args(argv)
    if args.orden == "invoke":
        return _invoke(args.function, args.event)
    if args.orden == "run":
        return _run(args.lane, args.out, args.events)
    return _serve()


if __name__ == "__main__":
    sys.exit(main())
