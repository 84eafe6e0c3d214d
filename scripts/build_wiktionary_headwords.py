"""Write `data/lexicon/tl_wiktionary_headwords.txt`: the Tagalog headwords (lemmas) of simplemma's dictionary.

    pip install simplemma==2.0.0 && python scripts/build_wiktionary_headwords.py

Build-time only. simplemma (MIT code) ships a Tagalog form -> lemma table derived from English Wiktionary
(CC BY-SA); its lemmas are dictionary headwords: roots (akusa, kamit, sulong), and derived words that the
analyser sorts out as it does tglstemmer's list (`morphology.rootlexicon`: a headword with an affixed reading is
no root). Kept: lowercase lemmas of letters (and inner hyphens), three letters or more, diacritics removed.
Provenance and licence: data/NOTICE.
"""

import argparse
from pathlib import Path

from simplemma.strategies.dictionaries.dictionary_factory import DefaultDictionaryFactory

from morphcpt import paths
from morphcpt.morphology.affixes import fold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=paths.LEXICON_DIR / "tl_wiktionary_headwords.txt")
    out = parser.parse_args().output
    table = DefaultDictionaryFactory().get_dictionary("tl")
    words = set()
    for lemma in set(table.values()):
        lemma = lemma.decode() if isinstance(lemma, bytes) else lemma
        word = fold(lemma)
        letters = word.replace("-", "").isalpha() and word.isascii() and word.strip("-") == word
        if lemma == lemma.lower() and len(word) >= 3 and letters:
            words.add(word)
    out.write_text("\n".join(sorted(words)) + "\n", encoding="utf-8")
    print(f"{out}: {len(words)} headwords")


if __name__ == "__main__":
    main()
