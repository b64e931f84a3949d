"""zipsafe: member count, member size and ratio caps, encryption, methods, damage."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from pathlib import Path

import pytest

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


@pytest.mark.parametrize(
    ("method", "said"), [(zipfile.ZIP_BZIP2, "12 (bzip2)"), (zipfile.ZIP_LZMA, "14 (LZMA)")]
)
def test_unbounded_compression_methods_are_refused(tmp_path: Path, method: int, said: str) -> None:
    path = make_zip(tmp_path / "m.zip", {"a": b"data"}, method)
    with (
        SafeZip(path, Limits()) as zf,
        pytest.raises(NoDecoder, match=re.escape(f"method {said}")),
    ):
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
