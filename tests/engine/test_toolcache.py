"""Tool versions are remembered per executable: asked once, asked again when it changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine import toolcache
from engine.tools import discover


def _fake_tesseract(folder: Path, version: str) -> Path:
    """A ``tesseract`` that prints ``version`` and notes each time it is asked."""
    folder.mkdir(exist_ok=True)
    exe = folder / "tesseract"
    log = folder / "asked"
    exe.write_text(
        f'#!/bin/sh\necho x >> "{log}"\n'
        f'if [ "$1" = "--version" ]; then echo "tesseract {version}"; fi\n'
    )
    exe.chmod(0o755)
    return exe


def _asked(folder: Path) -> int:
    log = folder / "asked"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _version(folder: Path) -> str:
    tools = discover(path=str(folder))
    found = [t for t in tools.found if t.name == "tesseract"]
    assert len(found) == 1
    return found[0].version


def test_a_version_is_asked_once_then_remembered(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    _fake_tesseract(bin_, "5.1.0")
    assert _version(bin_) == "5.1.0" and _asked(bin_) == 1
    assert _version(bin_) == "5.1.0" and _asked(bin_) == 1
    cached = toolcache.cache_path()
    assert cached is not None and cached.is_file()
    assert str(cached).startswith(os.environ["XDG_CACHE_HOME"])


def test_a_changed_executable_is_asked_again(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    exe = _fake_tesseract(bin_, "5.1.0")
    assert _version(bin_) == "5.1.0"
    # an upgrade in place, same size, mtime put back: the ctime still tells
    st = exe.stat()
    _fake_tesseract(bin_, "5.2.0")
    os.utime(exe, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _version(bin_) == "5.2.0" and _asked(bin_) == 2


def test_a_repointed_symlink_is_asked_again(tmp_path: Path) -> None:
    old = _fake_tesseract(tmp_path / "v1", "4.0.0")
    new = _fake_tesseract(tmp_path / "v2", "5.0.0")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "tesseract").symlink_to(old)
    assert _version(bin_) == "4.0.0"
    (bin_ / "tesseract").unlink()
    (bin_ / "tesseract").symlink_to(new)
    assert _version(bin_) == "5.0.0"


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{torn",
        b"[1, 2]",
        b'{"format": 99, "tools": {}}',
        b'{"format": 1, "tools": 3}',
        b'{"format": 1, "tools": {}, "pad": "' + b"x" * (2 << 20) + b'"}',
    ],
    ids=["empty", "torn", "list", "newer", "tools-not-a-dict", "huge"],
)
def test_a_damaged_or_foreign_cache_means_asking(tmp_path: Path, content: bytes) -> None:
    bin_ = tmp_path / "bin"
    _fake_tesseract(bin_, "5.1.0")
    cached = toolcache.cache_path()
    assert cached is not None
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(content)
    assert _version(bin_) == "5.1.0" and _asked(bin_) == 1
    assert _version(bin_) == "5.1.0" and _asked(bin_) == 1  # rewritten whole, then used


def test_an_entry_of_another_shape_means_asking(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    exe = _fake_tesseract(bin_, "5.1.0")
    cached = toolcache.cache_path()
    assert cached is not None
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(f'{{"format": 1, "tools": {{"{exe}": {{"id": 5, "version": 7}}}}}}')
    assert _version(bin_) == "5.1.0" and _asked(bin_) == 1


def test_an_unwritable_cache_folder_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv(toolcache.CACHE_ENV, str(blocker / "cache"))
    bin_ = tmp_path / "bin"
    _fake_tesseract(bin_, "5.1.0")
    assert _version(bin_) == "5.1.0" and _version(bin_) == "5.1.0"
    assert _asked(bin_) == 2  # asked each time, no error


def test_an_unknown_answer_is_asked_again(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    exe = bin_ / "tesseract"
    bin_.mkdir()
    exe.write_text(f'#!/bin/sh\necho x >> "{bin_ / "asked"}"\necho "no number here"\n')
    exe.chmod(0o755)
    assert _version(bin_) == "unknown"
    assert _version(bin_) == "unknown" and _asked(bin_) == 2


def test_a_tool_that_is_gone_leaves_the_cache_at_its_next_write(tmp_path: Path) -> None:
    old = _fake_tesseract(tmp_path / "old", "4.0.0")
    assert _version(tmp_path / "old") == "4.0.0"
    old.unlink()
    _fake_tesseract(tmp_path / "new", "5.0.0")
    assert _version(tmp_path / "new") == "5.0.0"
    cached = toolcache.load(toolcache.cache_path())
    assert str(tmp_path / "new" / "tesseract") in cached and str(old) not in cached
