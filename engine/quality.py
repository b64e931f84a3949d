"""Is the text any good? A verdict per text: ``good``, ``suspect`` or ``garbled``.

``ok`` means some text came out; this says whether it reads as language. :func:`score` is a
pure function of a text (plus its MIME type, total characters and pages) that looks at a
bounded sample, so its cost does not grow with the document. The signals, after Apache
tika-eval's:

- language and script: py3langid's model (shipped with the package) on the sample;
- common words: the share of the sample's words found among that language's most frequent
  words (``engine/quality_words.txt.gz``, from wordfreq); garbage shares few with any list;
- replacement characters (U+FFFD) and control, private-use or unassigned characters, where
  a decoder or a font without a usable map left its marks;
- mojibake: ftfy's badness, sequences that are typical of text decoded with the wrong charset;
- characters per page, for paged formats (a deck of page numbers only);
- the longest run without white space (a text layer that lost its spaces).

The rules are versioned (:data:`QUALITY_VERSION`): a change re-scores stored texts on the next
sweep without reading the documents again. Each rule that fires adds a :class:`Signal` with a
sentence an operator can act on ("12% common English words, expected > 40%").
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine import mimes

QUALITY_VERSION = 1
"""Version of the rules below; a bump re-scores every stored text on the next sweep."""
SAMPLE_CHARS = 16_000
"""At most this many characters of a text are scored: the whole of a short text, else slices."""
SLICES = 4
"""A long text is sampled in this many evenly spaced slices (start, middle parts, end)."""
MIN_WORDS = 30
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
SPARSE_PER_PAGE = 16
"""Paged documents with fewer non-space characters per page than this are suspect..."""
SPARSE_MIN_PAGES = 3
"""...when they have this many pages at least (a one-page "Hello world" is not a loss)."""
AGGLUTINATIVE = frozenset({"ko", "fi", "hu", "ta", "et", "tr"})
"""Languages whose words carry their endings: fewer of them match a list of common forms."""
COMMON_SUSPECT_AGGLUTINATIVE = 0.20
NOISE_GARBLED = 0.30
"""Share of noise tokens (``xYz``, ``BR``) that lets the common-word rule say garbled for a
language without a list of its own."""
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


_SIGNALS = frozenset(s.value for s in Signal)


@dataclass(frozen=True, slots=True)
class Quality:
    """The verdict on one text and the few numbers that explain it (stored in the record)."""

    verdict: str
    """A :class:`Verdict`."""
    v: int = QUALITY_VERSION
    """Version of the rules that gave it."""
    lang: str | None = None
    """Language of the sample (ISO 639-1, py3langid), None when there is too little text."""
    script: str | None = None
    """Dominant script of its letters (``Latin``, ``Cyrillic``, ``Han``...)."""
    common: float | None = None
    """Share of the sample's words among the language's common words, 0..1 (None: not judged)."""
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
        for name in ("repl", "odd", "mojibake", "run"):
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


_QUALITY_FIELDS = (
    "verdict", "v", "lang", "script", "common", "repl", "odd", "mojibake", "per_page", "run",
    "signals",
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
    {mimes.PDF, mimes.PPTX, mimes.ODP, mimes.FODP, mimes.PPT, *mimes.IMAGES, mimes.TIFF}
)
_MARKER = re.compile(r"^(?:# (?:slide|sheet|message ?)\d+|\[quarry: .*\])$", re.MULTILINE)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_SPACE_RUNS = re.compile(r"\S+")
_NO_SPACE_SCRIPTS = frozenset({"Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar"})
_ALLOWED_CONTROLS = frozenset("\t\n\f\r\v")


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


def score(text: str, mime: str, *, chars: int | None = None, pages: int | None = None) -> Quality:
    """The quality of ``text`` (or of a sample of it), read from a file of type ``mime``.

    ``chars`` is the whole text's length when ``text`` is a sample of it (per-page figures
    scale by it); ``pages`` the record's pages, slides or sheets.
    """
    sampled = sample(text)
    body = _MARKER.sub("", sampled)
    total = chars if chars is not None else len(text)
    # Per-page figures scale the sample's count up to the whole text.
    m = _measure(body, mime, total / max(len(sampled), 1), pages)
    return _judge(m, mime, pages)


@dataclass(frozen=True, slots=True)
class _Measures:
    chars: int
    lang: str | None
    script: str | None
    words: _Words | None
    repl: float
    odd: float
    mojibake: float
    per_page: int | None
    run: int


@dataclass(frozen=True, slots=True)
class _Words:
    common: float
    """Share of words among the common words of the likely languages."""
    noise: float
    """Share of words that cannot be any language's (``xYz``, ``BR``)."""
    listed: bool
    """Whether the detected language has a list of its own (or is no language at all)."""


def _measure(body: str, mime: str, scale: float, pages: int | None) -> _Measures:
    n = max(len(body), 1)
    script = _dominant_script(body)
    lang, words = _language(body, script) if is_prose(mime) else (None, None)
    per_page = None
    if pages and mime in _PAGED_PROSE:
        visible = sum(1 for ch in body if not ch.isspace())
        per_page = round(visible * scale / pages)
    return _Measures(
        chars=len(body),
        lang=lang,
        script=script,
        words=words,
        repl=round(body.count("\ufffd") / n, 4),
        odd=round(sum(1 for ch in body if _odd(ch)) / n, 4),
        mojibake=round(_badness(body) * 1000 / n, 2),
        per_page=per_page,
        run=max((m.end() - m.start() for m in _SPACE_RUNS.finditer(body)), default=0),
    )


def _judge(m: _Measures, mime: str, pages: int | None) -> Quality:
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
    w = m.words
    if w is not None:
        # Placeholder Latin or a language without a list is suspect at worst, unless its
        # words are noise too.
        sure = w.listed or w.noise >= NOISE_GARBLED
        rule(Signal.COMMON, sure and w.common < COMMON_GARBLED, w.common < expected_common(m.lang))
    if m.per_page is not None and (pages or 0) >= SPARSE_MIN_PAGES:
        rule(Signal.SPARSE, False, m.per_page < SPARSE_PER_PAGE)
    if is_prose(mime) and m.script not in _NO_SPACE_SCRIPTS:
        rule(Signal.RUN, False, m.run > RUN_SUSPECT)
    found.sort(key=lambda vs: -_RANK[vs[0]])
    verdict = found[0][0] if found else Verdict.GOOD
    return Quality(
        verdict=verdict.value,
        lang=m.lang,
        script=m.script,
        common=None if w is None else round(w.common, 3),
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


def _odd(ch: str) -> bool:
    if ch in _ALLOWED_CONTROLS:
        return False
    return unicodedata.category(ch) in ("Cc", "Co", "Cn", "Cs")


# -- script ------------------------------------------------------------------------------

_SCRIPT_OF_NAME = {
    "LATIN": "Latin", "CYRILLIC": "Cyrillic", "GREEK": "Greek", "ARABIC": "Arabic",
    "HEBREW": "Hebrew", "CJK": "Han", "HIRAGANA": "Hiragana", "KATAKANA": "Katakana",
    "HANGUL": "Hangul", "DEVANAGARI": "Devanagari", "BENGALI": "Bengali", "TAMIL": "Tamil",
    "THAI": "Thai", "ARMENIAN": "Armenian", "GEORGIAN": "Georgian",
}  # fmt: skip


def _script(ch: str) -> str:
    if ch < "\u0250":
        return "Latin"
    name = unicodedata.name(ch, "")
    return _SCRIPT_OF_NAME.get(name.split(" ", 1)[0], "Other") if name else "Other"


def _dominant_script(body: str) -> str | None:
    letters = Counter(_script(ch) for ch in body if ch.isalpha())
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
    """py3langid's model and the common-word lists, loaded once per process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: dict[str, str] | None = None
        self._sets: dict[str, frozenset[str]] = {}

    def warm(self) -> None:
        """Load everything now (the forkserver does this once, so workers start warm)."""
        import py3langid

        py3langid.classify("warm")
        self.lines()

    def lines(self) -> dict[str, str]:
        with self._lock:
            if self._lines is None:
                from engine.quality_words import load_lines

                self._lines = load_lines()
            return self._lines

    def words(self, lang: str) -> frozenset[str] | None:
        found = self._sets.get(lang)
        if found is None:
            line = self.lines().get(lang)
            if line is None:
                return None
            words = line.split(" ")
            if lang in ("zh", "ja"):  # written without spaces: judge characters, not words
                words = [ch for w in words for ch in w]
            found = self._sets.setdefault(lang, frozenset(words))
        return found


MODELS = _Models()
"""The process's loaded models (``MODELS.warm()`` loads them ahead of the first score)."""


def _language(body: str, script: str | None) -> tuple[str | None, _Words | None]:
    tokens = _tokens(body, script)
    if len(tokens) < MIN_WORDS:
        return None, None
    import py3langid

    ranked = [str(code) for code, _score in py3langid.rank(body[:4000])[:3]]
    lang = "und" if ranked[0] == "zxx" else ranked[0]  # zxx: the model's "no language"
    noise = tokens.count(_NOISE) / len(tokens)
    lines = MODELS.lines()
    if lang == "und" or lang not in lines:
        # No list of its own: the best of its script's lists, one at a time (a union of
        # thirty lists would find most noise somewhere).
        others = ("zh", "ja") if script in ("Han", "Kana") else _same_script_langs(script)
        best = max((_share(tokens, [MODELS.words(c)]) for c in others), default=0.0)
        common = max(best, _share(tokens, [MODELS.words("en")]))
        return lang, _Words(common, noise, listed=lang == "und")
    # Its own list, the runners-up (a text in several languages) and English (technical
    # text in any language is full of English words).
    likely = [c for c in dict.fromkeys([*ranked, "en"]) if c in lines]
    if script in ("Han", "Kana"):
        likely += ["zh", "ja"]
    common = _share(tokens, [MODELS.words(c) for c in likely])
    return lang, _Words(common, noise, listed=True)


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
        else:
            out.append(_NOISE)
    return out


def _share(tokens: list[str], lists: list[frozenset[str] | None]) -> float:
    sets = [w for w in lists if w]
    if not sets or not tokens:
        return 0.0
    return sum(1 for t in tokens if any(t in w for w in sets)) / len(tokens)


_SCRIPT_LANGS: dict[str, tuple[str, ...]] = {
    "Latin": (
        "ca", "cs", "da", "de", "es", "fi", "fil", "fr", "hu", "id", "is", "it", "lt", "lv",
        "ms", "nb", "nl", "pl", "pt", "ro", "sh", "sk", "sl", "sv", "tr", "vi",
    ),
    "Cyrillic": ("bg", "mk", "ru", "uk", "sh"),
    "Arabic": ("ar", "fa", "ur"),
}  # fmt: skip


def _same_script_langs(script: str | None) -> Iterable[str]:
    return _SCRIPT_LANGS.get(script or "", ())


def _badness(body: str) -> int:
    from ftfy.badness import badness

    return int(badness(body))


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
            return f"{share} common words (language: {q.lang or '?'}), expected > {expected}"
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
    if signal is Signal.SPARSE:
        return f"{q.per_page} characters per page, expected > {SPARSE_PER_PAGE}"
    return f"a run of {q.run:,} characters without a space, expected < {RUN_SUSPECT:,}"


_LANG_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "ru": "Russian", "uk": "Ukrainian", "pl": "Polish",
    "cs": "Czech", "sv": "Swedish", "da": "Danish", "nb": "Norwegian", "fi": "Finnish",
    "hu": "Hungarian", "tr": "Turkish", "el": "Greek", "ar": "Arabic", "he": "Hebrew",
    "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "hi": "Hindi", "ro": "Romanian",
    "ca": "Catalan", "bg": "Bulgarian", "vi": "Vietnamese", "id": "Indonesian", "fa": "Persian",
}  # fmt: skip


def summary_line(q: Quality) -> str:
    """The verdict and its reasons in one line (``suspect: 12% common English words...``)."""
    reasons = q.explain()
    return f"{q.verdict}: {'; '.join(reasons)}" if reasons else q.verdict
