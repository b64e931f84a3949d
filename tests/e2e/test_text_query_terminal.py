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
        # the text, not the name. The app filters at each key, so the whole query is awaited
        # as well as the rows: CI once saw "1 of 3" after "te" (invoice-notes' path matches)
        term.wait_for(
            lambda t: (
                'text:"number 4711"' in t
                and "1 of 3 records" in t
                and "a.txt" in t
                and "invoice-notes" not in t
                and "b.txt" not in t
            )
        )
        term.press_and_wait("escape", lambda t: "of 3 records" not in t)
        term.press("/!text:invoice path:c/")  # combined, inverted: smart case ignores case
        # (the detail pane at 160 columns follows the cursor a frame after the table)
        text = term.wait_for(
            lambda t: "!text:invoice path:c/" in t and "1 of 3 records" in t and "a.txt" not in t
        )
        assert re.search(r"invoice-notes\.txt", text)
        term.press_and_wait("escape", lambda t: "of 3 records" not in t)
        term.press("q")
        assert term.exit_code() == 0
    finally:
        term.close()


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_the_match_in_context_and_the_inspector_at_the_match(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    texts = {
        "a.txt": "alpha\nthe invoice 2024-117 is due in thirty days\n",
        "b.txt": "nothing to see\n",
        "c.txt": "cover page\n" * 40 + "\fpage two holds an invoice too\n" + "x\n" * 40 + "invoice",
    }
    store = text_store(tmp_path / "store", texts).out
    term = Terminal([*quarry_command(), "ui", "--store", str(store)], *size, tmp_path)
    try:
        term.wait_for("following")
        term.press('/text:"invoice"', "enter")
        at_a = "p.1 l.2 (1) the invoice 2024-117 is due"  # the cursor is on a.txt
        term.wait_for(lambda t: "2 of 3 records" in t and at_a in t)
        term.press_and_wait("down", lambda t: "p.2 l.1 (2) page two holds an invoice too" in t)
        text = term.press_and_wait("enter", lambda t: "matches (1/2)" in t and "page two" in t)
        assert "“invoice”: 2 matches (1/2)" in text
        assert "page two holds an invoice too" in text  # the text is shown at the match
        assert "\n" in text.split("page two holds")[0]  # (on a line of its own)
        text = term.press_and_wait("n", lambda t: "matches (2/2)" in t)
        text = term.press_and_wait("N", lambda t: "matches (1/2)" in t)
        term.press_and_wait("escape", lambda t: "2 of 3 records" in t)
        term.press("q")
        assert term.exit_code() == 0
    finally:
        term.close()
