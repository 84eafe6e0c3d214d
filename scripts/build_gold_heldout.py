"""Build the generated gold sets of `data/gold_heldout/`: a DEV set to look at while fixing the analyser, and a
HELD-OUT set scored only at milestones (rules and provenance in `data/gold_heldout/README.md`).

    pip install wordfreq==3.1.1 && python scripts/build_gold_heldout.py [--output-dir data/gold_heldout]

Build-time only and independent of the analyser: the templates of `scripts/gold_paradigms.py` run over the words
of the shipped lists (`data/lexicon/`), and `scripts/gold_selection.py` keeps the roots and the attested forms
that have one reading only; roots are split between the sets by a hash, so no root of the held-out set is in the
dev set. wordfreq (build-time only, as for the sample data) says which roots are English. Deterministic: the same
lists and wordfreq version give the same files.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gold_selection import build, english_spelled  # noqa: E402

from morphcpt import paths  # noqa: E402

HEADER = """# Generated Tagalog gold segmentation ({name} set), built by scripts/build_gold_heldout.py; see README.md.
# Columns: segmentation (data/gold conventions) TAB types (data/gold letters) TAB root TAB template TAB tags
"""


def english_test():
    """English spelling, or a word wordfreq finds at least as often in English as in Filipino (zipf >= 3)."""
    try:
        from wordfreq import zipf_frequency
    except ImportError:
        sys.exit("build_gold_heldout.py needs wordfreq to tell English roots: pip install wordfreq==3.1.1")

    def is_english(word: str) -> bool:
        en = zipf_frequency(word, "en")
        return english_spelled(word) or (en >= 3.0 and en >= zipf_frequency(word, "fil"))

    return is_english


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=paths.DATA_DIR / "gold_heldout")
    parser.add_argument("--per-template", type=int, default=45)
    parser.add_argument("--roots-per-set", type=int, default=300)
    args = parser.parse_args()
    gold = paths.DATA_DIR / "gold" / "tl_segmentation.tsv"
    gold_words = {
        line.split("\t")[0].replace("|", "").lower()
        for line in gold.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    }
    sets = build(paths.LEXICON_DIR, gold_words, args.per_template, args.roots_per_set, english_test())
    args.output_dir.mkdir(parents=True, exist_ok=True)
    for name, rows in sets.items():
        lines = []
        for form, root in rows:
            if form is None:
                lines.append(f"{root}\t0\t{root}\troot\t")
            else:
                lines.append(
                    f"{'|'.join(form.morphs)}\t{form.types}\t{root}\t{form.template}\t{','.join(form.tags)}"
                )
        path = args.output_dir / f"{name}.tsv"
        path.write_text(HEADER.format(name=name) + "\n".join(sorted(lines)) + "\n", encoding="utf-8")
        print(f"{path}: {len(lines)} words")


if __name__ == "__main__":
    main()
