"""``mf-circuito``: read or force the shared circuit breakers in mercadofresco-catalogo.

Usage::

    mf-circuito estado pasarela erp correo-principal
    mf-circuito abrir pasarela            # forced open until 'cerrar' (e.g. provider announced maintenance)
    mf-circuito cerrar pasarela           # back to automatic, counters reset, closed
    mf-circuito cerrar pasarela --forzado # stays closed whatever fails, until 'cerrar' or 'abrir'

Valkey: ``--redis-url`` or, as the functions do, ``REDIS_URL`` / ``VALKEY_ENDPOINT`` (+ secret).
Exit codes: 0 done, 2 bad usage, 3 Valkey unreachable, 4 configuration missing or invalid.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from mercadofresco_ops.ayuda import ParserEspanol

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from mercadofresco.circuit_breaker import Decision

SALIDA_OK, SALIDA_USO, SALIDA_VALKEY, SALIDA_CONFIG = 0, 2, 3, 4
TIMEOUT_OPERADOR_MS = 2000  # an operator can wait 2 s; a Lambda cannot
_NOMBRE = re.compile(r"[A-Za-z0-9:._-]{0,100}")  # dependency names (pasarela, correo-principal) and key prefixes


def construir_parser() -> argparse.ArgumentParser:
    p = ParserEspanol(
        prog="mf-circuito",
        description="Lee o fuerza los circuitos compartidos de MercadoFresco (runbooks/circuito-abierto.md).",
        epilog="Códigos de salida: 0 hecho, 2 uso, 3 Valkey no responde, 4 falta o sobra configuración.",
    )
    p.add_argument(
        "--redis-url", metavar="URL", help="redis://host:puerto/bd (por defecto REDIS_URL o VALKEY_ENDPOINT)"
    )
    p.add_argument("--prefijo", default=None, help="prefijo de las claves en Valkey (por defecto mf:)")
    sub = p.add_subparsers(dest="orden", required=True, metavar="ORDEN")
    dependencia = "la dependencia, p. ej. pasarela, erp o correo-principal"
    estado = sub.add_parser("estado", help="enseña el circuito de cada dependencia")
    estado.add_argument("dependencias", nargs="+", metavar="DEPENDENCIA", help=dependencia)
    abrir = sub.add_parser("abrir", help="lo abre a la fuerza: toda llamada falla rápido hasta 'cerrar'")
    abrir.add_argument("dependencia", metavar="DEPENDENCIA", help=dependencia)
    cerrar = sub.add_parser("cerrar", help="lo cierra y vuelve al modo automático (con --forzado, cerrado siempre)")
    cerrar.add_argument("dependencia", metavar="DEPENDENCIA", help=dependencia)
    cerrar.add_argument("--forzado", action="store_true", help="que siga cerrado pase lo que pase, hasta otra orden")
    return p


def _hora(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%H:%M:%SZ")


def describir(dependencia: str, d: Decision) -> str:
    """One line an operator reads at 3 a.m."""
    linea = f"{dependencia}: {d.state.value}"
    if d.open_until_ms:
        linea += f" (abierto hasta {_hora(d.open_until_ms)}, aperturas {d.openings})"
    ventana = f"ventana {d.window_successes} éxitos / {d.window_failures} fallos"
    return f"{linea}; {ventana}; fallos seguidos {d.consecutive_failures}"


def main(argv: Sequence[str] | None = None) -> int:
    args = construir_parser().parse_args(argv)
    try:
        from mercadofresco.circuit_breaker import CircuitBreaker, SharedStateUnavailableError
        from mercadofresco.metrics import PowertoolsMetrics
        from mercadofresco.valkey import KEY_PREFIX, valkey_client

        cliente = valkey_client(args.redis_url, socket_timeout_ms=TIMEOUT_OPERADOR_MS)
    except ValueError as exc:
        print(f"mf-circuito: configuración: {exc}", file=sys.stderr)
        return SALIDA_CONFIG
    prefijo = KEY_PREFIX if args.prefijo is None else args.prefijo
    dependencias = args.dependencias if args.orden == "estado" else [args.dependencia]
    # A name becomes a Valkey key and a printed line: refuse what cannot be either (a typo with a
    # stray byte arrives as a lone surrogate) before touching anything.
    if malos := [d for d in [prefijo, *dependencias] if not _NOMBRE.fullmatch(d)]:
        print(
            f"mf-circuito: nombre no válido: {ascii(malos[0])[:60]} (letras, dígitos, ':', '.', '_' o '-')",
            file=sys.stderr,
        )
        return SALIDA_USO
    modo = {"estado": None, "abrir": "abierto", "cerrar": "cerrado" if getattr(args, "forzado", False) else ""}
    try:
        for dependencia in dependencias:
            # The functions' own breaker, through its public API: the same key, the same script.
            breaker = CircuitBreaker(dependencia, cliente, prefix=prefijo, metrics=PowertoolsMetrics())
            orden = modo[args.orden]
            decision = breaker.shared_state() if orden is None else breaker.force(orden)
            print(describir(dependencia, decision))
    except SharedStateUnavailableError as exc:
        print(f"mf-circuito: Valkey no responde ({exc}); nada se ha cambiado", file=sys.stderr)
        return SALIDA_VALKEY
    return SALIDA_OK


if __name__ == "__main__":
    sys.exit(main())
