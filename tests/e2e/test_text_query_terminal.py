"""``text:`` in the query line of the real ``quarry ui``: the records whose extracted text
matches, asked of the engine (the store's text index, or its texts), with every other term."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.terminal import Terminal, quarry_command
from tests.tui.conftest import text_store


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_a_text_term_keeps_the_records_whose_text_matches(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    texts = {
        "a.txt": "Invoice number 4711, due in thirty days\n",
        "b.txt": "nothing to see\n",
        "c/invoice-notes.txt": "no bill here\n",
    }
    store = text_store(tmp_path / "store", texts).out
    term = Terminal([*quarry_command(), "ui", "--store", str(store)], *size, tmp_path)
    try:
        term.wait_for("following")
        term.press('/text:"number 4711"')
        text = term.wait_for(lambda t: "1 of 3 records" in t)
        assert "a.txt" in text and "invoice-notes" not in text  # the text, not the name
        term.press_and_wait("escape", lambda t: "of 3 records" not in t)
        term.press("/!text:invoice path:c/")  # combined, inverted: smart case ignores case
        text = term.wait_for(lambda t: "1 of 3 records" in t)
        assert re.search(r"invoice-notes\.txt", text) and "a.txt" not in text
        term.press_and_wait("escape", lambda t: "of 3 records" not in t)
        term.press("q")
        assert term.exit_code() == 0
    finally:
        term.close()
