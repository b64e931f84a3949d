"""Is the text any good? A verdict per text: ``good``, ``suspect`` or ``garbled``.

``ok`` means some text came out; this says whether it reads as language. :func:`score` is a
pure function of a text (plus its MIME type, total characters and pages) that looks at a
bounded sample, so its cost does not grow with the document. The signals, after Apache
tika-eval's:

- language and script: the language whose most frequent words (``quality_words.txt.gz``,
  from wordfreq: 42 languages) the sample uses most, and the Unicode script of its letters;
- common words: the share of the sample's words found among that language's most frequent
  words (tika-eval's out-of-vocabulary idea); garbage shares few with any list.
- scrambled words: the share of the sample's words that are no common word but a common word
  with its inner letters in another order (``txet`` for ``text``: what a font whose glyphs
  are drawn out of order leaves). The short words such a text keeps whole (``the``, ``of``,
  ``und``) would keep its common-word share up; real words that happen to be another's inner
  anagram (``beings``, ``angles``) are a few per text, not a tenth of its words.

  A detector with a model of its own (py3langid) was tried first: its 68 MB model takes
  0.8-2 s and 130 MB of address space to load in every worker, more than this whole step may
  add to a cold sweep; the lists name the language as well for the texts judged here;
- replacement characters (U+FFFD) and control, private-use or unassigned characters, where
  a decoder or a font without a usable map left its marks;
- mojibake: ftfy's badness, sequences that are typical of text decoded with the wrong charset;
- characters per page, for paged formats (a deck of page numbers only);
- the longest run without white space (a text layer that lost its spaces).

The rules are versioned (:data:`QUALITY_VERSION`): a change re-scores stored texts on the next
sweep without reading the documents again. Each rule that fires adds a :class:`Signal` with a
sentence an operator can act on ("12% common English words, expected > 40%").

Past STYLE's 500 lines on purpose: every signal is a step of one pass over one sample, and
each threshold is kept beside the sentence that explains it to an operator.
"""

from __future__ import annotations

import functools
import operator
import os
import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from engine import mimes

QUALITY_VERSION = 4
"""Version of the rules below; a bump re-scores every stored text on the next sweep.
2: placeholder Latin is a language (``la``); sparse below 8 characters a page, not 16.
3: judged from 20 words, not 30; the noise signal (Latin OCR of a CJK scan).
4: the scrambled signal (common words with their inner letters shuffled)."""
SAMPLE_CHARS = 16_000
"""At most this many characters of a text are scored: the whole of a short text, else slices."""
SLICES = 4
"""A long text is sampled in this many evenly spaced slices (start, middle parts, end)."""
MIN_WORDS = 20
"""Fewer words than this in the sample and the common-word rule does not judge."""
MIN_HITS = 3
"""The character rules judge a rate only when it stands on this many characters at least."""

# Thresholds: (garbled below/above, suspect below/above). Tuned on the shared corpus.
COMMON_GARBLED, COMMON_SUSPECT = 0.12, 0.30
REPL_GARBLED, REPL_SUSPECT = 0.02, 0.002
ODD_GARBLED, ODD_SUSPECT = 0.10, 0.02
"""Private-use bullets from symbol fonts are common in real documents: the bar is not zero."""
MOJIBAKE_GARBLED, MOJIBAKE_SUSPECT = 30.0, 2.0
"""ftfy badness per 1,000 characters."""
SPARSE_PER_PAGE = 8
"""Paged documents with fewer non-space characters per page than this are suspect..."""
SPARSE_MIN_PAGES = 3
"""...when they have this many pages at least (a one-page "Hello world" is not a loss)."""
AGGLUTINATIVE = frozenset({"ko", "fi", "hu", "ta", "et", "tr"})
"""Languages whose words carry their endings: fewer of them match a list of common forms."""
COMMON_SUSPECT_AGGLUTINATIVE = 0.20
NOISE_SUSPECT = 0.35
"""Share of words that no language writes (``xYz``, ``BR``, ``Eh``: OCR of a script the model
does not know) above which a prose text is suspect."""

SCRAMBLED_GARBLED, SCRAMBLED_SUSPECT = 0.25, 0.08
"""Share of the sample's words that are common words with their inner letters shuffled. On
the shared corpus's 253 prose texts the most any real text has is 3.6% (one word of 24: the
rest stay below 3%, ``beings`` and ``pairs`` mostly); the same texts shuffled have 11% or
more, but for a few whose words are too short to shuffle."""

RUN_SUSPECT = 1000
"""A prose text whose longest run without white space is longer than this is suspect."""


class Verdict(StrEnum):
    """The quality verdict of an ``ok`` record's text."""

    GOOD = "good"
    SUSPECT = "suspect"
    GARBLED = "garbled"


_RANK = {Verdict.GOOD: 0, Verdict.SUSPECT: 1, Verdict.GARBLED: 2}
VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)
"""The verdicts, best first."""


class Signal(StrEnum):
    """Which rule made a text less than good (the suspect group's key on the dashboard)."""

    COMMON = "common"
    REPLACEMENT = "replacement"
    CONTROL = "control"
    MOJIBAKE = "mojibake"
    SPARSE = "sparse"
    RUN = "run"
    NOISE = "noise"
    SCRAMBLED = "scrambled"


_SIGNALS = frozenset(s.value for s in Signal)


@dataclass(frozen=True, slots=True)
class Quality:
    """The verdict on one text and the few numbers that explain it (stored in the record)."""

    verdict: str
    """A :class:`Verdict`."""
    v: int = 0
    """Version of the rules that gave it (:data:`QUALITY_VERSION` when it was scored)."""
    lang: str | None = None
    """Language of the sample (ISO 639-1), ``und`` when no list fits, None when there is too
    little text (or it is data, not prose) to tell."""
    script: str | None = None
    """Dominant script of its letters (``Latin``, ``Cyrillic``, ``Han``...)."""
    common: float | None = None
    """Share of the sample's words among the language's common words, 0..1 (None: not judged)."""
    noise: float = 0.0
    """Share of the sample's words that no language writes (mixed case, stray capitals)."""
    scrambled: float = 0.0
    """Share of the sample's words that are common words with their inner letters shuffled."""
    repl: float = 0.0
    """Share of replacement characters (U+FFFD) in the sample, 0..1."""
    odd: float = 0.0
    """Share of control, private-use and unassigned characters in the sample, 0..1."""
    mojibake: float = 0.0
    """ftfy's badness per 1,000 characters of the sample."""
    per_page: int | None = None
    """Non-space characters per page, for paged formats."""
    run: int = 0
    """Longest run of characters without white space in the sample."""
    signals: tuple[str, ...] = ()
    """The :class:`Signal` codes that fired, worst first."""

    def __reduce__(self) -> tuple[type[Quality], tuple[object, ...]]:
        # Sent from the worker with each ok Outcome: one call to rebuild, not __setstate__.
        return Quality, _QUALITY_STATE(self)

    def explain(self) -> list[str]:
        """One sentence per signal that fired, for the detail pane and ``quarry show``."""
        return [_sentence(Signal(s), self) for s in self.signals if s in _SIGNALS]

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON form: numbers rounded, empty parts left out."""
        d: dict[str, Any] = {"verdict": self.verdict, "v": self.v}
        for name in ("lang", "script", "common", "per_page"):
            value = getattr(self, name)
            if value is not None:
                d[name] = value
        for name in _NUMBERS:
            value = getattr(self, name)
            if value:
                d[name] = value
        if self.signals:
            d["signals"] = list(self.signals)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Quality:
        """Parse the stored form, ignoring keys a newer writer added."""
        known = {k: d[k] for k in _QUALITY_FIELDS if k in d}
        if "signals" in known:
            known["signals"] = tuple(known["signals"])
        return cls(**known)

    @classmethod
    def parse(cls, value: object) -> Quality | None:
        """The stored form, or None for anything else (a hand edit, an unknown shape): the
        text is then scored again on the next sweep, which is all a bad value can cost."""
        if not isinstance(value, dict) or not isinstance(value.get("verdict"), str):
            return None
        try:
            q = cls.from_dict(value)
        except TypeError:
            return None
        types_ok = (
            isinstance(q.v, int)
            and all(isinstance(s, str) for s in q.signals)
            and all(isinstance(getattr(q, n), int | float) for n in _NUMBERS)
        )
        return q if types_ok else None


_QUALITY_STATE = operator.attrgetter(*(f.name for f in fields(Quality)))


_NUMBERS = ("noise", "scrambled", "repl", "odd", "mojibake", "run")
_QUALITY_FIELDS = (
    "verdict", "v", "lang", "script", "common", "noise", "scrambled", "repl", "odd", "mojibake",
    "per_page", "run", "signals",
)  # fmt: skip

# Types whose text is data or code rather than prose: only the character rules judge them.
_DATA_TYPES = frozenset(
    {
        mimes.CSV,
        mimes.TSV,
        mimes.JSON,
        mimes.XML,
        mimes.XLSX,
        mimes.ODS,
        mimes.FODS,
        mimes.XLS,
        *mimes.TEXTUAL_APPLICATION,
    }
)
# Paged types whose pages should carry text (a spreadsheet's sheet may rightly hold a number).
_PAGED_PROSE = frozenset(
    {
        mimes.PDF,
        mimes.PPTX,
        mimes.ODP,
        mimes.FODP,
        mimes.PPT,
        *mimes.IMAGES,
        mimes.TIFF,
        *mimes.DECODED_IMAGES,
    }
)
_MARKER = re.compile(r"^(?:# (?:slide|sheet|message ?)\d+|\[quarry: .*\])$", re.MULTILINE)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_NO_SPACE_SCRIPTS = frozenset({"Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar"})


def is_prose(mime: str) -> bool:
    """Whether the common-word and no-space rules apply to texts of this type."""
    if mime in _DATA_TYPES:
        return False
    return not mime.startswith("text/x-") or mime == "text/x-rst"


def sample(text: str, limit: int = SAMPLE_CHARS) -> str:
    """The whole of a short text, else :data:`SLICES` evenly spaced slices of a long one."""
    if len(text) <= limit:
        return text
    step = limit // SLICES
    last = len(text) - step
    starts = [round(i * last / (SLICES - 1)) for i in range(SLICES)]
    return "\n".join(text[s : s + step] for s in starts)


def sample_file(source: Path | BinaryIO, limit: int = SAMPLE_CHARS) -> str:
    """:func:`sample` of a stored UTF-8 text (a path, or the file opened by the store),
    reading at most a few times ``limit`` bytes."""
    if isinstance(source, Path):
        with open(source, "rb") as fh:
            return _sample_open(fh, limit)
    return _sample_open(source, limit)


def _sample_open(fh: BinaryIO, limit: int) -> str:
    size = os.fstat(fh.fileno()).st_size
    if size <= limit:
        return fh.read().decode("utf-8", "replace")
    step = limit // SLICES
    last = max(size - step * 4, 0)
    parts = []
    for i in range(SLICES):
        fh.seek(round(i * last / (SLICES - 1)))
        # A cut may split a character: drop the partial bytes at either end.
        raw = fh.read(step * 4).decode("utf-8", "ignore")
        parts.append(raw[-step:] if i == SLICES - 1 else raw[:step])
    return "\n".join(parts)


OFF_ENV = "QUARRY_NO_QUALITY"
"""Set (to anything but empty) to skip scoring: only to measure what scoring costs."""


def enabled() -> bool:
    """Whether texts are scored (see :data:`OFF_ENV`)."""
    return not os.environ.get(OFF_ENV)


def is_current(q: Quality | None) -> bool:
    """Whether ``q`` was given by the rules in force (else the stored text is scored again)."""
    return q is not None and q.v == QUALITY_VERSION


def score_file(
    source: Path | BinaryIO, mime: str, *, chars: int, pages: int | None = None
) -> Quality:
    """:func:`score` of a stored text (a rules change re-scores without reading documents)."""
    return score(sample_file(source), mime, chars=chars, pages=pages)


def score(text: str, mime: str, *, chars: int | None = None, pages: int | None = None) -> Quality:
    """The quality of ``text`` (or of a sample of it), read from a file of type ``mime``.

    ``chars`` is the whole text's length when ``text`` is a sample of it (per-page figures
    scale by it); ``pages`` the record's pages, slides or sheets.
    """
    sampled = sample(text, SAMPLE_CHARS + SLICES)  # a sample_file() sample is not cut again
    total = chars if chars is not None else len(text)
    key = (sampled, mime, pages, total, QUALITY_VERSION)
    last = _LAST
    if last and last[0][0] == key:  # the PDF reader scored this very text a moment ago
        return last[0][1]
    body = _MARKER.sub("", sampled)
    # Per-page figures scale the sample's count up to the whole text.
    m = _measure(body, mime, total / max(len(sampled), 1), pages)
    q = _judge(m, mime, pages)
    _LAST[:] = [(key, q)]
    return q


_LAST: list[tuple[tuple[str, str, int | None, int, int], Quality]] = []
"""The last text scored and its quality: one entry, so that a reader that judged a text
(the PDF reader choosing between its ways) does not cost the worker a second scoring."""


class _Measures(NamedTuple):
    """What :func:`_judge` needs of a sample (a tuple: made for every text, and a key of the
    verdicts already given)."""

    chars: int
    lang: str | None
    script: str | None
    common: float | None
    noise: float
    scrambled: float
    repl: float
    odd: float
    mojibake: float
    per_page: int | None
    run: int


def _measure(body: str, mime: str, scale: float, pages: int | None) -> _Measures:
    n = max(len(body), 1)
    script = _dominant_script(body)
    # Fewer characters than MIN_WORDS cannot make MIN_WORDS tokens (each is one character at
    # least): the language is not judged, and a tiny text skips the tokenizer.
    if len(body) >= MIN_WORDS and is_prose(mime):
        lang, common, noise, scrambled = _language(body, script)
    else:
        lang, common, noise, scrambled = None, None, 0.0, 0.0
    words = body.split()
    per_page = None
    if pages and mime in _PAGED_PROSE:
        visible = sum(map(len, words))
        per_page = round(visible * scale / pages)
    ascii_only = body.isascii()  # no replacement character, no mojibake
    return _Measures(
        chars=len(body),
        lang=lang,
        script=script,
        common=common,
        noise=round(noise, 3),
        scrambled=round(scrambled, 3),
        repl=0.0 if ascii_only else round(body.count("\ufffd") / n, 4),
        odd=round(_odd_count(body) / n, 4),
        mojibake=0.0 if ascii_only else round(_badness(body) * 1000 / n, 2),
        per_page=per_page,
        run=max(map(len, words), default=0),
    )


_JUDGED: dict[tuple[_Measures, bool, int | None, int], Quality] = {}
"""Verdicts already given, by what they were judged from: small texts repeat their measures
(a folder of short notes gives a few hundred distinct ones), and a Quality is immutable."""
JUDGED_MAX = 4096
"""Entries of :data:`_JUDGED` after which it starts again (a bound on its memory)."""


def _judge(m: _Measures, mime: str, pages: int | None) -> Quality:
    key = (m, is_prose(mime), pages, QUALITY_VERSION)  # new rules come with a new version
    q = _JUDGED.get(key)
    if q is None:
        if len(_JUDGED) >= JUDGED_MAX:
            _JUDGED.clear()
        q = _JUDGED[key] = _judge_anew(m, key[1], pages)
    return q


def _judge_anew(m: _Measures, prose: bool, pages: int | None) -> Quality:
    found: list[tuple[Verdict, Signal]] = []

    def rule(signal: Signal, garbled: bool, suspect: bool) -> None:
        if garbled:
            found.append((Verdict.GARBLED, signal))
        elif suspect:
            found.append((Verdict.SUSPECT, signal))

    for signal, rate, per, garbled, suspect in (
        (Signal.REPLACEMENT, m.repl, 1, REPL_GARBLED, REPL_SUSPECT),
        (Signal.CONTROL, m.odd, 1, ODD_GARBLED, ODD_SUSPECT),
        (Signal.MOJIBAKE, m.mojibake, 1000, MOJIBAKE_GARBLED, MOJIBAKE_SUSPECT),
    ):
        if rate * m.chars / per >= MIN_HITS - 0.5:  # rates are rounded
            rule(signal, rate >= garbled, rate >= suspect)
    if m.common is not None:
        rule(Signal.COMMON, m.common < COMMON_GARBLED, m.common < expected_common(m.lang))
        rule(Signal.NOISE, False, m.noise >= NOISE_SUSPECT)
        rule(Signal.SCRAMBLED, m.scrambled >= SCRAMBLED_GARBLED, m.scrambled >= SCRAMBLED_SUSPECT)
    if m.per_page is not None and (pages or 0) >= SPARSE_MIN_PAGES:
        rule(Signal.SPARSE, False, m.per_page < SPARSE_PER_PAGE)
    if prose and m.script not in _NO_SPACE_SCRIPTS:
        rule(Signal.RUN, False, m.run > RUN_SUSPECT)
    found.sort(key=lambda vs: -_RANK[vs[0]])
    verdict = found[0][0] if found else Verdict.GOOD
    return Quality(
        verdict=verdict.value,
        v=QUALITY_VERSION,
        lang=m.lang,
        script=m.script,
        common=None if m.common is None else round(m.common, 3),
        noise=m.noise,
        scrambled=m.scrambled,
        repl=m.repl,
        odd=m.odd,
        mojibake=m.mojibake,
        per_page=m.per_page,
        run=m.run,
        signals=tuple(s.value for _v, s in found),
    )


def expected_common(lang: str | None) -> float:
    """The share of common words below which a text in ``lang`` is suspect."""
    return COMMON_SUSPECT_AGGLUTINATIVE if lang in AGGLUTINATIVE else COMMON_SUSPECT


@functools.cache
def _odd_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Control characters other than white space, surrogates and private use; and runs of
    the common blocks. Compiled at first use: their wide classes cost every import of this
    module (every ``quarry`` command's start) 1.5 ms."""
    odd = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff\ue000-\uf8ff\U000f0000-\U0010ffff]")
    common = re.compile("[\x00-\u052f\u3000-\u30ff\u4e00-\u9fff\uac00-\ud7a3]+")
    return odd, common


def _odd_count(body: str) -> int:
    """Control, surrogate, private-use and unassigned characters (the last looked up only
    among the few characters outside the common blocks, where they can be)."""
    odd, common = _odd_patterns()
    rare = common.sub("", body)
    unassigned = sum(1 for ch in rare if unicodedata.category(ch) == "Cn") if rare else 0
    return len(odd.findall(body)) + unassigned


# -- script ------------------------------------------------------------------------------

_SCRIPT_OF_NAME = {
    "LATIN": "Latin", "CYRILLIC": "Cyrillic", "GREEK": "Greek", "ARABIC": "Arabic",
    "HEBREW": "Hebrew", "CJK": "Han", "HIRAGANA": "Hiragana", "KATAKANA": "Katakana",
    "HANGUL": "Hangul", "DEVANAGARI": "Devanagari", "BENGALI": "Bengali", "TAMIL": "Tamil",
    "THAI": "Thai", "ARMENIAN": "Armenian", "GEORGIAN": "Georgian",
}  # fmt: skip


_ASCII = re.compile("[\x00-\x7f]+")
_ASCII_LETTER_BYTES = bytes(range(65, 91)) + bytes(range(97, 123))


def _script(ch: str) -> str:
    if ch < "\u0250":
        return "Latin"
    name = unicodedata.name(ch, "")
    return _SCRIPT_OF_NAME.get(name.split(" ", 1)[0], "Other") if name else "Other"


def _dominant_script(body: str) -> str | None:
    if body.isascii():  # a Latin text or no letters at all: no name to look up
        raw = body.encode("ascii")
        return "Latin" if len(raw.translate(None, _ASCII_LETTER_BYTES)) < len(raw) else None
    return _counted_script(body)


def _counted_script(body: str) -> str | None:
    """The script most of the letters are written in, counted letter by letter."""
    # ASCII letters are counted at C speed; only the rest go through the Unicode names.
    ascii_only = body.encode("ascii", "ignore")
    ascii_letters = len(ascii_only) - len(ascii_only.translate(None, _ASCII_LETTER_BYTES))
    rest = _ASCII.sub("", body)
    letters = Counter(_script(ch) for ch in rest if ch.isalpha())
    if ascii_letters:
        letters["Latin"] += ascii_letters
    if not letters:
        return None
    script, _count = letters.most_common(1)[0]
    if script in ("Hiragana", "Katakana") or (
        script == "Han" and (letters["Hiragana"] + letters["Katakana"]) > 0
    ):
        return "Han" if letters["Hiragana"] + letters["Katakana"] == 0 else "Kana"
    return script


# -- language and common words --------------------------------------------------------------


class _Models:
    """The common-word lists as one table, word -> bit mask of the languages that list it:
    one look-up per word scores every language at once. Loaded once per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._codes: tuple[str, ...] = ()
        self._masks: dict[str, int] | None = None
        self._words: dict[str, list[str]] = {}
        self._anagrams: dict[str, frozenset[str]] = {}

    def warm(self) -> None:
        """Load the lists now (the worker pool's forkserver does, so workers start warm)."""
        self.masks()

    def anagrams(self, code: str) -> frozenset[str]:
        """:func:`inner_key` of each of language ``code``'s common words of four letters or
        more. Built for a language at the first text of it that has enough uncommon words to
        be scrambled (a few milliseconds: 42 languages at once took 0.3-0.5 s)."""
        self.masks()
        with self._lock:
            table = self._anagrams.get(code)
            if table is None:
                words = self._words.get(code, [])
                table = frozenset(inner_key(w) for w in words if len(w) >= 4)
                self._anagrams[code] = table
            return table

    @property
    def codes(self) -> tuple[str, ...]:
        """Language codes by bit number (the lists' codes, sorted: read without building the
        table, 0.2 s and 221,000 entries, which a dashboard explaining a verdict never uses)."""
        with self._lock:
            if not self._codes:
                from engine.quality_words import load_lines

                self._codes = tuple(sorted(load_lines()))
            return self._codes

    def masks(self) -> dict[str, int]:
        """Word (a character, for Chinese and Japanese) -> languages that list it, as bits."""
        with self._lock:
            if self._masks is None:
                from engine.quality_words import load_lines

                masks: dict[str, int] = {}
                lines = load_lines()
                for i, (code, line) in enumerate(sorted(lines.items())):
                    words = line.split(" ")
                    if code in ("zh", "ja"):  # written without spaces: characters, not words
                        words = [ch for w in words for ch in w]
                    bit = 1 << i
                    for w in words:
                        masks[w] = masks.get(w, 0) | bit
                    self._words[code] = words
                self._codes = tuple(sorted(lines))
                self._masks = masks
            return self._masks


MODELS = _Models()
"""The process's common-word table, built for the first text long enough to be judged on
common words (``MODELS.warm()`` builds it ahead)."""


def inner_key(word: str) -> str:
    """A word's first and last letters, then its inner letters sorted: equal for a word and
    any shuffle of its inner letters."""
    return word[0] + word[-1] + "".join(sorted(word[1:-1]))


def _language(body: str, script: str | None) -> tuple[str | None, float | None, float, float]:
    """The language whose common words the text uses most, the share of its words that are
    common in it (or in a runner-up: a text in several languages; or in English: technical
    text in any language is full of English words), the share that is noise, and the share
    that is scrambled (:func:`_scrambled`)."""
    tokens = _tokens(body, script)
    if len(tokens) < MIN_WORDS:
        return None, None, 0.0, 0.0
    masks, codes = MODELS.masks(), MODELS.codes
    per_mask = Counter(masks.get(t, 0) for t in tokens)
    hits = [0] * len(codes)
    for mask, n in per_mask.items():
        while mask:
            low = mask & -mask
            hits[low.bit_length() - 1] += n
            mask ^= low
    best = max(range(len(codes)), key=hits.__getitem__)
    union = 1 << best
    for i, h in enumerate(hits):
        if h * 4 >= hits[best] * 3 or codes[i] == "en":
            union |= 1 << i
    common = sum(n for mask, n in per_mask.items() if mask & union) / len(tokens)
    lang = codes[best] if hits[best] >= COMMON_GARBLED * len(tokens) else "und"
    scrambled = _scrambled(tokens, masks, union)
    return lang, common, tokens.count(_NOISE) / len(tokens), scrambled


def _scrambled(tokens: list[str], masks: dict[str, int], union: int) -> float:
    """The share of ``tokens`` that are no common word of the text's languages (``union``)
    but one of their common words with its inner letters shuffled."""
    uncommon = [t for t in tokens if len(t) >= 4 and t != _NOISE and not masks.get(t, 0) & union]
    if len(uncommon) < max(MIN_HITS, SCRAMBLED_SUSPECT * len(tokens)):
        return 0.0  # too few to reach the bar: the anagram table is not needed
    codes = MODELS.codes
    tables = [MODELS.anagrams(codes[i]) for i in range(len(codes)) if union >> i & 1]
    found = 0
    for word, n in Counter(uncommon).items():  # each word's key once, not once per table
        key = inner_key(word)
        if any(key in table for table in tables):
            found += n
    return found / len(tokens) if found >= MIN_HITS else 0.0


_NOISE = "\x00"


def _tokens(body: str, script: str | None) -> list[str]:
    """Words to look up, lower-cased: CJK characters one by one; elsewhere words of two or
    more letters. A word that cannot be common (OCR and decoding noise) becomes ``"\x00"``:
    mixed case (``xYz``), or two letters not in lower case (``BR``, ``Eh``)."""
    if script in ("Han", "Kana"):
        return [ch for ch in body if ch.isalpha() and _script(ch) in _NO_SPACE_SCRIPTS]
    out = []
    for w in _WORD.findall(body):
        if len(w) < 2:
            continue
        low = w.lower()
        natural = w == low or w.isupper() or w.istitle() or low == w.upper()
        if natural and (len(w) > 2 or w == low):
            out.append(low.replace("’", "'"))
        elif _CAMEL.fullmatch(w):  # an identifier (PandocAppError): its words
            out.extend(part.lower() for part in _CAMEL_PART.findall(w))
        else:
            out.append(_NOISE)
    return out


_CAMEL = re.compile(r"[A-Z]?[a-z]{2,}(?:[A-Z][a-z]{2,}|[A-Z]{2,}(?![a-z]))+")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


REPAIR_MAX_CHARS = 2_000_000
"""Texts past this many characters are kept as read: ftfy repairs ~3 MB a second, and a read
must not spend its time on it."""


def repaired(
    text: str, mime: str, quality: Quality | None, pages: int | None = None
) -> tuple[str, Quality] | None:
    """``text`` with the sequences wrong-charset decoding left undone (ftfy: UTF-8 read as
    Latin-1 or cp1252, once or twice over), and its quality, when ``quality`` names mojibake
    and the repaired text's verdict no longer does and is no worse; else None (the text is
    kept as read). Only the encoding is mended: quotes, ligatures, widths, entities, line
    breaks and control characters stay as the document has them."""
    if quality is None or Signal.MOJIBAKE not in quality.signals or len(text) > REPAIR_MAX_CHARS:
        return None
    from ftfy import TextFixerConfig, fix_text

    only_encoding = TextFixerConfig(
        unescape_html=False,
        remove_terminal_escapes=False,
        fix_latin_ligatures=False,
        fix_character_width=False,
        uncurl_quotes=False,
        fix_line_breaks=False,
        fix_surrogates=False,
        remove_control_chars=False,
        normalization=None,
        explain=False,
    )
    fixed = fix_text(text, only_encoding)
    if fixed == text:
        return None
    again = score(fixed, mime, pages=pages)
    if (
        Signal.MOJIBAKE in again.signals
        or _RANK[Verdict(again.verdict)] > _RANK[Verdict(quality.verdict)]
    ):
        return None
    return fixed, again


def _badness(body: str) -> int:
    """ftfy's count of mojibake sequences, run on the lines that hold a non-ASCII character
    (no mojibake is made of ASCII alone, and the check is the scorer's dearest part)."""
    if body.isascii():
        return 0
    from ftfy.badness import badness

    return int(badness("\n".join(line for line in body.split("\n") if not line.isascii())))


# -- sentences ------------------------------------------------------------------------------


def _pct(x: float) -> str:
    """A share as a percentage, rounded down (29.9% must not read as the 30% it missed)."""
    if x == 0 or x >= 0.1:
        return f"{int(x * 100)}%"
    return f"{int(x * 1000) / 10:g}%"


def _sentence(signal: Signal, q: Quality) -> str:
    if signal is Signal.COMMON:
        share, expected = _pct(q.common or 0.0), _pct(expected_common(q.lang))
        name = _LANG_NAMES.get(q.lang or "")
        if name is None:
            langs = len(MODELS.codes)
            return f"{share} common words in any of {langs} languages, expected > {expected}"
        return f"{share} common {name} words, expected > {expected}"
    if signal is Signal.REPLACEMENT:
        return f"{_pct(q.repl)} replacement characters (U+FFFD), expected < {_pct(REPL_SUSPECT)}"
    if signal is Signal.CONTROL:
        return (
            f"{_pct(q.odd)} control, private-use or unassigned characters, "
            f"expected < {_pct(ODD_SUSPECT)}"
        )
    if signal is Signal.MOJIBAKE:
        return (
            f"mojibake (text decoded with the wrong charset?): {q.mojibake:.3g} suspicious "
            f"sequences per 1,000 characters, expected < {MOJIBAKE_SUSPECT:g}"
        )
    if signal is Signal.NOISE:
        return (
            f"{_pct(q.noise)} of the words look like OCR or decoding noise (mixed case, stray "
            f"capitals), expected < {_pct(NOISE_SUSPECT)}"
        )
    if signal is Signal.SCRAMBLED:
        return (
            f"{_pct(q.scrambled)} of the words are common words with their inner letters "
            f"shuffled (a font drawn out of order?), expected < {_pct(SCRAMBLED_SUSPECT)}"
        )
    if signal is Signal.SPARSE:
        n = q.per_page or 0
        return f"{n:,} character{'' if n == 1 else 's'} per page, expected > {SPARSE_PER_PAGE}"
    return f"a run of {q.run:,} characters without a space, expected < {RUN_SUSPECT:,}"


_LANG_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "ru": "Russian", "uk": "Ukrainian", "pl": "Polish",
    "cs": "Czech", "sv": "Swedish", "da": "Danish", "nb": "Norwegian", "fi": "Finnish",
    "hu": "Hungarian", "tr": "Turkish", "el": "Greek", "ar": "Arabic", "he": "Hebrew",
    "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "hi": "Hindi", "ro": "Romanian",
    "ca": "Catalan", "bg": "Bulgarian", "vi": "Vietnamese", "id": "Indonesian", "fa": "Persian",
    "la": "placeholder Latin (lorem ipsum)",
}  # fmt: skip


def rank(q: Quality) -> int:
    """0 good, 1 suspect, 2 garbled (anything unknown counts as garbled)."""
    return _RANK[Verdict(q.verdict)] if q.verdict in VERDICTS else 2


def summary_line(q: Quality) -> str:
    """The verdict and its reasons in one line (``suspect: 12% common English words...``)."""
    reasons = q.explain()
    return f"{q.verdict}: {'; '.join(reasons)}" if reasons else q.verdict
