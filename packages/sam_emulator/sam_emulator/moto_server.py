"""moto's server on loopback, so the runtime, the handlers and the operator CLI see one AWS.

The local run uses ``ThreadedMotoServer`` (in this process, on 127.0.0.1 and a free port)
rather than ``mock_aws``: ``mf-dlq --endpoint-url`` (a separate process) must reach the
same queues as the handlers. Everything in this process reaches it through
``AWS_ENDPOINT_URL``, which botocore honours for every client.

Its changes to moto (Step Functions really executing, ``Retry`` sleeps, ``TimeoutSeconds`` and,
with ``compress_waits``, ``Wait`` states divided by ``compression``; atomic DynamoDB writes; a
cached host -> backend routing) are :func:`sam_emulator.moto_patches.moto_server_patches`,
applied at :meth:`MotoServer.start` and undone at :meth:`MotoServer.stop`.

- ``stepfunctions.execute_state_machine``: moto's ASL interpreter really runs executions;
  its Lambda tasks call back into this server (``MOTO_PORT``), where the handler runs in
  process (``sam_emulator.moto_lambda``).
- A ``Retry`` written for production (``IntervalSeconds: 2``, ``MaxDelaySeconds: 20``) keeps
  its shape and ratios but lasts ``1/compression`` of it. The ASL itself is never copied or
  rewritten.
- The execution's ``TimeoutSeconds`` is honoured by moto's interpreter (``Program.eval`` joins
  the execution's worker thread with that timeout, then marks the execution ``TIMED_OUT``, as
  Step Functions does: "States.Timeout" in the Step Functions developer guide, "Error
  handling"; a Lambda invocation in flight runs to its own end); only its wait is scaled, so a
  bound written for production keeps its ratio to the compressed ``Retry`` waits.
- With ``compress_waits`` (the chaos scenario, whose leases are compressed too) a wait
  written to outlast a lease still outlasts the compressed lease. Off by default.
"""

from __future__ import annotations

import os
import socket
import urllib.request
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from sam_emulator.moto_patches import moto_server_patches

LOCAL_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_SECURITY_TOKEN": "testing",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class MotoServer:
    """moto's server on ``127.0.0.1:<free port>`` with the local run's settings applied."""

    region: str = "eu-south-2"
    compression: float = 1.0
    port: int = field(default_factory=free_port)
    _server: Any = None
    _previous_env: dict[str, str | None] = field(default_factory=dict)
    compress_waits: bool = False
    _patches: ExitStack = field(default_factory=ExitStack)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> MotoServer:
        import logging

        from moto.server import ThreadedMotoServer

        self._patches.enter_context(moto_server_patches(self.compression, compress_waits=self.compress_waits))
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
        # moto's ASL interpreter logs every failed state (a Catch included) at ERROR; the execution
        # history already records them, and the demo reads it from there.
        logging.getLogger("moto.stepfunctions.parser").setLevel(logging.CRITICAL)
        self._set_env(
            {
                **LOCAL_CREDENTIALS,
                "AWS_ENDPOINT_URL": self.url,
                "MOTO_PORT": str(self.port),
                "AWS_DEFAULT_REGION": self.region,
                "AWS_REGION": self.region,
            }
        )
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        # moto's backends are process-global: a server started after another must start empty.
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/moto-api/reset", method="POST"), timeout=10)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        self._patches.close()
        for key, value in self._previous_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._previous_env.clear()

    def _set_env(self, values: dict[str, str]) -> None:
        for key, value in values.items():
            self._previous_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def __enter__(self) -> MotoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
