"""Pilot tests of ``P``: a password for encrypted files, from the errors screen and the records
screen, kept for the session only, and never written to the store, the log or a notification.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input

from engine.passwords import Passwords
from engine.records import Key
from tests.locked_files import DOCX_WORDS, PDF_WORDS, write_locked
from tests.tui.conftest import SIZE, settle
from tests.tui.triage_helpers import (
    NO_TOOLS,
    TriageApp,
    notes,
    screen_text,
    session_over,
    swept_home,
    wait_until,
)
from tui.screens.errors import ErrorsScreen
from tui.screens.password import KEPT, PasswordScreen
from tui.screens.records import RecordsScreen
from tui.state import TriageState

TYPED = "Sesame42"
"""The password typed into the box (the locked files' own)."""
SAMPLE_PASSWORD = "hunter2"
"""The password of the sample folder's hostile/pdf_password.pdf (fixtures/gen/pdf.py)."""


def _status(app: TriageApp, root: Path, path: str) -> tuple[str, str | None]:
    record = app.model.record(app.model.ids[(str(root), path)])
    assert record is not None
    return record.status, record.reason


def _idle(app: TriageApp) -> bool:
    return not app.triage.retrying and not [w for w in app.workers if w.group == "retry"]


async def _give(pilot, app: TriageApp, typed: str = "", file: Path | None = None) -> None:  # type: ignore[no-untyped-def]
    """Answer the password screen: type ``typed``, or name ``file``; enter; wait for the retry."""
    await wait_until(pilot, lambda: isinstance(app.screen, PasswordScreen))
    screen = app.screen
    assert KEPT in str(screen.query_one("#password-kept").render())
    if file is not None:
        screen.query_one("#password-file", Input).value = str(file)
    await pilot.press(*typed, "enter")
    await wait_until(pilot, lambda: not isinstance(app.screen, PasswordScreen))
    await wait_until(pilot, lambda: _idle(app))
    await settle(pilot)


async def _highlight_group(pilot, app: TriageApp, screen: ErrorsScreen, key: Key) -> None:  # type: ignore[no-untyped-def]
    """Once the screen shows ``key``'s current verdict (it redraws on a timer after live
    changes), put the cursor on its group."""

    def row() -> int | None:
        record, shown = app.model.record(app.model.ids[key]), screen.records.get(key)
        if record is None or shown is None or shown.error != record.error:
            return None
        return next((i for i, g in enumerate(screen.groups) if key in g.keys), None)

    await wait_until(pilot, lambda: row() is not None)
    screen.query_one("#groups", DataTable).move_cursor(row=row())
    await settle(pilot)


def _nowhere(app: TriageApp, store: Path, *secrets: str) -> None:
    """No password in any file of the store, any activity line or any notification."""
    for path in store.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(s.encode() in data for s in secrets), path
    lines = [line.text for line in app.triage.activity.lines]
    for text in (*lines, *notes(app), repr(app.triage)):
        assert not any(s in text for s in secrets), text


async def test_a_password_from_the_errors_screen_opens_the_group(
    sample: Path, tmp_path: Path
) -> None:
    write_locked(sample / "locked", TYPED)
    with session_over(sample, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await swept_home(pilot, app)
            await pilot.press("x")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, ErrorsScreen)
            assert "P Password" in screen_text(app).splitlines()[-1]  # in the footer
            locked_pdf = (str(sample), "locked/locked.pdf")
            await _highlight_group(pilot, app, screen, locked_pdf)

            await pilot.press("P")  # a wrong password first: nothing opens, and it says so
            await _give(pilot, app, "wrong")
            assert _status(app, sample, "locked/locked.pdf") == ("error", "encrypted")
            assert any("opened 0 of 2 encrypted files" in n and "still encrypted" in n
                       for n in notes(app))  # fmt: skip

            # its group is now "the password given did not open it": the cursor followed the
            # group's files there by itself
            def followed() -> bool:
                group = screen.group
                return (
                    group is not None
                    and locked_pdf in group.keys
                    and "did not open" in (screen.records[locked_pdf].error or "")
                )

            await wait_until(pilot, followed)
            await settle(pilot)
            await pilot.press("P")  # the right one: the modal says one is held already
            await wait_until(pilot, lambda: isinstance(app.screen, PasswordScreen))
            assert "1 given before" in str(app.screen.query_one("#password-kept").render())
            await _give(pilot, app, TYPED)
            assert _status(app, sample, "locked/locked.pdf") == ("ok", None)
            # pdf_password.pdf, in the same group, has another password
            assert _status(app, sample, "hostile/pdf_password.pdf") == ("error", "encrypted")
            assert any("opened 1 of 2 encrypted files" in n for n in notes(app))

            # a password file, from the files of the group: the highlighted file alone
            file = tmp_path / "passwords.txt"
            file.write_text(f"not this\n{SAMPLE_PASSWORD}\n")
            await _highlight_group(pilot, app, screen, (str(sample), "hostile/pdf_password.pdf"))
            await pilot.press("enter")
            await settle(pilot)
            await pilot.press("P")
            await _give(pilot, app, file=file)
            assert _status(app, sample, "hostile/pdf_password.pdf") == ("ok", None)
            assert any("opened 1 of 1 encrypted file" in n for n in notes(app))

            # the records came back with their text
            rid = app.model.ids[(str(sample), "locked/locked.pdf")]
            record = app.model.record(rid)
            assert record is not None
            text = app.stored_text(record)
            assert text is not None and PDF_WORDS in text.decode()
            _nowhere(app, session.store.out, TYPED, SAMPLE_PASSWORD, "not this")


async def test_a_password_from_the_records_screen_and_reused_by_a_plain_retry(
    sample: Path,
) -> None:
    write_locked(sample / "locked", TYPED)
    with session_over(sample, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await swept_home(pilot, app)
            records = app.screen
            assert isinstance(records, RecordsScreen)
            await pilot.press("slash", *"locked/", "enter")  # the query line: two files
            await settle(pilot)
            table = records.table
            table.focus()
            await pilot.press("home")
            await settle(pilot)
            docx_first = app.model.record(table.rid or 0)
            assert docx_first is not None and docx_first.path == "locked/locked.docx"

            await pilot.press("P")
            await _give(pilot, app, TYPED)
            assert _status(app, sample, "locked/locked.docx") == ("ok", None)
            record = app.model.record(app.model.ids[(str(sample), "locked/locked.docx")])
            assert record is not None and record.why == "forced"
            text = app.stored_text(record)
            assert text is not None and DOCX_WORDS in text.decode()

            # r on the other one: the session's password is tried again, no second P
            await pilot.press("down")
            await settle(pilot)
            await pilot.press("r")
            await wait_until(pilot, lambda: _idle(app))
            await settle(pilot)
            assert _status(app, sample, "locked/locked.pdf") == ("ok", None)

            # P on a record that is not encrypted: not offered, no password screen
            assert not records._password_applies
            await pilot.press("P")
            await settle(pilot)
            assert isinstance(app.screen, RecordsScreen)
            _nowhere(app, session.store.out, TYPED)


async def test_no_password_is_offered_read_only(sample: Path) -> None:
    write_locked(sample / "locked", TYPED)
    with session_over(sample, NO_TOOLS) as session:
        session.sweep()
        store = session.store.out
    app = TriageApp(store, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.model) > 0)
        await settle(pilot)
        await pilot.press("slash", *"locked/locked.pdf", "enter")
        await settle(pilot)
        app.screen.query_one("RecordTable").focus()
        await pilot.press("P")
        await settle(pilot)
        assert not isinstance(app.screen, PasswordScreen)
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("P")
        await settle(pilot)
        assert not isinstance(app.screen, PasswordScreen)


def test_the_session_keeps_passwords_in_order_and_out_of_its_repr() -> None:
    triage = TriageState()
    triage.add_passwords(Passwords.of(["first-secret"]))
    triage.add_passwords(Passwords.of(["first-secret", "second-secret"]))
    assert triage.passwords.values == ("first-secret", "second-secret")
    assert "secret" not in repr(triage) and "secret" not in repr(triage.passwords)
