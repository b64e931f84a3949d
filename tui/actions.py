"""What the dashboard does to files outside itself, without Textual: export, editor, opener.

The screens decide *when*; these helpers decide *how*: which command line opens a text in the
user's editor or pager, which one opens a source file with the system's opener, and how the
current view is written out as CSV or JSONL. Copying a path goes through
``App.copy_to_clipboard`` (OSC 52, so it works over SSH) and needs nothing here.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import orjson

from engine.names import is_utf8, shown
from engine.records import Record
from engine.visible import csv_text, json_safe

EXPORT_COLUMNS: tuple[str, ...] = (
    *(f.name for f in dataclasses.fields(Record) if f.name not in ("quality", "members")),
    "quality",
    "quality_detail",
    "members",
    "root_b64",
    "path_b64",
)
"""CSV columns: every field of a record in the store's order (``quality`` its verdict, the
signals and numbers in ``quality_detail``; ``members`` as JSON), then the exact bytes of
names that are not UTF-8."""

FORMATS: tuple[str, ...] = ("csv", "jsonl")
"""Export formats, each chosen by the file name's extension."""


def export_path(folder: Path, fmt: str, label: str, now: float | None = None) -> Path:
    """``folder/quarry-<label>-YYYYmmdd-HHMMSS.<fmt>``, not overwriting an earlier export."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in label) or "view"
    path = folder / f"quarry-{safe}-{stamp}.{fmt}"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"quarry-{safe}-{stamp}-{n}.{fmt}"
    return path


def export_format(path: Path) -> str | None:
    """``csv`` or ``jsonl`` by ``path``'s extension (any case); None for anything else."""
    fmt = path.suffix.lower().lstrip(".")
    return fmt if fmt in FORMATS else None


def csv_cells(record: Record) -> list[str]:
    """One CSV row: the record as the store writes it (names escaped, their bytes in
    ``*_b64``), tool names space-separated, nested values as JSON, booleans as JSON's.

    No cell is run by a spreadsheet or obeyed by a terminal: a number stays a number, a text
    goes through :func:`engine.visible.csv_text` (control characters as backslash escapes,
    a leading ``'`` on a cell that starts like a formula), and the JSON cells have every such
    character as a ``\\u`` escape (:func:`engine.visible.json_safe`; they start with ``{``
    or ``[``).
    """
    d = record.to_dict()
    quality = d.pop("quality")
    d["quality"] = quality["verdict"] if quality else ""
    d["quality_detail"] = _json_cell(quality) if quality else ""
    d["needs"] = " ".join(d["needs"])
    d["members"] = _json_cell(d["members"]) if d["members"] else ""
    out = []
    for name in EXPORT_COLUMNS:
        value = d.get(name)
        if value is None:
            out.append("")
        elif isinstance(value, bool):
            out.append("true" if value else "false")
        elif isinstance(value, int):
            out.append(str(value))  # a number: a spreadsheet reads it as one, runs nothing
        elif name in _JSON_COLUMNS:
            out.append(value)
        else:
            out.append(csv_text(str(value)))
    return out


_JSON_COLUMNS = frozenset({"quality_detail", "members"})


def _json_cell(value: object) -> str:
    return json_safe(orjson.dumps(value).decode())


def write_csv(path: Path, records: Iterable[Record | None]) -> int:
    """Write full records as CSV (header first); return how many rows were written."""
    n = 0
    # names arrive escaped (to_dict); backslashreplace only guards a stray surrogate elsewhere
    with path.open("w", newline="", encoding="utf-8", errors="backslashreplace") as f:
        writer = csv.writer(f)
        writer.writerow(EXPORT_COLUMNS)
        for record in records:
            if record is not None:
                writer.writerow(csv_cells(record))
                n += 1
    return n


def write_jsonl(path: Path, records: Iterable[Record | None]) -> int:
    """Write full records as JSON lines, in the store's own format; return the count."""
    n = 0
    with path.open("wb") as f:
        for record in records:
            if record is not None:
                f.write(record.to_json() + b"\n")
                n += 1
    return n


def write_export(path: Path, records: Iterable[Record | None]) -> int:
    """Write ``records`` to ``path`` as its extension says, atomically: into a temporary
    file beside it, then renamed over it, so a failed or interrupted export leaves no half
    file (and an earlier file of that name intact). Returns the rows written."""
    fmt = export_format(path)
    if fmt is None:
        raise ValueError(f"{shown(path.name)}: the name must end in .csv or .jsonl")
    fd, tmp = tempfile.mkstemp(prefix=".quarry-export-", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        n = write_jsonl(Path(tmp), records) if fmt == "jsonl" else write_csv(Path(tmp), records)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def clipboard_text(path: str) -> str:
    """What ``c`` copies for ``path``: the name itself, or a shell word that gives its bytes.

    A name that is not UTF-8, or holds control characters, cannot travel through a clipboard
    as text: it is copied as a bash/zsh ``$'...'`` word (``$'caf\\xe9.txt'``) that a shell
    turns back into the exact bytes.
    """
    if path.isprintable() and is_utf8(path):
        return path
    out = []
    for byte in os.fsencode(path):
        ch = chr(byte)
        if byte < 0x80 and ch.isprintable() and ch not in "'\\":
            out.append(ch)
        else:
            out.append(f"\\x{byte:02x}")
    return "$'" + "".join(out) + "'"


# -- command lines -----------------------------------------------------------------------


def viewer_command(path: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """``$EDITOR`` (or ``$VISUAL``), else ``$PAGER``, else ``less``/``more``, on ``path``."""
    env = os.environ if env is None else env
    for name in ("EDITOR", "VISUAL", "PAGER"):
        value = env.get(name, "").strip()
        if value:
            return [*shlex.split(value), str(path)]
    for fallback in ("less", "more"):
        if shutil.which(fallback):
            return [fallback, str(path)]
    return ["vi", str(path)]


def opener_command(path: Path, platform: str | None = None) -> list[str]:
    """The system's opener on ``path``: ``xdg-open``, ``open`` (macOS) or ``start`` (Windows)."""
    platform = sys.platform if platform is None else platform
    if platform == "darwin":
        return ["open", str(path)]
    if platform.startswith("win"):
        return ["cmd", "/c", "start", "", str(path)]
    return ["xdg-open", str(path)]


def private_copy(text: bytes, name: str) -> Path:
    """A copy of a stored text the editor may change without touching the store.

    The store is content-addressed: an editor saving into ``extract/<aa>/<sha>.txt`` would make
    the file disagree with its name. The copy is named after the source file, so the editor's
    title says which document it is.
    """
    folder = Path(tempfile.mkdtemp(prefix="quarry-text-"))
    # shown, and short: a name with newlines or 255 bytes long still makes a file name
    copy = folder / (shown(Path(name).name)[:120] + ".txt")
    copy.write_bytes(text)
    return copy


Runner = Callable[[list[str]], int]
"""Runs a command line in the foreground and returns its exit status."""


def run_foreground(command: list[str]) -> int:
    """Run ``command`` attached to the terminal; 127 when it cannot be started."""
    try:
        return subprocess.run(command, check=False).returncode
    except OSError:
        return 127
