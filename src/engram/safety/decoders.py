"""What a text spells when it is read as code: the decoders the disguise check adds to the
escapes and encodings :mod:`engram.safety.disguise` undoes itself.

* **octal escapes**: ``\\147\\150\\160`` (C, shell ``printf``, Python bytes);
* **character codes**: a run of eight or more character codes between commas or
  operators, bare or each in ``chr(…)``/``Chr(…)``/``char(…)``, in decimal or ``0x`` hex
  (``String.fromCharCode(103, 104, …)``, ``bytes([103, 104, …])``, ``chr(103) + chr(104)``,
  ``chr(103).chr(104)``);
* **base85**: runs of Ascii85 (``<~…~>``, or bare) and of RFC 1924 / Git / Python
  ``b85`` characters that decode to printable text;
* **echoed literals**: a command substitution that prints a literal, ``$(echo …)``,
  ``$(printf '%s' …)``, `` `echo -n …` ``, is that literal;
* **names joined**: string literals assigned to names (``head = "…"``, ``const a =
  '…'``) put back where the names are used: in f-strings and template literals
  (``f"{head}{tail}"``, `` `${a}${b}` ``), ``{name}`` format fields and ``name + name``.

Each is a cheap test that a text may hold the form, and a decoder that returns the text
with every occurrence replaced (or the decoded runs). Nothing here evaluates code: a name
is replaced only by a literal assigned to it in the same text, once, and only the first
64 names count (a bound for crafted input).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Final

__all__ = [
    "base85_texts",
    "character_codes",
    "echoed",
    "may_hold_codes",
    "may_join_names",
    "names_joined",
    "octal_escaped",
]

_OCTAL: Final = re.compile(r"\\([0-3][0-7]{2})")


def octal_escaped(text: str) -> str:
    """``text`` with each ``\\ooo`` octal escape decoded."""
    return _OCTAL.sub(lambda match: chr(int(match.group(1), 8)), text)


_CODE = r"(?:0[xX][0-9A-Fa-f]{1,2}+|[0-9]{1,3}+)"
_CODE_CALL = r"(?:[Cc]hr[Ww]?|CHR|[Cc]har|fromCharCode)[ \t]*+\([ \t]*+"
_CODE_SEPARATOR = r"[ \t]*+(?:,|\+|\.|&|\|\|)[ \t]*+(?:\r?\n[ \t]*+)?"
# The run opens with its first code (so that only digits start a match); a call around
# each later code is part of the run, the first one's name stays in the text.
_CODE_RUN: Final = re.compile(
    rf"{_CODE}(?:[ \t]*+\))?(?:{_CODE_SEPARATOR}(?:{_CODE_CALL})?{_CODE}(?:[ \t]*+\))?){{7,}}+"
)
_CODE_VALUE: Final = re.compile(_CODE)
_MAY_HOLD_CODES: Final = re.compile(r"[0-9]{2,3}[ \t]*+\)?[ \t]*+[,+.&|]")


def may_hold_codes(text: str) -> bool:
    return _MAY_HOLD_CODES.search(text) is not None


def character_codes(text: str) -> str:
    """``text`` with each run of eight or more printable character codes replaced by the
    string they spell; a run holding any other number is kept as written."""
    return _CODE_RUN.sub(_spelled, text)


def _spelled(match: re.Match[str]) -> str:
    out = []
    for code in _CODE_VALUE.finditer(_CALLS.sub(" ", match.group())):
        value = int(code.group(), 0) if code.group()[:2] in ("0x", "0X") else int(code.group())
        if not (32 <= value < 127 or value in (9, 10, 13)):
            return match.group()
        out.append(chr(value))
    return '"' + "".join(out) + '"'  # a literal, which the joining of literals extends


_CALLS: Final = re.compile(_CODE_CALL)


#: Ascii85 between its ``<~ ~>`` delimiters, or runs of the base85 alphabets long
#: enough to hold a credential that are not plain base64 (which is decoded already).
_ASCII85: Final = re.compile(r"<~([!-u\s]{10,2000}?)~>")
_BASE85_RUN: Final = re.compile(r"[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~.:,\[\]/\"']{25,}+")
_NOT_BASE64: Final = re.compile(r"[^A-Za-z0-9+/=_-]")
_MAX_RUNS: Final = 16
_MAX_RUN: Final = 1024


def base85_texts(text: str) -> Iterator[str]:
    """The printable texts that runs of ``text`` decode to as Ascii85 or base85."""
    import base64

    for found in _ASCII85.finditer(text):
        yield from _printable(base64.a85decode, "".join(found.group(1).split()))
    for count, found in enumerate(_BASE85_RUN.finditer(text)):
        run = found.group()
        if count >= _MAX_RUNS:
            return
        if len(run) > _MAX_RUN or _NOT_BASE64.search(run) is None:
            continue
        yield from _printable(base64.b85decode, run)
        yield from _printable(base64.a85decode, run)


def _printable(decode: Callable[[str], bytes], run: str) -> Iterator[str]:
    try:
        decoded = decode(run).decode("utf-8")
    except (ValueError, TypeError):  # binascii.Error is a ValueError
        return
    if len(decoded) >= 8 and sum(c.isprintable() or c in "\n\t" for c in decoded) >= 0.95 * len(
        decoded
    ):
        yield decoded


_ECHOED: Final = re.compile(
    r"\$\([ \t]*+(?:echo(?:[ \t]++-[neE]++)*+|printf(?:[ \t]++(?P<q>[\"'])%s(?P=q))?)[ \t]++"
    r"(?P<value>[^\s()`]{1,256}+)[ \t]*+\)"
    r"|`[ \t]*+(?:echo(?:[ \t]++-[neE]++)*+|printf(?:[ \t]++(?P<q2>[\"'])%s(?P=q2))?)[ \t]++"
    r"(?P<value2>[^\s()`]{1,256}+)[ \t]*+`"
)


def echoed(text: str) -> str:
    """``text`` with each command substitution that prints a literal replaced by it."""
    return _ECHOED.sub(lambda match: match.group("value") or match.group("value2"), text)


#: A string literal assigned to a name: ``head = "…"``, ``const a = '…'``, ``$b = "…"``,
#: ``tail := "…"``.
_ASSIGNED: Final = re.compile(
    r"(?<![\w.$])\$?(?P<name>[A-Za-z_][A-Za-z0-9_]{0,40}+)[ \t]*+(?::=|=)(?!=)[ \t]*+"
    r"(?P<quote>[\"'`])(?P<value>[^\"'`\\\r\n{}$]{1,256}+)(?P=quote)"
)
_MAX_NAMES: Final = 64


def may_join_names(text: str) -> bool:
    return "=" in text and ("{" in text or "+" in text or "." in text)


def names_joined(text: str) -> str:
    """``text`` with the names that literals are assigned to replaced by those literals
    where they are used: ``{name}``, ``${name}``, ``#{name}`` inside a string, and a bare
    name joined by ``+``, ``.`` or ``..`` (then written as a literal, which the joining of
    literals puts together)."""
    values: dict[str, str] = {}
    for found in _ASSIGNED.finditer(text):
        values.setdefault(found.group("name"), found.group("value"))
        if len(values) >= _MAX_NAMES:
            break
    if not values:
        return text
    names = "|".join(re.escape(name) for name in sorted(values, key=len, reverse=True))
    used = re.compile(
        rf"(?:\$|#)?\{{[ \t]*+(?P<field>{names})[ \t]*+\}}"
        rf"|(?<![\w.$\"'`])\$?(?P<bare>{names})(?![\w(\[])(?![ \t]*+(?::=|=(?!=)))"
    )

    def value(match: re.Match[str]) -> str:
        field = match.group("field")
        return values[field] if field else '"' + values[match.group("bare")] + '"'

    return used.sub(value, text)
