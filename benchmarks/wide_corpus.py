"""A benchmark corpus whose vocabulary grows like real text's: the perf corpus with words swapped for lexicon words.

    python benchmarks/wide_corpus.py /tmp/perf/corpus.jsonl /tmp/perf/wide.jsonl [--common 0.3] [--rare 0.03]

Why: `make_perf_corpus.py` builds 30 MB by reshuffling the 723 KB shipped sample, so every one of its 8.4 M tokens
comes from the sample's 9,683 distinct words. Patok's per-word work (the morphological analysis, the word states
and their contraction steps) is done once per distinct word and process, so on that corpus it is nearly all
done after the first few hundred documents. Real web text of that size has on the order of 10^5 distinct words,
so a per-word cost that the perf corpus hides would show there. This script keeps every document's layout
(punctuation, spacing, line breaks, capitalisation) and replaces each word, independently:

* with probability `--common`, by a word drawn from `data/lexicon/fil_wordfreq.tsv` with weight 10^zipf (the
  frequency of Filipino words in wordfreq's sources: web, subtitles, Wikipedia);
* else with probability `--rare`, by a word drawn uniformly from `fil_tesseract_words.txt` and `tgl_words.txt`
  (the long tail: dictionary words, each seen a few times).

The text is word salad: use it only to measure what depends on the number of distinct words. Deterministic
(`--seed`). Prints the distinct words before and after.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")  # the word pattern of morphcpt.tokenization.alignment
LEXICON = Path(__file__).resolve().parents[1] / "data" / "lexicon"


def _common() -> tuple[list[str], list[float]]:
    words, weights = [], []
    for line in (LEXICON / "fil_wordfreq.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        word, zipf = line.split("\t")
        if WORD.fullmatch(word):
            words.append(word)
            weights.append(10 ** float(zipf))
    return words, weights


def _rare() -> list[str]:
    words: set[str] = set()
    for name in ("fil_tesseract_words.txt", "tgl_words.txt"):
        for line in (LEXICON / name).read_text(encoding="utf-8").splitlines():
            field = line.split("#", 1)[0].strip()
            if WORD.fullmatch(field):
                words.add(field)
    return sorted(words)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--common", type=float, default=0.3, help="share of words redrawn by frequency")
    ap.add_argument(
        "--rare", type=float, default=0.03, help="share of the others drawn from the dictionaries"
    )
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    common, weights = _common()
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    rare = _rare()
    before: set[str] = set()
    after: set[str] = set()

    def swap(match: re.Match) -> str:
        word = match.group()
        before.add(word)
        u = rng.random()
        if u < a.common:
            new = rng.choices(common, cum_weights=cumulative)[0]
        elif u < a.common + (1 - a.common) * a.rare:
            new = rare[rng.randrange(len(rare))]
        else:
            new = word
        if word[:1].isupper():
            new = new[:1].upper() + new[1:]
        after.add(new)
        return new

    with open(a.input, encoding="utf-8") as src, open(a.output, "w", encoding="utf-8") as out:
        for line in src:
            record = json.loads(line)
            record["text"] = WORD.sub(swap, record["text"])
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"distinct words: {len(before):,} in {a.input}, {len(after):,} in {a.output}")


if __name__ == "__main__":
    main()
