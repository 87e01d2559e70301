"""Knowing which memory files changed since the last call, without statting them all.

On Linux an inotify descriptor watches the memory folders; each call drains its
queue without blocking, so an edit made by hand is seen by the very next call, at the
cost of one ``read`` system call. Elsewhere, or when the kernel's queue overflowed,
the answer is "unknown" and the caller rescans every file.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from pathlib import Path
from typing import Final

__all__ = ["ChangeFeed", "open_change_feed"]

_IN_MODIFY: Final = 0x002
_IN_ATTRIB: Final = 0x004
_IN_CLOSE_WRITE: Final = 0x008
_IN_MOVED_FROM: Final = 0x040
_IN_MOVED_TO: Final = 0x080
_IN_CREATE: Final = 0x100
_IN_DELETE: Final = 0x200
_IN_DELETE_SELF: Final = 0x400
_IN_MOVE_SELF: Final = 0x800
_IN_Q_OVERFLOW: Final = 0x4000
_IN_NONBLOCK: Final = os.O_NONBLOCK
_IN_CLOEXEC: Final = os.O_CLOEXEC
_MASK: Final = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
)
_EVENT: Final = struct.Struct("iIII")


class ChangeFeed:
    """Changed paths since the last drain, or ``None`` when a full rescan is needed."""

    def __init__(self, fd: int, watches: dict[int, Path]) -> None:
        self._fd = fd
        self._watches = watches

    def drain(self) -> set[Path] | None:
        """The paths touched since the last call; ``None`` if unknown (rescan all, as
        after :meth:`close`)."""
        if self._fd < 0:
            return None
        changed: set[Path] = set()
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return changed
            except OSError:
                return None
            offset = 0
            while offset < len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                name = (
                    data[offset + 16 : offset + 16 + length]
                    .rstrip(b"\0")
                    .decode("utf-8", "surrogateescape")
                )
                offset += 16 + length
                if mask & (_IN_Q_OVERFLOW | _IN_DELETE_SELF | _IN_MOVE_SELF):
                    return None
                if wd in self._watches:
                    changed.add(self._watches[wd] / name if name else self._watches[wd])

    def close(self) -> None:
        """Stop watching; never reads the descriptor (or its number's next owner) again."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


def open_change_feed(directories: list[Path]) -> ChangeFeed | None:
    """Watch these folders, or ``None`` where inotify is unavailable."""
    if not sys.platform.startswith("linux"):
        return None
    # The C library this process already holds (dlopen of no file): no search for it,
    # which ctypes.util.find_library does by running `ldconfig -p` at every open.
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
    except (OSError, AttributeError):
        return None
    if fd < 0:
        return None
    watches = {}
    for directory in directories:
        wd = libc.inotify_add_watch(fd, os.fsencode(directory), _MASK)
        if wd < 0:
            os.close(fd)
            return None
        watches[wd] = directory
    return ChangeFeed(fd, watches)
