"""Office Math (OMML: ``m:oMath``), the equations of Word and PowerPoint, as a line of text.

An equation's characters are in its runs (``m:r``/``m:t``) and its shape in the structures
around them: a fraction's numerator and denominator, a script's base and index, a radical, an
n-ary operator with its limits, a delimiter, a matrix. Read as runs alone, ``x = (-b ±
√(b²-4ac))/2a`` came out as ``x=-b±b2-4ac2a``, or, where only ``w:t`` was read, as nothing at
all: every equation of a Word document was missing from its text. :func:`linear` writes each
structure the way Word's own linear format does, close enough to read and to search:
``x=(-b±√(b^2-4ac))/2a``.

Elements are told by their local name, so the same code reads the parser's prefixed tags
(``m:f``) and lxml's (``{namespace}f``, python-pptx's).
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

_MAX_DEPTH = 64
"""Structures nested deeper than this are read as their runs' text alone (no recursion)."""


def local(tag: str) -> str:
    """A tag's name without its namespace or prefix."""
    return tag.rpartition("}")[2].rpartition(":")[2]


def _prop(elem: Element, name: str, default: str) -> str:
    """The ``val`` of property ``name`` in ``elem``'s properties (``m:fPr``, ``m:naryPr``...)."""
    for props in elem:
        if local(props.tag).endswith("Pr"):
            for prop in props:
                if local(prop.tag) == name:
                    for key, value in prop.attrib.items():
                        if local(key) == "val":
                            return value
    return default


def _part(elem: Element, name: str, depth: int) -> str:
    """The linear text of ``elem``'s argument ``name`` (``num``, ``sup``, ``e``...)."""
    for kid in elem:
        if local(kid.tag) == name:
            return _linear(kid, depth + 1)
    return ""


def _parts(elem: Element, name: str, depth: int) -> list[str]:
    return [_linear(kid, depth + 1) for kid in elem if local(kid.tag) == name]


def _wrap(text: str) -> str:
    """``text`` in parentheses unless it is one number, one name or one character."""
    if len(text) <= 1 or text.isalnum() or (text[0] in "([{|⟨" and _closed(text)):
        return text
    return f"({text})"


def _closed(text: str) -> bool:
    """Whether ``text`` is one bracketed group (its first bracket closes at its end)."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch in "([{⟨"
        depth -= ch in ")]}⟩"
        if depth == 0 and i < len(text) - 1:
            return False
    return depth == 0


def _scripts(base: str, sub: str, sup: str) -> str:
    text = base
    if sub:
        text += f"_{_wrap(sub)}"
    if sup:
        text += f"^{_wrap(sup)}"
    return text


def _runs_text(elem: Element) -> str:
    return "".join(el.text or "" for el in elem.iter() if local(el.tag) == "t")


def _linear(elem: Element, depth: int) -> str:
    if depth > _MAX_DEPTH:
        return _runs_text(elem)
    name = local(elem.tag)
    if name == "t":
        return elem.text or ""
    if name.endswith("Pr"):  # (properties: fonts, styles, the characters read by _prop)
        return ""
    if name == "f":
        num, den = _part(elem, "num", depth), _part(elem, "den", depth)
        bar = "¦" if _prop(elem, "type", "bar") == "noBar" else "/"  # (a binomial's)
        return f"{_wrap(num)}{bar}{_wrap(den)}"
    if name in ("sSup", "sSub", "sSubSup"):
        base = _wrap(_part(elem, "e", depth))
        return _scripts(base, _part(elem, "sub", depth), _part(elem, "sup", depth))
    if name == "sPre":
        pre = _scripts("", _part(elem, "sub", depth), _part(elem, "sup", depth))
        return f"{pre} {_part(elem, 'e', depth)}"
    if name == "rad":
        degree, base = _part(elem, "deg", depth), _part(elem, "e", depth)
        return f"√({degree}&{base})" if degree else f"√{_wrap(base)}"
    if name == "nary":
        op = _prop(elem, "chr", "∫")
        limits = _scripts(op, _part(elem, "sub", depth), _part(elem, "sup", depth))
        return f"{limits} {_part(elem, 'e', depth)}"
    if name == "d":
        begin, end = _prop(elem, "begChr", "("), _prop(elem, "endChr", ")")
        return begin + _prop(elem, "sepChr", "|").join(_parts(elem, "e", depth)) + end
    if name == "func":
        fname, arg = _part(elem, "fName", depth), _part(elem, "e", depth)
        return f"{fname}{arg}" if arg[:1] in "([{" else f"{fname} {arg}"
    if name in ("limLow", "limUpp"):
        base, limit = _part(elem, "e", depth), _part(elem, "lim", depth)
        return _scripts(base, limit, "") if name == "limLow" else _scripts(base, "", limit)
    if name == "acc":
        return _wrap(_part(elem, "e", depth)) + _prop(elem, "chr", "\u0302")
    if name == "eqArr":
        return "\n".join(_parts(elem, "e", depth))
    if name == "m":
        rows = [", ".join(_parts(row, "e", depth)) for row in elem if local(row.tag) == "mr"]
        return "; ".join(rows)  # (its brackets are a delimiter's, around it)
    if name == "oMathPara":
        return "\n".join(_linear(kid, depth + 1) for kid in elem if local(kid.tag) == "oMath")
    # runs, a function's name, bars, boxes, group characters, phantoms: their contents
    text = ""
    scripted = False  # (the part before was a base with an index)
    for kid in elem:
        part = _linear(kid, depth + 1)
        name = local(kid.tag)
        if part[:1].isalnum() and (scripted or (name == "func" and text[-1:].isalnum())):
            text += " "  # (a_n cos x, x^k a^n: not a_ncos x, x^ka^n, whose index runs on)
        text += part
        scripted = name in _SCRIPTS
    return text


_SCRIPTS = frozenset({"sSup", "sSub", "sSubSup", "sPre", "limLow", "limUpp"})


def linear(math: Element) -> str:
    """An equation (``m:oMath`` or ``m:oMathPara``: several, a line each) as linear text."""
    return _linear(math, 0)
