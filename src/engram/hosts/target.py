"""What a link target is: the files a host reads, their format, and engram's key.

Each host module (:mod:`.claude`, :mod:`.codex`, …) describes itself with one
:class:`Target`: where its MCP registration lives in a workspace and globally (a
:class:`ConfigFile`, a :class:`PrintedCommand` for Claude's user scope, or a reason
it is skipped), its session hook (:class:`HookSpec`), its ``/engram`` slash command
and its shared instruction file. The link engine (:mod:`.link`) knows no host by
name; it only reads these descriptions.

:class:`ConfigFile` also reads and edits engram's entry in its format (JSON, JSONC
or TOML), always through the text-preserving editors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from engram.errors import HostConfigShape
from engram.hosts import toml_block
from engram.hosts.command import HostEnv
from engram.hosts.entries import EntryShape
from engram.hosts.files import read_text, strip_bom
from engram.hosts.jsonc_edit import MISSING, JsonDocument

__all__ = [
    "ConfigFile",
    "Format",
    "HookSpec",
    "PrintedCommand",
    "Scope",
    "SlashSpec",
    "Target",
]

Format = Literal["json", "jsonc", "toml"]
Scope = Literal["workspace", "global"]


@dataclass(frozen=True)
class ConfigFile:
    """A host file holding engram's MCP entry at ``key``.

    ``candidates`` are tried in order: the first that exists is used, else the first
    is created (OpenCode reads ``opencode.json`` or ``opencode.jsonc``).
    """

    candidates: tuple[Path, ...]
    format: Format
    key: tuple[str, ...]
    shape: EntryShape
    always_load: bool = False

    @property
    def path(self) -> Path:
        for candidate in self.candidates:
            if candidate.exists():
                return candidate
        return self.candidates[0]

    def read(self) -> tuple[str | None, dict[str, Any] | None]:
        """The file's text and engram's entry (``None`` for each when absent)."""
        text = read_text(self.path)
        if text is None:
            return None, None
        return text, self.entry_in(text)

    def entry_in(self, text: str) -> dict[str, Any] | None:
        _, body = strip_bom(text)
        if self.format == "toml":
            return toml_block.read_entry(body, self.key, self.path)
        found = self._document(body).get(self.key)
        if found is MISSING:
            return None
        if not isinstance(found, dict):
            raise HostConfigShape(f"{self.path}: {'.'.join(self.key)} is not an object")
        return found

    def with_entry(self, text: str | None, entry: dict[str, Any]) -> str:
        """``text`` (``None``: no file yet) with engram's entry set to ``entry``."""
        bom, body = strip_bom(text or "")
        if self.format == "toml":
            return bom + toml_block.write_entry(body, self.key, entry, self.path)
        return bom + self._document(body).set(self.key, entry).text

    def without_entry(self, text: str) -> str | None:
        """``text`` without engram's entry; ``None`` when nothing else is left."""
        bom, body = strip_bom(text)
        if self.format == "toml":
            rest = toml_block.remove_entry(body, self.key, self.path)
            return bom + rest if rest.strip() else None
        document = self._document(body).remove(self.key, prune=len(self.key) - 1)
        return None if document.is_empty() else bom + document.text

    def _document(self, body: str) -> JsonDocument:
        return JsonDocument(body, jsonc=self.format == "jsonc", source=self.path)


@dataclass(frozen=True)
class PrintedCommand:
    """A registration engram prints instead of writing (Claude Code's user scope).

    ``registry`` is the host's own file, read (never written) to tell whether the
    command was run, for ``link list``, ``upgrade`` and ``doctor``. ``add`` is the
    command that registers an entry of the registry's shape; it shows the values of
    engram's own variables only (:data:`~engram.hosts.command.ENGRAM_VARIABLES`).
    """

    add: Callable[[dict[str, Any]], str]
    remove: str
    registry: ConfigFile
    always_load: bool = False


@dataclass(frozen=True)
class HookSpec:
    """A host's session hook: its file, event, entry style and timeout.

    ``style`` is ``"groups"`` for ``{"hooks": [{"type": "command", …}]}`` matcher
    groups (Claude Code, Codex, Gemini CLI) and ``"flat"`` for ``{"command": …}``
    items (Cursor). ``timeout`` is in the host's unit (Gemini: milliseconds).
    ``skeleton`` is what a new file needs besides the hook (Cursor's ``version``).
    """

    path: Callable[[HostEnv], Path]
    format: Format
    event: str
    style: Literal["groups", "flat"]
    timeout: int
    named: bool = False
    skeleton: dict[str, Any] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class SlashSpec:
    """Where a host reads a project's ``/engram`` command, and its file format."""

    path: Callable[[HostEnv], Path]
    flavour: Literal["claude", "cursor", "gemini", "opencode"]


Registration = Callable[[HostEnv], ConfigFile | PrintedCommand | str]


@dataclass(frozen=True)
class Target:
    """One ``engram link`` target.

    ``workspace`` and ``global_`` return where the MCP entry goes for that scope, or
    a string saying why the scope is skipped. ``detect`` tells ``link all`` whether
    the host is installed on this machine.
    """

    name: str
    title: str
    workspace: Registration
    global_: Registration
    detect: Callable[[HostEnv], bool]
    hooks: HookSpec | None = None
    slash: SlashSpec | None = None
    instructions: str | None = None
    global_files: Callable[[HostEnv], tuple[tuple[Path, str], ...]] = lambda env: ()

    def registration(self, env: HostEnv, scope: Scope) -> ConfigFile | PrintedCommand | str:
        return (self.workspace if scope == "workspace" else self.global_)(env)
