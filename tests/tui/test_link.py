"""The dashboard's link to the engine, driven without Textual: typed changes out, the
notice-to-header state machine, and a store followed through its index."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.events import (
    Event,
    Level,
    Notice,
    NoticeKind,
    Progress,
    RecordsChanged,
    StoreHealth,
    StoreState,
    SweepFinished,
    SweepStarted,
    ToolsChanged,
)
from engine.records import Record, Summary
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from tui.link import Change, Link, Live, words
from tui.model import RecordModel
from tui.poll import Followed, StoreDiff
from tui.state import TriageState

ROOT = "/texts"
SUMMARY = Summary((ROOT,), 0, {})


def _link(*, sweeping: bool = True) -> Link:
    return Link(RecordModel(), TriageState(), sweeping=sweeping)


def _record(path: str, status: str = "ok", error: str | None = None) -> Record:
    return Record(ROOT, path, 1, 0, status, chars=1, error=error)


def test_events_come_back_as_one_typed_change() -> None:
    link = _link()
    applied = link.apply([SweepStarted(1.0, (ROOT,), 2, 2)], keep=None)
    assert applied.change.rows is None and link.state is Live.SWEEPING  # no record yet
    new = [_record("a.txt"), _record("b.txt", "error", "bad")]
    applied = link.apply(
        [RecordsChanged(2.0, tuple(new)), Progress(2.0, 2, 2, 2, 2, "b.txt")], keep=None
    )
    assert applied.change.rows is not None and link.progress == (2, 2)
    assert {link.model.key(rid) for rid in applied.change.rows} == {r.key for r in new}
    assert set(applied.seen) == set(new)  # their error groups may be new
    done = link.apply([SweepFinished(3.0, SUMMARY, 2, 0, full=True)], keep=7)
    assert done.full_sweep and link.state is Live.IDLE and link.progress is None
    # no row changes at the end, but the store now holds what the run committed: a text:
    # query is asked again; a run that changed nothing asks nothing
    assert done.change == Change(lines=done.change.lines, texts=True)
    link.apply([SweepStarted(4.0, (ROOT,), 2, 2)], keep=None)
    again = link.apply([SweepFinished(5.0, SUMMARY, 0, 2, full=True)], keep=7)
    assert again.change == Change(lines=again.change.lines)


def test_a_sweeps_new_rows_wait_for_its_end_when_rows_were_shown() -> None:
    link = _link()
    link.apply([RecordsChanged(0.5, (_record("old.txt"),))], keep=None)
    link.apply([SweepStarted(1.0, (ROOT,), 1, 1)], keep=None)
    held = link.apply([RecordsChanged(2.0, (_record("new.txt"),))], keep=None)
    assert held.change.rows is None and len(link.model) == 1  # held: not shown yet
    shown = link.stage(Live.WATCHING, "", keep=None)  # the session moved on mid-sweep
    assert shown.change.rows and len(link.model) == 2 and link.state is Live.WATCHING


def test_tools_found_and_warnings_pop_up_in_order() -> None:
    link = _link()
    applied = link.apply(
        [
            ToolsChanged(1.0, ("pdftotext",), ("pdftotext",), ()),
            Notice(2.0, NoticeKind.RESCAN, "rescan: asked"),
            Notice(3.0, NoticeKind.POLLING, "polling every 2 s"),
            Notice(4.0, NoticeKind.WATCH_ERROR, "observer stopped", "error"),
        ],
        keep=None,
    )
    said = [(s.title, s.severity) for s in applied.say]
    assert said == [
        ("tools", "information"),
        ("watching by polling", "warning"),
        ("watch-error", "error"),
    ]


def test_the_store_health_pops_up_as_its_notice_did() -> None:
    """Trouble and loss pop up as errors titled with their old notice word; the store
    taking changes again is news for the header only."""
    link = _link()
    link.watching = True
    trouble = link.apply([StoreHealth(1.0, StoreState.TROUBLE, "disk full")], keep=None)
    assert link.state is Live.RETRYING
    ok = link.apply([StoreHealth(2.0, StoreState.OK, "taken again")], keep=None)
    assert link.state is Live.WATCHING
    lost = link.apply([StoreHealth(3.0, StoreState.LOST, "gone")], keep=None)
    assert link.state is Live.STORE_LOST and not link.watching
    said = [(s.message, s.title, s.severity) for a in (trouble, ok, lost) for s in a.say]
    assert said == [("disk full", "store-trouble", "error"), ("gone", "store-lost", "error")]
    assert [
        (s.title, s.severity)
        for s in link.apply([Notice(4.0, NoticeKind.RESCAN, "r", Level.WARNING)], keep=None).say
    ] == [("rescan", "warning")]


@settings(deadline=None, max_examples=200)
@given(
    st.lists(
        st.sampled_from([*StoreState, "finished", "started", "watching"]), min_size=1, max_size=30
    )
)
def test_the_header_never_says_watching_while_the_store_lags(steps: list[object]) -> None:
    """Any order of store notices, sweeps and the session's stage: the state is the last
    store trouble until the store takes changes again, and never "watching" after the
    store was lost."""
    link = _link()
    trouble: Live | None = None
    lost = False
    for n, step in enumerate(steps):
        at = float(n)
        events: list[Event]
        if step == "watching":
            link.stage(Live.WATCHING, "", keep=None)
            continue
        if step == "started":
            events = [SweepStarted(at, (ROOT,), 1, 1)]
        elif step == "finished":
            events = [SweepFinished(at, SUMMARY, 0, 0, full=False)]
        else:
            assert isinstance(step, StoreState)
            events = [StoreHealth(at, step, "m")]
            if step is StoreState.OK:
                trouble = None
            else:
                trouble = Live.RETRYING if step is StoreState.TROUBLE else Live.STORE_LOST
            lost = lost or step is StoreState.LOST
        link.apply(events, keep=None)
        if step == "finished" or isinstance(step, StoreState):
            if trouble is not None:
                assert link.state is trouble
            elif step == "finished" or step is StoreState.OK:
                assert link.state in (Live.WATCHING, Live.IDLE)
        if lost and not any(s == "watching" for s in steps[steps.index(StoreState.LOST) :]):
            assert link.state is not Live.WATCHING


def test_the_state_and_its_words_are_apart() -> None:
    link = _link()
    link.apply([StoreHealth(1.0, StoreState.LOST, "gone")], keep=None)
    assert link.state is Live.STORE_LOST and words(link.state) == "stopped: store lost"
    text = link.state_text(writable=False, paused=False, pending=0)
    assert text == "read-only · stopped: store lost"
    assert link.state_text(writable=True, paused=True, pending=3) == "paused · 3 pending"
    assert {words(s) for s in Live} >= {"not stored: retrying", "watching", "following"}


def test_a_store_is_followed_through_its_index(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    options = SweepOptions(tools=ToolSet.empty(), workers=1)
    sweep([root], options)
    store = Store(root / ".quarry")
    link = _link(sweeping=False)
    caught = link.catch_up(store)  # no point in its history yet: read whole
    assert isinstance(caught, StoreDiff)
    applied = link.diffed(caught, keep=None)
    assert len(link.model) == 1 and link.point is not None
    assert applied.change.rows == frozenset({link.model.ids[(str(root), "a.txt")]})
    (root / "b.txt").write_text("bravo\n")
    sweep([root], options)
    caught = link.catch_up(store)
    assert isinstance(caught, Followed)  # the index says what changed
    applied = link.followed(caught, keep=None)
    assert len(link.model) == 2 and applied.change.rows
    assert "b.txt" in {r.path for r in applied.seen}
    again = link.catch_up(store)
    assert isinstance(again, Followed) and link.followed(again, keep=None).change == Change()
