"""Test support for engram and for hosts that embed it (like ``structlog.testing``).

- :mod:`engram.testing.clients`: line-level MCP clients over ``engram-mcp``, in this
  process (:class:`InProcessClient`) or as a real subprocess (:class:`StdioClient`);
  :func:`serve_lines` for one whole conversation.
- :mod:`engram.testing.wire`: tool calls, result envelopes, the legacy handshake.
- :mod:`engram.testing.governed`: a fake clock, bindings, valid capture arguments,
  host profiles on disk.
- :mod:`engram.testing.projects`: a temporary project with engram memory.
- :mod:`engram.testing.memory_store`: :class:`InMemoryStore`, a governed store in memory
  that passes the SQLite and PostgreSQL stores' contract suite, for tests of the domain.

``engram-mcp`` never imports it (the architecture test checks); ``engram demo`` and
``engram doctor`` start the real server with its :class:`StdioClient`. It needs nothing
beyond engram's own dependencies (no pytest).
"""

from __future__ import annotations

from engram.testing.clients import (
    MODERN_META,
    InProcessClient,
    LineClient,
    Served,
    StartServer,
    StdioClient,
    serve_lines,
    server_command,
    start_in_process,
)
from engram.testing.governed import (
    DIGEST,
    NOW,
    PURPOSE,
    Clock,
    binding,
    capture_args,
    current_capture_args,
    host_profile,
    mutate,
    now_ms,
)
from engram.testing.memory_store import InMemoryStore
from engram.testing.projects import ENGRAM, Project, new_project, run_engram
from engram.testing.wire import (
    ELICIT_CAPS,
    call,
    data_of,
    elicit_meta,
    envelope,
    human_text,
    legacy_init,
    tool_request,
    value,
)

__all__ = [
    "DIGEST",
    "ELICIT_CAPS",
    "ENGRAM",
    "MODERN_META",
    "NOW",
    "PURPOSE",
    "Clock",
    "InMemoryStore",
    "InProcessClient",
    "LineClient",
    "Project",
    "Served",
    "StartServer",
    "StdioClient",
    "binding",
    "call",
    "capture_args",
    "current_capture_args",
    "data_of",
    "elicit_meta",
    "envelope",
    "host_profile",
    "human_text",
    "legacy_init",
    "mutate",
    "new_project",
    "now_ms",
    "run_engram",
    "serve_lines",
    "server_command",
    "start_in_process",
    "tool_request",
    "value",
]
