"""The shipped Tagalog word lists the Filipino analyser reads: curated roots, dictionary headwords, frequencies.

- `morphology/data/tl_roots.txt`: the curated roots, plus any `*root*` file of `data/lexicon/` (one word per line,
  first whitespace-separated field, "#" comments);
- `data/lexicon/tgl_words.txt`: dictionary headwords, roots and derived words mixed (`rootlexicon` sorts
  them with the analyser);
- `data/lexicon/fil_wordfreq.tsv`: `word<TAB>zipf`, to choose between readings (the linkers -ng and -g, two roots
  of one cut);
- every word list (`list_words`): the words of the language, and the inflected forms from which `rootlexicon`
  finds roots no dictionary lists.

Every word is folded (`affixes.fold`: lowercase, diacritics removed). Provenance and licences: `data/NOTICE`.
"""

from __future__ import annotations

from pathlib import Path

from morphcpt.morphology.affixes import fold

CURATED_ROOTS = Path(__file__).resolve().parent / "data" / "tl_roots.txt"
HEADWORD_FILES = ("tgl_words.txt", "tl_wiktionary_headwords.txt")
FREQUENCY_FILE = "fil_wordfreq.tsv"  # word<TAB>zipf, to choose between the linkers -ng and -g


def read_words(path: Path) -> list[str]:
    """The first field of every line of `path` that is a word of letters, folded ("#" starts a comment)."""
    words = []
    for line in path.read_text(encoding="utf-8").splitlines():
        field = line.split("#", 1)[0].split()
        if field and field[0].isalpha():
            words.append(fold(field[0]))
    return words


def word_frequencies(path: Path) -> dict[str, float]:
    """word -> Zipf frequency from a `word<TAB>zipf` list (header line allowed); {} when the file is absent."""
    if not path.is_file():
        return {}
    frequencies: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, _, zipf = line.partition("\t")
        try:
            value = float(zipf)
        except ValueError:
            continue
        # spellings that fold alike (bukas, bukás) keep the highest figure, not the last one read
        folded = fold(word)
        frequencies[folded] = max(value, frequencies.get(folded, value))
    return frequencies


def list_words(lexicon_dir: Path) -> dict[str, frozenset[str]]:
    """The words of each word list of `lexicon_dir` (file name -> folded words; not the affix lists)."""
    lists = {}
    if Path(lexicon_dir).is_dir():
        for path in sorted(Path(lexicon_dir).iterdir()):
            if path.is_file() and path.suffix in (".txt", ".tsv") and not path.name.endswith("fixes.txt"):
                lists[path.name] = frozenset(
                    fold(w)
                    for line in path.read_text(encoding="utf-8").splitlines()
                    if (w := line.split("\t")[0])
                )
    return lists


def known_words(lexicon_dir: Path) -> frozenset[str]:
    """Every word of every word list of `lexicon_dir` (not the affix lists): what counts as a word of the language
    (the linker follows a word)."""
    return frozenset().union(*list_words(lexicon_dir).values())


def curated_roots(lexicon_dir: Path | None = None) -> frozenset[str]:
    """The curated root list plus any `*root*` file of `lexicon_dir`: roots the analyser trusts most."""
    roots = set(read_words(CURATED_ROOTS))
    if lexicon_dir is not None and Path(lexicon_dir).is_dir():
        for path in sorted(Path(lexicon_dir).iterdir()):
            if "root" in path.name.lower() and path.is_file():
                roots.update(read_words(path))
    return frozenset(roots)
