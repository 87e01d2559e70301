"""Codex: ``[mcp_servers.engram]`` in ``config.toml``, for a project or for the user.

Codex (0.171) reads MCP servers from ``~/.codex/config.toml`` and, in a project it
trusts, from every ``.codex/config.toml`` between the project root (the Git root)
and the folder it runs in; an untrusted project's files are ignored without a word.
So a workspace link writes the workspace's ``.codex/config.toml`` and ``engram
doctor`` warns while the project is not trusted (:func:`trust_level`). Trust is
recorded per project root in the user's file: ``[projects."<root>"] trust_level =
"trusted"``.

engram's part of either file is exactly its table and sub-tables
(:mod:`.toml_block`); ``[mcp_servers.engram.tools.engram_commit] approval_mode =
"approve"`` is always there, so that Codex asks the human before every commit.

Hooks: ``SessionStart`` in ``.codex/hooks.json``. Codex's ``[features] hooks`` flag
is on by default (``codex_hooks`` is its deprecated alias); Codex runs a project's
hooks only in a trusted project, and each hook only after the person has trusted it
in Codex (recorded as ``[hooks.state."<file>:session_start:<group>:<item>"]
trusted_hash`` in the user's file; :func:`hook_trust_key`). Instructions go in
``AGENTS.md``. Codex has no project slash-command folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engram.errors import HostConfigError
from engram.hosts import toml_block
from engram.hosts.command import HostEnv
from engram.hosts.entries import StdioEntry
from engram.hosts.files import read_text, strip_bom
from engram.hosts.hooks import is_hook_command
from engram.hosts.target import ConfigFile, HookSpec, Target

__all__ = [
    "HOME_WORKSPACE",
    "HOOK_NOTE",
    "TARGET",
    "engram_hook_positions",
    "hook_trust_key",
    "hook_trusted",
    "hooks_switched_off",
    "in_home",
    "project_root",
    "read_config",
    "trust_level",
    "user_config_path",
]

KEY = ("mcp_servers", "engram")
#: What ``engram link codex --hooks`` says about the two gates before the hook runs.
HOOK_NOTE = (
    "Codex runs this hook only in a trusted project, and only once you trust the hook "
    'itself: start codex in this project and choose "Trust all and continue" when it '
    'says "Hooks need review" (or review it with /hooks); `engram doctor` checks both'
)
#: Codex's default ``project_root_markers``: a project's root is its Git root.
_ROOT_MARKERS = (".git",)


def user_config_path(env: HostEnv) -> Path:
    """``~/.codex/config.toml``: the user's entries, project trust and hook trust."""
    return env.home / ".codex" / "config.toml"


def _config(path: Path) -> ConfigFile:
    return ConfigFile((path,), "toml", KEY, StdioEntry(commit_approval=True))


#: Why a workspace link in the home writes nothing: its ``.codex`` is the user's.
HOME_WORKSPACE = (
    "this workspace is your home, whose .codex/config.toml is Codex's user file: "
    "run `engram link codex --global` to register engram there"
)


def in_home(env: HostEnv) -> bool:
    """Whether the workspace is the home: its ``.codex`` folder is then the user's."""
    return env.workspace.resolve() == env.home.resolve()


def _workspace(env: HostEnv) -> ConfigFile | str:
    if in_home(env):
        return HOME_WORKSPACE
    return _config(env.workspace / ".codex" / "config.toml")


def _global(env: HostEnv) -> ConfigFile:
    return _config(user_config_path(env))


def _detect(env: HostEnv) -> bool:
    return bool(env.which("codex")) or (env.home / ".codex").is_dir()


def read_config(path: Path) -> dict[str, Any] | None:
    """A Codex ``config.toml`` as plain values; ``None`` when it is missing or cannot
    be parsed (``engram doctor`` reports a broken file once, as ``host.config``)."""
    text = read_text(path)
    if text is None:
        return None
    try:
        return toml_block.read_values(strip_bom(text)[1], path)
    except HostConfigError:
        return None


def project_root(workspace: Path, config: Mapping[str, Any] | None) -> Path:
    """The folder Codex keys a project's trust on: the nearest one from ``workspace``
    upwards holding a root marker (``project_root_markers``, default ``.git``), else
    ``workspace`` itself."""
    markers = (config or {}).get("project_root_markers")
    names = tuple(map(str, markers)) if isinstance(markers, list) else _ROOT_MARKERS
    for folder in (workspace, *workspace.parents):
        if any((folder / name).exists() for name in names):
            return folder
    return workspace


def _table(node: Any, *path: str) -> Mapping[str, Any]:
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def trust_level(config: Mapping[str, Any] | None, root: Path) -> str | None:
    """``trust_level`` of ``[projects."<root>"]`` in the user's file, if set."""
    projects = _table(config, "projects")
    for name in dict.fromkeys((str(root), str(root.resolve()))):
        level = _table(projects, name).get("trust_level")
        if isinstance(level, str):
            return level
    return None


def hook_trust_key(hooks_file: Path, event: str, group: int, item: int) -> str:
    """The ``[hooks.state."…"]`` key under which Codex records that the person
    trusted one hook: ``<file>:<event in snake_case>:<group>:<item>``."""
    snake = "".join(f"_{char.lower()}" if char.isupper() else char for char in event)
    return f"{hooks_file}:{snake.lstrip('_')}:{group}:{item}"


def hook_trusted(config: Mapping[str, Any] | None, key: str) -> bool:
    """Whether the person trusted the hook at ``key`` in Codex. Codex records the
    hook's hash: a changed hook (``engram upgrade`` re-pins it) must be trusted
    again, which only Codex can tell."""
    return "trusted_hash" in _table(config, "hooks", "state", key)


def hooks_switched_off(config: Mapping[str, Any] | None) -> str | None:
    """The ``[features]`` flag that turns Codex's hooks off (``hooks = false``, or
    its deprecated alias ``codex_hooks = false`` when ``hooks`` is not set)."""
    features = _table(config, "features")
    for flag in ("hooks", "codex_hooks"):
        if flag in features:
            return flag if features[flag] is False else None
    return None


def engram_hook_positions(items: Sequence[Any]) -> list[tuple[int, int]]:
    """Where engram's items sit in a ``SessionStart`` list of matcher groups."""
    found = []
    for group, entry in enumerate(items):
        hooks = entry.get("hooks") if isinstance(entry, Mapping) else None
        for index, hook in enumerate(hooks if isinstance(hooks, list) else []):
            if isinstance(hook, Mapping) and is_hook_command(hook.get("command")):
                found.append((group, index))
    return found


TARGET = Target(
    name="codex",
    title="Codex",
    workspace=_workspace,
    global_=_global,
    detect=_detect,
    hooks=HookSpec(
        path=lambda env: env.workspace / ".codex" / "hooks.json",
        format="json",
        event="SessionStart",
        style="groups",
        timeout=30,
        note=HOOK_NOTE,
    ),
    instructions="AGENTS.md",
)
