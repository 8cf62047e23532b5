"""Helpers shared by the idempotency tests (importable by child processes too)."""

from __future__ import annotations

from typing import Any

T0_S = 1_790_000_000.0  # a fixed "now" (epoch seconds) so stored timestamps are exact


class Reloj:
    """An injectable clock: ``now_s`` for the store, ``avanzar`` for the test, ``sleep`` that moves it."""

    def __init__(self, t_s: float = T0_S) -> None:
        self.t_s = t_s
        self.esperas_s: list[float] = []

    def __call__(self) -> float:
        return self.t_s

    def avanzar(self, s: float) -> None:
        self.t_s += s

    def sleep(self, s: float) -> None:
        self.esperas_s.append(s)
        self.t_s += s


class Operacion:
    """A side effect that counts its runs: returns ``resultado`` or raises ``error``."""

    def __init__(self, resultado: Any = None, error: BaseException | None = None) -> None:
        self.resultado = resultado
        self.error = error
        self.ejecuciones = 0

    def __call__(self) -> Any:
        self.ejecuciones += 1
        if self.error is not None:
            raise self.error
        return self.resultado


def consumidor_que_muere(endpoint_url: str, tabla: str, pedido_id: str, reclamado: Any, ejecuciones: Any) -> None:
    """Child process: claim ``cobro:{pedido_id}`` with the real clock, count one run, then hang until killed."""
    import threading

    from mercadofresco import aws
    from mercadofresco.dominio import claves
    from mercadofresco.idempotency import IdempotencyStore

    store = IdempotencyStore(tabla, aws.client("dynamodb", endpoint_url=endpoint_url))

    def cobrar_y_colgarse() -> None:
        with ejecuciones.get_lock():
            ejecuciones.value += 1
        reclamado.set()
        threading.Event().wait()  # "the gateway is still processing" until SIGKILL arrives

    store.run(claves.cobro(pedido_id), cobrar_y_colgarse)
