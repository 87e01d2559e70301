"""Asking the human through the client's form dialog, in both protocol eras.

Legacy era: a server-to-client ``elicitation/create`` request on the connection,
answered or timed out (:class:`LegacyElicitation`), only once the client has sent
``notifications/initialized`` and only in a negotiated version that has it, with the
form fields that version allows. Modern era: the handler's
question becomes an ``input_required`` result and the answer arrives with the
client's retry (:class:`ModernElicitation`, :class:`InputRequired`). Handlers see
one interface and must not write anything before they have their answers, because
in the modern era they run again from the top on the retry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from engram.errors import ElicitationFailed, InvalidRequestState
from engram.mcp.connection import Connection
from engram.mcp.tools import ElicitationAnswer
from engram.protocol.eras import CURRENT_FORMS, FormRules, elicitation_forms

__all__ = [
    "ELICITATION_TIMEOUT_S",
    "InputRequired",
    "LegacyElicitation",
    "ModernElicitation",
    "NoElicitation",
    "declares_form_elicitation",
    "parse_answer",
]

#: How long a legacy dialog may stay open before the call falls back.
ELICITATION_TIMEOUT_S: Final = 60.0


def declares_form_elicitation(capabilities: Mapping[str, Any]) -> bool:
    """Whether client capabilities include form elicitation (``{}`` means form)."""
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, dict):
        return False
    return not elicitation or isinstance(elicitation.get("form"), dict)


def form_request(message: str, schema: Mapping[str, Any], forms: FormRules) -> dict[str, Any]:
    """The params of an ``elicitation/create`` form request in a version's terms."""
    params: dict[str, Any] = {"mode": "form"} if forms.mode else {}
    return {**params, "message": message, "requestedSchema": dict(schema)}


def parse_answer(result: object) -> ElicitationAnswer:
    """Read an ``ElicitResult``; anything malformed is a failed dialog."""
    if not isinstance(result, dict):
        raise ElicitationFailed("malformed answer")
    action = result.get("action")
    content = result.get("content", {})
    if action not in ("accept", "decline", "cancel") or not isinstance(content, dict):
        raise ElicitationFailed("malformed answer")
    return ElicitationAnswer(action, content)


class NoElicitation:
    """The client cannot show a dialog (or ``--no-elicitation`` is set)."""

    available = False
    forms = CURRENT_FORMS

    def ask(
        self, key: str, message: str, schema: Mapping[str, Any], *, shown: str = ""
    ) -> ElicitationAnswer:
        raise ElicitationFailed("elicitation unavailable")

    def answered(self, key: str, shown: str) -> ElicitationAnswer | None:
        """An answer the person already gave for ``key`` (never, here)."""
        return None


class LegacyElicitation:
    """``elicitation/create`` on the live connection, with a timeout."""

    def __init__(self, connection: Connection, timeout: float = ELICITATION_TIMEOUT_S) -> None:
        self._connection = connection
        self._timeout = timeout

    @property
    def available(self) -> bool:
        connection = self._connection
        return (
            connection.operating
            and elicitation_forms(connection.protocol_version) is not None
            and declares_form_elicitation(connection.client_capabilities)
        )

    @property
    def forms(self) -> FormRules:
        return elicitation_forms(self._connection.protocol_version) or CURRENT_FORMS

    def ask(
        self, key: str, message: str, schema: Mapping[str, Any], *, shown: str = ""
    ) -> ElicitationAnswer:
        if not self.available:  # never a request the negotiated version lacks
            raise ElicitationFailed("elicitation unavailable")
        params = form_request(message, schema, self.forms)
        result = self._connection.request("elicitation/create", params, self._timeout)
        return parse_answer(result)

    def answered(self, key: str, shown: str) -> ElicitationAnswer | None:
        """On a live connection every question is asked afresh."""
        return None


@dataclass
class InputRequired(Exception):
    """Raised by a modern-era handler that needs answers it does not have yet."""

    requests: dict[str, dict[str, Any]]
    asked: dict[str, str]
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)


class ModernElicitation:
    """Answers from the client's retry; a missing answer becomes ``input_required``."""

    #: 2026-07-28 forms are those of 2025-11-25 (schema.ts).
    forms = CURRENT_FORMS

    def __init__(
        self,
        available: bool,
        asked: Mapping[str, str] | None = None,
        answers: Mapping[str, dict[str, Any]] | None = None,
    ) -> None:
        self._available = available
        self._asked = dict(asked or {})
        self._answers = dict(answers or {})

    @property
    def available(self) -> bool:
        return self._available

    def ask(
        self, key: str, message: str, schema: Mapping[str, Any], *, shown: str = ""
    ) -> ElicitationAnswer:
        if not self._available:
            raise ElicitationFailed("elicitation unavailable")
        if key in self._answers:
            # The human answered a form; if what we would show now differs from
            # what was shown then, the answer does not cover it.
            if self._asked.get(key) != shown:
                raise InvalidRequestState()
            return parse_answer(self._answers[key])
        asked = {**self._asked, key: shown}
        params = form_request(message, schema, self.forms)
        request = {"method": "elicitation/create", "params": params}
        raise InputRequired({key: request}, asked, self._answers)

    def answered(self, key: str, shown: str) -> ElicitationAnswer | None:
        """The answer of the retry for ``key``, when it was asked about ``shown``."""
        if not self._available or key not in self._answers:
            return None
        if self._asked.get(key) != shown:
            raise InvalidRequestState()
        return parse_answer(self._answers[key])
