"""Rebuild the shipped sample data: a small Tagalog corpus and lexical resources, from offline sources.

Build-time only: the pipeline and the tests read the files under `data/`, never this module's sources. The
sources are installed on the building machine and are not project dependencies:

    apt-get install -y firefox-esr-l10n-tl login tesseract-ocr tesseract-ocr-fil
    apt-get download chromium-l10n && dpkg-deb -x chromium-l10n_*.deb /tmp/chromium-l10n  (or install it)
    pip install phjokes wordfreq tglstemmer

Run it through `python scripts/build_sample_data.py` (see `data/NOTICE` for the exact commands and licences); it
sits beside that script, outside the runtime package, because nothing at run time needs it.
Only sources whose licence allows redistribution are read: Firefox's Tagalog localisation (MPL-2.0), Chromium's
Filipino localisation (BSD-3-Clause), the Tagalog catalogue of shadow's `login` tools (BSD-3-Clause), phjokes
(MIT), wordfreq's data (CC BY-SA 4.0), tglstemmer's lists (MIT) and tesseract's Filipino word list
(Apache-2.0). GPL/LGPL catalogues on the machine (apt, dpkg, glib, iso-codes) are deliberately left out.

The output is deterministic: inputs are read in sorted order and every random choice comes from one seed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import random
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from localisation_formats import (  # beside this script
    ftl_variants,
    parse_ftl,
    parse_properties,
    read_mo,
    read_pak,
    resolve_ftl_terms,
)

FIREFOX_LANGPACK = Path("/usr/lib/firefox-esr/browser/extensions/langpack-tl@firefox-esr.mozilla.org.xpi")
CHROMIUM_LOCALES = Path("/usr/lib/chromium/locales")
SHADOW_CATALOGUE = Path("/usr/share/locale/tl/LC_MESSAGES/shadow.mo")
TESSERACT_FIL = Path("/usr/share/tesseract-ocr/5/tessdata/fil.traineddata")
INSTALL_FIREFOX = "apt-get install -y firefox-esr-l10n-tl"
INSTALL_CHROMIUM = (
    "apt-get install -y chromium-l10n, or without Chromium itself: apt-get download chromium-l10n && "
    "dpkg-deb -x chromium-l10n_*.deb DIR, then pass DIR/usr/lib/chromium/locales"
)
INSTALL_SHADOW = "apt-get install -y login"
INSTALL_TESSERACT = "apt-get install -y tesseract-ocr tesseract-ocr-fil"
DEFAULT_SEED = 20250611
WORDFREQ_TOP_N = 30_000
BAD_SAMPLE_LONG_BYTES = 200_000

# Mean and cap of the number of strings grouped into one l10n document: documents then range from one label to a
# few kilobytes, like the short and long documents of a web corpus.
MEAN_STRINGS_PER_DOCUMENT = 10
MAX_STRINGS_PER_DOCUMENT = 80


class MissingSourceError(RuntimeError):
    """A build-time source is not installed; the message names the command that installs it."""


def require_file(path: Path, install: str) -> Path:
    if not path.is_file():
        raise MissingSourceError(f"{path} not found; install it with: {install}")
    return path


def require_module(name: str, install: str):
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise MissingSourceError(f"Python package {name!r} not found; install it with: {install}") from err


def require_program(name: str, install: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise MissingSourceError(f"program {name!r} not found; install it with: {install}")
    return found


def check_sources(chromium_locales: Path = CHROMIUM_LOCALES) -> None:
    """Fail before writing anything when a source is missing, naming everything that has to be installed."""
    files = [
        (FIREFOX_LANGPACK, INSTALL_FIREFOX),
        (chromium_locales / "fil.pak", INSTALL_CHROMIUM),
        (chromium_locales / "fil.pak.info", INSTALL_CHROMIUM),
        (SHADOW_CATALOGUE, INSTALL_SHADOW),
        (TESSERACT_FIL, INSTALL_TESSERACT),
    ]
    missing = [f"{path} ({install})" for path, install in files if not path.is_file()]
    missing += [
        f"program {p} ({INSTALL_TESSERACT})"
        for p in ("combine_tessdata", "dawg2wordlist")
        if not shutil.which(p)
    ]
    missing += [
        f"Python package {name} (pip install {name})"
        for name in ("phjokes", "wordfreq", "tglstemmer")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise MissingSourceError("missing build-time sources:\n  " + "\n  ".join(missing))


# ---------------------------------------------------------------------------------------------------------------
# Cleaning and language identification.

_PLACEHOLDER = re.compile(
    r"%(\d+\$)?[-+ #0]*\d*(\.\d+)?[lhqjzt]*[sSdiuxXfgcp@]"  # printf: %s, %1$S, %ld
    r"|#\d|\$\d"  # Mozilla plural and Chromium placeholders: #1, $1
    r"|[{}|]"  # unresolved Fluent placeables, Chromium's |$1| key markers
    r"|<[a-zA-Z/!]"  # markup
    r"|&[a-zA-Z#][\w#]*;"  # entities such as &amp;
    r"|://|\bwww\.|\S@\S"  # URLs and addresses
    r"|\$[A-Za-z_]"  # shell/template variables
    r"|[\\\t\r]"  # escapes left in the string
)
# A single `&` before a letter marks the menu accelerator (`&Buksan`, `I-&save`); `&&` is a literal ampersand.
_ACCELERATOR = re.compile(r"(?<!&)&(?=\w)")
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")


def clean_string(text: str) -> str | None:
    """The string as a reader would see it, or None when it carries placeholders or markup.

    An accelerator marker is removed rather than dropping the string: the rest is real text.
    """
    text = text.strip()
    # Without a run of two letters a string is an access key, a symbol or a number, not text.
    if _PLACEHOLDER.search(text) or not re.search(r"[^\W\d_]{2}", text):
        return None
    return _ACCELERATOR.sub("", text).replace("&&", "&")


@dataclass
class TagalogDetector:
    """Says whether a text is mostly Tagalog rather than untranslated English (Taglish passes if Tagalog leads).

    A word counts as Tagalog when it is in tglstemmer's Tagalog word list, carries a Tagalog prefix before a
    hyphen (`i-save`, `mag-sign`, `na-reload`: Taglish verbs) or wordfreq rates it more frequent in Filipino than
    in English; as English when wordfreq rates it clearly more frequent in English.
    """

    tagalog_words: frozenset[str]
    prefixes: frozenset[str]
    english_margin: float = 0.5

    @classmethod
    def load(cls) -> TagalogDetector:
        return cls(frozenset(tglstemmer_words()), frozenset(tglstemmer_affixes()["prefixes"]))

    def is_tagalog_word(self, word: str, fil: float, en: float) -> bool:
        hyphenated = "-" in word and word.partition("-")[0] in self.prefixes
        return word in self.tagalog_words or hyphenated or fil > en

    def counts(self, text: str) -> tuple[int, int]:
        wordfreq = require_module("wordfreq", "pip install wordfreq")
        tagalog = english = 0
        for word in _WORD.findall(text.lower()):
            fil, en = wordfreq.zipf_frequency(word, "fil"), wordfreq.zipf_frequency(word, "en")
            if self.is_tagalog_word(word, fil, en):
                tagalog += 1
            elif en > fil + self.english_margin:
                english += 1
        return tagalog, english

    def __call__(self, text: str) -> bool:
        tagalog, english = self.counts(text)
        return tagalog >= 1 and tagalog >= english


# ---------------------------------------------------------------------------------------------------------------
# Sources. Each returns groups of related strings (one l10n file, one catalogue, one joke) in a stable order.


@dataclass(frozen=True)
class StringGroup:
    source: str
    name: str
    strings: tuple[str, ...]
    whole: bool = False  # a joke is one document; l10n files are cut into several


# Attributes that hold access keys, key bindings or CSS sizes rather than text.
_NON_TEXT_KEYS = re.compile(
    r"(accesskey|commandkey|\.key|keycode|\.style|width|height|\.size)$", re.IGNORECASE
)


def firefox_groups(langpack: Path = FIREFOX_LANGPACK) -> list[StringGroup]:
    """Every .ftl and .properties file of Firefox's Tagalog language pack, as raw strings in file order."""
    require_file(langpack, INSTALL_FIREFOX)
    with zipfile.ZipFile(langpack) as archive:
        names = sorted(n for n in archive.namelist() if n.endswith((".ftl", ".properties")))
        files = {name: archive.read(name).decode("utf-8") for name in names}
    terms = {
        key: value
        for name, text in files.items()
        if name.endswith(".ftl")
        for key, value in parse_ftl(text)
        if key.startswith("-") and "." not in key and "{" not in value
    }
    groups = []
    for name, text in files.items():
        strings: list[str] = []
        if name.endswith(".ftl"):
            for key, value in parse_ftl(text):
                if key.startswith("-") or _NON_TEXT_KEYS.search(key):
                    continue
                strings.extend(resolve_ftl_terms(v, terms) for v in ftl_variants(value))
        else:
            for key, value in parse_properties(text):
                if _NON_TEXT_KEYS.search(key):
                    continue
                # Mozilla's plural strings list the forms separated by semicolons.
                strings.extend(value.split(";") if "#1" in value else [value])
        groups.append(StringGroup("firefox-esr-l10n-tl", name, tuple(strings)))
    return groups


def chromium_groups(locales: Path = CHROMIUM_LOCALES) -> list[StringGroup]:
    """Chromium's Filipino UI strings, grouped by the resource file they come from (listed in fil.pak.info).

    Resource ids are assigned in file order, so sorting by id keeps related strings together.
    """
    pak = read_pak(require_file(locales / "fil.pak", INSTALL_CHROMIUM).read_bytes())
    origin = {}
    for line in (
        require_file(locales / "fil.pak.info", INSTALL_CHROMIUM).read_text(encoding="utf-8").splitlines()
    ):
        _name, number, grd = line.split(",", 2)
        origin[int(number)] = grd.removeprefix("../../")
    by_file: dict[str, list[str]] = {}
    for number in sorted(pak):
        try:
            text = pak[number].decode("utf-8")
        except UnicodeDecodeError:  # compressed or binary resources
            continue
        by_file.setdefault(origin.get(number, "unknown"), []).append(text)
    return [StringGroup("chromium-l10n-fil", name, tuple(by_file[name])) for name in sorted(by_file)]


def gettext_groups(catalogue: Path = SHADOW_CATALOGUE) -> list[StringGroup]:
    """The translated strings of a gettext catalogue (untranslated entries repeat the English msgid)."""
    require_file(catalogue, INSTALL_SHADOW)
    pairs = read_mo(catalogue.read_bytes())
    strings = tuple(msgstr.strip() for msgid, msgstr in pairs if msgstr != msgid)
    return [StringGroup("shadow-tl", catalogue.name, strings)]


def phjokes_groups() -> list[StringGroup]:
    """phjokes' Tagalog jokes, one group per joke (its Bisaya jokes are another language and are skipped)."""
    jokes = require_module("phjokes.jokes.jokes", "pip install phjokes").pinoy_jokes
    return [
        StringGroup("phjokes", str(number), tuple(jokes[number]["joke"]), whole=True)
        for number in sorted(jokes)
        if jokes[number]["dialect"] == "tagalog"
    ]


def tglstemmer_words() -> list[str]:
    package = require_module("tglstemmer", "pip install tglstemmer")
    path = Path(package.__file__).parent / "resources" / "tgl_wordlist.txt"
    return [w.strip().lower() for w in path.read_text(encoding="utf-8").splitlines() if w.strip()]


# ---------------------------------------------------------------------------------------------------------------
# Corpus assembly.


def _document_sizes(count: int, rng: random.Random) -> Iterator[int]:
    while count > 0:
        size = min(count, MAX_STRINGS_PER_DOCUMENT, 1 + int(rng.expovariate(1 / MEAN_STRINGS_PER_DOCUMENT)))
        yield size
        count -= size


def build_documents(
    groups: Iterable[StringGroup], keep: TagalogDetector, seed: int = DEFAULT_SEED
) -> list[dict[str, str]]:
    """Clean, deduplicate and group strings into `{"text", "source"}` documents, shuffled with `seed`.

    A string is kept once (its first occurrence in sorted source order). Jokes are judged as a whole so that an
    English punch line inside a Tagalog joke stays; l10n strings are judged one by one and cut into runs of
    consecutive strings of varied length.
    """
    rng = random.Random(seed)
    seen: set[str] = set()
    documents = []
    for group in groups:
        strings = [s for s in group.strings if s.strip()]
        cleaned = [c for s in strings if (c := clean_string(s)) is not None]
        if group.whole:
            text = "\n".join(cleaned)
            if cleaned and len(cleaned) == len(strings) and text not in seen and keep(text):
                seen.add(text)
                documents.append({"text": text, "source": group.source})
            continue
        kept = []
        for text in cleaned:
            if text not in seen and keep(text):
                seen.add(text)
                kept.append(text)
        start = 0
        for size in _document_sizes(len(kept), rng):
            documents.append({"text": "\n".join(kept[start : start + size]), "source": group.source})
            start += size
    rng.shuffle(documents)
    return documents


def write_jsonl(path: Path, records: Iterable[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def bad_sample_lines(documents: list[dict[str, str]]) -> list[bytes]:
    """Lines of `tl_sample_bad.jsonl`, one per way an input line can be bad, between two good lines.

    The order is documented in data/NOTICE so that the pipeline's tests can expect each reason.
    """
    good_first, good_last = documents[0], documents[1]
    long_text, index = [], 0
    while sum(len(t.encode()) + 1 for t in long_text) < BAD_SAMPLE_LONG_BYTES:
        long_text.append(documents[index % len(documents)]["text"])
        index += 1

    def line(record: object) -> bytes:
        return json.dumps(record, ensure_ascii=False).encode("utf-8")

    return [
        line(good_first),
        b'{"text": "Magandang umaga, ',  # invalid JSON (truncated)
        b'{"text": "Magandang \xff\xfe umaga"}',  # invalid UTF-8
        line({"source": "test", "body": "Walang text dito."}),  # missing text
        line({"text": 12345}),  # non-string text
        line({"text": None}),  # non-string text (null)
        line(["Hindi", "ito", "object"]),  # not a JSON object
        line({"text": ""}),  # empty text
        line({"text": "\n".join(long_text), "source": "test-long"}),  # very long document
        line({"text": "Tapos na ang kuwento.<eos> Simula ng bago.", "source": "test-literal-eos"}),
        line(good_last),
    ]


# ---------------------------------------------------------------------------------------------------------------
# Lexical resources.


def wordfreq_table(top_n: int = WORDFREQ_TOP_N) -> list[tuple[str, float]]:
    """The `top_n` most frequent Filipino words (those with a letter) with their Zipf frequency."""
    wordfreq = require_module("wordfreq", "pip install wordfreq")
    words = [w for w in wordfreq.top_n_list("fil", top_n) if _WORD.search(w)]
    return [(w, wordfreq.zipf_frequency(w, "fil")) for w in words]


def tglstemmer_affixes() -> dict[str, list[str]]:
    package = require_module("tglstemmer", "pip install tglstemmer")
    folder = Path(package.__file__).parent / "resources" / "affixes"
    return {
        kind: [
            a.strip() for a in (folder / f"{kind}.txt").read_text(encoding="utf-8").splitlines() if a.strip()
        ]
        for kind in ("prefixes", "infixes", "suffixes")
    }


def tesseract_words(traineddata: Path = TESSERACT_FIL) -> list[str]:
    """The word list inside tesseract's Filipino model (a DAWG), lower-cased, deduplicated and sorted."""
    require_file(traineddata, INSTALL_TESSERACT)
    combine = require_program("combine_tessdata", INSTALL_TESSERACT)
    dawg2wordlist = require_program("dawg2wordlist", INSTALL_TESSERACT)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "fil."
        subprocess.run([combine, "-u", str(traineddata), str(prefix)], check=True, capture_output=True)
        words_file = Path(tmp) / "words.txt"
        subprocess.run(
            [dawg2wordlist, f"{prefix}lstm-unicharset", f"{prefix}lstm-word-dawg", str(words_file)],
            check=True,
            capture_output=True,
        )
        words = words_file.read_text(encoding="utf-8").split()
    return sorted({w.lower() for w in words if _WORD.fullmatch(w)})


def write_lexicon(folder: Path) -> dict[str, int]:
    """Write the lexicon files; returns the number of entries of each."""
    folder.mkdir(parents=True, exist_ok=True)
    table = wordfreq_table()
    files: dict[str, list[str]] = {
        "fil_wordfreq.tsv": ["word\tzipf"] + [f"{w}\t{z:.2f}" for w, z in table],
        "tgl_words.txt": sorted(set(tglstemmer_words())),
        "fil_tesseract_words.txt": tesseract_words(),
    }
    for kind, affixes in tglstemmer_affixes().items():
        files[f"tgl_{kind}.txt"] = affixes
    for name, lines in files.items():
        (folder / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return {name: len(lines) - name.endswith(".tsv") for name, lines in files.items()}


# ---------------------------------------------------------------------------------------------------------------


def build_sample(
    data_dir: Path, chromium_locales: Path = CHROMIUM_LOCALES, seed: int = DEFAULT_SEED
) -> dict[str, object]:
    """Write data/sample/tl_sample.jsonl, data/sample/tl_sample_bad.jsonl and data/lexicon/*; return statistics."""
    check_sources(chromium_locales)
    groups = [*firefox_groups(), *chromium_groups(chromium_locales), *gettext_groups(), *phjokes_groups()]
    documents = build_documents(groups, TagalogDetector.load(), seed)
    sample = data_dir / "sample" / "tl_sample.jsonl"
    write_jsonl(sample, documents)
    bad = data_dir / "sample" / "tl_sample_bad.jsonl"
    bad.write_bytes(b"".join(line + b"\n" for line in bad_sample_lines(documents)))
    per_source: dict[str, int] = {}
    for document in documents:
        per_source[document["source"]] = per_source.get(document["source"], 0) + 1
    return {
        "sample": str(sample),
        "documents": len(documents),
        "bytes": sample.stat().st_size,
        "text_bytes": sum(len(d["text"].encode()) for d in documents),
        "documents_per_source": per_source,
        "lexicon": write_lexicon(data_dir / "lexicon"),
    }
