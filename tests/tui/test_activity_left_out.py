"""The dashboard's activity log says what the default exclusions left out, as the sweep's
printed table does: on loading a store and when a full sweep ends, not at every watch batch."""

from __future__ import annotations

from engine.events import SweepFinished
from engine.records import Summary
from tui.eventlog import describe, store_lines

LEFT = {"*.tmp": 2, ".DS_Store": 1, ".git/": 1}


def _summary(left_out: dict[str, int]) -> Summary:
    return Summary(roots=("/r",), files=3, counts={"ok": 3}, left_out=left_out)


def test_a_store_and_a_full_sweep_say_what_was_left_out() -> None:
    loaded = [line.text for line in store_lines(_summary(LEFT))]
    want = "left out by default: 3 files (*.tmp 2, .DS_Store 1), 1 folder (.git/ 1)"
    assert any(text.startswith(want) for text in loaded), loaded
    swept = [line.text for line in describe(SweepFinished(1.0, _summary(LEFT), 3, 0, True))]
    assert any(text.startswith(want) for text in swept), swept


def test_nothing_left_out_and_watch_batches_add_no_line() -> None:
    assert not any("left out" in line.text for line in store_lines(_summary({})))
    batch = describe(SweepFinished(1.0, _summary(LEFT), 1, 0, False))
    assert not any("left out" in line.text for line in batch)


def test_a_loaded_store_is_said_as_swept_at_the_sweep_s_time() -> None:
    """The line is timed at the sweep's end: it said "store loaded", a load that, by that
    time, had not happened (seen at 11:51: "11:31:09 store loaded")."""
    from dataclasses import replace
    from datetime import datetime

    finished = "2025-06-15T12:00:04+00:00"
    lines = store_lines(replace(_summary({}), finished=finished))
    assert lines[0].text == "store as swept: 3 files (ok 3)"
    assert lines[0].at == datetime.fromisoformat(finished).timestamp()
    assert store_lines(None, records=2)[0].text == "store loaded: 2 records (no summary)"
