"""SQLite databases read as sheets, one a table, without a tool and without touching the file.

The databases are written here with the standard library's ``sqlite3``, as an application
writes them: tables of every storage class, a view, an index, a full-text index (whose shadow
tables are SQLite's, not the application's), a database in write-ahead-log mode.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.sqlitedb import SqliteReader
from fixtures.gen import office as O
from tests.quarrycli import shown, sweep, text_shown

PEOPLE = (
    "# table people\nid\tname\tborn\theight\tphoto\tnote\n"
    "1\tAda Lovelace\t1815\t1.65\t\tmathematician, wrote the first program\n"
    "2\tÉmilie du Châtelet\t1706\t\t\ttranslated Newton: a tab and a line\n"
)


def app_db(path: Path) -> Path:
    """An application's database: two tables, a view, an index and a full-text index."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.executescript(
            '''
            CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, born INTEGER,
                                 height REAL, photo BLOB, note TEXT);
            CREATE INDEX people_by_name ON people (name);
            CREATE TABLE "odd ""name""" (k TEXT);
            CREATE VIEW tall AS SELECT name FROM people WHERE height > 1.6;
            CREATE VIRTUAL TABLE notes USING fts5(body);
            '''
        )
        db.execute(
            "INSERT INTO people VALUES (1, 'Ada Lovelace', 1815, 1.65, x'89504e47',"
            " 'mathematician, wrote the first program')"
        )
        db.execute(
            "INSERT INTO people VALUES (2, 'Émilie du Châtelet', 1706, NULL, NULL,"
            " 'translated Newton:' || char(9) || 'a tab and' || char(10) || 'a line')"
        )
        db.execute('''INSERT INTO "odd ""name""" VALUES ('kept')''')
        db.execute("INSERT INTO notes VALUES ('full-text body of a note')")
    return path


def read(
    path: Path, max_chars: int = 1 << 20, limits: Limits = DEFAULT_LIMITS
) -> tuple[str, ReadInfo]:
    sink = TextSink(max_chars)
    info = SqliteReader().read(path, ReadContext(M.SQLITE, limits), sink)
    return "".join(sink._parts), info


def test_every_table_is_a_sheet_views_and_sqlite_s_own_tables_left_out(tmp_path: Path) -> None:
    path = app_db(tmp_path / "app.db")
    assert detect(path) == M.SQLITE
    text, info = read(path)
    assert text == (
        '# table notes\nbody\nfull-text body of a note\n# table odd "name"\nk\nkept\n' + PEOPLE
    )
    assert (info.extractor, info.pages, info.note) == ("sqlite", 3, None)


def test_a_blob_that_is_a_document_is_read_as_a_member_pictures_left_alone(
    tmp_path: Path,
) -> None:
    """An application's attachments: a DOCX and an RTF in BLOBs are the database's members
    (Tika reads them so); a PNG thumbnail and other bytes are not, nor a document in a table
    without rowids (no rowid finds it again)."""
    docx = O._zip_bytes(O.docx_members())
    path = tmp_path / "mail.db"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE attachment (name TEXT, data BLOB)")
        db.execute("CREATE TABLE keyed (k TEXT PRIMARY KEY, data BLOB) WITHOUT ROWID")
        db.executemany(
            "INSERT INTO attachment VALUES (?, ?)",
            [("report.docx", docx), ("thumb.png", b"\x89PNG\r\n\x1a\n" + bytes(64)),
             ("memo.rtf", rb"{\rtf1\ansi A memo in RTF.}"), ("noise", bytes(range(256)))],
        )  # fmt: skip
        db.execute("INSERT INTO keyed VALUES ('x', ?)", (docx,))
    text, info = read(path)
    tables, _, members = text.partition("# member ")
    assert tables == (
        "# table attachment\nname\tdata\nreport.docx\t\nthumb.png\t\nmemo.rtf\t\nnoise\t\n"
        "# table keyed\nk\tdata\nx\t\n"
    )
    assert "# member " + members == (
        f"# member attachment/data/1\n{O.DOCX_TEXT}# member attachment/data/3\nA memo in RTF.\n"
    )
    assert [(m.path, m.status) for m in info.members] == [
        ("attachment/data/1", "ok"), ("attachment/data/3", "ok"),
    ]  # fmt: skip


def test_documents_in_blobs_past_the_member_count_are_counted_not_held(tmp_path: Path) -> None:
    path = tmp_path / "many.db"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE a (data BLOB)")
        db.executemany("INSERT INTO a VALUES (?)", [(rb"{\rtf1 memo %d}" % i,) for i in range(5)])
    sink = TextSink(1 << 20)
    ctx = ReadContext(M.SQLITE, limits=Limits(archive_members=2))
    info = SqliteReader().read(path, ctx, sink)
    assert [m.path for m in info.members] == ["a/data/1", "a/data/2"]
    assert info.note == "3 documents in BLOBs not read: past archive_members (2)"
    assert "".join(sink._parts).endswith("# member a/data/1\nmemo 0\n# member a/data/2\nmemo 1\n")


@contextlib.contextmanager
def open_in_wal_mode(path: Path) -> Iterator[sqlite3.Connection]:
    """An application holding ``path`` open in write-ahead-log mode, its log never folded
    into the database (``-wal`` and ``-shm`` beside it while it runs)."""
    writer = sqlite3.connect(path)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        yield writer
    finally:
        writer.close()


def test_the_rows_in_the_log_are_read_and_nothing_is_written_beside_it(tmp_path: Path) -> None:
    """A database in write-ahead-log mode with its log beside it: a read-write or plain
    read-only open would take locks and make or change files in the user's folder; the rows
    only the log holds are read all the same (from a private copy)."""
    folder = tmp_path / "profile"
    folder.mkdir()
    path = app_db(folder / "history.sqlite")
    with open_in_wal_mode(path) as writer:
        with writer:
            writer.execute("INSERT INTO people (id, name) VALUES (3, 'only in the log')")
        before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}
        assert "history.sqlite-wal" in before
        assert detect(folder / "history.sqlite-wal") == M.SQLITE_WAL  # a record of its own
        assert detect(folder / "history.sqlite-shm") == M.SQLITE_SHM  # and its index
        text, info = read(path)
        after = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}
    assert after == before
    assert text.endswith(PEOPLE + "3\tonly in the log\t\t\t\t\n")
    assert info.note is None


def test_a_rollback_journal_is_told_apart(tmp_path: Path) -> None:
    """What an application killed mid-write leaves beside its database (a "hot" journal):
    once a write spills past SQLite's cache, the journal has its header."""
    path = tmp_path / "a.db"
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("CREATE TABLE t (x)")
        writer.executemany("INSERT INTO t VALUES (?)", [("x" * 200,)] * 2000)
        writer.execute("PRAGMA cache_size=2")
        writer.execute("BEGIN")
        writer.execute("UPDATE t SET x = upper(x)")
        assert detect(tmp_path / "a.db-journal") == M.SQLITE_JOURNAL
        writer.execute("ROLLBACK")
    finally:
        writer.close()


def test_a_log_too_big_to_copy_is_left_and_the_read_says_so(tmp_path: Path) -> None:
    path = app_db(tmp_path / "history.sqlite")
    with open_in_wal_mode(path) as writer:
        with writer:
            writer.execute("INSERT INTO people (id, name) VALUES (3, 'only in the log')")
        room = path.stat().st_size  # the database fits; with its log it does not
        text, info = read(path, limits=Limits(archive_bytes=room))
    assert text.endswith(PEOPLE) and "only in the log" not in text
    assert info.note is not None
    assert info.note.startswith("the write-ahead log beside it not read (")
    assert "pass archive_bytes" in info.note


def test_a_log_that_is_a_link_or_no_log_adds_nothing(tmp_path: Path) -> None:
    """A received folder chooses what lies beside a database: a link named as its log is not
    followed, and bytes that are no log SQLite leaves (as the application would)."""
    other = app_db(tmp_path / "other.sqlite")
    with open_in_wal_mode(other) as writer:
        with writer:
            writer.execute("INSERT INTO people (id, name) VALUES (3, 'the other one')")
        linked = app_db(tmp_path / "linked.sqlite")
        (tmp_path / "linked.sqlite-wal").symlink_to(tmp_path / "other.sqlite-wal")
        garbage = app_db(tmp_path / "garbage.sqlite")
        (tmp_path / "garbage.sqlite-wal").write_bytes(b"not a write-ahead log\n" * 400)
        for path in (linked, garbage):
            text, info = read(path)
            assert text.endswith(PEOPLE) and "the other one" not in text, path
            assert info.note is None


def test_any_name_a_database_has_is_opened(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9 #1?x=%41&mode=rw.db")  # not UTF-8, and what a URI means
    path = app_db(tmp_path / name)
    text, _ = read(path)
    assert text.endswith(PEOPLE)


def test_text_that_is_not_utf8_is_read_with_replacement_characters(tmp_path: Path) -> None:
    path = tmp_path / "latin.db"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE t (v TEXT)")
        db.execute("INSERT INTO t VALUES (CAST(x'636166e9' AS TEXT))")  # "caf\xe9"
    assert read(path)[0] == "# table t\nv\ncaf\ufffd\n"


def test_a_big_table_stops_at_the_cap(tmp_path: Path) -> None:
    from engine.readers.base import TextCapReached

    path = tmp_path / "big.db"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE t (v TEXT)")
        db.executemany("INSERT INTO t VALUES (?)", ((f"row {i}",) for i in range(50_000)))
    sink = TextSink(1000)
    with pytest.raises(TextCapReached):
        SqliteReader().read(path, ReadContext(M.SQLITE), sink)
    assert sink.info is not None and sink.info.extractor == "sqlite"


def test_a_damaged_table_keeps_the_rows_before_the_damage_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "damaged.db"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA page_size=1024")
        db.execute("CREATE TABLE a (v TEXT)")
        db.execute("CREATE TABLE b (v TEXT)")
        db.execute("INSERT INTO a VALUES ('whole')")
        db.executemany("INSERT INTO b VALUES (?)", ((f"line {i:04} " * 8,) for i in range(400)))
    raw = bytearray(path.read_bytes())
    page = len(raw) // 1024 - 2  # a leaf page of b's, near its end
    raw[page * 1024 : page * 1024 + 1024] = b"\xa5" * 1024
    path.write_bytes(bytes(raw))
    text, info = read(path)
    assert text.startswith("# table a\nv\nwhole\n# table b\nv\nline 0000 ")
    assert info.note is not None and info.note.startswith("1 of 2 tables not read whole: b (")


@pytest.mark.parametrize(
    "data", [b"SQLite format 3\x00", b"SQLite format 3\x00" + b"\xff" * 200, b"SQLite format 3"]
)
def test_what_is_no_database_is_corrupt(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "x.db"
    path.write_bytes(data + bytes(4096 - len(data)) if len(data) > 16 else data)
    with pytest.raises(CorruptFile):
        read(path)


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.integers(0, 1 << 20), value=st.integers(0, 255), run=st.integers(1, 64))
def test_any_bytes_of_a_database_changed_give_rows_or_a_verdict_never_a_crash(
    tmp_path: Path, at: int, value: int, run: int
) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        path = app_db(Path(scratch) / "h.db")
        raw = bytearray(path.read_bytes())
        start = at % len(raw)
        raw[start : start + run] = bytes([value]) * len(raw[start : start + run])
        path.write_bytes(bytes(raw))
        with contextlib.suppress(CorruptFile):  # any other exception fails the test
            read(path)


def test_the_real_quarry_reads_a_folder_of_databases(tmp_path: Path) -> None:
    root = tmp_path / "share"
    root.mkdir()
    app_db(root / "app.sqlite")
    app_db(root / "places.bin")  # told apart by its first bytes, whatever its name
    (root / "broken.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 4080)
    store = tmp_path / "store"
    proc = sweep(root, store)
    assert proc.returncode in (0, 2), proc.stderr
    assert "Ada Lovelace" in text_shown(root / "app.sqlite", store)
    record = shown(root / "places.bin", store)
    assert (record["status"], record["reader"], record["mime"]) == ("ok", "sqlite", M.SQLITE)
    broken = shown(root / "broken.db", store)
    assert (broken["status"], broken["reason"]) == ("error", "corrupt")
