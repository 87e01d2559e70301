"""Planning ``engram link``, ``unlink`` and ``upgrade``: every change, nothing written.

A plan is the list of file changes (:class:`~engram.hosts.files.Change`) plus the
notes the person should read (a skipped scope, a command to run, an entry kept
because it differs). Reading every file and computing every change first means a
file that cannot be parsed stops the whole operation before anything is written,
and ``--dry-run`` shows exactly what a real run would do.

The rules (mcp-server.txt, "Registration" and "Server instructions"):

- only engram's own entry, hook item, managed block or generated file is added,
  changed or removed;
- an existing engram entry is re-pinned by ``link`` (program, prefix and version
  marker only); it changes otherwise only with ``--force`` (replaced by engram's
  entry) or ``upgrade`` (re-pinned, and ``--always-load`` added or dropped by rule);
- ``--always-load`` goes only into configurations Claude Code reads, and only when
  no engram Claude hook is installed or being installed (for the user registration,
  which every project shares: installed in the user's own hook file);
- engram's session hook keeps the settings someone changed (a matcher, a timeout)
  when it is re-pinned, with a note; ``--hooks --force`` resets it;
- Codex's entry always carries ``approval_mode = "approve"`` for ``engram_commit``:
  a re-pin adds it back, whatever else it keeps;
- ``upgrade`` touches only what is already linked;
- nothing printed shows the value of a variable engram did not write (a person's
  registration may hold an API key): a printed command carries engram's own
  variables only, and a note names the others; every command line a note shows is
  masked (:mod:`.masking`), and so is every ``--dry-run`` diff.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from engram.hosts.blocks import MARKDOWN, find_block, remove_block, set_block
from engram.hosts.command import (
    ENGRAM_VARIABLES,
    SERVER_SCRIPT,
    CommandLine,
    HostEnv,
    ServerCommand,
    hook_command,
    server_command,
)
from engram.hosts.entries import (
    ALWAYS_LOAD,
    EntryShape,
    commit_approved,
    differing_keys,
)
from engram.hosts.files import Change, GitState, git_state, read_text
from engram.hosts.guidance import instruction_block, is_generated, slash_command
from engram.hosts.hooks import installed_hooks, kept_settings, with_hook, without_hook
from engram.hosts.masking import MASK, masks, shown_command
from engram.hosts.target import ConfigFile, PrintedCommand, Scope, Target

__all__ = ["LinkOptions", "Mode", "Plan", "hook_present", "plan_link", "plan_unlink"]

Mode = Literal["link", "upgrade"]


#: engram-mcp's option that adds governed memory (``engram link --host-profile``).
HOST_PROFILE = "--host-profile"


@dataclass(frozen=True, slots=True)
class LinkOptions:
    """``force`` replaces engram's existing entries; ``hooks`` installs session hooks;
    ``portable`` writes the form a workspace file shared with the team keeps (as for a
    file Git tracks); ``host_profile`` (an absolute ``host.toml``) makes the entry a
    governed registration."""

    force: bool = False
    hooks: bool = False
    mode: Mode = "link"
    portable: bool = False
    host_profile: Path | None = None


@dataclass
class Plan:
    """Changes to write and notes to show, in order.

    Several parts of a link may change one file (Gemini keeps its MCP entry and its
    hook in ``settings.json``): :meth:`read` returns the text as already planned, and
    :meth:`add` merges a second change of a file into the first.
    """

    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def read(self, path: Path) -> str | None:
        for change in self.changes:
            if change.path == path:
                return change.after
        return read_text(path)

    def add(self, change: Change) -> None:
        for index, planned in enumerate(self.changes):
            if planned.path == change.path:
                summary = f"{planned.summary}; {change.summary}"
                backup = planned.backup or change.backup
                self.changes[index] = Change(
                    change.path, planned.before, change.after, summary, backup
                )
                return
        self.changes.append(change)

    def extend(self, other: Plan) -> None:
        for change in other.changes:
            self.add(change)
        self.notes += other.notes


def hook_present(target: Target, env: HostEnv, scope: Scope) -> bool:
    """Whether engram's session hook for ``target`` runs wherever a ``scope``
    registration is used.

    A workspace registration counts the hook installed here or for the user (both
    run in this workspace). A user registration is shared by every project, so it
    counts only the user's own hook file (``~/.claude/settings.json``): a hook in
    the project where the command happens to run must not change what all the
    others get.
    """
    if target.hooks is None:
        return False
    workspace_file = target.hooks.path(env)
    user_file = env.home / workspace_file.relative_to(env.workspace)
    files = (workspace_file, user_file) if scope == "workspace" else (user_file,)
    return any(installed_hooks(target.hooks, read_text(path), path) for path in files)


def _wanted_args(always_load: bool, hooked: bool, profile: Path | None = None) -> list[str]:
    load = [ALWAYS_LOAD] if always_load and not hooked else []
    return [*load, *_with_profile([], profile)]


def _with_profile(options: Sequence[str], profile: Path | None) -> list[str]:
    """``options`` with ``--host-profile`` set to ``profile`` (any other value of it
    replaced); unchanged without one."""
    if profile is None:
        return list(options)
    kept, skip = [], False
    for word in options:
        if skip:
            skip = False
        elif word == HOST_PROFILE:
            skip = True
        elif not word.startswith(HOST_PROFILE + "="):
            kept.append(word)
    return [*kept, HOST_PROFILE, str(profile)]


def _upgraded_args(current: Sequence[str], wanted: Sequence[str]) -> list[str]:
    kept = [arg for arg in current if arg != ALWAYS_LOAD]
    return [*(arg for arg in wanted if arg == ALWAYS_LOAD), *kept]


def _repinnable_line(shape: EntryShape, entry: dict[str, Any]) -> CommandLine | str:
    """``entry``'s command line when engram can re-pin it, else why it cannot: its
    command names no engram-mcp (a wrapper script), or engram-mcp is started by a
    launcher that is not a package runner (``docker run``, ``ssh``), which runs it
    somewhere this engram's local command cannot replace. Only the launcher's program
    is named: its other words may carry a secret (``docker run -e KEY=VALUE``), and a
    whole command line is shown masked (:func:`~engram.hosts.masking.shown_command`)."""
    line = shape.command_line(entry)
    if line is None:
        argv = shown_command(shape.argv(entry))
        return f"`{argv}` does not name engram-mcp, so engram cannot re-pin it"
    if not line.repinnable:
        program = shown_command([line.program])
        return f"engram-mcp runs through `{program}`, which engram cannot re-pin"
    return line


def _repin_options(line: CommandLine, wanted: list[str], mode: Mode) -> list[str]:
    """engram-mcp's options a re-pin keeps (``upgrade``: the ``--always-load`` rule
    applied)."""
    options = list(line.options)
    return _upgraded_args(options, wanted) if mode == "upgrade" else options


def _upgrade_hint(options: Sequence[str], wanted: list[str], mode: Mode) -> str:
    """What ``engram upgrade`` would still change after ``link`` kept these options."""
    if mode == "upgrade" or (ALWAYS_LOAD in options) == bool(wanted):
        return ""
    return f"`engram upgrade` {'adds' if wanted else 'drops'} {ALWAYS_LOAD}"


def _kept_note(config: ConfigFile, new: dict[str, Any], desired: dict[str, Any], hint: str) -> str:
    """What a kept entry keeps, and what would change it."""
    fields = " and ".join(differing_keys(new, desired))
    return (
        f"kept your engram entry's {fields} in {config.path} "
        f"(engram's differ; --force replaces them{'; ' + hint if hint else ''})"
    )


def _entry_notes(
    config: ConfigFile,
    existing: dict[str, Any],
    line: CommandLine | str,
    command: ServerCommand,
    new: dict[str, Any],
    desired: dict[str, Any],
    hint: str,
) -> list[str]:
    """The notes on an existing entry ``link`` kept or re-pinned; ``line`` is its
    command line, or why engram cannot re-pin it (:func:`_repinnable_line`)."""
    notes = []
    if isinstance(line, CommandLine) and not line.own_form:
        notes.append(
            f"re-pinned your engram entry in {config.path}: engram-mcp was started by "
            f"`{shown_command(line.launcher)}`, now by this engram's "
            f"`{shown_command(command.argv)}`"
        )
    if config.shape.commit_approval and not commit_approved(existing):
        notes.append(
            f'set tools.engram_commit approval_mode = "approve" in {config.path}, '
            "so that the host asks you before every engram_commit"
        )
    if isinstance(line, str):
        notes.append(
            f"kept your engram entry in {config.path} as it is: {line} "
            "(--force replaces it with engram's)"
        )
    elif differing_keys(new, desired):
        notes.append(_kept_note(config, new, desired, hint))
    return notes


def _plan_entry(
    plan: Plan,
    target: Target,
    config: ConfigFile,
    env: HostEnv,
    options: LinkOptions,
    hooked: bool,
    workspace: bool,
) -> None:
    state: GitState = git_state(config.path) if workspace else "outside"
    portable = workspace and (options.portable or state == "tracked")
    command = server_command(env, portable)
    text = plan.read(config.path)
    existing = config.entry_in(text) if text is not None else None
    wanted = _wanted_args(config.always_load, hooked, options.host_profile)
    desired = config.shape.build(command, wanted)
    if existing is None and options.mode == "upgrade":
        return
    new, notes = desired, []
    if existing is not None and not options.force:
        line = _repinnable_line(config.shape, existing)
        hint = ""
        if isinstance(line, str):
            # An entry engram cannot re-pin (a wrapper script, docker) keeps its command,
            # but never goes without the commit approval.
            new = config.shape.with_approval(existing)
        else:
            kept = _with_profile(_repin_options(line, wanted, options.mode), options.host_profile)
            new = config.shape.repin(existing, command, kept)
            hint = _upgrade_hint(kept, wanted, options.mode)
        notes = _entry_notes(config, existing, line, command, new, desired, hint)
    if new != existing:
        verb = "added" if existing is None else "updated"
        after = config.with_entry(text, new)
        plan.add(Change(config.path, text, after, f"{verb} {'.'.join(config.key)}"))
        if workspace:
            notes += _form_notes(target, config.path, state, portable, command)
    plan.notes += notes


def _form_notes(
    target: Target, path: Path, state: GitState, portable: bool, command: ServerCommand
) -> list[str]:
    """What the command form of a workspace entry means for the team (docs/hosts.md,
    "Command form")."""
    shown = shown_command(command.argv[:1])
    why = "Git tracks it" if state == "tracked" else "--portable"
    if portable and command.program == SERVER_SCRIPT:
        return [
            f"{path} is shared ({why}): its entry runs engram-mcp as found on each person's "
            "PATH, so a host started from the desktop or a new shell needs engram-mcp on "
            "the PATH it gets (`engram doctor` checks)"
        ]
    if portable:
        return [
            f"{path} is shared ({why}), but engram-mcp is not on this shell's PATH: the entry "
            f"names this machine's {shown}; put engram-mcp on PATH (pipx install "
            f"engram-trust) and run `engram link {target.name}` again for a form your team "
            "can run"
        ]
    if state == "untracked":
        return [
            f"{path} names this machine's {shown}; before you commit it for your team, "
            f"`engram link {target.name} --portable` writes engram-mcp as found on each "
            "person's PATH"
        ]
    return []


def _left_out_note(registry: ConfigFile, existing: dict[str, Any]) -> list[str]:
    """Which of the registration's variables a printed command leaves out: their
    values may be secrets (an API key), so only their names are shown."""
    names = sorted(set(registry.shape.env(existing)) - ENGRAM_VARIABLES)
    if not names:
        return []
    return [
        f"your engram registration in {registry.path} also sets {', '.join(names)}, "
        "which the command below leaves out: engram never prints the values of your "
        "variables; to keep them, add --env=NAME=VALUE for each to its `claude mcp add`"
    ]


def _masked_note(registry: ConfigFile, shown: dict[str, Any]) -> list[str]:
    """Says that the printed command masks a value of the registration's arguments
    (an unknown option ``--api-key=…`` engram-mcp keeps): run as printed, it would
    register the mask itself."""
    if not masks(registry.shape.argv(shown)):
        return []
    return [
        f"the command below shows {MASK} for values in your engram registration in "
        f"{registry.path} (engram never prints them): put yours back before running it"
    ]


def _plan_printed(
    plan: Plan, printed: PrintedCommand, target: Target, env: HostEnv, options: LinkOptions
) -> None:
    """The command to run for a registration engram prints (Claude's user scope).

    The printed command follows the file rules: ``link`` re-pins the program and
    keeps the registered options, ``upgrade`` also applies the ``--always-load``
    rule (a user-scope link never installs a hook; only one in the user's own hook
    file counts, since every project shares this registration), ``--force`` prints
    engram's own registration. It never shows the
    value of a variable engram did not write: a note names those the person must
    give again.
    """
    registry = printed.registry
    shape = registry.shape
    command = server_command(env)
    hooked = hook_present(target, env, "global")
    wanted = _wanted_args(printed.always_load, hooked, options.host_profile)
    desired = shape.build(command, wanted)
    _, existing = registry.read()
    if existing is None:
        if options.mode == "link":
            plan.notes.append(f"run: {printed.add(desired)}")
        return
    new, kept, why = desired, wanted, None
    if not options.force:
        line = _repinnable_line(shape, existing)
        if isinstance(line, str):
            why = line
        else:
            kept = _with_profile(_repin_options(line, wanted, options.mode), options.host_profile)
            new = shape.repin(existing, command, kept)
    replace = f"{printed.remove} && {printed.add(new)}"
    if why is not None:
        note = f"kept the engram registration in {registry.path}: {why} "
        note += f"(to replace it, run: {replace})"
    elif shape.argv(new) != shape.argv(existing) or shape.env(new) != shape.env(existing):
        note = f"to re-pin, run: {replace}"
    else:
        hint = _upgrade_hint(kept, wanted, options.mode)
        plan.notes.append(f"already registered in {registry.path}" + (f" ({hint})" if hint else ""))
        return
    plan.notes += [*_left_out_note(registry, existing), *_masked_note(registry, new), note]


def _plan_owned(plan: Plan, path: Path, content: str, options: LinkOptions, what: str) -> None:
    before = plan.read(path)
    if before == content or (before is None and options.mode == "upgrade"):
        return
    if before is None or is_generated(before):
        plan.add(Change(path, before, content, what, backup=False))
    elif options.force:
        plan.add(Change(path, before, content, f"{what} (replaced a file engram did not write)"))
    else:
        plan.notes.append(f"left {path} alone: not written by engram (--force replaces it)")


def _plan_instructions(plan: Plan, path: Path, mode: Mode) -> None:
    before = plan.read(path)
    if mode == "upgrade" and (before is None or not find_block(before, MARKDOWN, path)):
        return
    after = set_block(before or "", instruction_block(), MARKDOWN, path)
    if after != before:
        plan.add(Change(path, before, after, "engram block"))


def _plan_hook(plan: Plan, target: Target, env: HostEnv, options: LinkOptions) -> None:
    spec = target.hooks
    assert spec is not None
    path = spec.path(env)
    before = plan.read(path)
    if options.mode == "upgrade" and not installed_hooks(spec, before, path):
        return
    portable = options.portable or git_state(path) == "tracked"
    command = hook_command(env, target.name, portable)
    after = with_hook(spec, before, command, path, force=options.force)
    if spec.note and options.mode == "link":
        plan.notes.append(spec.note)
    if after != before:
        plan.add(Change(path, before, after, f"{spec.event} hook"))
    kept = kept_settings(spec, after, path)
    if kept:
        plan.notes.append(
            f"kept your changes to engram's {spec.event} hook in {path} "
            f"({', '.join(kept)} differ from engram's; --hooks --force resets them)"
        )
    count = len(installed_hooks(spec, after, path))
    if count > 1:
        plan.notes.append(
            f"engram's {spec.event} hook is installed {count} times in {path}, so it runs "
            f"{count} times a session (--hooks --force leaves one)"
        )


def plan_link(target: Target, scope: Scope, env: HostEnv, options: LinkOptions) -> Plan:
    """Everything ``engram link <target>`` (or ``upgrade``) would change."""
    plan = Plan()
    installing = options.hooks and scope == "workspace" and target.hooks is not None
    registration = target.registration(env, scope)
    if isinstance(registration, ConfigFile):
        hooked = installing or hook_present(target, env, scope)
        _plan_entry(plan, target, registration, env, options, hooked, scope == "workspace")
    elif isinstance(registration, PrintedCommand):
        _plan_printed(plan, registration, target, env, options)
    elif options.mode == "link":
        plan.notes.append(f"{target.title}: {scope} MCP registration skipped: {registration}")
    if scope == "global":
        for path, content in target.global_files(env):
            _plan_owned(plan, path, content, options, "engram's file")
        if options.portable and options.mode == "link":
            plan.notes.append("--portable is for workspace files: a user's file names its path")
        if options.hooks and options.mode == "link":
            plan.notes.append("session hooks are installed per workspace: run without --global")
        return plan
    if installing or (options.mode == "upgrade" and target.hooks is not None):
        _plan_hook(plan, target, env, options)
    elif options.hooks:
        plan.notes.append(f"{target.title} has no session hook engram can install")
    if target.slash is not None:
        command_file = slash_command(target.slash.flavour)
        _plan_owned(plan, target.slash.path(env), command_file, options, "/engram command")
    if target.instructions is not None:
        _plan_instructions(plan, env.workspace / target.instructions, options.mode)
    return plan


def _unlink_owned(plan: Plan, path: Path) -> None:
    before = plan.read(path)
    if before is None:
        return
    if is_generated(before):
        plan.add(Change(path, before, None, "engram's file", backup=False))
    else:
        plan.notes.append(f"left {path} alone: not written by engram")


def _linked_elsewhere(target: Target, env: HostEnv) -> bool:
    """Whether ``target`` still has an MCP entry, a hook or a slash command here."""
    for scope in ("workspace", "global"):
        registration = target.registration(env, scope)
        if isinstance(registration, ConfigFile) and registration.read()[1] is not None:
            return True
    slash = target.slash
    generated = slash is not None and is_generated(read_text(slash.path(env)) or "")
    return generated or hook_present(target, env, "workspace")


def _sharing_block(target: Target, env: HostEnv) -> list[str]:
    """The other linked targets that read the same instruction file (AGENTS.md is
    shared by Codex, Cursor and OpenCode)."""
    from engram.hosts.registry import TARGETS

    return [
        other.title
        for other in TARGETS.values()
        if other.name != target.name
        and other.instructions == target.instructions
        and _linked_elsewhere(other, env)
    ]


def _unlink_workspace_parts(plan: Plan, target: Target, env: HostEnv) -> None:
    if target.hooks is not None:
        path = target.hooks.path(env)
        before = plan.read(path)
        if before is not None and installed_hooks(target.hooks, before, path):
            after = without_hook(target.hooks, before, path)
            plan.add(Change(path, before, after, f"removed {target.hooks.event} hook"))
    if target.slash is not None:
        _unlink_owned(plan, target.slash.path(env))
    if target.instructions is None:
        return
    path = env.workspace / target.instructions
    before = plan.read(path)
    if before is None or not find_block(before, MARKDOWN, path):
        return
    sharing = _sharing_block(target, env)
    if sharing:
        plan.notes.append(
            f"kept the engram block in {target.instructions}: {', '.join(sharing)} still"
            " linked here read it (unlink them too to remove it)"
        )
        return
    rest = remove_block(before, MARKDOWN, path)
    plan.add(Change(path, before, rest if rest.strip() else None, "removed engram block"))


def plan_unlink(target: Target, scope: Scope, env: HostEnv) -> Plan:
    """Everything ``engram unlink <target>`` would change: engram's parts only."""
    plan = Plan()
    registration = target.registration(env, scope)
    if isinstance(registration, ConfigFile):
        text = plan.read(registration.path)
        if text is not None and registration.entry_in(text) is not None:
            after = registration.without_entry(text)
            summary = f"removed {'.'.join(registration.key)}"
            plan.add(Change(registration.path, text, after, summary))
    elif isinstance(registration, PrintedCommand):
        if registration.registry.read()[1] is None:
            plan.notes.append(f"engram is not registered in {registration.registry.path}")
        else:
            plan.notes.append(f"run: {registration.remove}")
    if scope == "global":
        for path, _ in target.global_files(env):
            _unlink_owned(plan, path)
    else:
        _unlink_workspace_parts(plan, target, env)
    return plan
