"""End to end: counts never overshoot while a 5,000-file folder moves in and around a watched
root (issue 25: the summary showed "ok 6,810", then "ok 9,213", for a true 5,010).

The real ``quarry DIR`` on a pty; every whole frame it draws is read (not only the last one a
poll happens to see), and the summary's ``ok`` count in each is checked against the truth:
it may lag while the watcher catches up, it must never exceed the files that exist.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.e2e.terminal import Terminal, quarry_command

FILES = 5_000
"""Files in the folder moved (as in the issue)."""
OK = re.compile(r"● ok ([\d,]+)")
"""The summary bar's ok count."""


class CountingTerminal(Terminal):
    """A terminal that notes the summary's ok count of every frame drawn."""

    seen: list[int]

    def _feed(self, data: bytes) -> None:
        super()._feed(data)
        match = OK.search(self.text())
        if match:
            self.seen.append(int(match.group(1).replace(",", "")))


def ok_is(n: int) -> object:
    """The screen shows ``n`` ok records, watching again."""
    return lambda text: (
        (m := OK.search(text)) is not None and m.group(1) == f"{n:,}" and ("watching" in text)
    )


def test_a_big_folder_moved_in_and_around_a_watched_root_is_never_overcounted(
    tmp_path: Path,
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text(f"{name}\n")
    big = tmp_path / "big"  # outside the root, so that it arrives whole
    for i in range(FILES):
        sub = big / f"d{i // 500:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"n{i:05d}.txt").write_text(f"note {i}\n")
    argv = [*quarry_command(), str(root), "--out", str(tmp_path / "store")]
    term = CountingTerminal(argv, 160, 50, tmp_path)
    term.seen = []
    try:
        term.wait_for(ok_is(3), timeout=120)
        total = 3 + FILES
        os.rename(big, root / "big")  # into the watched root
        term.wait_for(ok_is(total), timeout=300)
        assert max(term.seen) == total, f"counted {max(term.seen):,} of {total:,}"
        term.seen.clear()
        os.rename(root / "big", root / "moved")  # within it: never counted twice
        term.wait_for(lambda text: "moved/d00" in text, timeout=300)
        term.wait_for(ok_is(total), timeout=300)
        assert max(term.seen) == total, f"counted {max(term.seen):,} of {total:,}"
        assert "big/d" not in term.text()  # the old paths are gone
        term.press("q")
        assert term.exit_code() == 0
    finally:
        term.close()
