"""Build the generated gold sets of `data/gold_heldout/`: a DEV set to look at while fixing the analyser, and a
HELD-OUT set scored only before and after (rules and provenance in `data/gold_heldout/README.md`).

    python scripts/build_gold_heldout.py [--output-dir data/gold_heldout] [--per-template 45]

Build-time only and independent of the analyser: roots are the words of the shipped lists (`data/lexicon/`) from
which the templates of `scripts/gold_paradigms.py` make at least three attested forms of two affix families; a
root that is itself an attested form of another such root (tulungan <- tulong) or a prefix plus such a root
(pabilis) is left out; forms that two roots or templates make differently (nakikita: na|ki|kita or naki|kita),
forms that are roots themselves (umaga), words of `data/gold/` and roots with letters or digraphs of English
spelling are left out. Roots are split between the sets by a hash, so no root of the held-out set is in the
dev set. Deterministic: the same lists give the same files.
"""

import argparse
import collections
import hashlib
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gold_paradigms import VOWELS, paradigm  # noqa: E402

from morphcpt import paths  # noqa: E402

LISTS = ("fil_tesseract_words.txt", "fil_wordfreq.tsv", "tgl_words.txt")
ENGLISH = (
    "c",
    "q",
    "x",
    "f",
    "v",
    "z",
    "j",
    "sh",
    "th",
    "ee",
    "oo",
    "ea",
    "ph",
    "ou",
    "ght",
    "ow",
    "oa",
    "gg",
)
DERIVING = ("pa", "ka", "ma", "na", "pag", "mag", "nag", "pang", "pam", "pan", "i", "taga", "paki", "naka")
HEADER = """# Generated Tagalog gold segmentation ({name} set), built by scripts/build_gold_heldout.py; see README.md.
# Columns: segmentation (data/gold conventions) TAB types (data/gold letters) TAB root TAB template TAB tags
"""


def attested_words(lexicon: Path) -> set[str]:
    words = set()
    for name in LISTS:
        for line in (lexicon / name).read_text(encoding="utf-8").splitlines():
            word = line.split("\t")[0].strip().lower()
            if word and not word.startswith("#"):
                words.add(word)
    return words


def build(lexicon: Path, gold_words: set[str], per_template: int, roots_per_set: int, seed: int = 25):
    attested = attested_words(lexicon)
    productive = {}
    for r in sorted(attested):
        if not (r.isalpha() and r.isascii() and 3 <= len(r) <= 12) or sum(c in VOWELS for c in r) < 2:
            continue
        if any(e in r for e in ENGLISH):
            continue
        found = [f for f in paradigm(r) if f.word in attested and f.word != r]
        evidence = [f for f in found if f.template != "linker"]
        if len({f.word for f in evidence}) >= 4 and len({f.template.split(":")[0] for f in evidence}) >= 3:
            productive[r] = found
    made = {f.word for fs in productive.values() for f in fs if f.template != "linker"}

    def derived(r: str) -> bool:
        """A root built of another: an attested form of it, a prefix or suffix on it, its raised or linked
        form (lubus, buting), or a CV copy before it (popost, aaply)."""
        last = max(r.rfind(v) for v in VOWELS)
        raised_back = r[last] == "u" and r[:last] + "o" + r[last + 1 :] in productive
        return (
            r in made
            or raised_back
            or any(r.startswith(p) and r[len(p) :] in productive for p in DERIVING)
            or any(
                r.endswith(s) and r[: -len(s)] in productive
                for s in ("an", "han", "in", "hin", "n", "ng", "g")
            )
            or any(r[k - 1] in VOWELS and r[:k] == r[k : 2 * k] for k in (1, 2))
        )

    roots = sorted(r for r in productive if not derived(r))
    cuts = collections.defaultdict(set)
    first = {}
    for r in roots:
        for f in productive[r]:
            if f.word in productive or f.word in gold_words:
                continue
            if "syncope" in f.tags and any(f.morphs[-2] + v in attested for v in "aeiou"):
                continue  # hing|in is hingi's, not hinog's
            cuts[f.word].add((r, f.morphs))
            first.setdefault(f.word, (r, f))
    forms = {w: first[w] for w, c in cuts.items() if len(c) == 1}
    sets = {}
    for name, parity in (("dev", 0), ("heldout", 1)):
        rng = random.Random(f"{seed}-{name}")
        mine = [
            w for w, (r, _) in sorted(forms.items()) if hashlib.sha256(r.encode()).digest()[0] % 2 == parity
        ]
        rng.shuffle(mine)
        taken, per = [], collections.Counter()
        for w in mine:
            template = forms[w][1].template
            if per[template] < per_template:
                per[template] += 1
                per.update(forms[w][1].tags)
                taken.append(w)
        chosen = set(taken)
        for w in mine:  # then the rarer phenomena (syncope, cluster copies, d -> r) up to the same count each
            tags = forms[w][1].tags
            if w not in chosen and any(per[t] < per_template for t in tags):
                per.update(tags)
                taken.append(w)
        rows = [(forms[w][1], forms[w][0]) for w in taken]
        bare = [
            r for r in roots if hashlib.sha256(r.encode()).digest()[0] % 2 == parity and r not in gold_words
        ]
        rows += [(None, r) for r in sorted(rng.sample(bare, min(roots_per_set, len(bare))))]
        sets[name] = rows
    return sets


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
    sets = build(paths.LEXICON_DIR, gold_words, args.per_template, args.roots_per_set)
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
