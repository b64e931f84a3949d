"""The common-word lists the quality scorer measures texts against, and how they are made.

``quality_words.txt.gz`` (beside this file) holds, for each language wordfreq knows, its most
frequent words: one line per language, ``code<TAB>word word word...``. It is derived from
wordfreq's data (CC-BY-SA 4.0, by Robyn Speer and contributors) and regenerated, byte for
byte, by ``python -m engine.quality_words`` (needs the ``dev`` extra's ``wordfreq``).

Why a file of our own rather than wordfreq at run time: wordfreq loads a language's whole
frequency table on first use (0.05-0.45 s each, 4 s for all of them), in every worker; the
scorer needs only the top of each list, and this file loads in milliseconds.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

WORDS_FILE = Path(__file__).with_name("quality_words.txt.gz")
"""The generated lists."""
TOP_N = 5000
"""Words kept per language: the head of the list, where running text spends most tokens."""


PLACEHOLDER_LATIN = (
    "a ac accumsan ad adipiscing aenean aliqua aliquam aliquet aliquip amet anim ante aptent "
    "arcu at auctor augue aute bibendum blandit cillum class commodo condimentum congue "
    "consectetur consequat conubia convallis cras cubilia culpa cupidatat curabitur curae "
    "cursus dapibus deserunt diam dictum dictumst dignissim dis do dolor dolore donec dui duis "
    "efficitur egestas eget eiusmod eleifend elementum elit enim erat eros esse est et etiam eu "
    "euismod ex excepteur exercitation facilisi facilisis fames faucibus felis fermentum "
    "feugiat finibus fringilla fugiat fusce gravida habitant habitasse hac hendrerit "
    "himenaeos iaculis id imperdiet in inceptos incididunt integer interdum ipsum irure justo "
    "labore laboris laborum lacinia lacus laoreet lectus leo libero ligula litora lobortis "
    "lorem luctus maecenas magna magnis malesuada massa mattis mauris maximus metus mi minim "
    "molestie mollis mollit montes morbi mus nam nascetur natoque nec neque netus nibh nisi "
    "nisl non nostra nostrud nulla nullam nunc occaecat odio officia orci ornare pariatur "
    "parturient pellentesque penatibus per pharetra phasellus placerat platea porta porttitor "
    "posuere potenti praesent pretium primis proident proin pulvinar purus quam qui quis "
    "quisque reprehenderit rhoncus ridiculus risus rutrum sagittis sapien scelerisque sed sem "
    "semper senectus sint sit sociosqu sodales sollicitudin sunt suscipit suspendisse taciti "
    "tellus tempor tempus tincidunt torquent tortor tristique turpis ullamco ullamcorper "
    "ultrices ultricies urna ut varius vehicula vel velit venenatis veniam vestibulum vitae "
    "vivamus viverra voluptate volutpat vulputate"
)
"""The lorem-ipsum vocabulary, as language ``la``: placeholder text is extracted right, and
must not read as garbage (wordfreq has no Latin list)."""


def load_lines() -> dict[str, str]:
    """Language code -> its words, space-separated (split on demand: most texts need one)."""
    out: dict[str, str] = {}
    with gzip.open(WORDS_FILE, "rt", encoding="utf-8") as fh:
        for line in fh:
            code, _, words = line.rstrip("\n").partition("\t")
            out[code] = words
    out.setdefault("la", PLACEHOLDER_LATIN)
    return out


def generate(dest: Path = WORDS_FILE, top_n: int = TOP_N) -> None:
    """Write the lists from wordfreq (a development dependency only)."""
    import wordfreq

    lines = []
    for code in sorted(wordfreq.available_languages()):
        words = [w for w in wordfreq.top_n_list(code, top_n, wordlist="best") if " " not in w]
        lines.append(f"{code}\t{' '.join(words)}\n")
    data = "".join(lines).encode("utf-8")
    # mtime 0 and no file name in the header: the same lists give the same bytes.
    with open(dest, "wb") as raw, gzip.GzipFile("", "wb", 9, raw, mtime=0) as fh:
        fh.write(data)


if __name__ == "__main__":
    generate()
    print(f"wrote {WORDS_FILE}", file=sys.stderr)
