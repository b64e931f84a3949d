"""MIME type names used across the engine, so readers and detection agree on spelling."""

from __future__ import annotations

DETECTION = 13
"""How :mod:`engine.detect` tells files' kinds apart, by version: raised when it tells a kind
apart it did not (2: Lotus and Quattro files; Word files that name their streams in upper
case; 3: Access databases, PKCS#7 signed files, cabinets, LHA, xar and cpio archives; 4: bare
JPEG 2000 codestreams, HEIF files of every brand; Works, Quattro Pro notebooks, StarOffice
Writer, Publisher and PowerPoint 4 files among OLE2 ones; 5: EMF and WMF metafiles, Compiled
HTML Help, Visio 2003-2010 drawings, Works 5-9 documents, DjVu, dBase tables; 6: Unix
compress files, Corel Presentations; 7: zip members in Deflate64, Zstandard, xz and PPMd, which
an Office or OpenDocument file's reader found no decoder for; 8: SQLite's write-ahead logs and
rollback journals, which were unknown bytes; StarOffice Calc, Draw and Impress files, which
were OLE2 files of no kind; 9: Outlook data files, .pst and .ost; SQLite's log indexes, -shm;
10: Apple's binary property lists, Safari's web archives among them, which were text or
unknown bytes; 11: Foxmail mailboxes and FITS files, which were text, and files named as text
whose bytes are binary, NULs more than one in twenty: Android's binary XML; 12: Photoshop
images, AutoCAD drawings, OneNote sections, fonts, Windows shortcuts and Matroska/WebM
videos, which were all unknown bytes: no reader takes them yet, but an operator sees what
they are, each kind a group of its own on the unsupported screen; 13: Word 2003 XML, Excel
2003 XML and Flat OPC files, which were XML read as markup).
A store's summary keeps the version its last sweep had; a sweep with a later one reads the
files no reader took again, once (their recorded kind may be another now)."""

WORD_2003_XML = "application/vnd.ms-wordml"
EXCEL_2003_XML = "application/vnd.ms-spreadsheetml"
FLAT_OPC = "application/x-flat-opc+xml"
"""Office documents saved as one XML file: Word 2003 XML, Excel 2003 XML (SpreadsheetML;
both as Tika names them) and the flat package Word and PowerPoint 2007+ save (Flat OPC)."""
PSD = "image/vnd.adobe.photoshop"
DWG = "image/vnd.dwg"
ONENOTE = "application/onenote"
LNK = "application/x-ms-shortcut"
TTF = "font/ttf"
OTF = "font/otf"
FONT_COLLECTION = "font/collection"
WOFF = "font/woff"
WOFF2 = "font/woff2"
MATROSKA = "video/x-matroska"
WEBM = "video/webm"

PLAIN = "text/plain"
HTML = "text/html"
XHTML = "application/xhtml+xml"
XML = "application/xml"
JSON = "application/json"
CSV = "text/csv"
TSV = "text/tab-separated-values"
EML = "message/rfc822"
MBOX = "application/mbox"
FITS = "application/fits"
"""A FITS file (astronomy's images and tables), told by its first card, ``SIMPLE  =``."""
FOXMAIL = "application/x-foxmail"
"""A Foxmail mailbox (``.box``, Tencent's mail client): messages after a binary separator."""
MSG = "application/vnd.ms-outlook"
RTF = "application/rtf"
PDF = "application/pdf"
BPLIST = "application/x-bplist"
"""An Apple binary property list (``bplist00``): preferences, an application's state."""
WEBARCHIVE = "application/x-webarchive"
"""Safari's saved page (``.webarchive``): a binary property list of the page and its parts."""
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
FODG = "application/vnd.oasis.opendocument.graphics-flat-xml"
_ODF = "application/vnd.oasis.opendocument."
_SUN = "application/vnd.sun.xml."
ODF_TEXT = frozenset(
    {ODT, FODT, _ODF + "text-template", _ODF + "text-master", _ODF + "text-master-template",
     _ODF + "text-web", _SUN + "writer", _SUN + "writer.template", _SUN + "writer.global"}
)  # fmt: skip
"""Word-processing OpenDocument and StarOffice types: documents, templates, masters."""
ODF_SHEET = frozenset(
    {ODS, FODS, _ODF + "spreadsheet-template", _SUN + "calc", _SUN + "calc.template"}
)
"""Spreadsheets and their templates."""
ODF_SLIDE = frozenset(
    {ODP, FODP, _ODF + "presentation-template", _SUN + "impress", _SUN + "impress.template"}
)
"""Presentations and their templates."""
ODF_DRAWING = frozenset(
    {ODG, FODG, _ODF + "graphics-template", _SUN + "draw", _SUN + "draw.template"}
)
"""Drawings and their templates."""
ODF_CHART = frozenset({_ODF + "chart", _ODF + "chart-template", _SUN + "chart"})
"""Charts: titles, labels and the chart's own data table."""
ODF_FORMULA = frozenset({_ODF + "formula", _ODF + "formula-template", _SUN + "math"})
"""Formulas: the StarMath annotation, else the MathML tokens."""
EPUB = "application/epub+zip"
FB2 = "application/x-fictionbook+xml"
DOC = "application/msword"
XLS = "application/vnd.ms-excel"
PPT = "application/vnd.ms-powerpoint"
OLE = "application/x-ole-storage"
ZIP = "application/zip"
RAR = "application/vnd.rar"
ISO = "application/x-iso9660-image"
CAB = "application/vnd.ms-cab-compressed"
LHA = "application/x-lzh-compressed"
XAR = "application/x-xar"
CPIO = "application/x-cpio"
ACCESS = "application/x-msaccess"
PKCS7 = "application/pkcs7-mime"
XLSB = "application/vnd.ms-excel.sheet.binary.macroenabled.12"
VSDX = "application/vnd.ms-visio.drawing"
XPS = "application/vnd.ms-xpsdocument"
WRI = "application/x-mswrite"
WPD = "application/vnd.wordperfect"
LOTUS = "application/vnd.lotus-1-2-3"
QUATTRO = "application/x-quattro-pro"
QUATTRO_OLE = "application/x-quattro-pro-notebook"
"""Quattro Pro 7 and later (``.wb3``, ``.qpw``): OLE2 files, not Lotus records."""
COREL_SHOW = "application/x-corel-presentations"
"""Corel Presentations (``.shw``): an OLE2 file whose ``PerfectOffice_MAIN`` stream, the one
Quattro Pro's notebooks have, is a WordPerfect-family document, beside a ``SlideShow``
storage. No reader: told apart so that it is ``unsupported/no_reader``, not a notebook
that the Quattro Pro reader finds corrupt."""
WORKS = "application/vnd.ms-works"
PUBLISHER = "application/x-mspublisher"
VISIO = "application/vnd.visio"
"""Visio 2003-2010 drawings (``.vsd``, ``.vst``): OLE2 files with a ``VisioDocument`` stream."""
STAR_WRITER = "application/vnd.stardivision.writer"
STAR_CALC = "application/vnd.stardivision.calc"
STAR_DRAW = "application/vnd.stardivision.draw"
STAR_IMPRESS = "application/vnd.stardivision.impress"
STAR_OFFICE = frozenset({STAR_WRITER, STAR_CALC, STAR_DRAW, STAR_IMPRESS})
"""StarOffice 3-5's OLE2 documents (and their ``.vor`` templates), which ``sd2text`` reads."""
PPT4 = "application/x-mspowerpoint-4"
"""PowerPoint 4 presentations: OLE2 files with a ``PP40`` stream, not PowerPoint 97's."""
PAGES = "application/vnd.apple.pages"
NUMBERS = "application/vnd.apple.numbers"
KEYNOTE = "application/vnd.apple.keynote"
IWORK = "application/vnd.apple.iwork"
"""An iWork document whose name does not say which application's it is."""
XZ = "application/x-xz"
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
HEIC = "image/heic"
HEIF = "image/heif"
AVIF = "image/avif"
JP2 = "image/jp2"
J2K = "image/x-jp2-codestream"
DECODED_IMAGES = frozenset({HEIC, HEIF, AVIF, JP2, J2K})
EMF = "image/emf"
CHM = "application/vnd.ms-htmlhelp"
DJVU = "image/vnd.djvu"
DBF = "application/x-dbf"
SQLITE = "application/vnd.sqlite3"
SQLITE_WAL = "application/x-sqlite3-wal"
"""A database's write-ahead log (``NAME-wal``): read with the database beside it, not alone."""
SQLITE_JOURNAL = "application/x-sqlite3-journal"
"""A database's rollback journal (``NAME-journal``): the pages a write will overwrite."""
SQLITE_SHM = "application/x-sqlite3-shm"
"""A write-ahead log's index (``NAME-shm``), left beside a database an application held open:
where the log's pages are, no rows."""
PST = "application/vnd.ms-outlook-pst"
"""An Outlook data file (Personal Folders): a mailbox's folders, mail, contacts, calendar."""
OST = "application/vnd.ms-outlook-ost"
"""An Outlook offline folders file: the same format, a server mailbox's local copy."""
COMPRESS = "application/x-compress"
WMF = "image/wmf"
"""Pictures tesseract cannot open itself: a decoder writes them out for it first."""

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
