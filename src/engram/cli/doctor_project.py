"""``engram doctor`` checks of the project's memory and of governed memory.

Project: the configuration resolves, the derived index is healthy, every memory file
is valid, hashes match. Governed (when ``ENGRAM_HOST_PROFILE`` names a profile): the
profile is trusted, the store opens and its journal verifies, and the retention
ceiling is a decision rather than the 30-day default.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from engram.cli.doctor import CheckResult, DoctorContext, doctor_check
from engram.errors import EngramError, HashesCorrupt

if TYPE_CHECKING:
    from engram.host.profile import HostProfile
    from engram.project.workspace import ProjectMemory

__all__ = ["governed_checks", "project_checks"]


@doctor_check("project")
def project_checks(context: DoctorContext) -> Iterator[CheckResult]:
    from engram.compose import open_project
    from engram.project.layout import NotInitialized

    try:
        memory = open_project(context.root)
    except NotInitialized:
        yield CheckResult(
            "config.resolved",
            "skip",
            "info",
            "no project memory here",
            "run `engram init` in the repository",
        )
        return
    except EngramError as error:  # its detail names what is wrong and what to do
        yield CheckResult("project.open", "fail", "error", error.detail, "see the message")
        return
    try:
        yield from _project_memory_checks(memory)
    finally:
        memory.close()


def _project_memory_checks(memory: ProjectMemory) -> Iterator[CheckResult]:
    try:
        config = memory.config()
    except EngramError as error:
        yield CheckResult(
            "config.resolved", "fail", "error", error.detail, "edit .agents/.engram/config.json"
        )
        return
    yield CheckResult(
        "config.resolved",
        "pass",
        "error",
        f"roles {list(config.roles)}, rule variant {config.rule_variant}",
        subject=str(memory.layout.base),
    )
    yield from _index_checks(memory)
    yield from _stale_checks(memory)
    try:
        verification = memory.verify("workspace")
    except HashesCorrupt as error:  # its detail names the file, the line and the remedy
        yield CheckResult(
            "hashes.readable",
            "fail",
            "error",
            error.detail,
            "see the message",
            subject=str(memory.layout.hashes),
        )
        return
    layout = memory.layout
    unrecorded = [entry for entry in verification.files if entry["status"] == "missing hash"]
    if not layout.hashes.exists() and not layout.legacy_hashes.exists() and unrecorded:
        yield CheckResult(
            "hashes.readable",
            "fail",
            "error",
            f"{layout.hashes} is missing: {len(unrecorded)} memory files are recorded nowhere,"
            " so a change made outside engram cannot be told",
            "restore it from Git (`git checkout -- .agents/.engram/memory.hashes`), or review"
            " the memory files and run `engram adopt --yes`, which records them all again",
            subject=str(layout.hashes),
        )
        return
    for entry in verification.files:
        if entry["status"] != "ok":
            yield CheckResult(
                "hash.mismatch",
                "warn",
                "warning",
                entry["status"],
                "review the file, then `engram adopt PATH` records it as reviewed"
                " (or `git checkout -- PATH` restores it)",
                subject=entry["path"],
            )


def _stale_checks(memory: ProjectMemory) -> Iterator[CheckResult]:
    """A warning per memory whose recorded files changed since (docs/project-memory.md
    §6.2): loads still show it, marked."""
    try:
        report = memory.stale()
    except EngramError:
        return  # the index checks above say what is wrong
    for stale in report.memories:
        yield CheckResult(
            "memory.stale",
            "warn",
            "warning",
            stale.summary(),
            f"check the memory against its files, then `engram reconfirm {stale.id}`"
            " (or let an agent propose an UPDATE of it)",
            subject=stale.file,
        )


def _index_checks(memory: ProjectMemory) -> Iterator[CheckResult]:
    if memory.index.rebuilt:
        yield CheckResult(
            "index.health",
            "warn",
            "warning",
            "the index was damaged and has been rebuilt from the memory files",
            "nothing to do (usage counts started again)",
        )
    location = memory.index_path
    if location != memory.layout.index:
        yield CheckResult(
            "index.location",
            "pass",
            "info",
            f"{memory.layout.base} is read-only: the index lives in {location.parent}",
            subject=str(location),
        )
    try:
        memory.refresh()
        entries = len(memory.index.memories())
    except EngramError as error:
        yield CheckResult(
            "index.health",
            "fail",
            "error",
            error.detail,
            "delete .agents/.engram/index.sqlite: it is rebuilt from the files",
        )
        return
    yield CheckResult("index.entries.workspace", "pass", "info", f"{entries} memories indexed")
    for path, reason in memory.problems():
        yield CheckResult(
            "memory.invalid",
            "fail",
            "error",
            reason,
            "fix the file; it is not loaded while invalid",
            subject=path,
        )


@doctor_check("governed")
def governed_checks(context: DoctorContext) -> Iterator[CheckResult]:
    profile = os.environ.get("ENGRAM_HOST_PROFILE")
    if not profile:
        return
    from engram.host.profile import load_profile
    from engram.host.runtime import open_memory
    from engram.memory.maintenance import Maintenance
    from engram.memory.settings import DEFAULT_RETENTION_MAX_DAYS

    try:
        loaded = load_profile(Path(profile))
        memory = open_memory(loaded, sweep=False, semantic=False)  # no model to check a journal
        events = Maintenance(memory.engine, memory.binding.scope).verify()
    except EngramError as error:
        yield CheckResult(
            "memory.profile",
            "fail",
            "error",
            error.detail,
            "check the profile, its permissions and its store",
            subject=profile,
        )
        return
    yield CheckResult(
        "memory.store",
        "pass",
        "error",
        f"journal verified: {events} events",
        subject=str(loaded.store),
    )
    yield CheckResult(
        "memory.confirmation",
        "pass",
        "info",
        _CONFIRMATION[loaded.policy.confirm_via],
        subject=profile,
    )
    yield from _private_files(profile, loaded)
    vacuums = getattr(memory.engine.store, "autovacuum", None)
    if vacuums is not None and not vacuums():
        yield CheckResult(
            "memory.autovacuum",
            "warn",
            "warning",
            "PostgreSQL's autovacuum is off: the store's counters leave dead rows behind and"
            " every write slows down as they pile up",
            "turn it on (autovacuum = on in postgresql.conf), or run VACUUM ANALYZE on the"
            " store's schema regularly",
            subject=str(loaded.store),
        )
    memory.close()
    if loaded.policy.retention_max_days == DEFAULT_RETENTION_MAX_DAYS:
        yield CheckResult(
            "memory.retention_default",
            "warn",
            "warning",
            "retention ceiling is the 30-day default, not a policy",
            "set [retention] max_days in the host profile deliberately",
            subject=profile,
        )


#: What ``engram doctor`` says of each ``[confirmation] via``.
_CONFIRMATION = {
    "host": "withdraw and forget are confirmed by the host operator (engram host confirm)",
    "dialog": "withdraw and forget are confirmed in the client's dialog where it shows one"
    " (trusting that a person sees it), else by the host operator",
    "both": "withdraw and forget need the host operator's approval, then the client's dialog",
}


def _private_files(profile: str, loaded: HostProfile) -> Iterator[CheckResult]:
    """Warn about governed memory's files that others than their owner may read (a
    database's own files are its server's)."""
    store, keys = loaded.store, loaded.keys
    paths = [Path(profile), keys, *(sorted(keys.iterdir()) if keys.is_dir() else [])]
    if isinstance(store, Path):
        paths += [store, *(store.with_name(store.name + s) for s in ("-wal", "-shm"))]
        paths.append(store.parent)
    loose = []
    for path in paths:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            continue  # no WAL yet, say
        if mode & 0o077:
            loose.append((path, mode))
    if not loose:
        yield CheckResult(
            "memory.file_modes", "pass", "warning", "store, keys and profile are private"
        )
        return
    for path, mode in loose:
        wanted = "700" if path.is_dir() else "600"
        yield CheckResult(
            "memory.file_modes",
            "warn",
            "warning",
            f"{path.name} can be read by others than its owner (mode {mode:o})",
            f"chmod {wanted} {shlex.quote(str(path))}",
            subject=str(path),
        )
