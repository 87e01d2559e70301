"""A score in words: what of the question a memory holds, and where, and whether it is
close in meaning; then the sum that made the score, with its numbers."""

from __future__ import annotations

from engram.console.scores import in_words, search_sum


def test_the_words_a_memory_holds_are_said_by_where_it_holds_them() -> None:
    words = [
        ("retry", ("title",)),
        ("policy", ("title",)),
        ("payments", ("tags", "text")),
        ("deploy", ()),
    ]

    assert in_words(words, close=True) == (
        "matched 'retry' and 'policy' in the title, 'payments' in the tags and the text"
        " (not 'deploy'); also close in meaning"
    )
    assert in_words(words[:2], close=False) == "matched 'retry' and 'policy' in the title"
    assert in_words([("tag", ("text",)), ("release", ("title", "text"))], close=False) == (
        "matched 'release' in the title and the text, 'tag' in the text"
    )


def test_a_memory_found_by_meaning_alone_says_so() -> None:
    assert in_words([("paiement", ()), ("retry", ())], close=True) == (
        "close in meaning; it holds none of the question's words"
    )


def test_a_lexical_score_is_its_bm25_and_a_fused_one_the_sum_of_each_channels_part() -> None:
    lexical = {"score": 1.4309, "bm25": 1.4309, "parts": {"lexical": 1.4309}}
    fused = {
        "score": 0.4945,
        "bm25": 1.431,
        "cosine": 0.861,
        "parts": {"lexical": 0.2, "semantic": 0.2945},
    }
    alone = {"score": 0.2945, "bm25": 0.0, "cosine": 0.861, "parts": {"semantic": 0.2945}}

    assert search_sum(lexical, 1.4309) == "score 1.4309 = BM25 1.4309"
    assert search_sum(fused, 1.431) == (
        "score 0.4945 = 0.2 × 1.4310 / 1.4310 (0.2000) + 0.8 × (0.8610 - 0.78) / 0.22 (0.2945)"
    )
    assert search_sum(alone, 2.0) == (
        "score 0.2945 = 0.2 × 0 (no word of the question) + 0.8 × (0.8610 - 0.78) / 0.22 (0.2945)"
    )
