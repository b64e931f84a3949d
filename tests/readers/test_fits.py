"""FITS files: each unit's header, one card a line, the data skipped (generated files)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.readers import fits
from tests.readkit import read_bytes


def card(text: str) -> bytes:
    return text.ljust(80).encode("ascii")


def header(*cards: str, end: bool = True) -> bytes:
    raw = b"".join(card(c) for c in cards) + (card("END") if end else b"")
    return raw + b" " * (-len(raw) % fits.BLOCK)


def data(size: int, marker: bytes = b"PIXELS ARE NOT TEXT ") -> bytes:
    raw = (marker * (size // len(marker) + 1))[:size]
    return raw + b"\0" * (-len(raw) % fits.BLOCK)


PRIMARY = header(
    "SIMPLE  =                    T / conforms to FITS",
    "BITPIX  =                   16 / 2-byte integers",
    "NAXIS   =                    2",
    "NAXIS1  =                  100",
    "NAXIS2  =                   50",
    "OBJECT  = 'NGC 6543'           / the Cat's Eye nebula",
    "TELESCOP= 'HST     '",
    "",
    "HISTORY reduced with the pipeline of 2026-12-07",
)
IMAGE = header(
    "XTENSION= 'IMAGE   '",
    "BITPIX  =                  -32",
    "NAXIS   =                    1",
    "NAXIS1  =                   30",
    "PCOUNT  =                    0",
    "GCOUNT  =                    1",
    "EXTNAME = 'ERRORS  '",
)
TABLE = header(
    "XTENSION= 'BINTABLE'",
    "BITPIX  =                    8",
    "NAXIS   =                    2",
    "NAXIS1  =                   12",
    "NAXIS2  =                  400",
    "PCOUNT  =                  100",
    "GCOUNT  =                    1",
    "TTYPE1  = 'FLUX    '",
)
FILE = PRIMARY + data(100 * 50 * 2) + IMAGE + data(30 * 4) + TABLE + data(12 * 400 + 100)


def test_each_unit_s_header_is_read_and_its_data_skipped(tmp_path: Path) -> None:
    outcome, text = read_bytes(tmp_path, "nebula.fits", FILE + b"\0" * 2880 + b"junk" * 300)
    assert (outcome.status, outcome.mime, outcome.reader) == ("ok", M.FITS, "fits")
    assert text.splitlines()[:2] == [
        "# header 1",
        "SIMPLE  =                    T / conforms to FITS",
    ]
    assert "OBJECT  = 'NGC 6543'           / the Cat's Eye nebula" in text
    assert "HISTORY reduced with the pipeline of 2026-12-07" in text
    assert "# header 2\nXTENSION= 'IMAGE   '" in text and "EXTNAME = 'ERRORS  '" in text
    assert "# header 3\nXTENSION= 'BINTABLE'" in text and "TTYPE1  = 'FLUX    '" in text
    assert "PIXELS" not in text and "END" not in text and "junk" not in text
    assert "\n\n" not in text  # blank cards left out
    assert outcome.quality is not None and outcome.quality.verdict != "garbled"


def test_a_fits_file_is_told_apart_by_its_first_card(tmp_path: Path) -> None:
    (tmp_path / "image.dat").write_bytes(FILE)
    assert detect(tmp_path / "image.dat") == M.FITS


def test_a_header_cut_short_keeps_its_cards_and_says_so(tmp_path: Path) -> None:
    cut = PRIMARY + data(100 * 50 * 2) + IMAGE[: 3 * 80]
    outcome, text = read_bytes(tmp_path, "cut.fits", cut)
    assert outcome.status == "ok" and "XTENSION= 'IMAGE   '" in text
    assert outcome.error is not None and "cut short" in outcome.error


def test_a_file_that_only_starts_like_fits_is_corrupt(tmp_path: Path) -> None:
    outcome, _text = read_bytes(tmp_path, "odd.fits", b"SIMPLE  =" + b"\xff" * 5000)
    assert (outcome.status, outcome.reason) == ("error", "corrupt")


def test_the_units_read_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fits, "MAX_UNITS", 2)
    outcome, text = read_bytes(tmp_path, "many.fits", FILE)
    assert text.count("# header") == 2 and "BINTABLE" not in text
    assert outcome.error is not None and "more than 2" in outcome.error


@given(st.binary(max_size=8000))
@settings(max_examples=150, deadline=None)
def test_any_bytes_after_the_first_card_read_or_are_corrupt(tail: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        outcome, _text = read_bytes(Path(tmp), "x.fits", PRIMARY[:80] + tail)
    assert outcome.status in ("ok", "empty") or outcome.reason == "corrupt"
