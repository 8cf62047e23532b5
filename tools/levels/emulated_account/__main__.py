"""``python -m emulated_account up|down|serve|run``: the emulated account and the deploy level.

- ``up [--parametros 'K=V ...']`` (``make deploy-emulated``): the account started if needed, the real
  template built and deployed into it (:mod:`emulated_account.despliegue`);
- ``down`` (``make deploy-emulated-down``): the account stopped, everything it made removed;
- ``serve --dir DIR``: the account in the foreground (what ``up`` starts in the background);
- ``run --out FILE``: the deploy level once (:mod:`emulated_account.nivel`), its observations to FILE.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m emulated_account", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="orden", required=True)
    up = sub.add_parser("up", help="start the account if needed, build and deploy the template into it")
    up.add_argument("--parametros", default="", metavar="'K=V ...'", help="parameter overrides for this deploy")
    sub.add_parser("down", help="stop the account and remove everything it made")
    serve = sub.add_parser("serve", help="run the account in the foreground")
    serve.add_argument("--dir", type=Path, required=True)
    run = sub.add_parser("run", help="run the deploy level once and write its observations")
    run.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)

    if args.orden == "up":
        pares = shlex.split(args.parametros)
        if malos := [x for x in pares if "=" not in x]:
            p.error(f"--parametros: {malos[0]!r} is not K=V")
        from emulated_account.despliegue import subir

        return subir(dict(x.split("=", 1) for x in pares))
    if args.orden == "down":
        from emulated_account.despliegue import bajar

        return bajar()
    if args.orden == "serve":
        from emulated_account.cuenta import servir

        return servir(args.dir)
    from emulated_account.nivel import ejecutar

    def terminar(senal: int, _marco: object) -> None:
        raise SystemExit(128 + senal)  # unwinds the level: make deploy-emulated-down runs in its finally

    for senal in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(senal, terminar)
    return ejecutar(args.out)


if __name__ == "__main__":
    sys.exit(main())
