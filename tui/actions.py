"""What the dashboard does to files outside itself, without Textual: export, editor, opener.

The screens decide *when*; these helpers decide *how*: which command line opens a text in the
user's editor or pager, which one opens a source file with the system's opener, and how the
current view is written out as CSV or JSONL. Copying a path goes through
``App.copy_to_clipboard`` (OSC 52, so it works over SSH) and needs nothing here.
"""

from __future__ import annotations

import base64
import csv
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from engine.names import is_utf8, shown
from engine.records import Record
from tui.model import COLUMNS, Row

EXPORT_COLUMNS: tuple[str, ...] = ("root", *COLUMNS, "reused", "root_b64", "path_b64")
"""CSV columns: the model's rows, then the exact bytes of names that are not UTF-8."""

FORMATS: tuple[str, ...] = ("csv", "jsonl")
"""Export formats."""


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


def write_csv(path: Path, rows: Iterable[Row]) -> int:
    """Write the table rows as CSV (header first); return how many rows were written."""
    n = 0
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(EXPORT_COLUMNS)
        for row in rows:
            cells = ["" if v is None else v for v in row[: len(EXPORT_COLUMNS) - 2]]
            root, name = str(cells[0]), str(cells[1])
            cells[0], cells[1] = store_name(root), store_name(name)
            writer.writerow([*cells, name_b64(root), name_b64(name)])
            n += 1
    return n


def store_name(name: str) -> str:
    """``name`` as the store writes it: valid UTF-8, each undecodable byte as ``\\xNN``."""
    if is_utf8(name):
        return name
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in name)


def name_b64(name: str) -> str:
    """Standard base64 of the exact bytes of a name that is not UTF-8 ("" when it is)."""
    return "" if is_utf8(name) else base64.b64encode(os.fsencode(name)).decode("ascii")


def write_jsonl(path: Path, records: Iterable[Record | None]) -> int:
    """Write full records as JSON lines, in the store's own format; return the count."""
    n = 0
    with path.open("wb") as f:
        for record in records:
            if record is not None:
                f.write(record.to_json() + b"\n")
                n += 1
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


def private_copy(text_file: Path, name: str) -> Path:
    """A copy of a stored text the editor may change without touching the store.

    The store is content-addressed: an editor saving into ``extract/<aa>/<sha>.txt`` would make
    the file disagree with its name. The copy is named after the source file, so the editor's
    title says which document it is.
    """
    folder = Path(tempfile.mkdtemp(prefix="quarry-text-"))
    # shown, and short: a name with newlines or 255 bytes long still makes a file name
    copy = folder / (shown(Path(name).name)[:120] + ".txt")
    shutil.copyfile(text_file, copy)
    return copy


Runner = Callable[[list[str]], int]
"""Runs a command line in the foreground and returns its exit status."""


def run_foreground(command: list[str]) -> int:
    """Run ``command`` attached to the terminal; 127 when it cannot be started."""
    try:
        return subprocess.run(command, check=False).returncode
    except OSError:
        return 127
