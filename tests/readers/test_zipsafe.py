"""zipsafe: member count, member size and ratio caps, encryption, methods, damage."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.errors import CorruptFile, EncryptedFile, LimitExceeded, NoDecoder
from engine.limits import Limits, MiB
from engine.readers.zipsafe import SafeZip, declared_members
from tests.readers.zipkit import set_encrypted_flag


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
    raw[info.header_offset + 8 : info.header_offset + 10] = (9).to_bytes(2, "little")
    central = raw.find(b"PK\x01\x02")
    raw[central + 10 : central + 12] = (9).to_bytes(2, "little")
    path.write_bytes(bytes(raw))
    with SafeZip(path, Limits()) as zf, pytest.raises(NoDecoder, match=re.escape("9 (Deflate64)")):
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
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from([zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]), at=st.integers(0, 10**6),
       value=st.integers(0, 255))  # fmt: skip
def test_any_byte_of_a_bzip2_or_lzma_member_changed_is_its_text_or_corrupt(
    tmp_path: Path, method: int, at: int, value: int
) -> None:
    data = b"".join(b"%d fox\n" % i for i in range(300))
    path = make_zip(tmp_path / f"h{method}.zip", {"a": data}, method)
    raw = bytearray(path.read_bytes())
    raw[at % len(raw)] = value
    path.write_bytes(bytes(raw))
    try:
        with SafeZip(path, Limits()) as zf:
            assert zf.read("a") == data
    except (CorruptFile, NoDecoder, EncryptedFile, LimitExceeded):
        pass
