"""What the handlers print, read the way CloudWatch would: logs to a file, EMF metrics counted.

In Lambda, stdout goes to CloudWatch Logs, and Powertools' EMF lines become metrics there.
Locally the handlers share the demo's process, so :class:`OutputCapture` takes
``sys.stdout`` for the run: each JSON line with an ``_aws`` block is summed as metrics by
(name, ``dependency`` dimension), everything else is appended to a log file, and the
report prints on the real terminal (``sys.__stdout__``). Install it before the handlers
are imported: Powertools' logger binds to the ``sys.stdout`` of its creation.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from pathlib import Path


class OutputCapture(io.TextIOBase):
    """A thread-safe stand-in for ``sys.stdout`` that files logs and counts EMF metrics."""

    def __init__(self, record: Path) -> None:
        self.record = record
        self.metrics: Counter[tuple[str, str]] = Counter()
        self.log_lines = 0
        self._pending = ""
        self._lock = threading.Lock()
        self._file: TextIO | None = None
        self._previous: Any = None

    def install(self) -> OutputCapture:
        self.record.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.record.open("w", encoding="utf-8")
        self._previous = sys.stdout
        sys.stdout = self  # type: ignore[assignment]
        return self

    def uninstall(self) -> None:
        if self._previous is not None:
            sys.stdout = self._previous
            self._previous = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            self._pending += text
            *lines, self._pending = self._pending.split("\n")
            for line in lines:
                self._line(line)
        return len(text)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def metric(self, name: str, dependency: str | None = None) -> float:
        """The sum of one metric (for one ``dependency``, or over all)."""
        with self._lock:
            return sum(v for (n, d), v in self.metrics.items() if n == name and dependency in (None, d))

    def by_dependency(self, name: str) -> dict[str, float]:
        with self._lock:
            return {d: v for (n, d), v in self.metrics.items() if n == name}

    def _line(self, line: str) -> None:
        if line.startswith("{") and '"_aws"' in line:
            try:
                self._count(json.loads(line))
                return
            except ValueError:
                pass
        if self._file is not None and line:
            self._file.write(line + "\n")
            self.log_lines += 1

    def _count(self, emf: dict[str, Any]) -> None:
        for directive in emf["_aws"].get("CloudWatchMetrics", []):
            dimensions = [d for group in directive.get("Dimensions", []) for d in group]
            dependency = str(emf.get("dependencia", "")) if "dependencia" in dimensions else ""
            for metric in directive.get("Metrics", []):
                value = emf.get(metric["Name"], 0)
                total = sum(value) if isinstance(value, list) else value
                self.metrics[(metric["Name"], dependency)] += float(total)
