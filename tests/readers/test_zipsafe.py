"""zipsafe: member count, member size and ratio caps, encryption, methods, damage."""

from __future__ import annotations

import hashlib
import io
import re
import sys
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.errors import CorruptFile, EncryptedFile, LimitExceeded, NoDecoder, ReadFailure
from engine.limits import Limits, MiB
from engine.readers.zipsafe import SafeZip, declared_members
from engine.records import Reason, Status
from fixtures.gen import archives as A
from tests.readers.zipkit import set_encrypted_flag

DATA = Path(__file__).parent / "data"


def make_zip(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    """Write ``members`` to a zip at ``path``."""
    with zipfile.ZipFile(path, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def zero_bomb(path: Path, size: int, name: str = "bomb.bin") -> Path:
    """A zip with one member of ``size`` zero bytes, written in chunks."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, zf.open(name, "w") as fh:
        block = bytes(MiB)
        for _ in range(size // MiB):
            fh.write(block)
        fh.write(bytes(size % MiB))
    return path


def test_reads_members_and_names(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "a.zip", {"a.txt": b"alpha", "dir/b.txt": b"beta" * 1000})
    with SafeZip(path, Limits()) as zf:
        assert zf.names() == ["a.txt", "dir/b.txt"]
        assert zf.has("a.txt") and not zf.has("c.txt")
        assert zf.read("a.txt") == b"alpha"
        assert zf.read("dir/b.txt") == b"beta" * 1000
        with pytest.raises(CorruptFile, match="missing"):
            zf.read("c.txt")


def test_member_count_is_checked_before_parsing(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "many.zip", {f"m{i}": b"" for i in range(20)})
    assert declared_members(path) == 20
    with pytest.raises(LimitExceeded) as err:
        SafeZip(path, Limits(zip_members=10))
    assert err.value.limit == "zip_members"


def test_member_bytes_cap_on_declared_size(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "big.zip", {"big": bytes(4096)})
    with SafeZip(path, Limits(zip_member_bytes=1024)) as zf, pytest.raises(LimitExceeded) as err:
        zf.read("big")
    assert err.value.limit == "zip_member_bytes"


def test_member_bytes_cap_is_counted_while_streaming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even when the declared size lies (here: the up-front check is switched off)."""
    path = make_zip(tmp_path / "big.zip", {"big": bytes(200_000)})
    monkeypatch.setattr(SafeZip, "check", lambda self, info: None)
    with SafeZip(path, Limits(zip_member_bytes=1024)) as zf, pytest.raises(LimitExceeded) as err:
        zf.read("big")
    assert err.value.limit == "zip_member_bytes"


def test_ratio_cap_on_a_4kb_bomb(tmp_path: Path) -> None:
    path = zero_bomb(tmp_path / "bomb.zip", 2 * MiB)
    assert path.stat().st_size < 5000
    with SafeZip(path, Limits()) as zf, pytest.raises(LimitExceeded) as err:
        zf.read("bomb.bin")
    assert err.value.limit == "zip_ratio"


def test_ratio_cap_is_counted_while_streaming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = zero_bomb(tmp_path / "bomb.zip", 2 * MiB)
    monkeypatch.setattr(SafeZip, "check", lambda self, info: None)
    with SafeZip(path, Limits()) as zf, zf.open("bomb.bin") as stream:
        with pytest.raises(LimitExceeded) as err:
            while stream.read_chunk():
                pass
        assert err.value.limit == "zip_ratio"
        assert stream.count <= MiB + 64 * 1024


def test_small_members_are_never_refused_for_their_ratio(tmp_path: Path) -> None:
    path = zero_bomb(tmp_path / "small.zip", 512 * 1024)
    with SafeZip(path, Limits()) as zf:
        assert len(zf.read("bomb.bin")) == 512 * 1024


def test_real_zip_bomb_past_64_mib_at_default_caps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """65 MiB of zeros (about 65 KB zipped): refused up front, and by the streamed counter."""
    path = zero_bomb(tmp_path / "bomb.zip", 65 * MiB)
    assert path.stat().st_size < 200_000
    with SafeZip(path, Limits()) as zf, pytest.raises(LimitExceeded) as err:
        zf.read("bomb.bin")
    assert err.value.limit == "zip_member_bytes"
    monkeypatch.setattr(SafeZip, "check", lambda self, info: None)
    with SafeZip(path, Limits(zip_ratio=10**9)) as zf, pytest.raises(LimitExceeded) as err:
        zf.read("bomb.bin")
    assert err.value.limit == "zip_member_bytes"


def test_encrypted_member(tmp_path: Path) -> None:
    path = tmp_path / "enc.zip"
    path.write_bytes(set_encrypted_flag(make_zip(tmp_path / "p.zip", {"a": b"x"}).read_bytes()))
    with SafeZip(path, Limits()) as zf, pytest.raises(EncryptedFile):
        zf.read("a")


def test_password_protected_ooxml_is_encrypted(tmp_path: Path) -> None:
    path = tmp_path / "locked.docx"
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600) + "EncryptedPackage".encode("utf-16-le")
    path.write_bytes(ole + bytes(1000))
    with pytest.raises(EncryptedFile):
        SafeZip(path, Limits())


def test_a_zip_that_needs_a_later_version_of_zip_is_unsupported(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "v.zip", {"a": b"data"})
    raw = bytearray(path.read_bytes())
    central = raw.find(b"PK\x01\x02")
    raw[central + 6 : central + 8] = (64).to_bytes(2, "little")  # "needs zip 6.4"
    path.write_bytes(bytes(raw))
    with pytest.raises(NoDecoder, match=re.escape("zip file version 6.4")):
        SafeZip(path, Limits())


def test_methods_no_reader_decompresses_are_refused(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "m.zip", {"a": b"data"}, zipfile.ZIP_STORED)
    raw = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo("a")
    raw[info.header_offset + 8 : info.header_offset + 10] = (6).to_bytes(2, "little")
    central = raw.find(b"PK\x01\x02")
    raw[central + 10 : central + 12] = (6).to_bytes(2, "little")
    path.write_bytes(bytes(raw))
    refused = pytest.raises(NoDecoder, match=re.escape("6 (implode, PKZIP 1.x)"))
    with SafeZip(path, Limits()) as zf, refused:
        zf.read("a")


@pytest.mark.parametrize(
    "data", [b"", b"PK\x03\x04garbage", b"not a zip at all", b"PK\x05\x06" + bytes(18)]
)
def test_garbage_is_corrupt(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.zip"
    path.write_bytes(data)
    with pytest.raises(CorruptFile):
        SafeZip(path, Limits()).read("a")


def test_damaged_member_data_is_corrupt(tmp_path: Path) -> None:
    payload = b"".join(hashlib.sha256(bytes([i])).digest() for i in range(100))
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a", payload)
    data = bytearray(raw.getvalue())
    start = data.find(b"PK\x03\x04") + 30 + len("a")
    data[start + 100 : start + 140] = b"\xff" * 40  # scribble over the deflate stream
    path = tmp_path / "damaged.zip"
    path.write_bytes(bytes(data))
    with SafeZip(path, Limits()) as zf, pytest.raises(CorruptFile):
        zf.read("a")


NOT_ZIPFILES = [A.DEFLATE64, A.ZSTANDARD, A.XZ, A.PPMD]
"""Methods zipfile neither reads nor writes: the test writer's zips (fixtures.gen.archives)."""
SEVEN_ZIP_NOTES = "".join(
    f"Line {i}: the quick brown fox jumps over the lazy dog, café crème, naïve résumé.\n"
    for i in range(60)
).encode()
"""The file in tests/readers/data/zip7/'s zips (SOURCES.md there)."""


@pytest.mark.parametrize("method", NOT_ZIPFILES)
def test_deflate64_zstandard_xz_and_ppmd_members_are_read_whole(
    tmp_path: Path, method: int
) -> None:
    # 1.25 MB: a zstd block ends where a read's 64 KiB of output does, after which its
    # decoder gives nothing and only then wants input (taken for a stalled stream once)
    data = b"".join(b"line %d of a long text, with words to vary it %d\n" % (i, i * i)
                    for i in range(20000)) + bytes(range(256))  # fmt: skip
    path = tmp_path / "m.zip"
    path.write_bytes(A.zip_packed({"a.txt": data, "empty": b"", "b": b"x"}, method))
    with SafeZip(path, Limits()) as zf:
        assert zf.read("a.txt") == data
        assert zf.read("empty") == b"" and zf.read("b") == b"x"
        with zf.open("a.txt") as stream:
            assert len(stream.read_chunk(1000)) <= 1000


@pytest.mark.parametrize("name", ["deflate64.zip", "ppmd.zip", "xz.zip"])
def test_7_zip_s_own_zips_are_read(name: str) -> None:
    with SafeZip(DATA / "zip7" / name, Limits()) as zf:
        assert zf.names() == ["notes.txt"]
        assert zf.read("notes.txt") == SEVEN_ZIP_NOTES


@pytest.mark.parametrize("method", [A.DEFLATE64, A.ZSTANDARD, A.XZ])
def test_a_deflate64_zstandard_or_xz_bomb_is_stopped_by_its_ratio_a_chunk_in(
    tmp_path: Path, method: int
) -> None:
    # 64 MiB of zeros that say they are 1,000 bytes (a Deflate64 match alone runs to 64 KiB)
    path = _says_1000_bytes(tmp_path / "bomb.zip", A.zip_packed({"zeros": bytes(64 * MiB)}, method))
    tracemalloc.start()
    try:
        with SafeZip(path, Limits()) as zf, zf.open("zeros") as stream:
            with pytest.raises(LimitExceeded, match="zip_ratio"):
                while stream.read_chunk():
                    pass
            assert stream.count <= 2 * MiB  # stopped within a chunk or two of the floor
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert held < 24 * MiB  # nor inflated far past it out of sight (one call's output)


def test_a_ppmd_member_gives_no_more_than_its_size(tmp_path: Path) -> None:
    # PPMd's stream need not end itself: the member's size does, so that is all it gives
    path = _says_1000_bytes(tmp_path / "bomb.zip", A.zip_packed({"zeros": bytes(8 * MiB)}, A.PPMD))
    with SafeZip(path, Limits()) as zf, zf.open("zeros") as stream:
        with pytest.raises(CorruptFile, match="its CRC or size is wrong"):
            while stream.read_chunk():
                pass
        assert stream.count == 1000


def _says_1000_bytes(path: Path, data: bytes) -> Path:
    raw = bytearray(data)
    central = raw.find(b"PK\x01\x02")
    raw[central + 24 : central + 28] = (1000).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("method", NOT_ZIPFILES)
def test_damaged_deflate64_zstandard_xz_and_ppmd_members_are_corrupt(
    tmp_path: Path, method: int
) -> None:
    data = b"".join(b"%d fox\n" % i for i in range(5000))
    whole = A.zip_packed({"a": data}, method)
    info = zipfile.ZipFile(io.BytesIO(whole)).getinfo("a")
    flipped = bytearray(whole)
    flipped[info.header_offset + 30 + len("a") + info.compress_size // 2] ^= 0xFF
    path = tmp_path / "m.zip"
    path.write_bytes(bytes(flipped))
    with SafeZip(path, Limits()) as zf, pytest.raises(CorruptFile):
        zf.read("a")


def test_a_decoder_not_installed_is_unsupported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.zip"
    path.write_bytes(A.zip_packed({"a": b"some text\n" * 50}, A.DEFLATE64))
    monkeypatch.setitem(sys.modules, "inflate64", None)  # (an import of it raises ImportError)
    with SafeZip(path, Limits()) as zf, pytest.raises(NoDecoder, match="inflate64"):
        zf.read("a")


def test_a_ppmd_header_out_of_range_is_corrupt(tmp_path: Path) -> None:
    whole = bytearray(A.zip_packed({"a": b"some text\n" * 50}, A.PPMD))
    at = zipfile.ZipFile(io.BytesIO(bytes(whole))).getinfo("a").header_offset + 30 + len("a")
    whole[at : at + 2] = (2 << 12 | 5).to_bytes(2, "little")  # restore method 2: none such
    path = tmp_path / "m.zip"
    path.write_bytes(bytes(whole))
    with SafeZip(path, Limits()) as zf, pytest.raises(CorruptFile, match="PPMd header"):
        zf.read("a")


def test_a_ppmd_model_past_the_memory_bound_is_a_memory_error_not_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PPMd member's model (up to 256 MiB, its header says how big) is allocated whole: in
    a read under a small --memory that fails, and the file is not damaged."""
    import pyppmd

    def no_room(order: int, size: int, restore: int) -> object:
        raise MemoryError

    path = tmp_path / "m.zip"
    path.write_bytes(A.zip_packed({"a": b"some text\n" * 50}, A.PPMD))
    monkeypatch.setattr(pyppmd, "Ppmd8Decoder", no_room)
    with SafeZip(path, Limits()) as zf, pytest.raises(ReadFailure, match="PPMd model") as failed:
        zf.read("a")
    assert (failed.value.status, failed.value.reason) == (Status.ERROR, Reason.MEMORY)


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_bzip2_and_lzma_members_are_read_whole(tmp_path: Path, method: int) -> None:
    data = b"".join(b"line %d of a long text\n" % i for i in range(20000)) + bytes(range(256))
    path = make_zip(tmp_path / "m.zip", {"a.txt": data, "empty": b""}, method)
    with SafeZip(path, Limits()) as zf:
        assert zf.read("a.txt") == data
        assert zf.read("empty") == b""
        with zf.open("a.txt") as stream:
            assert len(stream.read_chunk(1000)) <= 1000


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_bzip2_or_lzma_bomb_is_stopped_by_its_ratio_a_chunk_in(
    tmp_path: Path, method: int
) -> None:
    # 64 MiB of zeros that say they are 1,000 bytes: a few KiB compressed, a 4 KiB read of
    # which zipfile inflates whole before anything counts it
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", method) as zf, zf.open("zeros", "w") as out:
        for _ in range(64):
            out.write(bytes(1024 * 1024))
    raw = bytearray(path.read_bytes())
    central = raw.find(b"PK\x01\x02")
    raw[central + 24 : central + 28] = (1000).to_bytes(4, "little")  # it says 1,000 bytes
    path.write_bytes(bytes(raw))
    with SafeZip(path, Limits()) as zf, zf.open("zeros") as stream:
        with pytest.raises(LimitExceeded, match="zip_ratio"):
            while stream.read_chunk():
                pass
        assert stream.count <= 2 * 1024 * 1024  # stopped within a chunk or two of the floor


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_damaged_bzip2_and_lzma_members_are_corrupt(tmp_path: Path, method: int) -> None:
    data = b"".join(b"%d fox\n" % i for i in range(5000))
    path = make_zip(tmp_path / "m.zip", {"a": data}, method)
    whole = path.read_bytes()
    info = zipfile.ZipFile(path).getinfo("a")
    start = info.header_offset + 30 + len("a")
    flipped = bytearray(whole)
    flipped[start + info.compress_size // 2] ^= 0xFF
    path.write_bytes(bytes(flipped))
    with SafeZip(path, Limits()) as zf, pytest.raises(CorruptFile):
        zf.read("a")


# a central directory entry that needs version 6.4 of zip to extract: zipfile raised
# NotImplementedError from its constructor, and the reader crashed (a fresh clone's run)
@example(method=zipfile.ZIP_LZMA, at=12933, value=64)
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from([zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, *NOT_ZIPFILES]),
       at=st.integers(0, 10**6), value=st.integers(0, 255))  # fmt: skip
def test_any_byte_of_a_member_changed_in_any_method_read_is_its_text_or_a_verdict(
    tmp_path: Path, method: int, at: int, value: int
) -> None:
    data = b"".join(b"%d fox\n" % i for i in range(300))
    path = tmp_path / f"h{method}.zip"
    if method in NOT_ZIPFILES:
        path.write_bytes(A.zip_packed({"a": data}, method))
    else:
        make_zip(path, {"a": data}, method)
    raw = bytearray(path.read_bytes())
    raw[at % len(raw)] = value
    path.write_bytes(bytes(raw))
    try:
        with SafeZip(path, Limits()) as zf:
            assert zf.read("a") == data
    except (CorruptFile, NoDecoder, EncryptedFile, LimitExceeded):
        pass
