"""Issue 24: a link inside a store is never followed.

The default store lives in the folder it describes (``DIR/.quarry``), so whoever sends the
folder also sends its store, links and all. No verb may write, empty or read anything through
such a link: the store is refused (one line, exit 1, nothing changed) or the link is treated as
what it is, never as its target.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.widgets import Static

from engine.cli import main
from engine.commands import reading_store
from engine.errors import QuarryError
from engine.records import Record
from engine.session import Session
from engine.store import Store
from engine.sweep import SweepOptions
from engine.tools import ToolSet
from tests.engine.watchkit import options
from tests.tui.conftest import SIZE, settle
from tui.app import QuarryApp
from tui.loader import load_rows, open_rows, read_summary
from tui.screens.inspector import InspectorScreen

SECRET = "SECRET-0f3a9c-never-to-be-shown"
"""What the files outside the store hold: it must show up nowhere."""
WAIT_S = 60.0
"""Longest a test waits for a quarry process it started (a loaded 2-core machine)."""


def _run(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _received(base: Path) -> tuple[Path, Path]:
    """A folder swept into its default store, and a folder of the user's beside it."""
    recv, victim = base / "recv", base / "victim"
    recv.mkdir()
    victim.mkdir()
    (recv / "a.txt").write_text("the document called a\n")
    (recv / "b.txt").write_text("the document called b\n")
    (victim / "thesis.docx").write_text(f"{SECRET} the thesis\n")
    code, _out, err = _run("sweep", recv, "-q", "--no-external", "--workers", "1")
    assert code == 0, err
    return recv, victim


def _text_of(recv: Path, name: str) -> Path:
    store = Store(recv / ".quarry")
    rec = next(r for r in store.load_records() if r.path == name)
    assert rec.sha256 is not None
    return store.text_path(rec.sha256)


def _link(where: Path, to: Path) -> None:
    """Put a link to ``to`` where ``where`` is (a file or folder there goes first)."""
    if where.is_dir() and not where.is_symlink():
        shutil.rmtree(where)
    elif os.path.lexists(where):
        where.unlink()
    where.symlink_to(to)


def _tree(top: Path, skip: str = "") -> dict[str, tuple[str, bytes]]:
    """Every name under ``top`` (links not followed) and what it is: its bytes, its target."""
    found: dict[str, tuple[str, bytes]] = {}
    for folder, dirs, files in os.walk(top):
        rel_folder = os.path.relpath(folder, top)
        dirs[:] = [d for d in dirs if d != skip]
        for name in dirs + files:
            p = os.path.join(folder, name)
            rel = os.path.normpath(os.path.join(rel_folder, name))
            if os.path.islink(p):
                found[rel] = ("link", os.fsencode(os.readlink(p)))
            elif os.path.isdir(p):
                found[rel] = ("folder", b"")
            else:
                found[rel] = ("file", Path(p).read_bytes())
    return found


def _one_line_about_the_store(code: int, err: str) -> None:
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("quarry: "), err
    assert "link" in lines[0], err


def _quarry(*args: str | Path) -> subprocess.Popen[str]:
    """The real ``quarry`` command, its input a closed pipe, its output kept."""
    return subprocess.Popen(
        [sys.executable, "-m", "tui", *map(str, args)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _ended(proc: subprocess.Popen[str]) -> tuple[int | None, str]:
    """The process's exit status and stderr once it ends (None if it is still running after
    WAIT_S: it is then stopped)."""
    try:
        _out, err = proc.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, ""
    return proc.returncode, err


# -- the issue's reproductions ------------------------------------------------------------------


def test_the_issues_received_folder_with_tmp_a_link_empties_nothing(tmp_path: Path) -> None:
    recv, victim = tmp_path / "recv", tmp_path / "victim"
    (recv / ".quarry").mkdir(parents=True)
    victim.mkdir()
    (victim / "thesis.docx").write_text("x\n")
    (recv / "a.txt").write_text("doc\n")
    (recv / ".quarry" / "quarry-store.json").write_text('{"format":1,"written_by":"quarry"}\n')
    (recv / ".quarry" / "tmp").symlink_to("../../victim")
    code, _out, err = _run("sweep", recv, "--no-external")
    _one_line_about_the_store(code, err)
    assert "tmp" in err
    assert (victim / "thesis.docx").read_text() == "x\n"


@pytest.mark.parametrize("verb", ["sweep", "retry"])
def test_tmp_a_link_in_a_swept_store_empties_nothing(tmp_path: Path, verb: str) -> None:
    recv, victim = _received(tmp_path)
    _link(recv / ".quarry" / "tmp", victim)
    before = _tree(victim)
    target = recv if verb == "sweep" else recv / "a.txt"
    code, _out, err = _run(verb, target, "--no-external")
    _one_line_about_the_store(code, err)
    assert _tree(victim) == before


@pytest.mark.parametrize("verb", ["watch", "open"])
def test_tmp_a_link_empties_nothing_for_watch_or_the_dashboard(tmp_path: Path, verb: str) -> None:
    recv, victim = _received(tmp_path)
    _link(recv / ".quarry" / "tmp", victim)
    before = _tree(victim)
    args = ("watch", recv) if verb == "watch" else (recv,)
    code, err = _ended(_quarry(*args, "--no-external"))
    assert _tree(victim) == before
    _one_line_about_the_store(code if code is not None else -1, err)


def test_lock_a_link_to_a_file_leaves_that_file_as_it_was(tmp_path: Path) -> None:
    recv, victim = _received(tmp_path)
    thesis = victim / "thesis.docx"
    _link(recv / ".quarry" / "lock", thesis)
    code, _out, err = _run("sweep", recv, "--no-external")
    _one_line_about_the_store(code, err)
    assert SECRET in thesis.read_text()


def test_a_dangling_sweep_dirty_link_creates_nothing(tmp_path: Path) -> None:
    recv, victim = _received(tmp_path)
    _link(recv / ".quarry" / "sweep.dirty", victim / "planted")
    (recv / "c.txt").write_text("a new document, to be read\n")
    code, _out, err = _run("sweep", recv, "--no-external")
    _one_line_about_the_store(code, err)
    assert not os.path.lexists(victim / "planted")


def test_a_text_folder_linked_elsewhere_gets_no_new_text(tmp_path: Path) -> None:
    recv, victim = _received(tmp_path)
    body = "a new document whose text folder is a link\n"
    prefix = hashlib.sha256(body.encode()).hexdigest()[:2]
    (recv / "c.txt").write_text(body)
    elsewhere = victim / "texts"
    elsewhere.mkdir()
    _link(recv / ".quarry" / "extract" / prefix, elsewhere)
    code, _out, err = _run("sweep", recv, "--no-external")
    _one_line_about_the_store(code, err)
    assert f"extract/{prefix}" in err
    assert list(elsewhere.iterdir()) == []


def test_a_text_that_is_a_link_is_missing_never_its_target(tmp_path: Path) -> None:
    recv, victim = _received(tmp_path)
    text = _text_of(recv, "a.txt")
    _link(text, victim / "thesis.docx")

    code, out, err = _run("show", recv / "a.txt")
    assert SECRET not in out + err
    assert code == 1 and "not in the store" in err, err

    app = QuarryApp(recv / ".quarry", None, read_only=True)
    rec = next(r for r in app.store.load_records() if r.path == "a.txt")
    with pytest.raises(OSError):
        app.stored_text(rec)

    # the next sweep reads the document again: its text replaces the link
    code, _out, err = _run("sweep", recv, "-q", "--no-external")
    assert code == 0, err
    assert not text.is_symlink() and text.read_text() == "the document called a\n"
    code, out, err = _run("show", recv / "a.txt")
    assert code == 0 and "the document called a" in out and SECRET not in out
    assert SECRET in (victim / "thesis.docx").read_text()


async def test_the_inspector_never_shows_a_linked_texts_target(tmp_path: Path) -> None:
    recv, victim = _received(tmp_path)
    _link(_text_of(recv, "a.txt"), victim / "thesis.docx")
    app = QuarryApp(recv / ".quarry", None, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rid = app.model.ids[(str(recv), "a.txt")]
        app.open_record(rid)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        status = screen.query_one("#status", Static)
        end = time.monotonic() + WAIT_S
        while str(status.render()) == "loading…":  # the text is read in a thread
            assert time.monotonic() < end, "the inspector never read the text"
            await pilot.pause(0.05)
        shown = str(status.render()) + "\n".join(screen.view.doc.lines)
        assert SECRET not in shown
        assert "cannot read" in shown


@pytest.mark.parametrize("verb", ["retry", "show"])
def test_a_dangling_records_link_is_named_not_taken_for_no_store(tmp_path: Path, verb: str) -> None:
    recv, victim = _received(tmp_path)
    _link(recv / ".quarry" / "extract.jsonl", victim / "nothing")
    code, _out, err = _run(verb, recv / "a.txt")
    _one_line_about_the_store(code, err)
    assert "extract.jsonl" in err
    assert not os.path.lexists(victim / "nothing")


def test_a_default_store_that_is_a_link_is_refused(tmp_path: Path) -> None:
    recv, victim = _received(tmp_path)
    elsewhere = victim / "store"
    shutil.move(recv / ".quarry", elsewhere)
    (recv / ".quarry").symlink_to(elsewhere)
    before = _tree(victim)
    for argv in (("sweep", recv, "--no-external"), ("show", recv / "a.txt")):
        code, _out, err = _run(*argv)
        _one_line_about_the_store(code, err)
    assert _tree(victim) == before


def test_an_out_the_user_typed_may_go_through_links_above_it(tmp_path: Path) -> None:
    recv, _victim = _received(tmp_path)
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real)
    code, _out, err = _run("sweep", recv, "-q", "--no-external", "--out", tmp_path / "via" / "s")
    assert code == 0, err
    assert Store(real / "s").load_records()


# -- the property: any link anywhere in a store, any verb ---------------------------------------

TARGETS = (
    "",
    "extract.jsonl",
    "extract.summary.json",
    "extract.stat",
    "quarry-store.json",
    "lock",
    "sweep.dirty",
    "tmp",
    "tmp/stale.txt",
    "extract",
    "extract/{aa}",
    "extract/{aa}/{sha}.txt",
    "extract/{bb}/{shb}.txt",
)
"""Names in a store (relative to it; "" is the store folder itself) that may be links."""
KINDS = ("file", "folder", "dangling", "inside")
"""What a link points to: a file outside, a folder outside, nothing, a file of the store."""
VERBS = ("sweep", "retry", "show", "tools", "ui", "watch", "grep")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder swept once: every example starts from a copy of it, at the same place."""
    base = tmp_path_factory.mktemp("links")
    recv, _victim = _received(base)
    shutil.move(recv, base / "template")
    yield base


def _outside(base: Path) -> Path:
    out = base / "outside"
    shutil.rmtree(out, ignore_errors=True)
    (out / "folder").mkdir(parents=True)
    (out / "secret.txt").write_text(f"{SECRET} in a file\n")
    (out / "folder" / "inner.txt").write_text(f"{SECRET} in a folder\n")
    return out


def _plant(store: Path, names: list[str], kind: str, out: Path, n: int) -> None:
    sha = {r.path: r.sha256 or "" for r in Store(store).load_records()}
    a, b = sha["a.txt"], sha["b.txt"]
    for i, name in enumerate(names):
        where = store / name.format(aa=a[:2], sha=a, bb=b[:2], shb=b)
        to = {
            "file": out / "secret.txt",
            "folder": out / "folder",
            "dangling": out / f"ghost-{n}-{i}",
            "inside": store / "extract" / b[:2] / f"{b}.txt",
        }[kind]
        if where.parent.is_dir() and not where.parent.is_symlink():
            _link(where, to)


def _verb(verb: str, recv: Path) -> tuple[int, str]:
    """Run ``verb`` on the received folder: its exit status and everything it said or gave."""
    if verb == "grep":  # (looking for the very words a link outside would bring in)
        code, out, err = _run("grep", SECRET[:13], recv)
        assert "Traceback" not in err
        if code == 2:  # grep's trouble
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("quarry: "), err
            assert _names_the_store_problem(lines[0]), err
            return 1, out + err
        assert code in (0, 1), err
        return 0, out + err
    if verb in ("sweep", "retry", "show", "tools"):
        argv = {
            "sweep": ("sweep", recv, "--no-external", "--workers", "1"),
            "retry": ("retry", recv / "a.txt", "--no-external", "--workers", "1"),
            "show": ("show", recv / "a.txt"),
            "tools": ("tools", recv),
        }[verb]
        code, out, err = _run(*argv)
        assert "Traceback" not in err
        if code == 1:
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("quarry: "), err
            assert _names_the_store_problem(lines[0]), err
        else:
            assert code == 0, err
        return code, out + err
    try:
        said = _ui(recv) if verb == "ui" else _watch(recv)
    except QuarryError as exc:  # what main turns into one line and exit 1
        assert "\n" not in str(exc) and _names_the_store_problem(str(exc)), str(exc)
        return 1, str(exc)
    return 0, said


def _names_the_store_problem(line: str) -> bool:
    """Whether a refusal says what is wrong: a link in the store, or a text it lacks."""
    return "a link" in line or "is a link" in line or "not in the store" in line


def _ui(recv: Path) -> str:
    """What ``quarry ui --store`` does before and while it shows the store."""
    store = reading_store(recv)
    opened = open_rows(store)  # the engine's table of the records, as the dashboard loads it
    keys = [k for chunk in load_rows(opened) for k in chunk.rows.keys()]  # noqa: SIM118
    records = [opened.table.record(key) for key in keys]  # what its detail pane shows
    lines = "".join(r.to_json().decode("utf-8", "replace") for r in records if r is not None)
    rows = len(keys)
    summary, problem = read_summary(store)
    app = QuarryApp(store.out, None, read_only=True)
    texts = []
    for rec in store.load_records():
        try:
            texts.append((app.stored_text(rec) or b"").decode("utf-8", "replace"))
        except OSError as exc:
            texts.append(str(exc))
    return repr((lines, rows, summary, problem)) + "".join(texts)


def _watch(recv: Path) -> str:
    """Watch the folder until a new file is recorded (bounded), then stop."""
    opts = SweepOptions(tools=ToolSet.empty(), workers=1)
    session = Session([recv], opts, watch_options=options(poll=True))
    try:
        session.sweep_then_watch()
        (recv / "new.txt").write_text("written while watched\n")
        end = time.monotonic() + WAIT_S
        recs: list[Record] = []
        while not any(r.path == "new.txt" for r in recs):
            assert time.monotonic() < end, "the watcher never recorded the new file"
            time.sleep(0.05)
            recs = session.store.load_records()
        return repr(recs)
    finally:
        session.close()


def _store_files(store: Path) -> str:
    """Every regular file the store holds (links not followed), as text."""
    found = []
    for folder, _dirs, files in os.walk(store):
        for name in files:
            p = os.path.join(folder, name)
            if not os.path.islink(p):
                found.append(Path(p).read_bytes().decode("utf-8", "replace"))
    return "\n".join(found)


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(st.sampled_from(TARGETS), min_size=1, max_size=2, unique=True),
    kind=st.sampled_from(KINDS),
    verb=st.sampled_from(VERBS),
)
def test_no_link_in_a_store_reaches_outside_it(
    template: Path, names: list[str], kind: str, verb: str
) -> None:
    base = template
    recv = base / "recv"
    shutil.rmtree(recv, ignore_errors=True)
    shutil.copytree(base / "template", recv, symlinks=True)
    out = _outside(base)
    store = recv / ".quarry"
    if "" in names:
        shutil.move(store, out / "store")  # the store folder itself is the link
        store.symlink_to(out / "store")
    else:
        _plant(store, names, kind, out, len(list(out.iterdir())))
    before = (_tree(out), _tree(recv, skip=".quarry"))

    code, said = _verb(verb, recv)

    assert code in (0, 1)
    assert SECRET not in said
    after_recv = _tree(recv, skip=".quarry")
    after_recv.pop("new.txt", None)  # the watch example's own change
    assert (_tree(out), after_recv) == before
    if not os.path.islink(store):
        assert SECRET not in _store_files(store)
