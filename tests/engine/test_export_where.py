"""``quarry export --where QUERY``: the records the dashboard's query line keeps, as a user
asks for them (``--where status:error -o errors.csv``).

Through the index (the query run by SQLite) and through the file (matched record by record)
the same records come out, those :meth:`Query.matches_record` keeps of the whole export; a
query that cannot mean what was typed is one line, exit 1, and no file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.db import DB
from engine.pages import SORTS, sort_key
from engine.query import Query
from engine.store import read_jsonl
from tests.engine.test_export import no_cache, one_line, run, swept

FILES = {
    "notes/a.txt": "the quick brown fox\n",
    "notes/B.TXT": "an invoice for March\n",
    "notes/empty.txt": "",
    "data/blob.bin": "\x00\x01\x02 binary\n",
    "data/big.txt": "invoice " * 3000,
    "Ünïcode/ß.txt": "strasse\n",
}
QUERIES = (
    "status:ok",
    "!status:ok",
    "notes",
    "NOTES",
    "b.txt",
    "size:>10K",
    "chars:<1 !status:error",
    "mime:text !path:data",
    "reason:empty",
    "ünï",
    "path:/\\.TXT$/",
    "path:\\.txt$",
    'text:"invoice"',
    "!text:/qu.ck/",
    "quality:good,suspect",
)


def _exported(store: Path, where: str) -> bytes:
    proc = run("export", "--store", str(store), "--where", where)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _without_index(store: Path, tmp_path: Path) -> Path:
    """A copy of ``store`` without its index (``extract.jsonl``, the texts, the summary)."""
    copy = tmp_path / "bare"
    if not copy.exists():
        copy.mkdir()
        for part in store.iterdir():
            if part.is_file() and not part.name.startswith(DB):
                (copy / part.name).write_bytes(part.read_bytes())
            elif part.is_dir():
                shutil.copytree(part, copy / part.name)
    return copy


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return swept(tmp_path_factory.mktemp("where") / "tree", FILES)


@pytest.mark.parametrize("where", QUERIES)
def test_the_index_and_the_file_keep_what_the_query_keeps(
    store: Path, tmp_path: Path, where: str
) -> None:
    whole = run("export", "--store", str(store))
    records = read_jsonl(whole.stdout).records
    assert len(records) == len(FILES)
    query = Query.parse(where)
    texts = {"invoice": {"notes/B.TXT", "data/big.txt"}, "qu.ck": {"notes/a.txt"}}
    kept = [
        r.path
        for r in records
        if query.matches_record(r, lambda t, r=r: r.path in texts[t.value.strip('"/')])
    ]
    through_index = _exported(store, where)
    assert [r.path for r in read_jsonl(through_index).records] == kept, where
    # the same store without its index: read from the file, matched record by record
    copy = _without_index(store, tmp_path)
    assert not (copy / DB).exists()
    assert _exported(copy, where) == through_index, where  # (an index built in the cache)
    bare = run("export", "--store", str(copy), "--where", where, env=no_cache(tmp_path))
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout == through_index, where  # (the file read, record by record)


def test_a_query_that_cannot_mean_what_was_typed_is_refused_before_any_file(
    store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "errors.csv"
    for where, words in (
        ("sise:>10K", ("no field sise:", "did you mean size:")),
        ("size:>lots", ("'lots' is not a size",)),
        ("text:/[/", ("not a regular expression",)),
    ):
        one_line(run("export", "--store", str(store), "--where", where, "-o", str(out)), *words)
        assert not out.exists()


def test_a_pattern_that_is_not_a_regex_is_matched_as_text_and_said(store: Path) -> None:
    proc = run("export", "--store", str(store), "--where", "notes/[a")
    assert proc.returncode == 0
    assert b"matched as text" in proc.stderr
    assert proc.stdout == b""  # no path holds the text "notes/[a"


def test_csv_of_the_ok_records_only(store: Path) -> None:
    proc = run("export", "--store", str(store), "--where", "status:ok", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.decode().splitlines()
    assert rows[0].startswith("root,path,")
    statuses = {row.split(",")[4] for row in rows[1:]}
    assert statuses == {"ok"}


ORDERS = (
    ("--sort", "size"),
    ("--sort", "size", "--desc"),
    ("--sort", "ms", "--desc", "--limit", "2"),
    ("--sort", "status", "--where", "!notes"),
    ("--sort", "quality"),
    ("--sort", "mime", "--desc", "--limit", "4"),
    ("--desc",),
    ("--limit", "1"),
)


@pytest.mark.parametrize("args", ORDERS)
def test_sorted_and_limited_as_the_records_table_shows_them(
    store: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    records = read_jsonl(run("export", "--store", str(store)).stdout).records
    column = args[args.index("--sort") + 1] if "--sort" in args else "path"
    if "--where" in args:
        records = [r for r in records if "notes" not in r.path.lower()]
    want = sorted(records, key=sort_key(column), reverse="--desc" in args)
    if "--limit" in args:
        want = want[: int(args[args.index("--limit") + 1])]
    proc = run("export", "--store", str(store), *args)
    assert proc.returncode == 0, proc.stderr
    assert [r.key for r in read_jsonl(proc.stdout).records] == [r.key for r in want], args
    # from the file (no index, no cache), sorted in Python by the same key: the same bytes
    copy = _without_index(store, tmp_path)
    bare = run("export", "--store", str(copy), *args, env=no_cache(tmp_path))
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout == proc.stdout, args
    cached = run("export", "--store", str(copy), *args)  # (an index built in the cache)
    assert cached.returncode == 0, cached.stderr
    assert cached.stdout == proc.stdout, args


def test_the_slowest_reads_as_csv(store: Path) -> None:
    proc = run("export", "--store", str(store), "--sort", "size", "--desc", "--limit", "1",
               "--format", "csv")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.decode().splitlines()
    assert len(rows) == 2 and ",data/big.txt," in rows[1]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--sort", "colour"), ("no such column", "one of path, status")),
        (("--limit", "0"), ("--limit 0", "1 or more")),
        (("--limit", "-3"), ("--limit -3",)),
    ],
)
def test_a_wrong_order_is_one_line_before_any_file(
    store: Path, tmp_path: Path, args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    out = tmp_path / "sorted.jsonl"
    one_line(run("export", "--store", str(store), *args, "-o", str(out)), *words)
    assert not out.exists()


def test_a_limit_that_is_no_number_is_refused_as_argparse_refuses_any(
    store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sorted.jsonl"
    proc = run("export", "--store", str(store), "--limit", "many", "-o", str(out))
    assert proc.returncode == 1 and not proc.stdout
    assert b"invalid int value: 'many'" in proc.stderr and b"Traceback" not in proc.stderr
    assert not out.exists()


def test_the_help_names_every_sort_column() -> None:
    proc = run("export", "--help")
    assert proc.returncode == 0
    helped = " ".join(proc.stdout.decode().split())
    for column in SORTS:
        assert column in helped.rsplit("--sort COLUMN", 1)[1].split("--desc", 1)[0], column


@pytest.mark.parametrize("where", ["notes", "NOTES", "empty", "txt !notes", "otes/a size:<100"])
def test_a_path_word_through_the_paths_index_keeps_the_same(
    store: Path, tmp_path: Path, where: str
) -> None:
    """A big store's index has a trigram index of the paths (built with its sort trees): a
    path word's records are found through it, and the same ones come out."""
    from unittest import mock

    from engine.db import RecordDB
    from engine.sqlquery import compile_where, drive

    before = _exported(store, where)
    copy = tmp_path / "trees"
    shutil.copytree(store, copy)
    with mock.patch("engine.db.SORTED_FROM", 0), RecordDB.open_writer(copy / DB) as db:
        assert "_paths" in db.make_sorted()
        query = Query.parse(where)
        assert drive(db, compile_where(query), query).driven
    assert _exported(copy, where) == before


@pytest.mark.parametrize("indexed", [True, False])
def test_a_where_pattern_given_up_on_a_value_fails_the_export_not_a_silent_subset(
    tmp_path: Path, indexed: bool
) -> None:
    """``error:(a+)+$`` over an error of 4,096 ``a`` runs bounded and gives up there
    (engine.query.FIELD_S); from then on it matches nothing, so the export would leave
    records out without a word: it fails instead, and ``-o`` is not replaced."""
    from engine.query import FIELD_S
    from engine.records import Record
    from engine.store import Store
    from tests.engine.test_export import hand_store, line_of

    recs = [
        Record("/data", f"f{i}.bin", 3, 1, "error", None, "application/octet-stream",
               "corrupt", error=("a" * 4096 + "!") if i == 5 else "aaa")
        for i in range(10)
    ]  # fmt: skip
    if indexed:
        store = Store(tmp_path / "store")
        with store.writer():
            store.write_records(recs)
        out = store.out
    else:
        out = hand_store(tmp_path / "store", [line_of(r) for r in recs])
    target = tmp_path / "kept.jsonl"
    target.write_text("what the user had\n")
    proc = run("export", "--store", str(out), "--where", "error:(a+)+$", "-o", str(target))
    one_line(proc, f"--where 'error:(a+)+$': error:(a+)+$ took over {FIELD_S:g} s on one value")
    assert target.read_text() == "what the user had\n"
