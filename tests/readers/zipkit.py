"""Zip tricks shared by the reader tests."""

from __future__ import annotations


def set_encrypted_flag(data: bytes) -> bytes:
    """Mark every member encrypted (general-purpose flag bit 0) without encrypting it."""
    out = bytearray(data)
    for sig, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = out.find(sig)
        while at >= 0:
            out[at + offset] |= 1
            at = out.find(sig, at + 4)
    return bytes(out)
