"""The governed memory tools (``engram_memory_*``), bound by a host profile.

Without a profile, or with ``[memory] enabled = false``, no memory tool exists and a
call gets -32602 Unknown tool. A profile that cannot be read or trusted lists no
tool, and every ``engram_memory_*`` call gets -32603 "Trusted invocation context
unavailable": the host meant to bind memory, and no partial binding is ever used.
Only granted tools are listed; their input schema publishes the bound purpose as a
``const``. The engine (and with it ``cryptography``, ``jsonschema`` and SQLite) is
opened by the first call, not at start-up.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.errors import ContractError, EngramError, InternalError, TrustedContextUnavailable
from engram.extras import require
from engram.host.profile import HostProfile, load_profile
from engram.mcp.tools import CallContext, ElicitationAnswer, Tool, ToolResult
from engram.memory.binding import tool_name
from engram.memory.envelope import failure, new_audit_id
from engram.memory.gate import Confirmer, Operation
from engram.memory.schemas import OUTPUT_SCHEMAS, input_schema
from engram.memory.tools import MEMORY_TOOLS, TOOLS

if TYPE_CHECKING:  # the engine is imported by the first call, off the start-up path
    from engram.host.runtime import HostMemory

__all__ = ["MemoryTools", "memory_tools", "profile_tools", "trusted_profile"]

log = logging.getLogger("engram.mcp")
#: How often a server looks for records other processes admitted without vectors.
REBUILD_EVERY_S = 30.0


class MemoryTools:
    """The profile, and the engine opened on first use.

    A context manager: leaving it closes the store, if it was opened.
    """

    def __init__(self, profile: HostProfile) -> None:
        self.profile = profile
        self._memory: HostMemory | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._stop_building = threading.Event()
        self._wake_builder = threading.Event()
        self._builder: threading.Thread | None = None

    def memory(self) -> HostMemory:
        with self._lock:
            if self._closed:  # a worker still running after the server shut down
                raise InternalError()
            if self._memory is None:
                from engram.host.runtime import open_memory

                self._memory = opened = open_memory(self.profile)
                if opened.engine.semantic is not None:
                    # The semantic projection is built off the request path (searches
                    # rank lexically until it is current), then again after each
                    # admission.
                    self._builder = threading.Thread(
                        target=self._build, args=(opened,), name="engram-semantic", daemon=True
                    )
                    self._builder.start()
            return self._memory

    def _build(self, memory: HostMemory) -> None:
        """Keep the scope's projection current: after each admission here, and every
        :data:`REBUILD_EVERY_S` for records admitted by other processes. A failed build
        (the store busy or closing) is logged and tried again at the next round."""
        while not self._stop_building.is_set():
            try:
                memory.engine.refresh_semantic(memory.binding.scope, None, self._stop_building)
            except EngramError as error:
                log.warning("the semantic projection could not be built (%s)", error.code)
            self._wake_builder.wait(REBUILD_EVERY_S)
            self._wake_builder.clear()

    def __enter__(self) -> MemoryTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop_building.set()
        self._wake_builder.set()
        if self._builder is not None:
            self._builder.join(30)  # at most one batch
        with self._lock:
            self._closed = True
            if self._memory is not None:
                self._memory.close()
                self._memory = None

    def handler(self, short: str) -> Callable[[Mapping[str, Any], CallContext], ToolResult]:
        def handle(arguments: Mapping[str, Any], context: CallContext) -> ToolResult:
            confirm = _dialog(context) if context.elicitation.available else None
            try:
                memory = self.memory()
            except ContractError as error:  # the store could not be opened: retriable
                return ToolResult(failure(error, new_audit_id()), is_error=True)
            envelope = memory.call(short, arguments, confirm)
            if short == "request_admission" and envelope["ok"]:
                self._wake_builder.set()  # a new record may need its vector
            return ToolResult(envelope, is_error=not envelope["ok"])

        return handle


CONFIRM_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve this operation",
            "description": "Only you can approve it; the agent cannot.",
        }
    },
    "required": ["approve"],
}


class _Dialog:
    """Ask the human through the client's form: operation, target and reason only."""

    def __init__(self, context: CallContext) -> None:
        self.context = context

    def __call__(self, operation: Operation) -> bool:
        shown = operation.display()
        message = f"An agent asks to {shown['operation']} {shown['target']}"
        if "reason" in shown:
            message += f" (reason: {shown['reason']})"
        answer = self.context.elicitation.ask(
            "confirm", message + ".", CONFIRM_FORM, shown=operation.operation_digest
        )
        return _approves(answer)

    def answer_for(self, operation_digest: str) -> bool | None:
        """The person's answer the 2026-07-28 retry carries, so the gate's probe need not
        run the operation's body again; ``None`` when there is none."""
        answer = self.context.elicitation.answered("confirm", operation_digest)
        return None if answer is None else _approves(answer)


def _approves(answer: ElicitationAnswer) -> bool:
    return answer.action == "accept" and answer.content.get("approve") is True


def _dialog(context: CallContext) -> Confirmer:
    return _Dialog(context)


def _untrusted(arguments: Mapping[str, Any], context: CallContext) -> ToolResult:
    raise TrustedContextUnavailable()


def trusted_profile(path: Path) -> HostProfile | None:
    """The host profile at ``path``, or ``None`` when it cannot be read or trusted."""
    try:
        return load_profile(path)
    except TrustedContextUnavailable as error:
        # The operator learns it at start; the agent's calls are refused (no tool listed).
        hint = " (a folder: give its host.toml)" if path.is_dir() else ""
        log.warning(
            "--host-profile %s cannot be used: %s%s; no governed tool is served",
            path,
            error.detail,
            hint,
        )
        return None


def memory_tools(profile: HostProfile | None, resources: contextlib.ExitStack) -> Iterator[Tool]:
    """The memory tools a server bound by ``profile`` offers (their store, once opened,
    is closed with ``resources``); ``None``, a profile that cannot be trusted: no tool
    listed, and every call refused."""
    if profile is None:
        for short in MEMORY_TOOLS:
            yield _tool(short, input_schema(short), _untrusted, listed=False)
        return
    yield from profile_tools(profile, resources)


def profile_tools(profile: HostProfile, resources: contextlib.ExitStack) -> Iterator[Tool]:
    """The granted memory tools of a loaded profile (none when it is disabled)."""
    if not profile.enabled:
        return
    if not isinstance(profile.store, Path):  # a database: said at start, not at a call
        require("postgres", f"the PostgreSQL store at {profile.store.where()}")
    tools = resources.enter_context(MemoryTools(profile))
    for short in MEMORY_TOOLS:
        if short in profile.grants:
            described = TOOLS[short].description
            if TOOLS[short].purpose is not None:
                described += f" Your bound purpose_ref is {json.dumps(profile.purpose)}."
            yield _tool(
                short,
                input_schema(short, profile.purpose),
                tools.handler(short),
                description=described,
            )


def _tool(
    short: str,
    schema: dict[str, Any],
    handler: Callable[[Mapping[str, Any], CallContext], ToolResult],
    listed: bool = True,
    description: str | None = None,
) -> Tool:
    spec = TOOLS[short]
    return Tool(
        name=tool_name(short),
        title=spec.title,
        description=description or spec.description,
        input_schema=schema,
        output_schema=OUTPUT_SCHEMAS[short],
        handler=handler,
        read_only=spec.reads,
        destructive=None if spec.reads else spec.destructive,
        idempotent=None if spec.reads else True,
        listed=listed,
    )
