"""``quarry diff A B``: two stores compared (:mod:`engine.diff`), for people or for machines.

For people, at 80 columns: one line per group (got worse, got better, text changed, verdict
changed, new, gone) with its count and an example, then the files of each group (at most
``--limit`` each) with what changed, then the changes by MIME type and by reader, and the
lowest-similarity files. Every name goes through :func:`engine.names.shown`.

For machines (``--json``): one JSON object, written as the comparison goes (a diff of a
million files is never held whole): ``{"before": ..., "after": ..., "files": [...],
"summary": {...}}``, every changed file in (root, path) order. Names as the store writes them
(``\\xNN`` for a byte that is not UTF-8, the exact bytes in ``root_b64``/``path_b64``).

The exit code says whether anything got worse, so that a script can gate an upgrade on it:
:data:`EXIT_OK` (0) nothing did, :data:`EXIT_WORSE` (4) something did, 1 wrong input (one
line on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any

import orjson

from engine.comparison import Comparison, NoPast, since, since_when
from engine.diff import GROUP_TITLES, Breakdown, DiffSummary, FileChange, Group, Side
from engine.errors import UsageError
from engine.names import escaped, name_b64, shown
from engine.store import Store
from engine.verbkit import EXIT_OK, reading_store
from engine.words import count

EXIT_WORSE = 4
"""``quarry diff``: something got worse (0: nothing did; 1 is bad usage, 2 error records and
3 a machine failure elsewhere in this command line, so none of them is reused)."""
WIDTH = 80
"""The width the readable output is laid out for."""
DEFAULT_LIMIT = 10
"""Files listed per group unless ``--limit`` says otherwise."""


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare the stores ``args.before`` and ``args.after``; exit 4 when anything got worse."""
    if args.since is not None:
        return _since(args)
    if args.after is None:
        raise UsageError("name two stores (quarry diff A B), or one with --since TIME")
    a, b = reading_store(args.before), reading_store(args.after)
    if _same(a, b):
        raise UsageError(
            f"{shown(str(args.before))} and {shown(str(args.after))} are the same store: "
            "name two stores to compare"
        )
    if args.limit < 0:
        raise UsageError("--limit must be 0 (every file) or more")
    return _write(Comparison(a, b, _warn), args)


def _write(comparison: Comparison, args: argparse.Namespace) -> int:
    out = sys.stdout
    if args.json:
        summary = write_json(comparison, out)
    else:
        summary = write_text(comparison, out, limit=args.limit)
    out.flush()
    return EXIT_WORSE if summary.worse else EXIT_OK


def _since(args: argparse.Namespace) -> int:
    """One store now against itself as it was at ``--since`` (:mod:`engine.history`): both
    sides read from its index in one snapshot, the texts from the store."""
    if args.after is not None:
        raise UsageError("--since compares one store with itself as it was: name one store")
    if args.limit < 0:
        raise UsageError("--limit must be 0 (every file) or more")
    store = reading_store(args.before)
    when = since_when(store, args.since)
    try:
        with since(store, when, _warn) as comparison:
            return _write(comparison, args)
    except NoPast as exc:
        raise UsageError(f"{shown(str(args.before))}: {exc}") from None


def _same(a: Store, b: Store) -> bool:
    try:
        return os.path.samefile(a.out, b.out)
    except OSError:
        return False


def _warn(message: str) -> None:
    sys.stderr.write(shown(f"quarry: {message}") + "\n")


# -- for machines ---------------------------------------------------------------------------


def write_json(comparison: Comparison, out: IO[str]) -> DiffSummary:
    """The comparison as one JSON object, each file written as it is found."""
    head: dict[str, Any] = {
        "before": escaped(comparison.names[0]),
        "after": escaped(comparison.names[1]),
    }
    if (pair := comparison.pair) is not None:  # (the after side's files under before's folder)
        head["paired_by_path"] = {"before": escaped(pair[0]), "after": escaped(pair[1])}
    out.write(orjson.dumps(head).decode()[:-1] + ',"files":[')
    for n, change in enumerate(comparison.changes()):
        out.write(("," if n else "") + "\n" + orjson.dumps(change_dict(change)).decode())
    summary = comparison.summary()
    out.write('\n],"summary":' + orjson.dumps(summary_dict(summary)).decode() + "}\n")
    return summary


def change_dict(change: FileChange) -> dict[str, Any]:
    """One changed file for ``--json``."""
    d: dict[str, Any] = {
        "root": escaped(change.root),
        "path": escaped(change.path),
        "group": change.group.value,
        "kind": change.kind.value,
        "direction": change.direction.value,
        "before": _side_dict(change.before),
        "after": _side_dict(change.after),
        "chars_delta": change.chars_delta,
        "similarity": change.similarity,
        "only_before": [[escaped(w), n] for w, n in change.only_before],
        "only_after": [[escaped(w), n] for w, n in change.only_after],
        "note": escaped(change.note) if change.note else None,
    }
    for name in ("root", "path"):
        raw = name_b64(getattr(change, name))
        if raw is not None:
            d[f"{name}_b64"] = raw
    return d


def _side_dict(side: Side | None) -> dict[str, Any] | None:
    if side is None:
        return None
    return {
        "status": escaped(side.status),
        "reason": _opt(side.reason),
        "mime": escaped(side.mime),
        "reader": _opt(side.reader),
        "extractor": _opt(side.extractor),
        "chars": side.chars,
        "quality": _opt(side.verdict),
        "common": side.common,
        "sha256": side.sha256,
    }


def _opt(value: str | None) -> str | None:
    return escaped(value) if value is not None else None


def summary_dict(s: DiffSummary) -> dict[str, Any]:
    """The summary for ``--json``."""
    return {
        "files_before": s.files_before,
        "files_after": s.files_after,
        "unchanged": s.unchanged,
        "worse": s.worse,
        "groups": {g.value: n for g, n in s.groups.items()},
        "by_mime": [_breakdown_dict(b) for b in s.by_mime],
        "by_reader": [_breakdown_dict(b) for b in s.by_reader],
        "lowest": [
            {"similarity": sim, "root": escaped(root), "path": escaped(path)}
            for sim, root, path in s.lowest
        ],
        "bad_lines": s.bad_lines,
    }


def _breakdown_dict(b: Breakdown) -> dict[str, Any]:
    return {
        "name": escaped(b.name),
        "changed": b.changed,
        "worse": b.worse,
        "better": b.better,
        "flips": b.flips,
        "median_similarity": b.median_similarity,
        "lowest": [{"similarity": sim, "path": escaped(p)} for sim, p in b.lowest],
    }


# -- for people -----------------------------------------------------------------------------


def write_text(comparison: Comparison, out: IO[str], *, limit: int) -> DiffSummary:
    """The comparison for a person at :data:`WIDTH` columns (``limit`` files a group, 0: all)."""
    kept: dict[Group, list[FileChange]] = {g: [] for g in Group}
    roots: dict[str, set[str]] = {"gone": set(), "new": set(), "all": set()}
    for change in comparison.changes():
        if not limit or len(kept[change.group]) < limit:
            kept[change.group].append(change)
        roots["all"].add(change.root)
        if change.group in (Group.GONE, Group.NEW):
            roots[change.group.value].add(change.root)
    summary = comparison.summary()
    whole = len(roots["all"]) > 1
    lines = [*_head(comparison, summary, kept, whole)]
    if summary.files_before and summary.files_after and not summary.paired:
        lines.append(_unpaired(roots["gone"], roots["new"]))
    for group in Group:
        if kept[group]:
            lines += ["", f"{GROUP_TITLES[group]} ({summary.groups[group]:,})"]
            for change in kept[group]:
                lines += list(_file_lines(change, whole))
            more = summary.groups[group] - len(kept[group])
            if more:
                lines.append(f"  ... and {more:,} more (--limit 0 lists every file)")
    lines += _breakdown_lines("by MIME type", summary.by_mime)
    lines += _breakdown_lines("by reader", summary.by_reader)
    if summary.lowest:
        lines += ["", "lowest similarity"]
        lines += [
            _fit(f"  {sim:.2f}  {_name(root, path, whole)}") for sim, root, path in summary.lowest
        ]
    if summary.bad_lines:
        lines += ["", f"not records: {count(summary.bad_lines, 'line')} of the stores' indexes"]
    out.write("\n".join(lines) + "\n")
    return summary


def _head(
    comparison: Comparison, s: DiffSummary, kept: dict[Group, list[FileChange]], whole: bool
) -> Iterator[str]:
    yield _fit(f"before: {shown(comparison.names[0])} ({count(s.files_before, 'file')})")
    yield _fit(f"after:  {shown(comparison.names[1])} ({count(s.files_after, 'file')})")
    if (pair := comparison.pair) is not None:
        before, after = (shown(root) for root in pair)
        yield _fit(f"files pair by path: each store holds one folder ({before}; {after})")
    yield f"{s.unchanged:,} unchanged; {'something got worse' if s.worse else 'nothing got worse'}"
    yield ""
    for group in Group:
        n = s.groups[group]
        example = f"  e.g. {_example(kept[group][0], whole)}" if kept[group] else ""
        yield _fit(f"  {GROUP_TITLES[group]:<16}{n:>8,}{example}")


def _example(change: FileChange, whole: bool) -> str:
    return f"{_name(change.root, change.path, whole)}: {what_changed(change)}"


def what_changed(change: FileChange) -> str:
    """What changed, in a few words."""
    before, after = change.before, change.after
    if before is None:
        return f"new, {after.verdict_line if after else ''}"
    if after is None:
        return f"gone, was {before.verdict_line}"
    if change.similarity is not None:
        return f"similarity {change.similarity:.2f}, {_delta(change.chars_delta)}"
    if before.verdict_line != after.verdict_line:
        delta = f", {_delta(change.chars_delta)}" if change.chars_delta else ""
        return f"{before.verdict_line} -> {after.verdict_line}{delta}"
    return _delta(change.chars_delta)


def _file_lines(change: FileChange, whole: bool) -> Iterator[str]:
    yield f"  {_name(change.root, change.path, whole)}"
    yield _fit(f"    {what_changed(change)}")
    before, after = change.before, change.after
    if before is not None and after is not None and before.status == after.status == "ok":
        yield _fit(
            f"    characters {before.chars:,} -> {after.chars:,}; quality "
            f"{before.verdict or '?'} -> {after.verdict or '?'}; common words "
            f"{_pct(before.common)} -> {_pct(after.common)}"
        )
    for label, words in (("only before", change.only_before), ("only after", change.only_after)):
        if words:
            yield _fit(f"    {label + ':':<13}{' '.join(shown(w) for w, _n in words)}")
    if change.note:
        yield _fit(f"    {shown(change.note)}")


def _breakdown_lines(title: str, rows: Iterable[Breakdown]) -> list[str]:
    rows = list(rows)
    if not rows:
        return []
    lines = ["", f"{title:<34}{'changed':>8}{'worse':>7}{'better':>7}{'flips':>7}{'median':>8}"]
    for b in rows:
        median = f"{b.median_similarity:.2f}" if b.median_similarity is not None else "-"
        name = _fit(f"  {shown(b.name) or '(none)'}", 34)
        lines.append(
            f"{name:<34}{b.changed:>8,}{b.worse:>7,}{b.better:>7,}{b.flips:>7,}{median:>8}"
        )
        if b.lowest:
            low = ", ".join(f"{sim:.2f} {shown(p)}" for sim, p in b.lowest)
            lines.append(_fit(f"    lowest: {low}"))
    return lines


def _unpaired(gone: set[str], new: set[str]) -> str:
    a = ", ".join(shown(r) for r in sorted(gone)[:2])
    b = ", ".join(shown(r) for r in sorted(new)[:2])
    return _fit(f"no file is in both: files pair by root and path (before {a}; after {b})")


def _name(root: str, path: str, whole: bool) -> str:
    """A file for people: its path under its root (root too when the diff spans several)."""
    return shown(f"{root.rstrip('/')}/{path}" if whole else path)


def _delta(n: int) -> str:
    if n == 0:
        return "same length"
    return ("+" if n > 0 else "-") + count(abs(n), "character")


def _pct(value: float | None) -> str:
    return "?" if value is None else f"{value:.0%}"


def _fit(line: str, width: int = WIDTH) -> str:
    """``line`` cut to ``width`` columns (a CJK character takes two), its end replaced by
    ``...`` when cut."""
    if line.isascii():
        return line if len(line) <= width else line[: width - 3] + "..."
    from rich.cells import cell_len, set_cell_size

    return line if cell_len(line) <= width else set_cell_size(line, width - 3) + "..."


__all__ = [
    "EXIT_WORSE",
    "change_dict",
    "cmd_diff",
    "summary_dict",
    "what_changed",
    "write_json",
    "write_text",
]
