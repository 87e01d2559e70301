"""A progress bar on the terminal, for a command's long operations.

The domain reports how far an operation is (:class:`engram.project.ports.Progress`);
this draws it on stderr, only when stderr is a terminal and only once the operation has
run for a second: a quick command, a pipe and a log stay clean.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Final, TextIO

__all__ = ["TerminalProgress"]

#: How long an operation runs before its bar appears, and how often the bar is redrawn.
DELAY_S: Final = 1.0
REDRAW_S: Final = 0.1
_WIDTH: Final = 30


class TerminalProgress:
    """``progress(task, done, total)`` drawn as ``task [#####.....] done/total``."""

    def __init__(
        self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream = stream or sys.stderr
        self.clock = clock
        self._task: str | None = None
        self._started = 0.0
        self._drawn = 0.0  # when the bar was last drawn; 0: not yet

    def __call__(self, task: str, done: int, total: int) -> None:
        if not self.stream.isatty():
            return
        now = self.clock()
        if task != self._task:
            self._end()
            self._task, self._started, self._drawn = task, now, 0.0
        if done >= total:
            self._end()
            return
        if now - self._started < DELAY_S or now - self._drawn < REDRAW_S:
            return
        filled = _WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (_WIDTH - filled)
        self.stream.write(f"\r{task} [{bar}] {done}/{total}")
        self.stream.flush()
        self._drawn = now

    def _end(self) -> None:
        """Finish the bar on screen (its line is cleared), if one was drawn."""
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
        self._task, self._drawn = None, 0.0
