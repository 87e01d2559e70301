"""The progress bar of long commands: on a terminal only, after a second, then cleared."""

from __future__ import annotations

import io

from engram.cli.progress import TerminalProgress


class _Terminal(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_long_operation_shows_a_bar_after_a_second_and_clears_it() -> None:
    stream, clock = _Terminal(tty=True), _Clock()
    progress = TerminalProgress(stream, clock)

    progress("indexing memory files", 0, 5000)
    clock.now += 0.5
    progress("indexing memory files", 1000, 5000)
    assert stream.getvalue() == ""  # a quick operation stays silent
    clock.now += 0.6
    progress("indexing memory files", 2500, 5000)
    progress("indexing memory files", 2600, 5000)  # redrawn at most ten times a second
    clock.now += 0.2
    progress("indexing memory files", 5000, 5000)

    bar = "#" * 15 + "." * 15
    assert stream.getvalue() == f"\rindexing memory files [{bar}] 2500/5000\r\033[K"


def test_nothing_is_drawn_when_stderr_is_not_a_terminal() -> None:
    stream, clock = _Terminal(tty=False), _Clock()
    progress = TerminalProgress(stream, clock)

    progress("embedding", 0, 10)
    clock.now += 5
    progress("embedding", 5, 10)

    assert stream.getvalue() == ""


def test_a_new_task_ends_the_bar_of_the_one_before() -> None:
    stream, clock = _Terminal(tty=True), _Clock()
    progress = TerminalProgress(stream, clock)
    progress("reading memory files", 0, 10)
    clock.now += 2
    progress("reading memory files", 5, 10)

    progress("indexing memory files", 0, 10)

    assert stream.getvalue().endswith("5/10\r\033[K")
