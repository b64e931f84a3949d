"""xmlsafe: blocks, skips, starts, DTD and encoding refusals, byte and part caps."""

from __future__ import annotations

import io
from xml.etree.ElementTree import Element

import pytest

from engine.errors import CorruptFile, LimitExceeded, Refused
from engine.limits import Limits
from engine.readers.base import TextCapReached, TextSink
from engine.readers.xmlsafe import Rules, XmlBudget, element_text, parse, parse_bytes
from fixtures.gen.office import LAUGHS

NS = {"urn:t": "t"}
DOC = (
    '<?xml version="1.0" encoding="UTF-8"?><t:doc xmlns:t="urn:t" xmlns:o="urn:o">'
    '<t:sheet t:name="A"/><t:p>one <t:b>two</t:b> three<t:skip>gone</t:skip></t:p>'
    "<t:junk>not a block</t:junk><t:p>outer<t:p>inner</t:p></t:p><o:p>other ns</o:p></t:doc>"
)


def blocks_of(data: bytes | str, limits: Limits | None = None, **rules: object) -> list[str]:
    """Parse ``data``; return each block as ``tag=text``."""
    found: list[str] = []

    def on_block(el: Element) -> None:
        found.append(f"{el.tag}={element_text(el)}")

    raw = data.encode("utf-8") if isinstance(data, str) else data
    ruleset = Rules(NS, frozenset({"t:p"}), on_block, **rules)  # type: ignore[arg-type]
    parse_bytes(raw, ruleset, XmlBudget(limits or Limits()))
    return found


def test_blocks_are_outermost_and_skips_are_dropped() -> None:
    assert blocks_of(DOC, skip=frozenset({"t:skip"})) == ["t:p=one two three", "t:p=outerinner"]


def test_starts_report_tags_outside_blocks_with_prefixed_attributes() -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    rules = Rules(NS, starts=frozenset({"t:sheet"}), on_start=lambda t, a: seen.append((t, a)))
    parse_bytes(DOC.encode(), rules, XmlBudget(Limits()))
    assert seen == [("t:sheet", {"t:name": "A"})]


def test_unknown_namespaces_keep_clark_names_and_empty_prefix_gives_local_names() -> None:
    got: list[str] = []
    rules = Rules({"urn:o": ""}, frozenset({"p", "{urn:t}p"}), lambda el: got.append(el.tag))
    parse_bytes(DOC.encode(), rules, XmlBudget(Limits()))
    assert got == ["{urn:t}p", "{urn:t}p", "p"]


def test_element_text_keeps_tails_and_order_without_recursion() -> None:
    deep = "<t:p xmlns:t='urn:t'>" + "<t:s>x" * 50_000 + "</t:s>y" * 50_000 + "</t:p>"
    (only,) = blocks_of(deep)
    assert only == "t:p=" + "x" * 50_000 + "y" * 50_000


@pytest.mark.parametrize(
    "prolog",
    [
        # (a DOCTYPE naming only an external DTD is allowed: tests/readers/test_odf_kinds.py)
        '<!DOCTYPE t:doc [<!ENTITY e "text">]>',
        '<!DOCTYPE t:doc [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
        '<!DOCTYPE t:doc [<!ENTITY % p SYSTEM "http://example.invalid/x">%p;]>',
    ],
)
def test_dtds_and_entities_are_refused(prolog: str) -> None:
    doc = f'<?xml version="1.0"?>{prolog}<t:doc xmlns:t="urn:t"><t:p>&amp;</t:p></t:doc>'
    with pytest.raises(Refused):
        blocks_of(doc)


def test_billion_laughs_at_default_caps_is_refused_fast() -> None:
    doc = LAUGHS.replace("lolz", "t:doc") + '<t:doc xmlns:t="urn:t"><t:p>&lol9;</t:p></t:doc>'
    with pytest.raises(Refused, match="DTD"):
        blocks_of(doc)


@pytest.mark.parametrize(
    "data",
    [
        "\ufeff<t:doc xmlns:t='urn:t'><t:p>utf16 bom</t:p></t:doc>".encode("utf-16-le"),
        "<?xml version='1.0' encoding='UTF-16'?><t:doc xmlns:t='urn:t'><t:p>utf16 bom</t:p>"
        "</t:doc>".encode("utf-16"),
        "<t:doc xmlns:t='urn:t'><t:p>utf16 bom</t:p></t:doc>".encode("utf-16-be"),
        b"\xef\xbb\xbf<t:doc xmlns:t='urn:t'><t:p>utf16 bom</t:p></t:doc>",
    ],
)
def test_utf8_and_utf16_are_read(data: bytes) -> None:
    assert blocks_of(data) == ["t:p=utf16 bom"]


@pytest.mark.parametrize(
    "data",
    [
        "<?xml version='1.0' encoding='ISO-8859-1'?><t:doc xmlns:t='urn:t'/>".encode("latin-1"),
        b"<?xml version='1.0' encoding='windows-1251'?><t:doc xmlns:t='urn:t'/>",
        "<t:doc xmlns:t='urn:t'/>".encode("utf-32"),
    ],
)
def test_other_encodings_are_refused(data: bytes) -> None:
    with pytest.raises(Refused, match="UTF"):
        blocks_of(data)


@pytest.mark.parametrize("data", ["", "<t:doc xmlns:t='urn:t'><t:p>secret words", "<a></b>", "&x;"])
def test_malformed_xml_is_corrupt_and_the_message_has_no_text(data: str) -> None:
    with pytest.raises(CorruptFile) as err:
        blocks_of(data)
    assert "secret" not in str(err.value)


def test_xml_bytes_budget_spans_parts() -> None:
    part = ("<t:doc xmlns:t='urn:t'>" + "<t:p>text</t:p>" * 200 + "</t:doc>").encode()
    budget = XmlBudget(Limits(xml_bytes=4096))
    parse_bytes(part, Rules(NS), budget)
    with pytest.raises(LimitExceeded) as err:
        parse_bytes(part, Rules(NS), budget)
    assert err.value.limit == "xml_bytes"


def test_parts_per_block_cap() -> None:
    doc = "<t:doc xmlns:t='urn:t'><t:p>" + "<t:r>x</t:r>" * 100 + "</t:p></t:doc>"
    with pytest.raises(LimitExceeded) as err:
        blocks_of(doc, Limits(parts_per_block=50))
    assert err.value.limit == "parts_per_block"
    assert blocks_of(doc, Limits(parts_per_block=101)) == ["t:p=" + "x" * 100]


def test_text_cap_propagates_from_the_block_handler() -> None:
    sink = TextSink(5)
    rules = Rules(NS, frozenset({"t:p"}), lambda el: sink.line(element_text(el)))
    with pytest.raises(TextCapReached):
        parse(io.BytesIO(DOC.encode()), rules, XmlBudget(Limits()))
    assert sink.getvalue() == "one t"
