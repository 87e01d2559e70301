"""Content safety shared by both faces: finding and redacting credentials in text, and
showing agent-written text to people.

:mod:`engram.safety.secrets` is the detector the governed admission policy and project
memory both call; :mod:`engram.safety.invisible` removes the invisible characters that
could split a secret so that the detector would miss it; :mod:`engram.safety.disguise`
undoes the other disguises (split, folded, marked, grouped, spaced, glued, encoded,
reversed) before scanning again, with :mod:`engram.safety.decoders` for code that spells
a string (escapes, character codes, base85, names joined); :mod:`engram.safety.public`
tells the public identifiers that look random (object ids, KSUIDs, public keys by their
label);
:mod:`engram.safety.display` refuses or escapes what could rewrite an operator's screen.
The layer may import only :mod:`engram.errors` from engram, and only light
standard-library modules (``re``, ``math``, ``dataclasses``, ``base64``, ``unicodedata``;
``hashlib`` only to check a Bitcoin address's checksum),
so any layer can call it without weighing on the ``engram-mcp`` start-up path. It knows
nothing of memories, tools or the wire.
"""
