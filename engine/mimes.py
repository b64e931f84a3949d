"""MIME type names used across the engine, so readers and detection agree on spelling."""

from __future__ import annotations

PLAIN = "text/plain"
HTML = "text/html"
XHTML = "application/xhtml+xml"
XML = "application/xml"
JSON = "application/json"
CSV = "text/csv"
TSV = "text/tab-separated-values"
EML = "message/rfc822"
MBOX = "application/mbox"
MSG = "application/vnd.ms-outlook"
RTF = "application/rtf"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"
ODG = "application/vnd.oasis.opendocument.graphics"
FODT = "application/vnd.oasis.opendocument.text-flat-xml"
FODS = "application/vnd.oasis.opendocument.spreadsheet-flat-xml"
FODP = "application/vnd.oasis.opendocument.presentation-flat-xml"
EPUB = "application/epub+zip"
FB2 = "application/x-fictionbook+xml"
DOC = "application/msword"
XLS = "application/vnd.ms-excel"
PPT = "application/vnd.ms-powerpoint"
OLE = "application/x-ole-storage"
ZIP = "application/zip"
SVG = "image/svg+xml"
PNG = "image/png"
JPEG = "image/jpeg"
TIFF = "image/tiff"
BMP = "image/bmp"
GIF = "image/gif"
WEBP = "image/webp"
OCTET = "application/octet-stream"
EMPTY = "application/x-empty"

IMAGES = frozenset({PNG, JPEG, TIFF, BMP, GIF, WEBP})

# Types whose bytes are text and are read as such (beyond text/*).
TEXTUAL_APPLICATION = frozenset(
    {
        JSON,
        XML,
        "application/x-yaml",
        "application/toml",
        "application/sql",
        "application/x-pem-file",
        "application/javascript",
        "application/x-sh",
        "application/x-ndjson",
        SVG,
    }
)
