"""The inotify change feed project memory watches its folders with (`store/watch.py`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engram.store.watch import open_change_feed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_opening_a_feed_starts_no_process_and_sees_a_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to find the C library with ctypes.util.find_library, which runs
    `ldconfig -p` at every open (143 tests started it)."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process was started")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    feed = open_change_feed([tmp_path])
    assert feed is not None
    try:
        assert feed.drain() == set()
        (tmp_path / "new.md").write_text("x")
        assert feed.drain() == {tmp_path / "new.md"}
    finally:
        feed.close()
