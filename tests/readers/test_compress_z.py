"""Unix compress (``.Z``, ``.tar.Z``) files: decoded without a tool, as gzip and ncompress
decode them, read as the document inside, and every damaged or hostile one a verdict."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.readers.lzw import LzwError, unlzw
from fixtures.gen import archives as A
from tests.readkit import read_bytes, read_file

DATA = Path(__file__).parent / "data" / "compress"
_GZIP = shutil.which("gzip")


def _decoded(data: bytes, step: int = 65536) -> bytes:
    return b"".join(unlzw(data[i : i + step] for i in range(0, len(data), step)))


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(st.binary(max_size=3000), st.text(max_size=3000).map(str.encode)),
    st.integers(9, 16),
    st.booleans(),
    st.integers(1, 64),
)
def test_any_bytes_come_back_as_written_however_the_stream_is_cut(
    data: bytes, max_bits: int, block_mode: bool, step: int
) -> None:
    assert _decoded(A.compress_z(data, max_bits, block_mode=block_mode), step) == data


@pytest.mark.skipif(_GZIP is None, reason="gzip is not on PATH")
@pytest.mark.parametrize("block_mode", [True, False])
@pytest.mark.parametrize("max_bits", [9, 10, 12, 16])
def test_the_test_writer_writes_what_gzip_reads(max_bits: int, block_mode: bool) -> None:
    # the writer is the other half of the round trip above: gzip -d is the format's referee
    data = b"".join(b"%d the quick brown fox %d\n" % (i, i * i) for i in range(3000))
    data += bytes(range(256)) * 40 + bytes(70000)
    written = A.compress_z(data, max_bits, block_mode=block_mode)
    assert _GZIP is not None
    out = subprocess.run([_GZIP, "-dc"], input=written, capture_output=True, check=True)
    assert out.stdout == data


@pytest.mark.parametrize("max_bits", [9, 12, 16])
def test_compress_2_files_widen_mid_group_and_are_decoded(max_bits: int) -> None:
    # without block mode the table starts at 256: its first widening comes after 257 codes,
    # the second of a group of eight, and the group's other six are padding
    data = bytes(range(256)) * 8 + b"".join(b"fox %d\n" % i for i in range(4000))
    assert _decoded(A.compress_z(data, max_bits, block_mode=False)) == data


def test_a_file_compress_wrote_with_a_clear_is_decoded_exactly(tmp_path: Path) -> None:
    shutil.copyfile(DATA / "notes.tar.Z", tmp_path / "notes.tar.Z")
    outcome, text = read_file(tmp_path / "notes.tar.Z")
    assert (outcome.status, outcome.extractor) == ("ok", "compress+tar")
    assert outcome.error == "1 of 3 members not read"  # the random bytes: no document
    lines = text.splitlines()
    assert lines[0] == "# member report/1-notes.txt"
    assert lines[1] == "Quarterly notes – compressed with Unix compress"
    assert lines[2 : 2 + 200] == [
        f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(200)
    ]
    assert lines[-2:] == [
        "# member report/3-tail.txt",
        "after the noise: the table was cleared and rebuilt",
    ]
    assert [(m.path, m.status) for m in outcome.members] == [
        ("report/1-notes.txt", "ok"),
        ("report/2-noise.bin", "unsupported"),
        ("report/3-tail.txt", "ok"),
    ]


def test_a_compressed_text_is_its_text_and_found_by_its_bytes(tmp_path: Path) -> None:
    data = A.compress_z(A.NOTES.encode() * 20)
    outcome, text = read_bytes(tmp_path, "notes.txt.Z", data)
    assert (outcome.status, outcome.extractor) == ("ok", "compress+text:utf-8")
    assert text == A.NOTES * 20
    renamed = tmp_path / "no-suffix"
    renamed.write_bytes(data)
    assert detect(renamed) == M.COMPRESS


def test_a_tar_z_under_the_taz_name_is_a_tar(tmp_path: Path) -> None:
    outcome, text = read_bytes(tmp_path, "s.taz", A.compress_z(A.sample_tar(), 12))
    assert (outcome.status, outcome.extractor) == ("ok", "compress+tar")
    assert text == A.TAR_TEXT


@pytest.mark.parametrize(
    ("head", "said"),
    [
        (b"\x1f\x9d\x1e\x42", "30-bit codes"),  # Tika's testZ_oom.Z, whole
        (b"\x1f\x9d\x90", ""),  # a header and nothing after: no text
        (b"\x1f\x9d\xf0\x00\x00", "unknown compress flags"),
        (b"\x1f\x9d", "cut short in its header"),
    ],
)
def test_impossible_headers_are_corrupt_or_empty(tmp_path: Path, head: bytes, said: str) -> None:
    outcome, _ = read_bytes(tmp_path, "x.Z", head)
    if said:
        assert (outcome.status, outcome.reason) == ("error", "corrupt")
        assert outcome.error is not None and said in outcome.error
    else:
        assert outcome.status == "empty"


def test_a_code_past_the_table_is_corrupt_not_a_crash(tmp_path: Path) -> None:
    # after one literal, 9-bit code 300 names no string yet
    bits = ord("a") | 300 << 9
    data = b"\x1f\x9d\x90" + bits.to_bytes(3, "little")
    with pytest.raises(LzwError, match="past the table"):
        _decoded(data)
    outcome, _ = read_bytes(tmp_path, "x.txt.Z", data)
    assert (outcome.status, outcome.reason) == ("error", "corrupt")


def test_a_file_cut_short_gives_what_came_before_the_cut() -> None:
    whole = A.compress_z(A.NOTES.encode() * 200)
    decoded = _decoded(whole[: len(whole) // 2])
    assert (A.NOTES.encode() * 200).startswith(decoded)


def test_a_bomb_is_refused_by_its_ratio(tmp_path: Path) -> None:
    # 2 MiB of zeros in 2.7 KB, past the ratio floor of 1 MiB (the test writer takes 10 s to
    # write 8 MiB of them: its strings grow with the run)
    outcome, _ = read_bytes(tmp_path, "zeros.bin.Z", A.compress_z(bytes(2 * 1024 * 1024)))
    assert (outcome.status, outcome.reason) == ("error", "limit")
    assert outcome.error is not None and "zip_ratio" in outcome.error


@settings(
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.integers(0, 255), st.binary(max_size=600))
def test_any_bytes_after_the_signature_are_a_verdict(
    tmp_path: Path, flags: int, body: bytes
) -> None:
    outcome, _ = read_bytes(tmp_path, "any.Z", b"\x1f\x9d" + bytes((flags,)) + body)
    assert outcome.status in {"ok", "empty", "error", "unsupported"}
    assert outcome.reason != "crashed"
