"""The plan's reuse rules, with no I/O."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.plan import RACY_NS, Decision, decide, keeps, needs_hash, still_current
from engine.quality import Quality, Verdict
from engine.records import Reason, Record, Status, Why
from engine.tools import read_with

SHA = "a" * 64
OTHER = "b" * 64
VERSIONS = {"text": 1, "pdf": 2, "image": 1}
READERS = {"text/plain": "text", "application/pdf": "pdf", "image/png": "image", "x/none": None}


def rec(**kw: object) -> Record:
    base: dict[str, object] = dict(
        root="/r",
        path="p",
        size=10,
        mtime_ns=100,
        status=Status.OK,
        sha256=SHA,
        mime="text/plain",
        reader="text",
        v=1,
        tools=None,
    )
    base.update(kw)
    return Record(**base)  # type: ignore[arg-type]


def d(
    prior: Record | None,
    sha: str = SHA,
    same: Record | None = None,
    *,
    full: bool = True,
    forced: bool = False,
    fp: str = "tools1",
    names: frozenset[str] | None = frozenset(),
):
    return decide(
        sha,
        prior,
        same,
        reader_versions=VERSIONS,
        reader_for_mime=READERS,
        tools_fingerprint=fp,
        full=full,
        forced=forced,
        tool_names=names,
    )


def test_stat_cache_trusts_matching_size_and_mtime() -> None:
    prior = rec()
    assert not needs_hash(prior, 10, 100, prev_started_ns=100 + 2 * RACY_NS, rehash=False)
    assert needs_hash(prior, 11, 100, prev_started_ns=10**18, rehash=False)
    assert needs_hash(prior, 10, 101, prev_started_ns=10**18, rehash=False)
    assert needs_hash(prior, 10, 100, prev_started_ns=10**18, rehash=True)
    assert needs_hash(None, 10, 100, prev_started_ns=10**18, rehash=False)


def test_racy_mtime_is_rehashed() -> None:
    prior = rec(mtime_ns=10**18)
    assert needs_hash(prior, 10, 10**18, prev_started_ns=10**18 + RACY_NS // 2, rehash=False)


def test_new_changed_and_unchanged() -> None:
    assert d(None) == d(None) and d(None).why == Why.NEW and d(None).read
    assert d(rec(sha256=OTHER)).why == Why.CHANGED
    assert not d(rec()).read


def test_move_or_copy_reuses_same_content() -> None:
    decision = d(None, same=rec(path="elsewhere"))
    assert not decision.read and decision.base is not None and decision.base.path == "elsewhere"


def test_reader_version_bump_and_reader_change() -> None:
    assert d(rec(v=0)).why == Why.READER_CHANGED
    assert d(rec(reader="other")).why == Why.READER_CHANGED


def test_unsupported_retried_only_when_tools_change() -> None:
    needs = rec(
        status=Status.UNSUPPORTED,
        reason=Reason.NEEDS_TOOL,
        mime="image/png",
        reader="image",
        tools="tools1",
    )
    assert not d(needs).read
    assert d(needs, fp="tools2").why == Why.TOOLS_CHANGED


def test_no_reader_retried_when_a_reader_appears() -> None:
    none = rec(status=Status.UNSUPPORTED, reason=Reason.NO_READER, mime="x/none", reader=None)
    assert not d(none).read
    now_readable = none.evolve(mime="text/plain")
    assert d(now_readable).why == Why.READER_CHANGED


def test_no_reader_of_a_kind_nobody_knew_retried_when_readers_came() -> None:
    """Its kind was the octet stream of a file nothing recognised; only reading it again
    (detecting it with the readers that came) says whether one of them takes it."""
    none = rec(status=Status.UNSUPPORTED, reason=Reason.NO_READER, mime="x/none", reader=None)
    came = decide(
        SHA, none, None, reader_versions=VERSIONS, reader_for_mime=READERS,
        tools_fingerprint="tools1", full=True, forced=False, unknown_again=True,
    )  # fmt: skip
    assert came.why == Why.READER_CHANGED
    ok = decide(
        SHA, rec(), None, reader_versions=VERSIONS, reader_for_mime=READERS,
        tools_fingerprint="tools1", full=True, forced=False, unknown_again=True,
    )  # fmt: skip
    assert not ok.read  # (a record a reader took is kept)


def test_errors_retried_on_full_sweeps_only() -> None:
    err = rec(status=Status.ERROR, reason=Reason.CORRUPT)
    assert d(err).why == Why.RETRY_ERROR
    assert not d(err, full=False).read


def test_forced_always_reads() -> None:
    assert d(rec(), forced=True).why == Why.FORCED


def test_scanned_retried_when_tools_change() -> None:
    scanned = rec(
        status=Status.EMPTY,
        reason=Reason.SCANNED,
        mime="application/pdf",
        reader="pdf",
        v=2,
        tools="tools1",
    )
    assert not d(scanned).read
    assert d(scanned, fp="tools2").why == Why.TOOLS_CHANGED


def test_the_warm_fast_path_only_keeps_what_decide_keeps() -> None:
    cases = [
        rec(),
        rec(v=0),
        rec(reader="other"),
        rec(mime="x/none"),
        rec(status=Status.EMPTY, reason=Reason.NO_TEXT),
        rec(
            status=Status.EMPTY,
            reason=Reason.SCANNED,
            reader="pdf",
            v=2,
            mime="application/pdf",
            tools="old",
        ),
        rec(status=Status.ERROR, reason=Reason.CORRUPT),
        rec(status=Status.UNSUPPORTED, reason=Reason.NEEDS_TOOL, tools="old"),
    ]
    kept = [r for r in cases if still_current(r, VERSIONS, READERS, frozenset())]
    assert kept, "the fast path must apply to the common case"
    for r in kept:
        for full in (True, False):
            assert not d(r, full=full).read, r


def test_a_garbled_text_is_read_again_when_kinds_are_told_apart_anew() -> None:
    """Its bytes may be of a kind a newer detection knows (a FITS file read as text); a good
    text, or a garbled one of another reader, is kept; the fast path agrees."""
    garbled = rec(quality=Quality(Verdict.GARBLED))
    good = rec(quality=Quality(Verdict.GOOD))
    other = rec(reader="pdf", v=2, mime="application/pdf", quality=Quality(Verdict.GARBLED))
    assert (again(garbled).read, again(garbled).why) == (True, Why.READER_CHANGED)
    assert not again(good).read and not again(other).read and not d(garbled).read
    assert not still_current(garbled, VERSIONS, READERS, frozenset(), True)
    assert still_current(garbled, VERSIONS, READERS, frozenset(), False)
    assert still_current(good, VERSIONS, READERS, frozenset(), True)
    assert not keeps(garbled, VERSIONS, READERS, "tools1", frozenset(), unknown_again=True)
    assert keeps(good, VERSIONS, READERS, "tools1", frozenset(), unknown_again=True)


def again(prior: Record) -> Decision:
    return decide(
        SHA, prior, None, reader_versions=VERSIONS, reader_for_mime=READERS,
        tools_fingerprint="tools1", full=True, forced=False, tool_names=frozenset(),
        unknown_again=True,
    )  # fmt: skip


def test_the_empty_sha_is_the_hash_of_no_bytes() -> None:
    import hashlib

    from engine.plan import EMPTY_SHA

    assert hashlib.sha256(b"").hexdigest() == EMPTY_SHA


def test_the_keeper_keeps_what_decide_keeps_and_rereads_errors() -> None:
    """The stat index is told what a full sweep keeps by the plan's Keeper: a reused record
    is kept exactly when decide() keeps it; an error that is not quarantined is read again."""
    from engine.plan import Keeper
    from engine.quality import QUALITY_VERSION, Quality

    keeper = Keeper(VERSIONS, READERS, "tools1", trusted_before=10**18, tool_names=())
    ok = rec(reused=True, mtime_ns=1, quality=Quality("good", QUALITY_VERSION))
    assert keeper(rec(reused=True, mtime_ns=1)) is None  # not scored yet: scored again
    assert keeper(ok) == ("file", "", False) and not d(ok).read
    assert keeper(rec(reused=True, mtime_ns=1, v=0)) is None  # an older reader: read again
    error = rec(status=Status.ERROR, reason=Reason.CORRUPT, reused=True, mtime_ns=1)
    kind, _detail, again = keeper(error) or ("", "", False)
    assert (kind, again) == ("file", True)
    assert keeper(rec(reused=True, mtime_ns=10**18)) is None  # too recent to trust


# -- tools are part of the read (issue 27) -----------------------------------------------------

PDF_TOOLS = ("pdftoppm", "pdftotext", "tesseract")
VERSION_OF = {"pdftoppm": "24.02", "pdftotext": "24.02", "tesseract": "5.3.4"}


def read_with_of(had: frozenset[str], bump: bool = False) -> str:
    """The pdf reader's ``read_with`` on a machine with the tools ``had``."""
    named = ";".join(f"{t}={VERSION_OF[t]}{'.1' if bump else ''}" for t in sorted(had))
    return read_with(PDF_TOOLS, named)


def pdf(**kw: object) -> Record:
    return rec(mime="application/pdf", reader="pdf", v=2, **kw)


tool_sets = st.frozensets(st.sampled_from(PDF_TOOLS))
verdicts = st.sampled_from(
    [
        {"status": Status.OK},
        {"status": Status.OK, "reused": True},
        {"status": Status.EMPTY, "reason": Reason.NO_TEXT},
        {"status": Status.ERROR, "reason": Reason.CORRUPT},
    ]
)


@given(had=tool_sets, now=tool_sets, verdict=verdicts, full=st.booleans())
def test_a_verdict_is_read_again_exactly_when_a_tool_its_read_lacked_is_found_now(
    had: frozenset[str], now: frozenset[str], verdict: dict[str, object], full: bool
) -> None:
    r = pdf(read_with=read_with_of(had), **verdict)
    came = (now - had) & set(PDF_TOOLS)
    got = d(r, names=now, full=full)
    if came:
        assert (got.read, got.why) == (True, Why.TOOLS_CHANGED)
    elif r.status == Status.ERROR and full:
        assert got.why == Why.RETRY_ERROR
    else:
        assert not got.read
    # the warm fast path never keeps what decide() reads again
    assert not (still_current(r, VERSIONS, READERS, now) and got.read)
    # the stat index's judge keeps exactly what a full sweep keeps
    assert keeps(r, VERSIONS, READERS, "tools1", now) == (not d(r, names=now).read)


@given(had=tool_sets)
def test_a_new_version_of_a_tool_or_one_gone_reads_nothing_again(had: frozenset[str]) -> None:
    r = pdf(read_with=read_with_of(had, bump=True))
    assert not d(r, names=had).read  # the same tools, other versions
    for gone in had:
        assert not d(r, names=had - {gone}).read
    assert still_current(r, VERSIONS, READERS, had)


def test_a_record_that_does_not_say_its_tools_is_not_read_again_for_them() -> None:
    """An older quarry's record, or the extract stage's: no ``read_with``."""
    r = pdf(read_with=None)
    assert not d(r, names=frozenset(PDF_TOOLS)).read
    assert still_current(r, VERSIONS, READERS, frozenset(PDF_TOOLS))
    assert not d(pdf(read_with="pdftotext="), names=None).read  # the tools found now unknown


def test_a_quarantined_content_stays_quarantined_when_a_tool_comes() -> None:
    r = pdf(status=Status.ERROR, reason=Reason.QUARANTINED, crashes=3, read_with="pdftotext=")
    assert not d(r, names=frozenset({"pdftotext"})).read


def test_an_unsupported_verdict_keeps_its_fingerprint_rule() -> None:
    """The old ``tools`` fingerprint keeps its meaning: retried when the tool set changes."""
    r = rec(
        status=Status.UNSUPPORTED,
        reason=Reason.NEEDS_TOOL,
        mime="image/png",
        reader="image",
        tools="tools1",
        read_with="tesseract=",
    )
    assert not d(r, fp="tools1", names=frozenset()).read
    assert d(r, fp="tools2", names=frozenset({"tesseract"})).why == Why.TOOLS_CHANGED
    assert d(r, fp="tools2", names=frozenset()).why == Why.TOOLS_CHANGED  # a tool went


def test_the_keeper_judges_a_garbled_text_apart_from_a_good_one() -> None:
    """The merge's judge caches its answer by the fields it reads: a good text record judged
    first must not decide for a garbled one when kinds are told apart anew."""
    from engine.plan import Keeper
    from engine.quality import QUALITY_VERSION

    keeper = Keeper(VERSIONS, READERS, "tools1", 10**12, tool_names=(), unknown_again=True)
    good = rec(reused=True, quality=Quality(Verdict.GOOD, v=QUALITY_VERSION))
    garbled = rec(reused=True, quality=Quality(Verdict.GARBLED, v=QUALITY_VERSION))
    assert keeper(good) is not None
    assert keeper(garbled) is None
