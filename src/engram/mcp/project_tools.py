"""The project-memory tools (``engram_*``): thin handlers over :mod:`engram.project`.

Each handler validates its arguments against the published closed schema, calls the
domain and answers ``{contract_version, ok, data | error, diagnostics}``. The domain's
result renders its own human text (:mod:`engram.project.results`): it is
``content[0].text``, once, and the envelope follows it as JSON in ``content[1]``,
without that text (``data`` never repeats it). There is no ``structuredContent``:
a host that finds one gives its model that block alone, and the memory text would
then never reach the model (docs/protocol.md, "Tools"). Invalid and unreadable memory
files are reported in ``diagnostics`` on every answer. The domain (and SQLite) is
opened by the first call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from engram.errors import InternalError, ProjectError
from engram.mcp.options import ServerOptions
from engram.mcp.tools import CallContext, Tool, ToolResult
from engram.project.schemas import CONTRACT_VERSION, INPUT
from engram.safety.display import shown

if TYPE_CHECKING:  # the domain is imported by the first call, off the start-up path
    from engram.project.workspace import ProjectMemory

__all__ = ["ProjectTools", "envelope", "project_tools"]

Handler = Callable[["ProjectMemory", dict[str, Any], CallContext], ToolResult]


def envelope(
    data: Mapping[str, Any] | None = None,
    error: ProjectError | None = None,
    diagnostics: list[dict[str, str]] | None = None,
) -> ToolResult:
    """A project-tool result (``isError`` when ``error`` is given)."""
    body: dict[str, Any] = {"contract_version": CONTRACT_VERSION, "ok": error is None}
    text: str | None
    if error is None:
        fields = dict(data or {})
        # The words travel once, in content[0]: the JSON after it does not repeat them.
        text = fields.pop("text", None)
        body["data"] = fields
    else:
        body["error"] = {"code": error.code, "message": error.detail}
        text = f"engram: {error.detail}"
    body["diagnostics"] = diagnostics or []
    # A host shows content[0] to a person: nothing in it drives their terminal.
    human = None if text is None else shown(text)
    return ToolResult(
        body, is_error=error is not None, text=text, human=human, in_content_only=True
    )


class ProjectTools:
    """The project the server serves, opened on first use (and re-found until it exists).

    A context manager: leaving it closes the project's index and file watcher.
    """

    def __init__(self, options: ServerOptions) -> None:
        self.start = options.root or options.cwd
        self.global_dir = options.global_dir
        self.semantic = options.semantic
        self._memory: ProjectMemory | None = None
        self._lock = threading.Lock()
        self._closed = False

    def memory(self) -> ProjectMemory:
        from engram.compose import open_project

        with self._lock:
            if self._closed:  # a worker still running after the server shut down
                raise InternalError()
            if self._memory is None:
                self._memory = open_project(
                    self.start, watch=True, global_dir=self.global_dir, semantic=self.semantic
                )
            return self._memory

    def __enter__(self) -> ProjectTools:
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._closed = True
            if self._memory is not None:
                self._memory.close()
                self._memory = None

    def run(
        self, name: str, handler: Handler
    ) -> Callable[[Mapping[str, Any], CallContext], ToolResult]:
        def handle(arguments: Mapping[str, Any], context: CallContext) -> ToolResult:
            try:
                _validate(name, arguments)
                memory = self.memory()
                with memory.call():  # one refresh of the index for the whole call
                    result = handler(memory, dict(arguments), context)
                    problems = _diagnostics(memory)
            except ProjectError as error:
                return envelope(error=error, diagnostics=self._problems())
            # Every answer reports invalid memory files, whatever the tool (and a read
            # the stale memories it shows).
            shown_stale = list(result.structured.get("diagnostics", []))
            structured = {**result.structured, "diagnostics": problems + shown_stale}
            return ToolResult(
                structured,
                is_error=result.is_error,
                text=result.text,
                human=result.human,
                in_content_only=result.in_content_only,
            )

        return handle

    def _problems(self) -> list[dict[str, str]]:
        if self._memory is None:
            return []
        try:
            self._memory.refresh()
            return _diagnostics(self._memory)
        except ProjectError:
            return []


def _diagnostics(memory: ProjectMemory) -> list[dict[str, str]]:
    """The invalid memory files, as the index holds them after the call's own refresh."""
    return [
        {
            "id": "memory.invalid",
            "severity": "warning",
            "message": f"{path}: {reason}",
            "remediation": "fix the file; engram never loads or overwrites it while it is invalid",
        }
        for path, reason in memory.index.problems()
    ]


def stale_diagnostics(data: Mapping[str, Any]) -> list[dict[str, str]]:
    from engram.project.staleness import stale_diagnostics as diagnostics

    return diagnostics(data)


def _validate(name: str, arguments: Mapping[str, Any]) -> None:
    from engram.mcp.arguments import check_arguments

    check_arguments(INPUT[name], arguments)


# --- read tools ------------------------------------------------------------------------


def _load(memory: ProjectMemory, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    result = memory.load(
        arguments.get("query"),
        memory_id=arguments.get("id"),
        budget_tokens=arguments.get("budget_tokens"),
        disclosure=arguments.get("disclosure", "tiered"),
        full=arguments.get("full", False),
        explain=arguments.get("explain", False),
    )
    data = result.data()
    return envelope(data, diagnostics=stale_diagnostics(data))


def _route(memory: ProjectMemory, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    routed = memory.route_entries(arguments.get("query") or arguments["task"]).data()
    return envelope(routed, diagnostics=stale_diagnostics(routed))


def _search(memory: ProjectMemory, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    found = memory.search(
        arguments["query"],
        arguments.get("limit", 10),
        min_confidence=arguments.get("min_confidence"),
    ).data()
    return envelope(found, diagnostics=stale_diagnostics(found))


def _verify(memory: ProjectMemory, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    report = memory.verify(arguments.get("scope", "workspace"))
    return envelope(report.data())


def _status(memory: ProjectMemory, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    return envelope(memory.status().data())


# --- configuration -----------------------------------------------------------------


def _set_role(memory: ProjectMemory, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    roles = arguments["roles"] if "roles" in arguments else [arguments["role"]]
    return envelope(memory.set_roles(roles).data())


def _set_rule_variant(
    memory: ProjectMemory, arguments: dict[str, Any], context: CallContext
) -> ToolResult:
    variant = arguments["variant"]
    settings = memory.settings() if variant == "status" else memory.set_rule_variant(variant)
    return envelope(settings.data())


# --- proposals (the approval dialog is loaded by the first proposal) -----------------


def _dialog(name: str) -> Handler:
    def handle(
        memory: ProjectMemory, arguments: dict[str, Any], context: CallContext
    ) -> ToolResult:
        from engram.mcp import approval_dialog

        result: ToolResult = getattr(approval_dialog, name)(memory, arguments, context)
        return result

    return handle


# --- the table ---------------------------------------------------------------------

_TOOLS: list[tuple[str, str, str, Handler, bool]] = [
    (
        "engram_load",
        "Load project memory",
        "Route a task and return the project's rules, decisions and knowledge that apply, "
        "within a token budget. Call it before working on a task.",
        _load,
        True,
    ),
    (
        "engram_route",
        "Route a task",
        "Classify a task and list the memories it routes to, in load order. Give `query` or"
        " `task`.",
        _route,
        True,
    ),
    (
        "engram_search",
        "Search project memory",
        "Search memory by query (BM25, fused with the semantic channel where installed)."
        " A superseded memory comes after the one that replaced it and names it"
        " (`superseded_by`). Each entry has a `confidence` (0 to 1: how likely it is"
        " relevant); `min_confidence` leaves out the entries under it.",
        _search,
        True,
    ),
    (
        "engram_verify",
        "Verify memory hashes",
        "Compare memory files with memory.hashes.",
        _verify,
        True,
    ),
    (
        "engram_status",
        "Memory status",
        "Report the health of this project's memory and its counters.",
        _status,
        True,
    ),
    (
        "engram_save",
        "Propose one memory",
        "Propose a memory; returns a numbered preview and an approval_token (or asks the "
        "human in a dialog, and writes what they approve).",
        _dialog("save"),
        False,
    ),
    (
        "engram_save_session",
        "Propose memories from this session",
        "Propose several memories, one 'TYPE: ... | TEXT: ...' line each; returns a "
        "numbered preview and an approval_token (or asks the human in a dialog).",
        _dialog("save_session"),
        False,
    ),
    (
        "engram_commit",
        "Write an approved proposal",
        "Write the candidates the human approved. Never call it before the human has "
        "approved the exact candidates shown.",
        _dialog("commit"),
        False,
    ),
    (
        "engram_set_role",
        "Set roles",
        "Set the active roles (then re-run engram_load). Give `role` or `roles`. `roles: []`"
        " clears them.",
        _set_role,
        False,
    ),
    (
        "engram_set_rule_variant",
        "Set the rule variant",
        "Choose off, light, balanced or strict rule variants, or ask for the status "
        "(then re-run engram_load).",
        _set_rule_variant,
        False,
    ),
    (
        "engram_note",
        "Record a task note",
        "Record a short, redacted task note in the working tier (expires); the human "
        "approves it first.",
        _dialog("note"),
        False,
    ),
]


def project_tools(project: ProjectTools, options: ServerOptions) -> Iterator[Tool]:
    """The project tools, in the order ``tools/list`` shows them."""
    for name, title, description, handler, read_only in _TOOLS:
        meta: dict[str, Any] = {}
        if name == "engram_load" and options.always_load:
            meta["anthropic/alwaysLoad"] = True
        if name == "engram_commit":
            meta["anthropic/requiresUserInteraction"] = True
        yield Tool(
            name=name,
            title=title,
            description=description,
            input_schema=INPUT[name],
            output_schema=None,  # answered in content only: see the module docstring
            handler=project.run(name, handler),
            read_only=read_only,
            destructive=None if read_only or name == "engram_note" else False,
            meta=meta,
        )
