"""End to end, issue 26: number terms in the real ``quarry ui --store``'s query line."""

from __future__ import annotations

import re
from pathlib import Path

from tests.e2e.terminal import Terminal, quarry_command
from tests.tui.conftest import text_store


def test_a_size_term_filters_and_a_size_that_is_no_number_is_said(tmp_path: Path) -> None:
    files = {"small.txt": "x\n", "big.txt": "y" * 3000, "mid.txt": "z" * 1500}
    store = text_store(tmp_path / "store", files).out
    term = Terminal([*quarry_command(), "ui", "--store", str(store)], 80, 24, tmp_path)
    try:
        term.wait_for(lambda t: "following" in t and "small.txt" in t)
        term.press("/size:>1K")
        # One predicate for the count, the box and the rows: a frame is read whole, not half
        # drawn, and the rows may come a frame after the count (CI saw the new count over the
        # old rows; tests/e2e/test_text_query_terminal.py waits for both too).
        term.wait_for(
            lambda t: (
                "2 of 3 records" in t
                and re.search(r"▊\s*size:>1K\s", t) is not None
                and "small.txt" not in t
                and "big.txt" in t
                and "mid.txt" in t
            )
        )
        # Each edit waited for, so that each error is seen; keys typed in one go keep their
        # order too (seen before: "size:>1lot"; tests/e2e/test_key_order_terminal.py).
        term.press("backspace", "backspace")
        term.wait_for(lambda t: re.search(r"▊\s*size:>\s", t) is not None)
        term.press("lots")
        text = term.wait_for(
            lambda t: (
                "size: 'lots' is not a size (512, 10K, 1.5M, 2G; K = 1024)" in t
                and "3 of 3 records" in t
                and "small.txt" in t  # nothing filtered by it
            )
        )
        assert "0 of 3" not in text
        term.press("backspace", "backspace", "backspace", "backspace")
        term.wait_for(lambda t: re.search(r"▊\s*size:>\s", t) is not None)
        term.press("2k")
        term.wait_for(lambda t: "1 of 3 records" in t and "not a size" not in t)
        term.press_and_wait("escape", lambda t: "of 3 records" not in t)
        term.press("q")
        assert term.exit_code() == 0
        assert b"Traceback" not in term.raw
    finally:
        term.close()
