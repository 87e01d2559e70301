"""What engram prints of a host's configuration: every value that may be a secret masked.

A person's host files hold secrets next to engram's entry: an API key in a launcher's
words (``docker run -e OPENAI_API_KEY=sk-… img engram-mcp``, ``env API_TOKEN=…
engram-mcp``), in a header or a URL. Nothing secret may reach stdout, stderr or a log
(house style, "Errors"), so every command line engram prints from such a file goes
through this module: :func:`shown_command` renders a command line (``doctor``'s
messages, ``link``'s notes, the printed ``claude mcp add``), :func:`shown_options`
engram-mcp's options alone, and :func:`shown_shell` a shell command string (a session
hook's).

:data:`MASK` replaces the value of every ``KEY=VALUE`` word (``KEY=…``, ``--token=…``,
a URL's query ``?key=…``; not a version requirement such as ``engram==0.0.5``), the
word after ``-e``/``--env`` (``-e KEY=…``; a bare name passes a variable through and
stays) and after an option named for a credential (``--api-key …``, ``-H …``,
``--header …``), and a URL's password (``https://me:…@host``). The shell command
after ``-c`` (``sh -c "KEY=x exec engram-mcp"``) is masked word by word. Program
names, every other word, and engram-mcp's own options (``--root /data``) stay
readable: the person must still recognise the entry. The mask is fixed: a value's
length and shape are not shown either.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from engram.hosts.command import SERVER_FLAGS, SERVER_VALUED_OPTIONS, read_command_line

__all__ = ["MASK", "masked_argv", "shown_command", "shown_options", "shown_shell"]

#: What stands in for a value engram never prints.
MASK = "…"
#: A word naming a credential: an option whose value is masked, a key whose values are.
_CREDENTIAL = re.compile(
    r"token|secret|passw|pwd|api[-_]?key|credential|auth|cookie|bearer|header", re.IGNORECASE
)
#: Options whose value is a ``KEY=VALUE`` assignment (docker, podman, claude mcp add).
_ENV_OPTIONS = frozenset({"-e", "--env"})
#: A package requirement (``engram==0.0.5``, ``engram>=1,<2``): no assignment in it.
_VERSION = r"(?:===|==|~=|!=|<=|>=|<|>)\d[\w.*+!-]*"
_REQUIREMENT = re.compile(rf"[A-Za-z0-9][\w.\-\[\],]*{_VERSION}(?:,{_VERSION})*")
_URL_PASSWORD = re.compile(r"://[^/?#@\s:]*:([^/?#@\s]+)@")

#: A word as shown: its pieces, ``None`` where the mask stands.
Pieces = tuple[str | None, ...]


# --- command lines ------------------------------------------------------------------


def _takes_secret(option: str | None) -> bool:
    """Whether the word after ``option`` is a value to mask."""
    if option is None or not option.startswith("-") or "=" in option:
        return False
    if option in _ENV_OPTIONS or option == "-H":
        return True
    return option.startswith("--") and _CREDENTIAL.search(option) is not None


def _cut(word: str, spans: list[tuple[int, int]]) -> Pieces:
    pieces: list[str | None] = []
    position = 0
    for start, end in sorted(spans):
        if end <= position:
            continue
        pieces += [word[position : max(start, position)], None]
        position = end
    return (*pieces, word[position:])


def _word_pieces(word: str, previous: str | None) -> Pieces:
    if _takes_secret(previous) and not word.startswith("-"):
        if previous not in _ENV_OPTIONS:
            return (None,)
        # -e NAME passes a variable through by name: there is no value to mask.
        name, equals, _ = word.partition("=")
        return (f"{name}=", None) if equals else (word,)
    if previous == "-c":  # sh -c 'KEY=VALUE exec engram-mcp': a shell command
        return (_shell_line(word),)
    option, inline, assignment = word.partition("=")
    if inline and option in _ENV_OPTIONS and "=" in assignment:  # --env=KEY=VALUE
        return (f"{option}={assignment.partition('=')[0]}=", None)
    spans = [match.span(1) for match in _URL_PASSWORD.finditer(word)]
    if "=" in word and _REQUIREMENT.fullmatch(word) is None:
        spans.append((word.index("=") + 1, len(word)))
    return _cut(word, [(start, end) for start, end in spans if start < end])


def _own_option(word: str, previous: str | None) -> bool:
    name, inline, _ = word.partition("=")
    if word in SERVER_FLAGS or word in SERVER_VALUED_OPTIONS:
        return True
    return bool(inline and name in SERVER_VALUED_OPTIONS) or previous in SERVER_VALUED_OPTIONS


def _masked_words(words: Sequence[str], own_from: int | None) -> list[Pieces]:
    """Each word's pieces; from index ``own_from`` on, engram-mcp's own options stay."""
    shown: list[Pieces] = []
    previous: str | None = None
    for index, word in enumerate(words):
        own = own_from is not None and index >= own_from and _own_option(word, previous)
        shown.append((word,) if own else _word_pieces(word, previous))
        previous = word
    return shown


def _own_from(argv: Sequence[str]) -> int | None:
    line = read_command_line(argv)
    return None if line is None else len(line.launcher)


def _as_shell(pieces: Pieces) -> str:
    """A word as a shell word: quoted when it must be (the mask itself needs no quotes)."""
    value = _as_value(pieces)
    if None in pieces and all(shlex.quote(piece) == piece for piece in pieces if piece):
        return value
    return shlex.quote(value)


def _as_value(pieces: Pieces) -> str:
    return "".join(MASK if piece is None else piece for piece in pieces)


def _shell_line(command: str) -> str:
    """A shell command string, masked word by word (unchanged when nothing is masked)."""
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: mask from the first assignment on
        head, equals, _ = command.partition("=")
        return f"{head}={MASK}" if equals else command
    pieces = _masked_words(words, _own_from(words))
    if all(piece == (word,) for piece, word in zip(pieces, words, strict=True)):
        return command
    return " ".join(_as_shell(piece) for piece in pieces)


def shown_command(argv: Sequence[str]) -> str:
    """``argv`` as a shell line, every value that may be a secret masked.

    ``docker run -e OPENAI_API_KEY=sk-x -i img engram-mcp --root /d`` is shown as
    ``docker run -e OPENAI_API_KEY=… -i img engram-mcp --root /d``; with nothing to
    mask, the line is ``shlex.join(argv)``.
    """
    return " ".join(_as_shell(pieces) for pieces in _masked_words(argv, _own_from(argv)))


def shown_options(options: Sequence[str]) -> str:
    """engram-mcp's arguments as a shell line: its own options readable, any other
    word masked as in :func:`shown_command`."""
    return " ".join(_as_shell(pieces) for pieces in _masked_words(options, 0))


def shown_shell(command: str) -> str:
    """A shell command string (a session hook's) with its values masked."""
    return _shell_line(command)


def masked_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with :data:`MASK` in place of each value (the words, not a shell line)."""
    return [_as_value(pieces) for pieces in _masked_words(argv, _own_from(argv))]
