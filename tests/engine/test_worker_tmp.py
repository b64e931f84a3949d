"""Each worker process writes its texts in a folder of its own in the store's ``tmp/``.

With every worker creating and renaming its texts in one ``tmp/``, each text waited on that
folder's lock (on ext4 the waiting worker spun on it: a quarter of the workers' CPU in a cold
sweep of 20,000 small files right after a delete). These hold the folder's rules: one a
process, never written through a link, emptied by the next writer after a kill, gone when
the writer lets the store go.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from engine import store as store_mod
from engine.extract import ReadTask, read_one
from engine.limits import Limits, MiB
from engine.records import Status
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet

LIMITS = Limits(timeout_s=10.0, memory_bytes=256 * MiB, max_chars=10_000)


def _task(tmp_path: Path, name: str, text: str) -> ReadTask:
    doc = tmp_path / name
    doc.write_text(text)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return ReadTask(str(doc), "sha-" + name, LIMITS, ToolSet.empty(), str(tmp_path / "tmp"), 1)


def test_a_workers_texts_are_written_in_its_own_folder_of_tmp(tmp_path: Path) -> None:
    first = read_one(_task(tmp_path, "a.txt", "alpha\n"))
    second = read_one(_task(tmp_path, "b.txt", "beta\n"))
    assert first.status == second.status == Status.OK
    assert first.text_file is not None and second.text_file is not None
    folder = Path(first.text_file).parent
    assert folder == Path(second.text_file).parent  # one folder a process
    assert folder.parent == tmp_path / "tmp"
    assert folder.name == store_mod.own_tmp_name() and str(os.getpid()) in folder.name
    assert Path(first.text_file).read_text() == "alpha\n"


def test_a_forked_child_gets_a_folder_of_its_own(tmp_path: Path) -> None:
    parent = store_mod.own_tmp_name()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its name, then out without running the parent's cleanups
        os.write(write, store_mod.own_tmp_name().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as fh:
        child = fh.read().decode()
    assert child and child != parent and child.startswith(f"w{pid}.")


def test_a_link_where_the_workers_folder_belongs_is_never_written_through(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    task = _task(tmp_path, "a.txt", "alpha\n")
    (tmp_path / "tmp" / store_mod.own_tmp_name()).symlink_to(victim)
    outcome = read_one(task)
    assert outcome.machine and outcome.status == Status.ERROR
    assert outcome.error is not None and "cannot write the text" in outcome.error
    assert list(victim.iterdir()) == []


def test_the_next_writer_empties_what_a_killed_one_left_in_tmp(tmp_path: Path) -> None:
    out = tmp_path / "store"
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "thesis.txt").write_text("keep me\n")
    with Store(out).writer():
        pass
    left = out / "tmp" / "w123.0a0b0c0d"
    left.mkdir()
    (left / "text.123.1.txt").write_text("half a text")
    (out / "tmp" / "text.9.9.txt").write_text("an older quarry's text")
    (out / "tmp" / "w456.linked").symlink_to(victim)
    with Store(out).writer():
        assert list((out / "tmp").iterdir()) == []
    assert (victim / "thesis.txt").read_text() == "keep me\n"


def test_a_sweep_leaves_tmp_empty(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for n in range(5):
        (root / f"f{n}.txt").write_text(f"document number {n}\n")
    options = SweepOptions(out=tmp_path / "store", limits=LIMITS, workers=2, tools=ToolSet.empty())
    with Sweeper([root], options, lambda _event: None) as sweeper:
        sweeper.run()
        assert all(r.status == Status.OK for r in sweeper.records.values())
    assert list((tmp_path / "store" / "tmp").iterdir()) == []


def _store_task(tmp_path: Path, name: str, text: str) -> ReadTask:
    """A read as a worker's batch gives it: the worker hashes, then renames the text into
    the store at ``tmp_path/store``."""
    out = tmp_path / "store"
    (out / "tmp").mkdir(parents=True, exist_ok=True)
    for n in range(256):  # as a writer makes them
        (out / "extract" / f"{n:02x}").mkdir(parents=True, exist_ok=True)
    doc = tmp_path / name
    doc.write_text(text)
    return ReadTask(
        str(doc), "", LIMITS, ToolSet.empty(), str(out / "tmp"), len(text), store_dir=str(out)
    )


def _stored(tmp_path: Path, text: str) -> Path:
    sha = hashlib.sha256(text.encode()).hexdigest()
    return tmp_path / "store" / "extract" / sha[:2] / f"{sha}.txt"


def test_a_batchs_texts_go_through_folders_opened_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"document {n}\n" for n in range(12)]
    tasks = [_store_task(tmp_path, f"d{n}.txt", t) for n, t in enumerate(texts)]
    opened: list[tuple[object, ...]] = []
    real = store_mod.open_folder

    def counting(base: object, *parts: str, **kw: object) -> int:
        opened.append((base, *parts))
        return real(base, *parts, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(store_mod, "open_folder", counting)
    with store_mod.folders_held():
        outcomes = [read_one(task) for task in tasks]
    assert all(o.status == Status.OK and not o.machine for o in outcomes)
    for text in texts:
        assert _stored(tmp_path, text).read_text() == text
    prefixes = {hashlib.sha256(t.encode()).hexdigest()[:2] for t in texts}
    # the own folder (looked for, then made), extract/ and each text folder once: not the
    # eight opens a text took
    assert len(opened) == 3 + len(prefixes)
    assert list((tmp_path / "store" / "tmp" / store_mod.own_tmp_name()).iterdir()) == []


def test_the_workers_folder_emptied_away_mid_batch_is_made_again(tmp_path: Path) -> None:
    with store_mod.folders_held():
        assert read_one(_store_task(tmp_path, "a.txt", "alpha\n")).status == Status.OK
        shutil.rmtree(tmp_path / "store" / "tmp" / store_mod.own_tmp_name())  # a clean_tmp
        second = read_one(_store_task(tmp_path, "b.txt", "beta\n"))
    assert second.status == Status.OK and not second.machine
    assert _stored(tmp_path, "beta\n").read_text() == "beta\n"


def test_a_store_deleted_mid_batch_gets_no_text_and_is_not_made_again(tmp_path: Path) -> None:
    with store_mod.folders_held():
        assert read_one(_store_task(tmp_path, "a.txt", "alpha\n")).status == Status.OK
        task = _store_task(tmp_path, "b.txt", "beta\n")
        shutil.rmtree(tmp_path / "store")
        second = read_one(task)
    assert second.machine and second.status == Status.ERROR
    assert not (tmp_path / "store").exists()


def test_a_text_folder_linked_elsewhere_mid_batch_is_never_written_through(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    prefix = hashlib.sha256(b"beta\n").hexdigest()[:2]
    with store_mod.folders_held():
        assert read_one(_store_task(tmp_path, "a.txt", "alpha\n")).status == Status.OK
        task = _store_task(tmp_path, "b.txt", "beta\n")
        folder = tmp_path / "store" / "extract" / prefix
        if folder.exists():
            shutil.rmtree(folder)
        folder.symlink_to(victim)
        second = read_one(task)
    assert second.machine and second.status == Status.ERROR
    assert list(victim.iterdir()) == []
