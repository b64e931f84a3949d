"""The Textual-free triage state: marks, error groups to announce, when tools show by itself."""

from __future__ import annotations

from engine.records import Record
from tui.state import TriageState, announce


def error(path: str, message: str, reason: str = "corrupt") -> Record:
    return Record("/r", path, 1, 1, "error", reason=reason, error=message)


def test_tools_screen_opens_only_for_tools_the_previous_sweep_did_not_wait_on() -> None:
    state = TriageState()
    assert not state.new_waiting_tools([])  # the loaded store: nothing waited on
    assert state.new_waiting_tools(["tesseract"])  # the first sweep finds images
    assert not state.new_waiting_tools(["tesseract"])  # the next sweep: nothing new
    assert state.new_waiting_tools(["tesseract", "antiword"])
    assert not state.new_waiting_tools(["antiword"])


def test_error_groups_are_announced_once_and_only_after_the_store_is_known() -> None:
    state = TriageState()
    assert not state.see_records([error("a", "Bad CRC-32 for file 'x'")])  # not grouped yet
    state.known_groups = set()
    assert state.see_records(
        [error("a", "Bad CRC-32 for file 'x'"), error("b", "Bad CRC-32 for file 'y'")]
    )
    title, message = announce(state.take_new_groups())
    assert title == "new error group" and message.startswith("corrupt: Bad CRC-32 for file 'x'")
    assert not state.see_records([error("c", "Bad CRC-32 for file 'z'")])


def test_nothing_is_writable_without_an_engine_or_when_read_only() -> None:
    assert not TriageState().writable
    assert "quarry ui only shows the store" in TriageState().why_not_writable("retry")
    assert TriageState(read_only=True).why_not_writable("retry") == "read-only: cannot retry"
    state = TriageState()
    state.toggle_mark(("/r", "a"))
    state.toggle_mark(("/r", "b"))
    state.toggle_mark(("/r", "a"))
    assert state.marks == {("/r", "b")}


def test_an_announcement_says_a_real_message_not_the_groups_placeholders() -> None:
    """The group's key has ``#`` for numbers: "none of the # passwords given opened it"."""
    state = TriageState(known_groups=set())
    state.see_records([error("a", "none of the 3 passwords given opened it", "encrypted")])
    state.see_records([error("b", "took more than 0:01:00", "timeout")])
    title, message = announce(state.take_new_groups())
    assert "#" not in message and "#" not in title
    assert message == "encrypted: none of the 3 passwords given opened it (+1 more) · x: errors"
    assert title == "2 new error groups"
