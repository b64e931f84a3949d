"""The quality scorer: exact verdicts for garbled and clean texts, bounds, the stored form."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.quality as quality_mod
import engine.run as run_mod
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
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.pdf import PdfReader
from engine.readers.text import decode_cp1252
from engine.records import Record
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import Tool, ToolSet
from fixtures.gen import _pdfwriter as W
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
    assert (q.verdict, q.signals) == ("garbled", ("common", "noise"))
    assert q.noise > 0.5


def test_a_short_ocr_shard_text_is_suspect_by_noise_alone() -> None:
    # Tesseract's English model on a vertical Japanese scan (kreuzberg's jpn_vert.jpeg).
    text = (
        "ONE AT Rt ct BE MME OF REN OD\nASSEN C Ae HAZE OR DMRS Ct as HS\n"
        "DOR A OMFS A UOT AERA &\nREO PA OS op Aa AH POS\nbrated OSA a HOSS\n"
    )
    q = score(text, mimes.JPEG, pages=1)
    assert (q.verdict, q.signals) == ("suspect", ("noise",))


def test_identifiers_in_camel_case_are_words_not_noise() -> None:
    first = ["App", "Template", "Option", "Parse", "Http"]
    second = ["Fail", "Unknown", "Writer", "Reader", "Filter"]
    rows = "".join(
        f"{n}\tPandoc{a}{b}Error\n"
        for n, (a, b) in enumerate(zip(first * 6, second * 6, strict=True))
    )
    assert score(rows, mimes.RTF).verdict == "good"


def test_random_printable_bytes_are_garbled() -> None:
    q = score(fx.random_printable().decode("ascii"), mimes.PLAIN)
    assert (q.verdict, q.signals) == ("garbled", ("common", "noise"))


def test_a_deck_of_page_numbers_is_suspect_as_sparse() -> None:
    text = "".join(f"# slide{n}\n{n}\n" for n in range(1, 13))
    q = score(text, PPTX, pages=12)
    assert (q.verdict, q.signals) == ("suspect", ("sparse",))
    assert q.per_page == 1
    assert q.explain() == ["1 character per page, expected > 8"]


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


def test_placeholder_latin_is_good_and_named() -> None:
    lorem = (
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit. Integer nec odio. Praesent "
        "libero. Sed cursus ante dapibus diam. Sed nisi. Nulla quis sem at nibh elementum "
        "imperdiet. Duis sagittis ipsum. Praesent mauris. Fusce nec tellus sed augue semper "
        "porta. Mauris massa. Vestibulum lacinia arcu eget nulla. Class aptent taciti sociosqu."
    )
    q = score(lorem, mimes.PLAIN)
    assert (q.verdict, q.lang) == ("good", "la")


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
    assert seen and seen[0] <= SAMPLE_CHARS + 2 * SLICES
    assert q.verdict == "good"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000), st.sampled_from([mimes.PLAIN, mimes.PDF, mimes.CSV, PPTX]))
def test_any_text_gets_a_verdict(text: str, mime: str) -> None:
    q = score(text, mime, pages=3)
    assert q.verdict in {v.value for v in Verdict}
    assert (q.verdict == "good") == (not q.signals)
    assert len(q.explain()) == len(q.signals)
    assert Quality.from_dict(q.to_dict()) == q


# -- in the engine: scored after every read, stored, counted, re-scored -----------------------


def _sweep_quality_fixtures(tmp_path: Path) -> tuple[Path, dict[str, Record]]:
    root = tmp_path / "docs"
    fx.build(root)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    return root, {r.path: r for r in Store(root / ".quarry").load_records()}


def test_every_fixture_gets_its_exact_verdict_from_a_sweep(tmp_path: Path) -> None:
    _root, records = _sweep_quality_fixtures(tmp_path)
    want = {path: fx.GARBLED.get(path, "good") for path in fx.expected(ToolSet.empty())}
    got = {
        path: (r.quality.verdict if r.quality else f"{r.status}, no quality")
        for path, r in records.items()
    }
    assert got == want
    assert all(r.quality and r.quality.v == QUALITY_VERSION for r in records.values())


def test_a_rules_change_rescores_stored_texts_without_reading_a_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, first = _sweep_quality_fixtures(tmp_path)
    texts = {p.name: p.read_bytes() for p in (root / ".quarry" / "extract").rglob("*.txt")}
    reads: list[str] = []
    real_task = run_mod.Run._task

    def counting_task(self: run_mod.Run, e: object, sha: str) -> object:
        reads.append(sha)
        return real_task(self, e, sha)  # type: ignore[arg-type]

    monkeypatch.setattr(run_mod.Run, "_task", counting_task)
    # The new rules: the next version, and nothing short of 99% common words is good any more.
    new = QUALITY_VERSION + 1
    monkeypatch.setattr(quality_mod, "QUALITY_VERSION", new)
    monkeypatch.setattr(quality_mod, "COMMON_SUSPECT", 0.99)
    result = sweep([root], SweepOptions(tools=ToolSet.empty()))
    again = {r.path: r for r in Store(root / ".quarry").load_records()}
    assert reads == [] and result.extracted == 0
    assert {p.name: p.read_bytes() for p in (root / ".quarry" / "extract").rglob("*.txt")} == texts
    assert {r.quality.v for r in again.values() if r.quality} == {new}
    before, after = first["quality/clean_de.txt"].quality, again["quality/clean_de.txt"].quality
    assert before is not None and after is not None
    assert (before.verdict, before.v) == ("good", QUALITY_VERSION)
    assert (after.verdict, after.v) == ("suspect", new)
    assert after.common == before.common  # the same text, the same numbers: only the rules moved
    # A third sweep under the same rules has nothing left to score.
    scored: list[str] = []
    monkeypatch.setattr(run_mod, "score_file", lambda *a, **k: scored.append("x"))
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert scored == [] and reads == []


def test_a_store_written_before_quality_existed_gets_it_on_the_next_sweep(
    tmp_path: Path,
) -> None:
    root, records = _sweep_quality_fixtures(tmp_path)
    store = Store(root / ".quarry")
    with store.writer():
        store.write_records(r.evolve(quality=None) for r in records.values())
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    again = {r.path: r for r in store.load_records()}
    assert (
        again["quality/random_bytes_as_text.txt"].quality
        == records["quality/random_bytes_as_text.txt"].quality
    )


def test_records_and_summary_carry_the_verdicts(tmp_path: Path) -> None:
    root, records = _sweep_quality_fixtures(tmp_path)
    line = orjson.loads(records["quality/random_bytes_as_text.txt"].to_json())
    assert line["quality"]["verdict"] == "garbled"
    assert line["quality"]["signals"] == ["common", "noise"]
    assert (
        Record.from_json(records["quality/clean_en.txt"].to_json())
        == records["quality/clean_en.txt"]
    )
    summary = Store(root / ".quarry").load_summary()
    assert summary is not None
    # (the mojibake sample is stored mended: good, its extractor saying so)
    assert summary.quality == {"good": len(fx.CLEAN) + 1, "suspect": 1, "garbled": 3}
    mended = records["quality/mojibake_utf8_via_cp1252.txt"]
    assert mended.quality is not None and mended.quality.verdict == "good"
    assert mended.extractor == "text:utf-8+ftfy"


@pytest.mark.parametrize("junk", [None, 3, "good", {"verdict": 7}, {"verdict": "good", "v": "x"}])
def test_a_bad_stored_quality_is_dropped_not_fatal(junk: object) -> None:
    line = {"root": "/r", "path": "a.txt", "size": 1, "mtime_ns": 1, "status": "ok"}
    assert Record.from_dict({**line, "quality": junk}).quality is None


def test_quarry_sweep_prints_the_counts_by_verdict(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    fx.build(root)
    run = subprocess.run(
        [sys.executable, "-m", "engine", "sweep", str(root), "--no-external"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert run.returncode == 0, run.stderr
    assert f"good {len(fx.CLEAN) + 1}, suspect 1, garbled 3" in run.stdout
    lines = (run.stderr + run.stdout).splitlines()
    random_line = next(line for line in lines if "random_bytes_as_text.txt" in line)
    assert "[garbled: 6.3% common words in any of 43 languages, expected > 30%; 71% " in random_line


def test_quarry_show_says_the_verdict_in_words(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    fx.build(root)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    run = subprocess.run(
        [sys.executable, "-m", "engine", "show", str(root / "quality/page_numbers_only.pptx")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "  quality: suspect\n           1 character per page, expected > 8\n" in run.stdout


# -- the next reader for a garbled text layer ---------------------------------------------------

FAKE_PDFTOPPM = '#!/bin/sh\nfor a; do last="$a"; done\n: > "$last.png"\n'


def _fake_ocr_tools(bin_dir: Path, says: str) -> ToolSet:
    """pdftoppm that makes an empty page image and tesseract that 'reads' ``says`` from it,
    each logging its call to ``calls``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    log = bin_dir / "calls"
    scripts = {
        "pdftoppm": FAKE_PDFTOPPM.replace("\n", f"\necho pdftoppm >> {log}\n", 1),
        "tesseract": f"#!/bin/sh\necho tesseract >> {log}\ncat <<'EOF'\n{says}\nEOF\n",
    }
    tools = []
    for name, script in scripts.items():
        path = bin_dir / name
        path.write_text(script)
        path.chmod(0o755)
        tools.append(Tool(name, str(path), "0"))
    return ToolSet(tuple(tools))


def _read_pdf(tmp_path: Path, data: bytes, tools: ToolSet) -> tuple[str, ReadInfo]:
    path = tmp_path / "doc.pdf"
    path.write_bytes(data)
    sink = TextSink(1_000_000)
    info = PdfReader().read(path, ReadContext(mimes.PDF, tools=tools), sink)
    return sink.getvalue(), info


def test_a_garbled_text_layer_is_read_again_by_ocr_and_the_better_text_kept(
    tmp_path: Path,
) -> None:
    tools = _fake_ocr_tools(tmp_path / "bin", fx.ENGLISH.strip())
    text, info = _read_pdf(tmp_path, fx.font_codes_pdf(), tools)
    assert info.extractor == "pdftoppm+tesseract"
    assert text.startswith("This report describes the costs")
    assert score(text, mimes.PDF, pages=info.pages).verdict == "good"


def test_ocr_that_reads_no_better_leaves_the_text_layer(tmp_path: Path) -> None:
    tools = _fake_ocr_tools(tmp_path / "bin", fx.latin_ocr_of_cjk())
    text, info = _read_pdf(tmp_path, fx.font_codes_pdf(), tools)
    assert info.extractor == "pypdf"
    assert text.startswith(fx.shifted("This report"))


def test_a_good_text_layer_is_never_read_twice(tmp_path: Path) -> None:
    tools = _fake_ocr_tools(tmp_path / "bin", fx.ENGLISH.strip())
    text, info = _read_pdf(tmp_path, W.text_pdf(fx._wrap(fx.ENGLISH, 70)), tools)
    assert info.extractor == "pypdf" and text.startswith("This report")
    assert not (tmp_path / "bin" / "calls").exists()


# The short cuts for small texts give the verdicts of the full measures.

_ANY_LETTERS = st.text(
    alphabet=st.sampled_from("aB zZ.'’-\n\tÄéßжЖ中文かカ한\ufffd\x01\ue000"), max_size=60
)


@given(_ANY_LETTERS)
@settings(max_examples=300, deadline=None)
def test_a_text_shorter_than_min_words_cannot_be_judged_on_common_words(text: str) -> None:
    if len(text) >= quality_mod.MIN_WORDS:
        return
    script = quality_mod._counted_script(text)
    assert quality_mod._language(text, script) == (None, None, 0.0, 0.0)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
@settings(max_examples=300, deadline=None)
def test_the_script_of_an_ascii_text_is_the_counted_one(text: str) -> None:
    assert quality_mod._dominant_script(text) == quality_mod._counted_script(text)


def test_a_verdict_given_once_is_given_again_only_for_the_same_kind_of_text() -> None:
    run = "x" * (quality_mod.RUN_SUSPECT + 1)
    for mimes_in_order in (("text/plain", mimes.CSV), (mimes.CSV, "text/plain")):
        quality_mod._JUDGED.clear()
        got = {m: score(run, m) for m in mimes_in_order}
        assert Signal.RUN.value in got["text/plain"].signals  # prose: a run this long is suspect
        assert got[mimes.CSV].signals == ()  # data: the run rule does not apply
    # Two texts measured alike share one (immutable) verdict.
    assert score("ab cd\n", "text/plain") is score("ef gh\n", "text/plain")


def test_the_forkservers_preload_leaves_the_word_table_to_the_first_long_text() -> None:
    # Built in the forkserver, the table (~0.1 s) delayed every cold sweep's first read; a
    # folder of short notes never needs it.
    code = (
        "import engine.quality_preload\n"
        "from engine.quality import MODELS, score\n"
        "assert MODELS._masks is None\n"
        "score('ab cd', 'text/plain')\n"
        "assert MODELS._masks is None\n"
        "q = score('the cat and the dog were in the house ' * 5, 'text/plain')\n"
        "assert MODELS._masks is not None and q.lang == 'en', q\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- letters shuffled inside their words ------------------------------------------------------

_WORD_RE = re.compile(r"[^\W\d_]+")


def _shuffle_inner(word: str, rnd: random.Random) -> str:
    """``word`` with its inner letters in another order (a broken font encoding's doing);
    the word itself when its inner letters allow no other order."""
    inner = list(word[1:-1])
    if len(set(inner)) < 2:
        return word
    shuffled = inner[:]
    while shuffled == inner:
        rnd.shuffle(shuffled)
    return word[0] + "".join(shuffled) + word[-1]


@settings(max_examples=60, deadline=None)
@given(
    lang=st.sampled_from(["en", "de", "fr"]),
    seed=st.integers(0, 2**32 - 1),
    share=st.floats(0.7, 1.0),
)
def test_words_with_their_inner_letters_shuffled_are_not_good(
    lang: str, seed: int, share: float
) -> None:
    rnd = random.Random(seed)
    text = fx.CLEAN[lang] * 2
    shuffled = _WORD_RE.sub(
        lambda m: _shuffle_inner(m[0], rnd) if rnd.random() < share else m[0], text
    )
    assert score(text, mimes.PLAIN).verdict == "good"
    q = score(shuffled, mimes.PLAIN)
    assert q.verdict != "good", summary_line(q)
    assert Signal.SCRAMBLED.value in q.signals


def test_a_word_or_two_that_are_anagrams_of_common_words_are_not_a_signal() -> None:
    """Real words can be another word's inner anagram ("beings": "begins", "angles":
    "angels"): a few of them in a text are not scrambled letters."""
    text = fx.CLEAN["en"] * 2 + " The beings and angles of pairs were indented."
    q = score(text, mimes.PLAIN)
    assert (q.verdict, q.signals) == ("good", ()), summary_line(q)
