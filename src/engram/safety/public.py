"""Public identifiers that look random: ids, public keys and client-side keys the entropy
fallback must not take for secrets.

A run of random-looking characters is a secret unless something says it is public. This
module holds the general rules that say so, each by a structure or by the label the run
is written under, never by a list of values:

* **object ids with a type prefix**: Stripe's ``cus_``, ``pi_``, ``ch_``, ``evt_`` …
  (:data:`STRIPE_OBJECT_PREFIXES`; its secret keys ``sk_``, ``rk_``, ``whsec_`` are not
  among them) followed by base62 only;
* **KSUIDs**: 27 base62 characters whose first four bytes are a timestamp between 2015
  and 2035 (a random run of that length passes about one time in sixteen);
* **a label that names the run public**: the value of a field whose name ends in ``id``
  (``request_id``, ``versionId``, ``x-amz-request-id``, ``client_id``; a session id is
  not public), of a public key or a site key (``PublicKey =``, ``data-sitekey=``,
  ``writeKey:``, ``publishableKey``), of a JSON Web Key's public members (``"n"``,
  ``"e"``, ``"x"``, ``"y"``, ``"x5c"``, ``"x5t"``), the argument of a client-side
  loader (``analytics.load("…")``, ``grecaptcha.execute("…")``) or a reCAPTCHA
  script's ``render=``;
* **publishable values by their prefix**: Stripe's ``pk_live_``/``pk_test_``, PostHog's
  ``phc_``, Mapbox's ``pk.eyJ…`` (:func:`public_value`).

A label only exempts the entropy fallback: a key-name rule (``api_key = …``) still
sees a value whatever it looks like, and a vendor format still names itself.
"""

from __future__ import annotations

import re

__all__ = [
    "STRIPE_OBJECT_PREFIXES",
    "is_ksuid",
    "is_stripe_object_id",
    "named_public",
    "public_value",
]

#: The prefixes of Stripe's object ids (https://docs.stripe.com/api): public references
#: to a customer, a charge, an event … Its secrets (``sk_``, ``rk_``, ``whsec_``) and its
#: client secrets (``pi_…_secret_…``: the base62 body stops at the second ``_``) are not.
STRIPE_OBJECT_PREFIXES: tuple[str, ...] = (
    *("acct", "ba", "bank", "btok", "card", "ch", "cn", "cpn", "cs", "cus", "di", "dp", "du"),
    *("evt", "fee", "file", "fr", "iauth", "ic", "ich", "icr", "ii", "il", "in", "ipi", "li"),
    *("link", "mbur", "pi", "pm", "po", "pr", "price", "prod", "promo", "pst", "py", "pyr"),
    *("qt", "re", "req", "sh", "si", "seti", "setatt", "sli", "src", "sub", "sub_sched"),
    *("tok", "tr", "trr", "txn", "txr", "wb", "we", "plink", "bpc", "cbtxn", "inrpt", "ipy"),
)
_STRIPE_OBJECT = re.compile(
    "(?:" + "|".join(sorted(STRIPE_OBJECT_PREFIXES, key=len, reverse=True)) + ")"
    r"_(?:(?:live|test)_)?[A-Za-z0-9]{8,64}"
)


def is_stripe_object_id(core: str) -> bool:
    """``cus_NffrFeUfNV2Hib``, ``pi_3MtwBwLkdIwHu7ix28a3tqPa``: a Stripe object id."""
    return _STRIPE_OBJECT.fullmatch(core) is not None


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BASE62_VALUE = {character: index for index, character in enumerate(_BASE62)}
_KSUID_EPOCH = 1_400_000_000
#: The timestamps a KSUID may carry to count as one: 2015-01-01 to 2035-01-01 (UTC).
_KSUID_FROM, _KSUID_TO = 1_420_070_400, 2_051_222_400


def is_ksuid(core: str) -> bool:
    """27 base62 characters that decode to 20 bytes whose first four, a count of seconds
    since 2014-05-13, fall between 2015 and 2035: a KSUID (Segment's sortable ids)."""
    if len(core) != 27 or any(character not in _BASE62_VALUE for character in core):
        return False
    number = 0
    for character in core:
        number = number * 62 + _BASE62_VALUE[character]
    if number >= 1 << 160:
        return False
    seconds = (number >> 128) + _KSUID_EPOCH
    return _KSUID_FROM <= seconds <= _KSUID_TO


#: A field name, then its separator: ``request_id=``, ``"versionId": "``, ``PublicKey = ``.
_LABELLED = re.compile(
    r"(?P<label>[A-Za-z][A-Za-z0-9_-]{0,48}+)[\"']?[ \t]{0,4}+(?::|=|=>)[ \t]{0,4}+[\"'`]?\Z"
)
_PUBLIC_KEY_LABELS = re.compile(
    r"(?i:public[_-]?key|pubkey|site[_-]?key|data-sitekey|write[_-]?key|publishable[_-]?key)\Z"
)
#: Members of a JSON Web Key that are public (RFC 7518 §6.2.1, §6.3.1; RFC 7517 §4):
#: the private ones (``d``, ``p``, ``q``, ``dp``, ``dq``, ``qi``, ``k``) are not here.
_JWK_PUBLIC = frozenset({"n", "e", "x", "y", "x5c", "x5t", "x5t#S256", "kid", "crv"})
_JWK_MEMBER = re.compile(r"[\"'](?P<member>[a-z0-9#]{1,8}+)[\"'][ \t]*+:[ \t]*+\[?[ \t]*+\"\Z")
#: A client-side loader given its public key: Segment, reCAPTCHA, the reCAPTCHA script.
_LOADER = re.compile(
    r"(?:analytics\.load|AnalyticsBrowser\.load|grecaptcha(?:\.enterprise)?\.(?:execute|render))"
    r"\([ \t]*+[\"'`]\Z|recaptcha/[^\s\"'<>?&]{0,40}+[?&](?:[^\s\"'<>]{0,40}&)?render=\Z"
)
_NOT_PUBLIC_WORDS = ("session", "secret", "pass", "private")
_VALUE_HEAD = re.compile(r"[A-Za-z0-9._~+/-]*+\Z")


def named_public(before: str) -> bool:
    """Whether the text just ``before`` a run names it public: an id field, a public or
    site key, a JSON Web Key's public member, a client-side loader's argument."""
    tail = before[-8:]
    if ("(" in tail or "=" in tail) and _LOADER.search(before[-80:]) is not None:
        return True
    if '"' in tail or "'" in tail:
        member = _JWK_MEMBER.search(before[-24:])
        if member is not None and member.group("member") in _JWK_PUBLIC:
            return True
    # A value with dots of its own (``VersionId": "abc.def…``): the label stands before
    # the whole value, not before the run after its last dot.
    head = _VALUE_HEAD.sub("", before[-96:])
    tail = head[-8:]
    if ":" not in tail and "=" not in tail:
        return False
    found = _LABELLED.search(head[-64:])
    if found is None:
        return False
    label = found.group("label")
    lowered = label.lower()
    if any(word in lowered for word in _NOT_PUBLIC_WORDS):
        return False
    return _PUBLIC_KEY_LABELS.search(label) is not None or _names_an_id(label, lowered)


def _names_an_id(label: str, lowered: str) -> bool:
    """``id``, ``request_id``, ``x-request-id``, ``versionId``, ``RequestID``, ``uuid``."""
    return (
        lowered in ("id", "uid", "uuid", "guid", "req", "rid", "etag")
        or lowered.endswith(("_id", "-id", "uuid", "guid"))
        or label.endswith(("Id", "ID"))
    )


#: Prefixes that make a value public: publishable Stripe (and Clerk) keys, PostHog
#: project keys, Mapbox public tokens.
PUBLIC_PREFIXES: tuple[str, ...] = ("pk_live_", "pk_test_", "phc_", "pk.eyJ")


def public_value(value: str) -> bool:
    """A value public by its own prefix, whatever key it is written under
    (``accessToken: 'pk.eyJ…'``)."""
    return value.startswith(PUBLIC_PREFIXES)
