"""Build `src/morphcpt/morphology/data/en_words.tsv`: how often the words of the shipped lists are used in English,
so the analyser can read Tagalog affixes on an English word written without a hyphen (nag|text, mag|wo|work) and
still leave English words whole (`morphology/loans.py`).

    pip install wordfreq==3.1.1 && python scripts/build_english_words.py [--output PATH]

Build-time only: the runtime reads the file, never wordfreq. It holds `word<TAB>zipf` (wordfreq 3.1.1's English
Zipf frequency, two decimals) for every word of letters of three or more of `data/lexicon/`'s word lists whose
English figure is 2.5 or more, for every English word of four letters or more with a figure of 3 or more (a root
the rule may read: jogging, which no list holds), and for every English word with a figure of 2.5 or more that
starts like a Tagalog prefix the rule reads (magnet, pageant, nagging: they must stay whole).
Deterministic: the same lists and wordfreq version give the same file.
"""

import argparse
import sys
from pathlib import Path

from morphcpt import paths
from morphcpt.morphology.lexicon import known_words
from morphcpt.morphology.loans import ENGLISH_FILE, ENGLISH_ROOT_ZIPF, ENGLISH_WORD_ZIPF, LOAN_PREFIXES

HEADER = (
    "# English Zipf frequency (wordfreq 3.1.1, CC BY-SA 4.0) of the words of data/lexicon/, of English words, and of\n"
    "# English words that start like a Tagalog prefix; see scripts/build_english_words.py. Columns: word TAB zipf\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=ENGLISH_FILE)
    args = parser.parse_args()
    try:
        from wordfreq import iter_wordlist, zipf_frequency
    except ImportError:
        sys.exit("build_english_words.py needs wordfreq: pip install wordfreq==3.1.1")
    rows = {}
    for w in known_words(paths.LEXICON_DIR):
        if w.isalpha() and len(w) >= 3 and (zipf := zipf_frequency(w, "en")) >= ENGLISH_WORD_ZIPF:
            rows[w] = zipf
    for w in iter_wordlist("en"):  # most frequent first
        if (zipf := zipf_frequency(w, "en")) < ENGLISH_WORD_ZIPF:  # below it too rare in English to tell
            break
        if (
            w.isalpha()
            and w.isascii()
            and ((zipf >= ENGLISH_ROOT_ZIPF and len(w) >= 4) or (w.startswith(LOAN_PREFIXES) and len(w) >= 6))
        ):
            rows[w] = zipf
    args.output.write_text(HEADER + "".join(f"{w}\t{rows[w]:.2f}\n" for w in sorted(rows)), encoding="utf-8")
    print(f"{len(rows):,} words -> {args.output}")


if __name__ == "__main__":
    main()
