"""Text analysis: the same terms for what is indexed and what is asked, in four languages."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engram.search.analysis import (
    MAX_QUERY_GROUPS,
    detect_language,
    index_terms,
    query_groups,
    shared_words,
)


def test_a_text_is_indexed_as_the_stems_of_its_language_without_stop_words() -> None:
    assert index_terms("Release tarballs are verified before upload.") == (
        "releas tarbal verifi upload"
    )
    assert index_terms("Les versions sont publiées depuis main.") == "version publi depuis main"
    assert index_terms("Wir veröffentlichen Zahlungen nur vom Hauptzweig.") == (
        "veroffent zahlung hauptzweig"
    )
    assert index_terms("As versões são publicadas a partir da main.") == "verso public part main"


def test_the_language_is_the_one_whose_function_words_the_text_uses_most() -> None:
    assert detect_language(["the", "build", "is", "green"]) == "en"
    assert detect_language(["la", "version", "est", "publiée", "et", "signée"]) == "fr"
    assert detect_language(["die", "version", "ist", "nicht", "signiert"]) == "de"
    assert detect_language(["a", "versão", "não", "foi", "publicada"]) == "pt"
    assert detect_language(["retrypolicy", "backoff"]) == "en"  # no function word at all


def test_an_identifier_gives_its_parts_and_their_join_in_every_spelling() -> None:
    expected = "retri polici retrypolici"
    assert index_terms("retry_policy") == expected
    assert index_terms("RetryPolicy") == expected
    assert index_terms("retryPolicy") == expected
    assert index_terms("PAYMENTS_DB_URL") == "payment db url paymentsdburl"
    assert index_terms("src/payments/retry.py") == "src payment retri py"


def test_a_question_asks_for_each_word_in_the_stems_of_every_language() -> None:
    # "comment" (how) is a French function word; "publier" is stemmed as English,
    # French, German and Portuguese, which gives two distinct variants.
    assert query_groups("comment publier une version ?") == [("publier", "publi"), ("version",)]
    assert query_groups("How do I cut a release?") == [("cut",), ("releas",)]


def test_a_question_of_stop_words_only_keeps_them() -> None:
    assert query_groups("who am I") == [("who",), ("am",), ("i",)]
    assert query_groups("!!! ???") == []


def test_diacritics_and_case_never_change_the_terms() -> None:
    assert index_terms("Café CAFE cafe café") == "cafe cafe cafe cafe"
    assert index_terms("ﬁle") == index_terms("file")  # a ligature is its letters


@given(st.text(max_size=200))
def test_every_question_term_is_a_plain_word_and_there_are_at_most_32(text: str) -> None:
    groups = query_groups(text)
    assert len(groups) <= MAX_QUERY_GROUPS
    for group in groups:
        assert group
        assert all(variant and '"' not in variant and " " not in variant for variant in group)


@given(st.text(max_size=200))
def test_a_text_asked_as_a_question_matches_itself_on_every_term(text: str) -> None:
    indexed = set(index_terms(text).split())
    if indexed:  # a text of stop words only is not indexed at all
        assert all(indexed.intersection(group) for group in query_groups(text))


def test_shared_words_names_each_word_as_asked_and_the_texts_that_hold_it() -> None:
    texts = {"title": "Retry policy", "tags": "payments", "text": "Payment retries back off."}

    assert shared_words("How does the RetryPolicy treat payments?", texts) == [
        ("retry", ("title", "text")),
        ("policy", ("title",)),
        ("treat", ()),
        ("payments", ("tags", "text")),
    ]
    # The join of an identifier's parts is a word only where a text holds it.
    assert shared_words("retry_policy", {"text": "see RetryPolicy"}) == [
        ("retry", ("text",)),
        ("policy", ("text",)),
        ("retrypolicy", ("text",)),
    ]
    assert shared_words("who am I", {"title": "who"}) == [("who", ()), ("am", ()), ("i", ())]


@given(st.text(max_size=200))
def test_a_text_asked_as_a_question_holds_every_word_it_asks(text: str) -> None:
    words = shared_words(text, {"self": text})
    assert len(words) <= MAX_QUERY_GROUPS
    if index_terms(text):  # a text of stop words only is not indexed at all
        assert all(holders == ("self",) for _, holders in words)
