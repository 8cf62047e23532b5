"""What the on-call's CLIs say when AWS fails them: one line, exit code 2, never a traceback.

Every failure an operator can cause or meet (unknown queue or stack, no permission, no credentials,
no region, a wrong endpoint) becomes :class:`ErrorOperador`; each CLI's ``main`` prints it as
``<command>: <one line>``.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["COLAS_INEXISTENTES", "SIN_PERMISO", "ErrorOperador", "errores_de_aws", "una_linea"]

COLAS_INEXISTENTES = {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"}
SIN_PERMISO = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "InvalidClientTokenId"}


class ErrorOperador(Exception):
    """Something the operator must fix (usage, unknown queue, permissions): exit 2, one line."""


def una_linea(exc: BaseException) -> str:
    """The error as one line, whatever the library put in it."""
    return " ".join(str(exc).split())


@contextmanager
def errores_de_aws(contexto: str) -> Iterator[None]:
    """Turn AWS/botocore failures into one-line :class:`ErrorOperador` messages."""
    try:
        yield
    except ClientError as exc:
        codigo = exc.response.get("Error", {}).get("Code", "")
        if codigo in COLAS_INEXISTENTES:
            raise ErrorOperador(f"{contexto}: la cola no existe") from exc
        if codigo in SIN_PERMISO:
            raise ErrorOperador(f"{contexto}: sin permiso ({exc.operation_name}: {codigo})") from exc
        raise ErrorOperador(f"{contexto}: {exc.operation_name} falló: {codigo} {exc}") from exc
    except NoCredentialsError as exc:
        raise ErrorOperador(f"{contexto}: no hay credenciales de AWS (usa --profile o AWS_PROFILE)") from exc
    except NoRegionError as exc:
        raise ErrorOperador(f"{contexto}: falta la región (usa --region o AWS_DEFAULT_REGION)") from exc
    except BotoCoreError as exc:
        raise ErrorOperador(f"{contexto}: {exc}") from exc
