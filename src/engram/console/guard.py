"""Who may use the review console, and what every answer carries.

The console's actions write memory and approve deletions, so the page is guarded as a
bank's would be, on a loopback port any local program can reach:

- **a host name of its own.** The console answers only at a random name under
  ``localhost`` (``engram-<16 hex>.localhost:PORT``, which browsers and curl resolve to
  127.0.0.1 without asking DNS, RFC 6761). Cookies are not kept apart by port: a cookie
  of ``127.0.0.1`` would reach every program serving on 127.0.0.1 (a dev server an agent
  started, fed an ``<img>`` of itself), which could then act with it. A cookie of the
  random name reaches only that name, which no other program knows. Every request must
  name it in ``Host``, so a page of another site that rebinds its DNS name to 127.0.0.1
  is refused too;
- **one-time secret.** The URL ``engram console`` prints carries a random secret; the
  first ``GET`` with it gets a session cookie (``HttpOnly``, ``SameSite=Strict``), and the
  secret is spent. A second use, any other secret, or a ``HEAD`` (a link previewer) is
  refused;
- **actions** are ``POST`` only, and each needs the session, an ``Origin`` that is the
  console's own, and a *form token*: issued with the page for that one action (its path),
  bound to the session, valid for :data:`FORM_TTL_S`, and spent by its first use, so a
  replayed form is refused;
- **headers**: a strict Content-Security-Policy (nothing but the console's own style
  sheet; no script at all), no framing, no caching, and a referrer only to the console
  itself (``no-referrer`` would make chromium send ``Origin: null`` with the console's
  own forms).

Clocks are monotonic seconds; the secret, sessions and tokens live only in this process.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = ["FORM_TTL_S", "HEADERS", "Guard", "Refusal"]

#: How long a form token may wait for its one use.
FORM_TTL_S: Final = 3_600.0
#: How many unspent form tokens are kept (the oldest are forgotten first).
MAX_FORMS: Final = 20_000

HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; form-action 'self';"
        " frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class Refusal(Exception):
    """A request the console refuses: its HTTP status and what the person should do.
    Never leaves the console (its routes turn it into a page), so it is not one of
    :mod:`engram.errors`' codes."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(status, reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class _Form:
    session: str
    action: str
    expires: float


class Guard:
    """The console's one secret, its sessions and its form tokens."""

    def __init__(self, port: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.port = port
        #: The console's own name (see the module): ``Host`` must be exactly this.
        self.host = f"engram-{secrets.token_hex(8)}.localhost:{port}"
        self.origin = f"http://{self.host}"
        self.cookie = "engram_console"
        self._secret: str | None = secrets.token_urlsafe(32)
        self._sessions: set[str] = set()
        self._forms: OrderedDict[str, _Form] = OrderedDict()
        self._clock = clock

    @property
    def login_url(self) -> str:
        """The URL to print: valid once."""
        if self._secret is None:
            raise RuntimeError("the console's secret was already spent")
        return f"{self.origin}/login?secret={self._secret}"

    def check_host(self, host: str | None) -> None:
        """Refuse a request that does not name the console itself (DNS rebinding)."""
        if host != self.host:
            raise Refusal(421, "this page answers only at its own address: open the printed URL")

    def log_in(self, secret: str | None) -> str:
        """Spend the one-time secret; the new session's id (the cookie's value)."""
        expected = self._secret
        if expected is None or secret is None or not hmac.compare_digest(secret, expected):
            raise Refusal(
                403,
                "this login link is not valid or was already used: start `engram console`"
                " again for a new one",
            )
        self._secret = None
        session = secrets.token_urlsafe(32)
        self._sessions.add(session)
        return session

    def session(self, cookie: str | None) -> str:
        """The caller's session, or a refusal saying how to get one."""
        if cookie is None or cookie not in self._sessions:
            raise Refusal(
                401,
                "no console session: open the login URL `engram console` printed (it works"
                " once; start the console again for a new one)",
            )
        return cookie

    def issue(self, session: str, action: str) -> str:
        """A form token for one use of ``action`` (a path) in ``session``."""
        token = secrets.token_urlsafe(24)
        self._forms[token] = _Form(session, action, self._clock() + FORM_TTL_S)
        while len(self._forms) > MAX_FORMS:
            self._forms.popitem(last=False)
        return token

    def spend(self, cookie: str | None, origin: str | None, action: str, token: str) -> None:
        """Allow one action: the session, the console's own Origin, and an unspent form
        token issued for this action in this session (spent now)."""
        session = self.session(cookie)
        if origin != self.origin:
            raise Refusal(403, "this action came from another page: use the console itself")
        form = self._forms.get(token)
        if form is None or form.session != session or form.action != action:
            raise Refusal(403, "this form was already used or is not this page's: reload the page")
        del self._forms[token]
        if form.expires < self._clock():
            raise Refusal(403, "this form is more than an hour old: reload the page")
