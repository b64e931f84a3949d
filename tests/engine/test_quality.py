"""The quality scorer: exact verdicts for garbled and clean texts, bounds, the stored form."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes
from engine.quality import (
    QUALITY_VERSION,
    SAMPLE_CHARS,
    SLICES,
    Quality,
    Signal,
    Verdict,
    sample,
    score,
    summary_line,
)
from engine.readers.text import decode_cp1252
from fixtures.gen import quality as fx

PPTX = mimes.PPTX


def _signals(q: Quality) -> set[str]:
    return set(q.signals)


@pytest.mark.parametrize("lang", sorted(fx.CLEAN))
def test_clean_prose_in_every_language_is_good(lang: str) -> None:
    q = score(fx.CLEAN[lang] * 2, mimes.PLAIN)
    assert (q.verdict, q.signals) == ("good", ()), summary_line(q)
    assert q.lang == lang
    assert q.common is not None and q.common > 0.7


def test_cp866_read_as_cp1252_is_garbled_by_mojibake() -> None:
    q = score(decode_cp1252(fx.cp866_mojibake()), mimes.PLAIN)
    assert q.verdict == "garbled"
    assert q.signals[0] == Signal.MOJIBAKE
    assert q.mojibake > 100


def test_font_codes_that_are_not_letters_are_garbled_by_common_words() -> None:
    text = "\f".join(["\n".join(fx.shifted(line) for line in fx._wrap(fx.ENGLISH * 2, 70))])
    q = score(text, mimes.PDF, pages=2)
    assert (q.verdict, q.signals) == ("garbled", ("common",))
    assert q.common is not None and q.common < 0.12


def test_latin_ocr_of_cjk_is_garbled() -> None:
    q = score(fx.latin_ocr_of_cjk(), mimes.PNG, pages=1)
    assert (q.verdict, q.signals) == ("garbled", ("common",))


def test_random_printable_bytes_are_garbled() -> None:
    q = score(fx.random_printable().decode("ascii"), mimes.PLAIN)
    assert (q.verdict, q.signals) == ("garbled", ("common",))


def test_a_deck_of_page_numbers_is_suspect_as_sparse() -> None:
    text = "".join(f"# slide{n}\n{n}\n" for n in range(1, 13))
    q = score(text, PPTX, pages=12)
    assert (q.verdict, q.signals) == ("suspect", ("sparse",))
    assert q.per_page == 1
    assert q.explain() == ["1 characters per page, expected > 16"]


def test_a_short_deck_or_a_hello_world_page_is_not_judged_sparse() -> None:
    assert score("# slide1\n1\n", PPTX, pages=1).verdict == "good"
    assert score("Hello World", mimes.PDF, pages=1).verdict == "good"


def test_replacement_characters_make_a_text_garbled() -> None:
    text = fx.ENGLISH.replace("e", "\ufffd")
    q = score(text, mimes.PLAIN)
    assert q.verdict == "garbled"
    assert q.signals[0] == Signal.REPLACEMENT


def test_a_private_use_bullet_or_two_is_not_a_signal() -> None:
    q = score("\uf0b7 " + fx.ENGLISH + "\uf0b7 point\n", mimes.DOCX)
    assert q.verdict == "good"


def test_control_characters_make_a_text_suspect_then_garbled() -> None:
    words = fx.ENGLISH.split(" ")
    some = " ".join(w + ("\x01" if i % 5 == 0 else "") for i, w in enumerate(words))
    many = " ".join(w + "\x01\x02" for w in words)
    assert score(some, mimes.PLAIN).signals == ("control",)
    assert score(some, mimes.PLAIN).verdict == "suspect"
    assert score(many, mimes.PLAIN).verdict == "garbled"


def test_a_text_layer_without_spaces_is_suspect() -> None:
    text = fx.ENGLISH + fx.ENGLISH.replace(" ", "").strip() * 4
    q = score(text, mimes.PDF, pages=1)
    assert Signal.RUN in q.signals
    assert q.explain()[-1].startswith("a run of 1,")


def test_placeholder_latin_is_suspect_never_garbled() -> None:
    lorem = (
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit. Integer nec odio. Praesent "
        "libero. Sed cursus ante dapibus diam. Sed nisi. Nulla quis sem at nibh elementum "
        "imperdiet. Duis sagittis ipsum. Praesent mauris. Fusce nec tellus sed augue semper "
        "porta. Mauris massa. Vestibulum lacinia arcu eget nulla. Class aptent taciti sociosqu."
    )
    q = score(lorem, mimes.PLAIN)
    assert (q.verdict, q.signals, q.lang) == ("suspect", ("common",), "la")


def test_data_types_are_judged_by_characters_only() -> None:
    rows = "\n".join(f"x{i}\tqz{i * 7}\tKVX{i}" for i in range(200))
    assert score(rows, mimes.CSV).verdict == "good"
    assert score(rows, mimes.PLAIN).verdict == "garbled"


def test_the_sentence_names_the_language_and_the_bar() -> None:
    q = Quality("suspect", lang="en", common=0.129, signals=("common",))
    assert q.explain() == ["12% common English words, expected > 30%"]
    assert summary_line(q) == "suspect: 12% common English words, expected > 30%"
    assert summary_line(Quality("good")) == "good"


def test_stored_form_is_compact_and_round_trips() -> None:
    q = score(fx.random_printable().decode("ascii"), mimes.PLAIN)
    d = q.to_dict()
    assert d["verdict"] == "garbled" and d["v"] == QUALITY_VERSION
    assert "per_page" not in d and "repl" not in d  # nothing stored that says nothing
    assert Quality.from_dict(d) == q
    assert Quality.from_dict({**d, "from_the_future": 1}) == q


def test_sample_is_bounded_and_spans_the_text() -> None:
    text = "".join(f"{i:07d} " for i in range(100_000))
    s = sample(text)
    assert len(s) <= SAMPLE_CHARS + 3
    assert s.startswith(text[:100]) and s.endswith(text[-100:])


def test_a_huge_text_is_measured_on_its_sample_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.quality as quality

    seen: list[int] = []
    real = quality._measure

    def measure(body: str, *args: object) -> object:
        seen.append(len(body))
        return real(body, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(quality, "_measure", measure)
    big = fx.ENGLISH * 50_000  # 20 MB of text
    q = score(big, mimes.PLAIN)
    assert seen and seen[0] <= SAMPLE_CHARS + SLICES
    assert q.verdict == "good"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000), st.sampled_from([mimes.PLAIN, mimes.PDF, mimes.CSV, PPTX]))
def test_any_text_gets_a_verdict(text: str, mime: str) -> None:
    q = score(text, mime, pages=3)
    assert q.verdict in {v.value for v in Verdict}
    assert (q.verdict == "good") == (not q.signals)
    assert len(q.explain()) == len(q.signals)
    assert Quality.from_dict(q.to_dict()) == q
