"""``mf-dlq``'s command line: subcommands, their options and their ``--help`` (in the on-call's Spanish)."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from mercadofresco_ops.ayuda import ParserEspanol
from mercadofresco_ops.dlq.salud import EDAD_MAX_S


def _comunes(con_cola: bool = True) -> argparse.ArgumentParser:
    comunes = ParserEspanol(add_help=False)
    if con_cola:
        # --queue: the name the runbooks printed before the Spanish one (issue 39); old notes still work.
        comunes.add_argument("--cola", "--queue", dest="cola", required=True, help="la DLQ, por nombre o URL")
    comunes.add_argument("--region", help="región de AWS (por defecto la del perfil/entorno)")
    comunes.add_argument("--profile", dest="perfil", help="perfil de AWS (~/.aws/config)")
    comunes.add_argument(
        "--endpoint-url", metavar="URL", help="otro endpoint (p. ej. moto_server en http://127.0.0.1:5000)"
    )
    comunes.add_argument("--json", action="store_true", help="salida JSON en stdout, para scripts")
    return comunes


def construir_parser() -> argparse.ArgumentParser:
    parser = ParserEspanol(
        prog="mf-dlq",
        description="Herramientas del runbook de DLQ de MercadoFresco (runbooks/dlq.md).",
        epilog="Códigos de salida: 0 bien, 1 comprobación fallida, rechazo o nada que clasificar, 2 uso/cola "
        "desconocida/permisos, 130 interrumpido.",
    )
    sub = parser.add_subparsers(dest="orden", required=True, metavar="ORDEN")
    comunes = _comunes()
    p = sub.add_parser(
        "inspeccionar",
        parents=[comunes],
        help="ver mensajes sin borrarlos (visibilidad 5 s)",
        description="Recibe hasta N mensajes con VisibilityTimeout=5 y NUNCA borra: vuelven solos "
        "a la DLQ en 5 s. Cada lectura suma 1 a ApproximateReceiveCount.",
    )
    p.add_argument("-n", "--maximo", type=int, default=10, help="cuántos mensajes (por defecto 10)")
    p = sub.add_parser(
        "clasificar",
        parents=[comunes],
        help="transitorio / envenenado / de datos, con evidencias",
        description="Muestrea la DLQ (sin borrar) y clasifica: la distribución temporal es una "
        "pista, el contenido (version, cuerpo ilegible, motivo) es la prueba.",
    )
    p.add_argument("--muestra", type=int, default=50, help="mensajes a muestrear (por defecto 50)")
    p.add_argument(
        "--version-esperada",
        type=_literal,
        default=1,
        help="la version del contrato que entiende el consumidor (por defecto 1)",
    )
    _parser_reprocesar(sub, comunes)
    p = sub.add_parser(
        "verificar",
        parents=[comunes],
        help="DLQ a cero y la cola de origen procesó lo esperado",
        description="Sale con 0 si la DLQ está a cero (visibles, en vuelo y retrasados) y, con "
        "--esperados, si NumberOfMessagesDeleted de la cola de origen sumó al menos N desde --desde.",
    )
    p.add_argument("--destino", help="la cola de origen (si no, la que tiene esta DLQ en su RedrivePolicy)")
    p.add_argument("--esperados", type=int, help="mensajes que la cola de origen debe haber procesado")
    p.add_argument("--desde", type=_fecha, help="inicio del reprocesado, ISO 8601 (por defecto hace 30 min)")
    sub.add_parser(
        "tareas",
        aliases=["mover-estado"],
        parents=[comunes],
        help="estado de las tareas nativas (ListMessageMoveTasks)",
    )
    p = sub.add_parser("cancelar", parents=[_comunes(con_cola=False)], help="cancelar una tarea de movimiento nativa")
    p.add_argument("--tarea", required=True, help="el TaskHandle (lo muestra 'tareas')")
    return parser


def _parser_reprocesar(sub: Any, comunes: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "reprocesar",
        parents=[comunes],
        help="devolver mensajes a su cola de origen con límite de velocidad",
        description="Mueve mensajes de la DLQ a su cola de origen a --tasa mensajes/s. Por defecto: recibir, "
        "enviar y solo entonces borrar (un corte deja como mucho un duplicado), con --filtro y --transformar; "
        "FIFO conserva MessageGroupId. --nativo usa StartMessageMoveTask (sin filtro ni transformación). "
        "Se niega si el consumidor de origen falla (alarmas en ALARM sobre la cola de origen, su función o su "
        "pipe, o el circuito de su dependencia; su mensaje más viejo por encima de --edad-max-s; o la DLQ aún "
        "creciendo) salvo con --forzar.",
    )
    p.add_argument(
        "--destino",
        help="cola de origen (nombre o URL); si no: la única con esta DLQ en su "
        "RedrivePolicy, o el atributo mf-cola-origen de los mensajes",
    )
    p.add_argument("--tasa", type=float, default=10.0, help="mensajes por segundo (por defecto 10; nativo ≤ 500)")
    p.add_argument("--filtro", help="JMESPath sobre el evento; solo se mueven los que cumple, p. ej. 'version == `2`'")
    p.add_argument(
        "--motivo",
        help="solo los mensajes con este mf-motivo ('ninguno': los que llegaron por redrive, "
        "sin motivo); 'clasificar' da la orden exacta de cada grupo",
    )
    p.add_argument(
        "--transformar",
        help="modulo:funcion que recibe el evento y devuelve el que se envía, "
        "p. ej. mercadofresco_ops.dlq.adaptadores:v2_a_v1",
    )
    p.add_argument("--maximo", type=int, metavar="N", help="mover como mucho N mensajes")
    p.add_argument(
        "--simulacro",
        "--dry-run",  # the name the runbooks printed before the Spanish one (issue 39)
        dest="simulacro",
        action="store_true",
        help="no envía ni borra: cuenta lo que movería y enseña ejemplos",
    )
    p.add_argument("--forzar", action="store_true", help="reprocesar aunque el consumidor parezca fallar")
    p.add_argument(
        "--edad-max-s",
        type=int,
        default=EDAD_MAX_S,
        help="antigüedad máxima tolerada del mensaje más viejo en origen (por defecto 300 s)",
    )
    p.add_argument(
        "--visibilidad-s",
        type=int,
        default=30,
        help="visibilidad de los mensajes en curso (por defecto 30 s; tras un corte vuelven en ese plazo)",
    )
    p.add_argument("--nativo", action="store_true", help="usar StartMessageMoveTask (redrive sin filtro)")
    p.add_argument("--sin-esperar", action="store_true", help="con --nativo: iniciar y salir sin seguir la tarea")


def _literal(texto: str) -> Any:
    try:
        return json.loads(texto)
    except ValueError:
        return texto


def _fecha(texto: str) -> datetime:
    try:
        fecha = datetime.fromisoformat(texto)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"fecha ISO 8601 no válida: {texto}") from exc
    return fecha if fecha.tzinfo else fecha.replace(tzinfo=UTC)
