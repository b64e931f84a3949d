"""7z archives: a bomb stops at the member cap, climbing and absolute names are refused.

The archives are generated here (a solid LZMA2 block written by py7zr, names patched into the
header where py7zr refuses to write them); the work a read does is counted in bytes that
py7zr's decompressor hands out, never in seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.extract import Outcome
from engine.limits import MiB
from fixtures.gen import archives as A
from tests.readers.test_archives import _read as read_named

py7zr = pytest.importorskip("py7zr")


def _read(tmp_path: Path, data: bytes, **limits: int) -> tuple[Outcome, str]:
    return read_named(tmp_path, "a.7z", data, **limits)


@pytest.fixture
def inflated(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Bytes py7zr's decompressor produced during the test, one entry per call."""
    from py7zr.compressor import SevenZipDecompressor

    counted: list[int] = []
    original = SevenZipDecompressor.decompress

    def counting(self: object, fp: object, max_length: int = -1) -> bytes:
        data: bytes = original(self, fp, max_length)  # type: ignore[arg-type]
        counted.append(len(data))
        return data

    monkeypatch.setattr(SevenZipDecompressor, "decompress", counting)
    return counted


def _verdicts(outcome: Outcome) -> dict[str, tuple[str, str | None]]:
    return {m.path: (m.status, m.reason) for m in outcome.members}


def test_a_bomb_stops_at_the_member_cap_without_inflating(
    tmp_path: Path, inflated: list[int]
) -> None:
    bomb = bytes(24 * MiB)
    data = A.seven_z_of([("a.txt", b"alpha\n"), ("zeros.bin", bomb), ("c.txt", b"gamma\n")])
    assert len(data) < 64 * 1024  # a bomb: tiny packed, 24 MiB inflated
    outcome, text = _read(tmp_path, data, zip_member_bytes=1 * MiB)
    assert outcome.status == "ok"
    assert text.startswith("# member a.txt\nalpha\n")
    verdicts = _verdicts(outcome)
    assert verdicts["a.txt"] == ("ok", None)
    assert verdicts["zeros.bin"] == ("error", "limit")
    capped = next(m for m in outcome.members if m.path == "zeros.bin")
    assert capped.error is not None and capped.error.startswith("zip_member_bytes:")
    # c.txt sits behind the bomb in the same solid block: reaching it means inflating the bomb.
    assert verdicts["c.txt"] == ("error", "limit")
    assert "gamma" not in text
    assert sum(inflated) <= 1 * MiB, f"{sum(inflated)} bytes inflated for a 1 MiB cap"


def test_a_bomb_at_the_default_cap_is_not_inflated(tmp_path: Path, inflated: list[int]) -> None:
    data = A.seven_z_of([("a.txt", b"alpha\n"), ("zeros.bin", bytes(80 * MiB))])
    outcome, text = _read(tmp_path, data)
    assert text == "# member a.txt\nalpha\n"
    assert _verdicts(outcome)["zeros.bin"] == ("error", "limit")
    assert sum(inflated) < 1 * MiB


def test_members_over_the_archive_budget_stop_the_read_early(
    tmp_path: Path, inflated: list[int]
) -> None:
    members = [(f"m{i}.txt", b"word " * 100_000 + b"\n") for i in range(8)]  # 500 KB each
    outcome, text = _read(tmp_path, A.seven_z_of(members), archive_bytes=1 * MiB)
    assert outcome.status == "ok"
    assert text.startswith("# member m0.txt\nword ")
    assert "text cut at the archive_bytes cap" in text
    assert sum(inflated) <= 2 * MiB  # not the 4 MB of all eight


def test_members_passed_through_unread_count_against_the_archive_budget(
    tmp_path: Path, inflated: list[int]
) -> None:
    # Refused members before a readable one in a solid block must be inflated to reach it.
    refused = [(f"zz/{i}.bin", bytes(600 * 1024)) for i in range(4)]
    names = {f"zz/{i}.bin": f"../{i}.bin" for i in range(4)}
    data = A.seven_z_of([*refused, ("a.txt", b"alpha\n")], names=names)
    outcome, text = _read(tmp_path, data, archive_bytes=1 * MiB)
    assert (outcome.status, outcome.reason, text) == ("error", "limit", "")
    assert outcome.error == f"archive_bytes: members inflate past {1 * MiB} bytes"
    assert sum(inflated) <= 2 * MiB  # not the 2.4 MB of all four


def test_an_absolute_member_name_is_refused_not_renamed(tmp_path: Path) -> None:
    data = A.seven_z_of(
        [("a.txt", b"alpha\n"), ("Xetc/p.txt", b"secret\n")], names={"Xetc/p.txt": "/etc/p.txt"}
    )
    outcome, text = _read(tmp_path, data)
    assert text == "# member a.txt\nalpha\n"
    assert _verdicts(outcome) == {"a.txt": ("ok", None), "/etc/p.txt": ("error", "refused")}
    assert outcome.error == "1 of 2 members not read"


def test_a_climbing_member_is_refused_and_the_others_read(tmp_path: Path) -> None:
    data = A.seven_z_of(
        [("a.txt", b"alpha\n"), ("zz/b.txt", b"beta\n"), ("c.txt", b"gamma\n")],
        names={"zz/b.txt": "../b.txt"},
    )
    outcome, text = _read(tmp_path, data)
    assert (outcome.status, outcome.extractor) == ("ok", "7z")
    assert text == "# member a.txt\nalpha\n# member c.txt\ngamma\n"
    assert _verdicts(outcome) == {
        "a.txt": ("ok", None),
        "../b.txt": ("error", "refused"),
        "c.txt": ("ok", None),
    }


def test_an_archive_of_only_refused_names_fails_as_refused(tmp_path: Path) -> None:
    data = A.seven_z_of([("zz/b.txt", b"beta\n")], names={"zz/b.txt": "../b.txt"})
    outcome, text = _read(tmp_path, data)
    assert (outcome.status, outcome.reason, text) == ("error", "refused", "")
