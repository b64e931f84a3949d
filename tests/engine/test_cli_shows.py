"""``quarry show``, ``retry`` and ``tools`` as a user meets them (issues 24 and 25).

``show`` on a terminal obeys nothing a text holds and piped gives its exact bytes; it prints
what a person reads, and ``--json`` what a machine reads; ``retry`` exits by the files it
retried; ``tools DIR`` on a folder never swept guesses from detection alone.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import orjson
import pytest

from engine.readers.registry import builtin_readers
from engine.records import Record
from engine.store import Store
from fixtures.gen._cfb import compound_file
from tests.e2e.terminal import Terminal, quarry_command

QUARRY = [sys.executable, "-m", "engine"]
HOSTILE = (
    "before \x1b]0;PWNED\x07 title\n"
    "clip \x1b]52;c;cHduZWQ=\x07 board\n"
    "screen \x1b[2J cleared \x9b31m c1 \u202eeerht\u202c and a\x08\x7f\f"
    "page two\ttab\n"
)
"""A text that retitles the terminal, writes its clipboard, clears it, turns text red (C1
CSI), reverses a word, backs over a character: everything a terminal would obey."""
BROKEN_PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog"


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*QUARRY, *args], capture_output=True, timeout=120, stdin=subprocess.DEVNULL
    )


def swept(root: Path, files: dict[str, str | bytes], code: int = 0) -> Path:
    root.mkdir()
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    proc = run("sweep", "-q", "--no-external", "--workers", "1", str(root))
    assert proc.returncode == code, proc.stderr
    return root


def stored_line(root: Path, rel: str) -> bytes:
    """The record's line in the store, as written."""
    for line in (root / ".quarry" / "extract.jsonl").read_bytes().splitlines(keepends=True):
        if Record.from_json(line).path == rel:
            return line
    raise AssertionError(f"no record of {rel}")


def stored_text(root: Path, rel: str) -> bytes:
    """The bytes of the record's text file in the store."""
    sha = Record.from_json(stored_line(root, rel)).sha256
    assert sha is not None
    return Store(root / ".quarry").text_path(sha).read_bytes()


# -- issue 24: a text is never obeyed by the terminal ---------------------------------------


def test_show_on_a_terminal_obeys_nothing_the_text_holds_and_piped_is_exact(
    tmp_path: Path,
) -> None:
    root = swept(tmp_path / "docs", {"evil.txt": HOSTILE})
    term = Terminal([*quarry_command(), "show", str(root / "evil.txt")], 100, 40, tmp_path)
    try:
        assert term.exit_code() == 0, term.tail()
        raw = bytes(term.raw)
    finally:
        term.close()
    said = raw.decode("utf-8")
    # nothing the text holds reaches the terminal as a control: no ESC, BEL, CR, C1, override
    for control in ("\x1b", "\x07", "\x9b", "\u202e", "\f", "\x08", "\x7f"):
        assert control not in said, (control, said)
    assert "\r" not in said.replace("\r\n", "\n")  # the pty's own line ends only
    assert "␛]0;PWNED␇ title" in said and "␛]52;c;cHduZWQ=␇ board" in said
    assert "␛[2J cleared \ufffd31m c1 <right-to-left override>eerht" in said
    assert "a␈␡␌page two\ttab" in said  # shown, and a tab kept
    assert "PWNED" not in term.screen.title  # pyte, as a terminal, took no new title

    piped = run("show", str(root / "evil.txt"))
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.endswith(("-" * 40 + "\n").encode() + HOSTILE.encode())
    assert piped.stdout.endswith(b"\n" + stored_text(root, "evil.txt"))


def test_show_says_the_fields_of_a_hostile_name_on_one_line_each(tmp_path: Path) -> None:
    name = "a\x1b]0;PWNED\x07\u202e.txt"
    root = swept(tmp_path / "docs", {name: "plain"})
    proc = run("show", "--no-text", str(root / name))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "     path: a\\x1b]0;PWNED\\x07\\u202e.txt\n" in out


# -- issue 25: what a person reads, what a machine reads ------------------------------------


def _container(tmp_path: Path) -> Path:
    pack = tmp_path / "pack.zip"
    with zipfile.ZipFile(pack, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("notes/good.txt", "hello from inside")
        z.writestr("broken.pdf", BROKEN_PDF)
    return swept(tmp_path / "docs", {"pack.zip": pack.read_bytes(), "a.txt": "alpha"}, code=0)


def test_show_prints_what_a_person_reads_not_python_reprs(tmp_path: Path) -> None:
    root = _container(tmp_path)
    proc = run("show", "--no-text", str(root / "pack.zip"))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    for repr_of_python in ("None", "()", "[]", "{'", "False", "True", "mtime_ns"):
        assert repr_of_python not in out, (repr_of_python, out)
    lines = out.splitlines()
    assert "   status: ok" in lines and "  quality: good" in lines
    assert "  members: 2, 1 not read" in lines
    members = lines[lines.index("  members: 2, 1 not read") + 1 :][:2]
    assert members[0].split() == ["ok", "notes/good.txt"]
    assert members[1].split()[:2] == ["error/corrupt", "broken.pdf:"]
    assert "pypdf could not read it" in members[1]
    zip_reader = next(r for r in builtin_readers() if r.name == "zip")
    assert "extractor: zip" in lines and f"   reader: zip v{zip_reader.version}" in lines
    assert not any(line.startswith(("   reason:", "    pages:", "  crashes:")) for line in lines)

    proc = run("show", "--no-text", str(root / "a.txt"))
    lines = proc.stdout.decode().splitlines()
    assert not any(line.lstrip().startswith(("members:", "needs:", "error:")) for line in lines)


def test_show_json_is_the_store_line_plus_the_text(tmp_path: Path) -> None:
    root = swept(tmp_path / "docs", {"evil.txt": HOSTILE})
    line = stored_line(root, "evil.txt")

    proc = run("show", "--json", "--no-text", str(root / "evil.txt"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == line  # the store's own line, byte for byte

    proc = run("show", "--json", str(root / "evil.txt"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(b"\n") == 1 and b"\x1b" not in proc.stdout
    got = orjson.loads(proc.stdout)
    assert got == {**orjson.loads(line), "text": stored_text(root, "evil.txt").decode()}
    assert got["text"] == HOSTILE
    assert Record.from_dict(got) == Record.from_json(line)


def test_show_json_of_a_record_without_text_says_null(tmp_path: Path) -> None:
    root = swept(tmp_path / "docs", {"bad.pdf": BROKEN_PDF}, code=2)
    proc = run("show", "--json", str(root / "bad.pdf"))
    assert proc.returncode == 0, proc.stderr
    got = orjson.loads(proc.stdout)
    assert got["status"] == "error" and got["text"] is None


# -- issue 25: retry's exit code is about the files it retried ------------------------------


def test_retry_exit_code_is_about_the_files_retried(tmp_path: Path) -> None:
    root = swept(tmp_path / "docs", {"good.txt": "fine", "bad.pdf": BROKEN_PDF}, code=2)
    proc = run("retry", "--no-external", "--workers", "1", str(root / "good.txt"))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)  # the store still has an error
    proc = run("retry", "--no-external", "--workers", "1", str(root / "bad.pdf"))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    proc = run("retry", "--no-external", "--workers", "1", str(root))  # the folder: both
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    (root / "bad.pdf").write_text("fixed")
    proc = run("retry", "--no-external", "--workers", "1", str(root / "bad.pdf"))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)


# -- issue 25: tools DIR on a folder never swept --------------------------------------------


@pytest.fixture
def unswept(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "scans").mkdir(parents=True)
    for i in range(3):
        (root / "scans" / f"page{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    (root / "old.doc").write_bytes(compound_file({"WordDocument": b"\0" * 4096}))
    (root / "notes.txt").write_text("no tool needed")
    return root


def test_tools_dir_never_swept_guesses_from_detection(unswept: Path) -> None:
    before = sorted(p.relative_to(unswept) for p in unswept.rglob("*"))
    proc = run("tools", str(unswept), "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["tool"]: r for r in orjson.loads(proc.stdout)}
    assert rows["tesseract"]["files_waiting"] == 3 and rows["tesseract"]["guessed"] is True
    assert rows["antiword"]["files_waiting"] == rows["catdoc"]["files_waiting"] == 1
    assert rows["wpd2text"]["files_waiting"] == 0
    assert sorted(p.relative_to(unswept) for p in unswept.rglob("*")) == before  # no store

    proc = run("tools", str(unswept))
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stdout.decode().split())
    assert "external tools" in said and "guessed from detection alone" in said
    assert "this folder was never swept" in said

    proc = run("sweep", "-q", "--no-external", str(unswept))
    assert proc.returncode in (0, 2), proc.stderr
    proc = run("tools", str(unswept), "--json")  # swept: counted from the records again
    rows = {r["tool"]: r for r in orjson.loads(proc.stdout)}
    assert rows["tesseract"]["files_waiting"] == 3 and rows["tesseract"]["guessed"] is False
    assert rows["antiword"]["files_waiting"] == 1  # --no-external: the .doc waits on it
    assert "guessed" not in " ".join(run("tools", str(unswept)).stdout.decode().split())


def test_tools_dir_counts_from_the_index_without_loading_a_record(
    unswept: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``quarry tools DIR`` on a swept store counts the files waiting from its index (it
    loaded every record: 1.4 s and 416 MB at 200,000); without an index in step with
    ``extract.jsonl`` (a store written by others) it loads them, and says the same."""
    from engine.cli import main

    assert run("sweep", "-q", "--no-external", str(unswept)).returncode in (0, 2)

    def counted() -> dict[str, int]:
        assert main(["tools", str(unswept), "--json"]) == 0
        return {r["tool"]: r["files_waiting"] for r in orjson.loads(capsys.readouterr().out)}

    real = Store.load
    loads: list[Path] = []

    def noted(self: Store) -> object:
        loads.append(self.out)
        return real(self)

    monkeypatch.setattr(Store, "load", noted)
    served = counted()
    assert loads == [] and served["tesseract"] == 3 and served["antiword"] == 1
    for db in (unswept / ".quarry").glob("extract.db*"):
        db.unlink()
    assert counted() == served and loads == [unswept / ".quarry"]


def test_tools_dir_with_an_unusable_store_still_says_so(unswept: Path) -> None:
    (unswept / ".quarry").mkdir()
    (unswept / ".quarry" / "quarry-store.json").write_text('{"format": 7}')
    (unswept / ".quarry" / "extract.jsonl").write_text("")
    proc = run("tools", str(unswept))
    assert proc.returncode == 1 and b"format 7" in proc.stderr
    assert Store(unswept / ".quarry").exists()
