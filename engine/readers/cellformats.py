"""Which of a spreadsheet's number formats show dates, and a date serial number as text.

A workbook stores a date as a number of days since its epoch (``45293.5``) and shows it as a
date only through the cell's number format. Read without the formats, every date of an
Excel 2007+ workbook came out as that serial number: a search for ``2024-01-02`` found
nothing, and a reader of the text saw ``45293``. The Excel 97 reader had them as dates
already (xlrd reads the formats); :func:`is_date_format` and :func:`serial_text` give the
other readers the same: ``2024-01-02``, ``2024-01-02 12:00:00``, a time alone as
``12:00:00``.
"""

from __future__ import annotations

import datetime as dt
import re

_BUILTIN_DATES = frozenset({*range(14, 23), *range(27, 37), *range(45, 48), *range(50, 59)})
"""The built-in format ids that show a date or a time (those of East Asian locales too)."""
_ELAPSED = frozenset({46})
"""``[h]:mm:ss``: a duration, not a time of day."""
_LITERALS = re.compile(r'"[^"]*"|\\.|_.|\*.|\[[^\]]*\]')
"""What a format shows as it is: quoted text, escaped and padding characters, [colours],
[conditions] and [$-locales] (an elapsed-time field, ``[h]``, is told apart before)."""
_DATE_PARTS = re.compile(r"[dmyhse]|a/p|am/pm", re.IGNORECASE)
_NUMBER_PARTS = re.compile(r"[0#?]")
_FRACTIONAL_SECONDS = re.compile(r"s\.0+", re.IGNORECASE)
_LAST_SERIAL = 2_958_466
"""9999-12-31 in the 1900 system: a serial past it is no date any writer meant."""
_EPOCHS_APART = 1_462
"""Days from 1900's epoch to 1904's."""


def is_date_format(format_id: int, code: str | None) -> bool:
    """Whether the number format ``format_id`` (its ``code`` when it is a custom one) shows a
    date, a time or both; durations (``[h]:mm``) and numbers are not."""
    if code is None:
        return format_id in _BUILTIN_DATES and format_id not in _ELAPSED
    section = code.split(";", 1)[0]  # (the positive numbers' section: a date has one)
    if re.search(r"\[(h+|m+|s+)\]", section, re.IGNORECASE):
        return False
    bare = _LITERALS.sub("", _FRACTIONAL_SECONDS.sub("s", section))
    if bare.strip().lower() == "general":
        return False
    return bool(_DATE_PARTS.search(bare)) and not _NUMBER_PARTS.search(bare)


def dated_text(raw: str, date1904: bool = False) -> str:
    """A number written as text, as the date or time it stands for (:func:`serial_text`);
    ``raw`` itself when it is no number or no date."""
    try:
        return serial_text(float(raw), date1904) or raw
    except ValueError:
        return raw


def serial_text(value: float, date1904: bool = False) -> str | None:
    """The date or time that ``value`` days since the workbook's epoch stand for, as ISO
    text (a time alone, under one day, as ``HH:MM:SS``); None when it is no date (negative,
    past the year 9999). 1900's serial 60, the 29th of February Lotus invented, is said as
    Excel shows it."""
    if not 0 <= value < _LAST_SERIAL - (_EPOCHS_APART if date1904 else 0):
        return None
    days = int(value)
    seconds = round((value - days) * 86_400)
    if seconds == 86_400:
        days, seconds = days + 1, 0
    clock = dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60)
    if days == 0 and not date1904:
        return clock.isoformat()
    if date1904:
        day = dt.date(1904, 1, 1) + dt.timedelta(days=days)
    elif days == 60:
        return "1900-02-29" + (f" {clock.isoformat()}" if seconds else "")
    else:  # (serials from 61 on count the day that never was)
        day = dt.date(1899, 12, 31 if days < 60 else 30) + dt.timedelta(days=days)
    return day.isoformat() + (f" {clock.isoformat()}" if seconds else "")
