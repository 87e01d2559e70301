"""What engram prints of a host's configuration: every value that may be a secret masked.

A person's host files hold secrets next to engram's entry: an API key in an entry's
environment (``"env": {"OPENAI_API_KEY": "sk-…"}``), in a launcher's words
(``docker run -e OPENAI_API_KEY=sk-… img engram-mcp``, ``env API_TOKEN=… engram-mcp``),
in a header or a URL. Nothing secret may reach stdout, stderr or a log (house style,
"Errors"), so everything engram prints from such a file goes through this module:

- :func:`shown_command` renders a command line (``doctor``'s messages, ``link``'s
  notes, the printed ``claude mcp add``), :func:`shown_options` engram-mcp's options
  alone, and :func:`shown_shell` a shell command string (a session hook's);
  :func:`masks` says whether a command line so shown hides anything;
- :func:`masked_texts` masks both sides of a file change before a ``--dry-run`` diff
  is made from them (what is written is the unmasked text).

In a command line, :data:`MASK` replaces the value of every ``KEY=VALUE`` word
(``KEY=…``, ``--token=…``, a URL's query ``?key=…``; not a version requirement such as
``engram==0.0.5``), the word after ``-e``/``--env`` (``-e KEY=…``; a bare name passes a
variable through and stays) and after an option named for a credential (``--api-key
…``, ``-H …``, ``--header …``), and a URL's password (``https://me:…@host``). The
shell command after ``-c`` (``sh -c "KEY=x exec engram-mcp"``) is masked word by word.
Program names, every other word, and engram-mcp's own options (``--root /data``) stay
readable: the person must still recognise the entry.

In a JSON, JSONC or TOML file, besides the command line an entry's ``command`` and
``args`` make (a lone ``command`` string, a hook's, is a shell command) and a ``url``,
every value under an ``env`` or ``environment`` key, or a key named for a credential
(``headers``, ``http_headers``, ``bearer_token``, ``apiKey``), is masked wherever it
sits (another server's entry, Claude's top-level ``env``). engram's own variables
(:data:`~engram.hosts.command.ENGRAM_VARIABLES`) stay readable, so a re-pin still shows.

These rules go by where a value stands, whatever it holds. On top of them, everything
shown also passes the credential detector both faces share (``engram.safety``,
``docs/secrets.md``), which finds a token by its shape where the rules do not look: a
positional word (``mcp-remote URL ghp_…``), a comment, an instruction file. The mask
is fixed: a value's length and shape are not shown either.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, MutableMapping, MutableSequence, Sequence
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from engram.errors import HostConfigError
from engram.hosts.command import ENGRAM_VARIABLES, own_option_marks, read_command_line
from engram.hosts.jsonc import Node, parse

__all__ = [
    "MASK",
    "masked_argv",
    "masked_text",
    "masked_texts",
    "masks",
    "shown_command",
    "shown_options",
    "shown_shell",
]

#: What stands in for a value engram never prints.
MASK = "…"
#: A word naming a credential: an option whose value is masked, a key whose values are.
_CREDENTIAL = re.compile(
    r"token|secret|passw|pwd|api[-_]?key|credential|auth|cookie|bearer|header", re.IGNORECASE
)
#: Options whose value is a ``KEY=VALUE`` assignment (docker, podman, claude mcp add).
_ENV_OPTIONS = frozenset({"-e", "--env"})
#: Keys whose values are an environment (Codex, Claude, Gemini, …: ``env``; OpenCode's).
_ENVIRONMENT_KEYS = frozenset({"env", "environment"})
_URL_KEYS = frozenset({"url", "httpurl", "serverurl", "uri"})
#: A package requirement (``engram==0.0.5``, ``engram>=1,<2``): no assignment in it.
_VERSION = r"(?:===|==|~=|!=|<=|>=|<|>)\d[\w.*+!-]*"
_REQUIREMENT = re.compile(rf"[A-Za-z0-9][\w.\-\[\],]*{_VERSION}(?:,{_VERSION})*")
_URL_PASSWORD = re.compile(r"://[^/?#@\s:]*:([^/?#@\s]+)@")
#: A string literal on one line (JSON's, or TOML's basic and literal strings), and the
#: colon after it when it is a JSON key.
_LITERAL = re.compile(r'("(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\')(\s*:)?')

#: Between the two sides of a change while they are masked together (no host file holds
#: a NUL character).
_SIDES = "\n\x00engram:masked\x00\n"
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


def _masked_words(words: Sequence[str], own_from: int | None) -> list[Pieces]:
    """Each word's pieces; from index ``own_from`` on, engram-mcp's own options (and
    their values, as :func:`~engram.hosts.command.own_option_marks` reads them) stay."""
    own = [False] * len(words)
    if own_from is not None:
        own[own_from:] = own_option_marks(words[own_from:])
    shown: list[Pieces] = []
    previous: str | None = None
    for index, word in enumerate(words):
        shown.append((word,) if own[index] else _word_pieces(word, previous))
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
    shown = " ".join(_as_shell(pieces) for pieces in _masked_words(argv, _own_from(argv)))
    return _detected_masked(shown)


def masks(argv: Sequence[str]) -> bool:
    """Whether :func:`shown_command` hides anything of ``argv``: run as shown, the
    command would carry the mask itself, so whoever shows it says so."""
    return shown_command(argv) != shlex.join(argv)


def shown_options(options: Sequence[str]) -> str:
    """engram-mcp's arguments as a shell line: its own options readable, any other
    word masked as in :func:`shown_command`."""
    return _detected_masked(" ".join(_as_shell(pieces) for pieces in _masked_words(options, 0)))


def shown_shell(command: str) -> str:
    """A shell command string (a session hook's) with its values masked."""
    return _detected_masked(_shell_line(command))


def masked_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with :data:`MASK` in place of each value (the words, not a shell line)."""
    return [_as_value(pieces) for pieces in _masked_words(argv, _own_from(argv))]


# --- files --------------------------------------------------------------------------


def _secret_key(key: str) -> bool:
    return key.lower() in _ENVIRONMENT_KEYS or _CREDENTIAL.search(key) is not None


def masked_text(text: str | None, path: Path) -> str | None:
    """``text`` of the file at ``path`` as a diff may show it: JSON, JSONC (``.json``,
    ``.jsonc``) and TOML (``.toml``) with every value that may be a secret masked (a
    file that cannot be parsed: every string value), and in any file every credential
    the detector finds."""
    if text is None:
        return None
    return _detected_masked(_structure_masked(text, path))


def masked_texts(
    before: str | None, after: str | None, path: Path
) -> tuple[str | None, str | None]:
    """Both sides of a change as :func:`masked_text` shows them, masked alike: a value
    the detector finds on one side (``password=…`` in a removed line) is masked on the
    other too, where it may stand alone (the detector's echoes, ``docs/secrets.md``)."""
    if before is None or after is None:
        return masked_text(before, path), masked_text(after, path)
    both = _structure_masked(before, path) + _SIDES + _structure_masked(after, path)
    shown = _detected_masked(both).split(_SIDES)
    if len(shown) != 2:  # a finding ran across the separator: mask each side alone
        return masked_text(before, path), masked_text(after, path)
    return shown[0], shown[1]


def _structure_masked(text: str, path: Path) -> str:
    if path.suffix not in (".json", ".jsonc", ".toml"):
        return text
    bom, body = ("\ufeff", text[1:]) if text.startswith("\ufeff") else ("", text)
    try:
        masked = _masked_toml(body) if path.suffix == ".toml" else _masked_json(body)
    except (HostConfigError, tomlkit.exceptions.TOMLKitError):
        masked = _every_literal_masked(body)
    return bom + masked


def _detected_masked(text: str) -> str:
    """``text`` with every credential the shared detector finds (``docs/secrets.md``)
    masked too: a token where the rules above do not look (a positional word, a
    comment)."""
    # Imported on use: compiling the detector's rules costs every engram command about
    # 40 ms at start-up (the session hook too), and only printing host files needs it.
    from engram.safety.secrets import redact

    return redact(text, lambda kind: MASK)


def _every_literal_masked(text: str) -> str:
    """Every string value masked, keys kept: for a file that cannot be read exactly."""
    return _LITERAL.sub(lambda match: match[0] if match[2] else f'"{MASK}"', text)


Splice = tuple[int, int, str]


def _masked_json(text: str) -> str:
    if not text.strip():
        return text
    splices = list(_json_splices(text, parse(text, jsonc=True)))
    for start, end, replacement in sorted(splices, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _masked_entry(argv: list[str], args: object) -> list[str]:
    """An entry's words masked. A lone ``command`` string (a hook's) is a shell command."""
    if args is None and len(argv) == 1:
        return [_shell_line(argv[0])]
    return masked_argv(argv)


def _json_value(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json_leaves(node: Node, keep: frozenset[str] = frozenset()) -> Iterator[Splice]:
    """Every scalar in ``node`` masked (members named in ``keep`` aside)."""
    if node.kind not in ("object", "array"):
        yield node.start, node.end, _json_value(MASK)
        return
    for entry in node.entries:
        if entry.key is None or entry.key not in keep:
            yield from _json_leaves(entry.value)


def _json_command(text: str, node: Node) -> Iterator[Splice]:
    """The command line of an entry (``command`` and ``args``), masked in place."""
    strings: list[Node] = []
    for key in ("command", "args"):
        entry = node.member(key)
        if entry is None:
            continue
        items = [item.value for item in entry.value.entries if entry.value.kind == "array"]
        strings += [item for item in items or [entry.value] if item.kind == "string"]
    argv = [json.loads(text[item.start : item.end]) for item in strings]
    masked_words = _masked_entry(argv, node.member("args"))
    for item, word, masked in zip(strings, argv, masked_words, strict=True):
        if masked != word:
            yield item.start, item.end, _json_value(masked)


def _json_splices(text: str, node: Node) -> Iterator[Splice]:
    if node.kind == "array":
        for item in node.entries:
            yield from _json_splices(text, item.value)
    if node.kind != "object":
        return
    yield from _json_command(text, node)
    for entry in node.entries:
        key, value = str(entry.key), entry.value
        if key in ("command", "args"):
            continue
        if _secret_key(key):
            yield from _json_leaves(value, ENGRAM_VARIABLES)
        elif key.lower() in _URL_KEYS and value.kind == "string":
            url = json.loads(text[value.start : value.end])
            masked = masked_argv([url])[0]
            if masked != url:
                yield value.start, value.end, _json_value(masked)
        else:
            yield from _json_splices(text, value)


def _masked_toml(text: str) -> str:
    document = tomlkit.parse(text)
    if document.as_string() != text:
        # tomlkit does not give this file back as written (it moves some tables that
        # come out of order), so its lines would not be the file's: mask by literal.
        return _every_literal_masked(text)
    _mask_toml_table(document)
    return document.as_string()


def _mask_toml_leaves(node: Any, keep: frozenset[str] = frozenset()) -> None:
    """Every scalar in a table or array masked in place (members in ``keep`` aside)."""
    if isinstance(node, MutableMapping):
        slots: list[Any] = [key for key in node if key not in keep]
    else:
        slots = list(range(len(node)))
    for slot in slots:
        value = node[slot]
        if isinstance(value, MutableMapping | MutableSequence):
            _mask_toml_leaves(value)
        else:
            node[slot] = _toml_string(MASK)


def _toml_string(text: str) -> Any:
    """``text`` as a TOML basic string: tomlkit 0.15 keeps a replaced value's quoting
    (``'…'`` for a literal string), older releases wrote ``"…"``; shown the same on every
    release."""
    return tomlkit.string(text)


def _mask_toml_command(table: MutableMapping[str, Any]) -> None:
    slots: list[tuple[Any, Any]] = []
    for key in ("command", "args"):
        value = table.get(key)
        if isinstance(value, str):
            slots.append((table, key))
        elif isinstance(value, list):
            slots += [(value, index) for index, item in enumerate(value) if isinstance(item, str)]
    argv = [str(holder[slot]) for holder, slot in slots]
    masked_words = _masked_entry(argv, table.get("args"))
    for (holder, slot), word, masked in zip(slots, argv, masked_words, strict=True):
        if masked != word:
            holder[slot] = _toml_string(masked)


def _mask_toml_table(table: MutableMapping[str, Any]) -> None:
    _mask_toml_command(table)
    for key in list(table):
        value = table[key]
        if key in ("command", "args"):
            continue
        if _secret_key(key):
            if isinstance(value, MutableMapping | list):
                _mask_toml_leaves(value, ENGRAM_VARIABLES)
            else:
                table[key] = _toml_string(MASK)
        elif key.lower() in _URL_KEYS and isinstance(value, str):
            masked = masked_argv([str(value)])[0]
            if masked != value:
                table[key] = _toml_string(masked)
        elif isinstance(value, MutableMapping):
            _mask_toml_table(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, MutableMapping):
                    _mask_toml_table(item)
