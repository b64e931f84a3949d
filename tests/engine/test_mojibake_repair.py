"""Texts decoded with the wrong charset are stored repaired (ftfy), and say so.

A mail archive or an old export often holds UTF-8 that was read as Latin-1 or cp1252 once or
twice on its way (``EntÃ£o`` for ``Então``): the quality scorer calls such a text suspect or
garbled for its mojibake. The read then stores the text with those sequences undone, when
that clears the signal without a worse verdict, its extractor ending in ``+ftfy``; any other
text is stored exactly as read.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.quality import REPAIR_MAX_CHARS, Signal, repaired, score
from tests.quarrycli import shown, sweep
from tests.readkit import read_bytes

PORTUGUESE = (
    "Então talvez resolva fazendo uma imagem da partição lógica após bootar o sistema do HD. "
    "Não há solução rápida para a questão, mas já é possível recuperar os arquivos.\n"
)
GERMAN = "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich; Größe, Maße, Füße.\n"


def mojibake(text: str, times: int = 1, charset: str = "latin-1") -> str:
    """``text`` as a program shows it that took its UTF-8 for ``charset``, ``times`` over."""
    for _ in range(times):
        text = text.encode("utf-8").decode(charset)
    return text


def read(tmp_path: Path, name: str, data: bytes) -> tuple[dict[str, object], str]:
    outcome, text = read_bytes(tmp_path, name, data)
    assert outcome.quality is not None
    return {"extractor": outcome.extractor, "quality": outcome.quality.verdict}, text


def test_utf8_read_as_latin1_is_mended(tmp_path: Path) -> None:
    found, text = read(tmp_path, "note.txt", mojibake(PORTUGUESE).encode("utf-8"))
    assert text == PORTUGUESE
    assert found == {"extractor": "text:utf-8+ftfy", "quality": "good"}


def test_twice_over_and_through_cp1252_too(tmp_path: Path) -> None:
    data = mojibake(GERMAN * 3, times=2, charset="cp1252").encode("utf-8")
    found, text = read(tmp_path, "note.txt", data)
    assert text == GERMAN * 3
    assert found["extractor"] == "text:utf-8+ftfy"


def test_a_clean_text_is_stored_as_read(tmp_path: Path) -> None:
    found, text = read(tmp_path, "note.txt", (PORTUGUESE + GERMAN).encode("utf-8"))
    assert text == PORTUGUESE + GERMAN
    assert found == {"extractor": "text:utf-8", "quality": "good"}


def test_only_the_mojibake_of_a_mailbox_is_mended(tmp_path: Path) -> None:
    """One message of two came through a wrong charset: it is mended, the other left as is
    (curly quotes and all: only the encoding is repaired)."""
    first = "From: a@example.org\nSubject: ok\nContent-Type: text/plain; charset=utf-8\n\n"
    second = "From: b@example.org\nSubject: re\nContent-Type: text/plain; charset=utf-8\n\n"
    quoted = "“Größe” and ‘Maße’ – fine as written.\n"
    box = (
        f"From a@example.org Mon Jan  1 00:00:00 2024\n{first}{quoted}\n"
        f"From b@example.org Mon Jan  1 00:00:00 2024\n{second}{mojibake(PORTUGUESE * 2)}\n"
    )
    found, text = read(tmp_path, "archive.mbox", box.encode("utf-8"))
    assert found["extractor"] == "mbox+ftfy"
    assert quoted.strip() in text
    assert PORTUGUESE.strip() in text and "Ã" not in text


def test_a_text_past_the_bound_is_kept_as_read() -> None:
    text = mojibake(PORTUGUESE) * (REPAIR_MAX_CHARS // len(PORTUGUESE) + 1)
    assert repaired(text, M.PLAIN, score(text, M.PLAIN)) is None


WORDS = st.sampled_from(
    ["então", "não", "coração", "Größe", "über", "déçu", "naïve", "año", "niño", "ação",
     "the", "and", "of", "house", "water", "café", "résumé", "façade", "Zürich", "São"]
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, min_size=20, max_size=120), st.integers(1, 2))
def test_any_accented_prose_made_mojibake_comes_back_whole(words: list[str], times: int) -> None:
    text = " ".join(words) + "\n"
    broken = mojibake(text, times)
    quality = score(broken, M.PLAIN)
    found = repaired(broken, M.PLAIN, quality)
    if Signal.MOJIBAKE in quality.signals:
        assert found is not None and found[0] == text
    else:
        assert found is None


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=600))
def test_a_repair_is_never_worse_and_a_text_without_mojibake_is_never_touched(text: str) -> None:
    quality = score(text, M.PLAIN)
    found = repaired(text, M.PLAIN, quality)
    if Signal.MOJIBAKE not in quality.signals:
        assert found is None
    elif found is not None:
        _fixed, again = found
        assert Signal.MOJIBAKE not in again.signals
        rank = ["good", "suspect", "garbled"]
        assert rank.index(again.verdict) <= rank.index(quality.verdict)


def test_as_a_user_meets_it(tmp_path: Path) -> None:
    """``quarry sweep`` stores the mended text; ``quarry show`` prints it, its extractor says
    how it was made; the folder's file is unchanged."""
    root = tmp_path / "docs"
    root.mkdir()
    data = mojibake(PORTUGUESE).encode("utf-8")
    (root / "note.txt").write_bytes(data)
    store = tmp_path / "s"
    proc = sweep(root, store)
    assert proc.returncode == 0, proc.stderr
    record = shown(root / "note.txt", store)
    assert record["extractor"] == "text:utf-8+ftfy"
    assert record["quality"]["verdict"] == "good"
    sha = record["sha256"]
    assert (store / "extract" / sha[:2] / f"{sha}.txt").read_text(encoding="utf-8") == PORTUGUESE
    assert (root / "note.txt").read_bytes() == data
