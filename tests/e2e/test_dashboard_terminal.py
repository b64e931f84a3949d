"""End to end: the real ``quarry`` command in a terminal, used the way a person uses it.

At 80x24 and 160x50: open a store, filter, open a text of thousands of lines and scroll,
page, jump, search; open a text with one very wide line, wrap it and go to its end; visit
every screen; quit; check the exit code and that nothing was printed over the terminal.
Also ``quarry DIR`` itself (sweep, watch, quit). Screens are read through pyte on a pty.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.store import Store
from tests.e2e.terminal import Terminal, quarry_command
from tests.tui.conftest import text_store

LONG = "".join(
    f"line {i} with a needle here\n" if i == 1500 else f"line {i} of a long text\n"
    for i in range(3000)
)
WIDE = "start\n" + "wide " * 20_000 + "END\nafter the wide line\n"
TEXTS = {"long.txt": LONG, "sub/wide.txt": WIDE, "new\nline.txt": "a name with a newline\n"}
SIZES = [(80, 24), (160, 50)]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return text_store(tmp_path / "store", TEXTS).out


@pytest.fixture
def term_factory(tmp_path: Path) -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for term in opened:
        term.close()


def start(opened: list[Terminal], args: list[str], size: tuple[int, int], cwd: Path) -> Terminal:
    term = Terminal([*quarry_command(), *args], size[0], size[1], cwd)
    opened.append(term)
    return term


def top_number(text: str) -> int:
    """The line number at the top of the inspector's text (its second screen line)."""
    match = re.match(r"\s*(\d+) ", text.splitlines()[1])
    assert match, text
    return int(match.group(1))


def footer(text: str) -> str:
    return text.splitlines()[-1]


def box_shown(text: str) -> bool:
    """Whether the filter box is on screen (its top border)."""
    return "▔▔▔▔▔▔▔▔" in text


def filter_to(term: Terminal, text: str) -> None:
    """Type a path filter (clearing the old one) and go back to the table.

    Each step waits for what it shows: escape clears and hides the box; ``/`` shows it empty
    with its hint (and focused: the keys typed next land in it); the typed text appears in
    it; enter hands the keys back to the table (its ``q Quit`` is in the footer again: only
    the records screen shows it, a sub-screen binds q to back).
    """
    if box_shown(term.text()):
        term.press_and_wait("escape", lambda t: not box_shown(t))
    term.press_and_wait("/", lambda t: box_shown(t) and "field:value" in t)
    term.press(text)
    term.wait_for(lambda t: any(line.startswith("▊  " + text) for line in t.splitlines()))
    term.press_and_wait("enter", lambda t: "q Quit" in footer(t))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_read_long_and_wide_texts_visit_every_screen_and_quit(
    store: Path, tmp_path: Path, term_factory: list[Terminal], size: tuple[int, int]
) -> None:
    term = start(term_factory, ["ui", str(store)], size, tmp_path)  # (DIR: as --store)
    term.wait_for(r"long\.txt")
    term.wait_for("following")  # loaded: the start-up focus is settled, keys go where meant
    assert "new\\nline.txt" in term.text()  # a newline in a name is shown, not obeyed

    filter_to(term, "long")
    term.wait_for(lambda t: "wide.txt" not in t and "long.txt" in t)
    term.press("enter")
    term.wait_for(r"3,001 lines")
    assert top_number(term.text()) == 1
    term.press_and_wait("pagedown", lambda t: top_number(t) > 1)
    for _ in range(40):
        term.press("down")
    term.press_and_wait("end", "line 2999 of a long text")
    term.press_and_wait("home", lambda t: top_number(t) == 1)
    term.press("]", "[")  # no pages in a plain text: nothing happens, nothing breaks
    term.press("/")
    term.wait_for("search the text")
    term.press("needle", "enter")
    term.wait_for("line 1500 with a needle here")
    term.wait_for("1 match ")
    term.press("n", "N", "w")
    term.wait_for("wrap on")
    term.press_and_wait("escape", lambda t: "3,001 lines" not in t)

    filter_to(term, "wide")
    term.wait_for(lambda t: "long.txt" not in t and "wide.txt" in t)
    term.press("enter")
    term.wait_for(r"1 line cut at 2,000 characters")
    for _ in range(20):
        term.press("right")
    term.press("w")
    term.wait_for("wrap on")
    term.press_and_wait("end", "after the wide line")
    term.press_and_wait("escape", lambda t: "cut at 2,000" not in t)

    for key, title in (("t", "External tools"), ("x", "Errors"), ("@", "Activity")):
        # the title, with the screen's own footer: "x Errors" is in the records' footer too
        term.press_and_wait(key, lambda t, title=title: title in t and "esc Back" in footer(t))
        term.press_and_wait("escape", lambda t: "q Quit" in footer(t))  # the records again
    term.press_and_wait("?", "Everywhere")
    term.press_and_wait("escape", lambda t: "Everywhere" not in t)

    term.press("q")
    assert term.exit_code() == 0
    assert b"Traceback" not in term.raw


def test_quarry_dir_sweeps_watches_and_quits(tmp_path: Path, term_factory: list[Terminal]) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    (folder / "b.html").write_text("<p>beta</p>\n")
    term = start(term_factory, [str(folder)], (80, 24), tmp_path)
    term.wait_for("watching")
    term.wait_for(r"b\.html")
    term.press("q")
    assert term.exit_code() == 0
    assert b"Traceback" not in term.raw


def test_quarry_dir_whose_store_another_quarry_writes_follows_it_read_only(
    tmp_path: Path, term_factory: list[Terminal]
) -> None:
    """``quarry DIR`` while a ``quarry watch DIR`` runs in another terminal: it said only that
    the store was in use, and exited 1; now it shows the store as the other process writes
    it (read-only), and says why."""
    import sys

    from tests.engine.watchkit import watch_process

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    watch = [sys.executable, "-m", "engine", "watch", str(folder), "--workers", "1"]
    with watch_process(watch):
        term = start(term_factory, [str(folder)], (80, 24), tmp_path)
        term.wait_for("following another quarry")
        term.wait_for(r"READ-ONLY")
        (folder / "b.txt").write_text("written while the other quarry watches\n")
        term.wait_for(r"b\.txt")  # the other process's write, followed
        term.press("q")
        assert term.exit_code() == 0
        assert b"Traceback" not in term.raw


def test_q_during_the_first_sweep_stops_it_and_says_what_the_store_keeps(
    tmp_path: Path, term_factory: list[Terminal], monkeypatch: pytest.MonkeyPatch
) -> None:
    """q must not wait for a whole folder: the sweep stops, what was read is kept and said."""
    from tests.faultreader import ARGS, env, fixture

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(20):
        (folder / f"note{i:02d}.txt").write_text(f"note {i}\n")
    (folder / "zz-hangs.bin").write_bytes(fixture("hang"))  # the sweep never ends by itself
    monkeypatch.setenv("PYTHONPATH", env()["PYTHONPATH"])  # (the quarry it runs imports it)
    term = start(term_factory, [str(folder), "--timeout", "300", *ARGS], (100, 30), tmp_path)
    term.wait_for(r"sweeping")
    term.wait_for(r"ok 20\b")  # the notes are read; the hanging file holds the sweep
    term.press("q")
    assert term.exit_code(timeout=60) == 0
    tail = bytes(term.raw).decode("utf-8", "replace")
    assert "quarry: stopped before the first sweep finished: the store keeps 20 records" in tail
    assert "Traceback" not in tail
    records = Store(folder / ".quarry").load_records()
    assert sorted(r.path for r in records) == [f"note{i:02d}.txt" for i in range(20)]


def test_a_big_store_without_an_index_counts_every_record(
    tmp_path: Path, term_factory: list[Terminal]
) -> None:
    """A big store with no index (the seed's extract stage, another writer): the engine
    builds one in the user's cache from the file, the user sees every record, the lines that
    are not records named by their real line numbers, and a clean exit."""
    import orjson

    store = tmp_path / "store"
    store.mkdir()
    n, torn = 90_000, 61_234
    with open(store / "extract.jsonl", "wb") as fh:
        for i in range(n):
            if i == torn:
                fh.write(b'{"root":"/data","path":"torn\n')
            fh.write(orjson.dumps({
                "root": "/data", "path": f"d{i // 1000:03d}/file{i:06d}.pdf", "status": "ok",
                "mime": "application/pdf", "chars": i, "size": i,
                "error": "x" * 300,  # ~400 bytes a line: a big file
            }) + b"\n")  # fmt: skip
    assert (store / "extract.jsonl").stat().st_size > 32 << 20
    term = start(term_factory, ["ui", "--store", str(store)], (160, 50), tmp_path)
    # the tabs and the summary bar are separate widgets, drawn a frame apart at most
    wanted = (f"all {n:,}", "1 unreadable line", "file000000", f"files {n:,}")
    term.wait_for(lambda t: all(w in t for w in wanted), timeout=120)
    term.press("@")  # the activity log names it, by its line number in the whole file
    term.wait_for(r"line 61,235: cut short", timeout=60)
    term.press_and_wait("q", lambda t: "q Quit" in footer(t))  # q on a sub-screen: back
    term.press("q")
    assert term.exit_code() == 0


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_unsupported_groups_tools_files_and_export_without_dead_ends(
    tmp_path: Path, term_factory: list[Terminal], size: tuple[int, int]
) -> None:
    from tui.sample import build_sample_store

    store = build_sample_store(tmp_path / "store").out
    term = start(term_factory, ["ui", "--store", str(store)], size, tmp_path)
    term.wait_for("following")

    def detail_of(path: str) -> Callable[[str], bool]:
        return lambda t: path in t and "in 3 groups" not in t and "External tools" not in t

    term.press_and_wait("u", "Unsupported 3 in 3 groups")
    term.press("down")
    term.wait_for(lambda t: "unlocked by install tesseract" in t)
    term.press_and_wait("enter", "enter: open the file")  # into the group's files
    term.press_and_wait("enter", detail_of("images/photo.png"))  # the record in full
    term.press_and_wait("escape", "enter: open the file")  # back where it was
    term.press_and_wait("escape", "enter: the group's files")  # files -> groups
    term.press_and_wait("escape", lambda t: "q Quit" in footer(t))  # the records

    term.press_and_wait("t", "External tools")
    term.press("down", "down")
    term.wait_for(lambda t: "images/photo.png" in t)
    term.press_and_wait("enter", "enter: open the file")  # into tesseract's files
    term.press_and_wait("enter", detail_of("images/photo.png"))
    term.press_and_wait("escape", "enter: open the file")
    term.press_and_wait("escape", "listed on the left")  # files -> tools
    term.press_and_wait("escape", lambda t: "q Quit" in footer(t))

    term.press("5")  # the error tab, then export it: asks where, prefilled here
    term.press_and_wait("E", "Export 3 records")
    term.press_and_wait("enter", "exported 3 records")
    (written,) = tmp_path.glob("quarry-error-*.csv")
    assert written.read_text().startswith("root,path,size,mtime_ns,status,sha256")

    term.press("q")
    assert term.exit_code() == 0
    assert b"Traceback" not in term.raw
