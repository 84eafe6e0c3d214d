"""The analyser's readings of fixed word sets, written down and compared: what a change to the analyser moves, held-out
words and roots hidden (a check before a commit, not a test).

    python benchmarks/analyser_readings.py dump after.tsv                 # every set, at this checkout
    git worktree add /tmp/base <commit> && (cd /tmp/base && PYTHONPATH=src python \
        /path/to/benchmarks/analyser_readings.py dump /tmp/before.tsv)   # the same at another commit
    python benchmarks/analyser_readings.py diff /tmp/before.tsv after.tsv [--show 20]

The sets: `lists`, every word of the shipped lists (data/lexicon); `english`, the English words of
`morphology/data/en_words.tsv` the lists lack; `sample`, the words of six letters or more of the shipped sample
corpus the lists lack; `made-up`, made-up unlisted words (47 prefixes and none x 30 made-up roots x no copy, a CV or V copy,
a CVC copy x 6 endings: nag|bu|bulgot, ipina|u|ulgot, k|in|a|bulgut|an, ...), which only the guesses for words no
list holds read. A dump is `set<TAB>word<TAB>morphs<TAB>root`. `diff` counts the words each set reads otherwise and
shows some, never one that a held-out gold set (data/gold_heldout/*heldout*.tsv) holds as a form or whose root,
either side, is a held-out set's root: those are counted apart, unshown.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from tqdm import tqdm

from morphcpt import paths
from morphcpt.morphology import get_language_pack
from morphcpt.morphology.affixation import raise_final_o
from morphcpt.morphology.affixes import is_vowel
from morphcpt.morphology.evaluate import root_key
from morphcpt.morphology.gold import GoldSegmentation
from morphcpt.morphology.loans import english_frequencies

SETS = ("lists", "english", "sample", "made-up")
# fmt: off
MADE_UP_ROOTS = (
    "bulgot", "ulgot", "algot", "hamlay", "sulbo", "tarok", "gilpas", "prasko", "daknit", "kuspil", "lintad", "mirsak",
    "nublaw", "pitlang", "ribo", "sagwil", "wasdik", "yumpal", "ibtal", "engpo", "olmas", "kapsil", "kilnod", "pabyot",
    "ngalpis", "trumbo", "baknos", "tipaw", "hulgot", "rosmig",
)
MADE_UP_PREFIXES = (  # and none
    "", "ma", "na", "i", "ipa", "ipina", "pina", "pa", "ka", "kina", "pinaka", "pinakama", "nagkanda", "nagkakanda",
    "magkanda", "naka", "maka", "nakaka", "nagpa", "nagpapa", "naki", "nakiki", "mag", "nag", "pag", "pagka",
    "pagkaka", "ini", "in", "um", "mang", "nang", "man", "nan", "mam", "nam", "pinag", "ipag", "naipa", "maipa",
    "taga", "tagapag", "makapag", "nakapag", "magpa", "napa", "mapa",
)
# fmt: on
ENDINGS = ("", "in", "an", "hin", "han", "ng")


def made_up_words() -> set[str]:
    """Prefix, copy, made-up root, ending; -um-/-in- also inside the root's first consonant."""
    words = set()
    for prefix, root, copy, ending in itertools.product(MADE_UP_PREFIXES, MADE_UP_ROOTS, range(3), ENDINGS):
        onset = 0 if is_vowel(root[0]) else 1
        reduplicant = root[: onset + copy] if copy else ""  # V or CV, then VC or CVC
        stem = raise_final_o(root) if ending[-2:] in ("in", "an") else root  # bulgut|in
        words.add(prefix + reduplicant + stem + ending)
        if prefix in ("um", "in") and onset:
            words.add(root[0] + prefix + reduplicant[1:] + root[1:] + ending)
    return words


def word_sets(pack) -> dict[str, list[str]]:
    """The words of every set, each set sorted; a word in an earlier set is not repeated in a later one."""
    _ = pack.roots  # loads the lists
    known = set(pack._known)
    english = set(english_frequencies())  # this checkout's, as the lists
    sample = set()
    for line in paths.SAMPLE_CORPUS.read_text(encoding="utf-8").splitlines():
        sample.update(w for w in re.findall(r"[a-zñ]+", json.loads(line)["text"].lower()) if len(w) >= 6)
    sets = {"lists": known, "english": english - known, "sample": sample - known - english}
    sets["made-up"] = made_up_words() - known - english - sample
    return {name: sorted(words) for name, words in sets.items()}


def dump(out: Path, language: str) -> int:
    pack = get_language_pack(language)
    sets = word_sets(pack)
    with out.open("w", encoding="utf-8") as handle:
        for name, words in sets.items():
            for word in tqdm(words, desc=name, unit="word", disable=None):
                analysis = pack.parse(word)
                handle.write(
                    f"{name}\t{word}\t{'|'.join(m.text for m in analysis.morphs)}\t{analysis.root}\n"
                )
    print(f"{out}: " + ", ".join(f"{name} {len(words):,}" for name, words in sets.items()))
    return 0


def read_dump(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    readings = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fields = line.split("\t")
        if len(fields) != 4 or fields[0] not in SETS:
            raise ValueError(
                f"{path}:{number}: expected set<TAB>word<TAB>morphs<TAB>root, a dump of this tool"
            )
        readings[fields[0], fields[1]] = (fields[2], fields[3])
    return readings


def heldout_words_and_roots(folder: Path) -> tuple[set[str], set[str]]:
    """The forms and the roots (as `root_key`s, each word of a compound's root apart) of the held-out gold sets, to
    hide, never to read."""
    forms, roots = set(), set()
    for path in sorted(folder.glob("*heldout*.tsv")):
        for entry in GoldSegmentation.load(path).words.values():
            forms.add(entry.word)
            roots.update(root_key(r) for r in re.split(r"[-/ ]", entry.root) if r)
    return forms, roots


def diff(before: Path, after: Path, show: int, heldout: Path = paths.DATA_DIR / "gold_heldout") -> int:
    """Print, per set, how many words `after` reads otherwise than `before`, and up to `show` of them that no
    held-out set of `heldout` holds as a form or a root."""
    old, new = read_dump(before), read_dump(after)
    if set(old) != set(new):
        print(f"error: {before} and {after} hold other words (dumps of other lists?)", file=sys.stderr)
        return 2
    forms, roots = heldout_words_and_roots(heldout)
    changed, hidden = defaultdict(list), defaultdict(int)
    totals = defaultdict(int)
    for (name, word), reading in old.items():
        totals[name] += 1
        if new[name, word] == reading:
            continue
        if word in forms or {root_key(reading[1]), root_key(new[name, word][1])} & roots:
            hidden[name] += 1
        else:
            changed[name].append(word)
    for name in SETS:
        print(
            f"{name:8} {len(changed[name]) + hidden[name]:6,} of {totals[name]:,} read otherwise"
            f" ({hidden[name]} on held-out words or roots, not shown)"
        )
        for word in changed[name][:show]:
            print(f"    {word:24} {old[name, word][0]:28} -> {new[name, word][0]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump", help="write every set's readings at this checkout")
    dumping.add_argument("out", type=Path)
    dumping.add_argument("--language", default="fil")
    diffing = commands.add_parser("diff", help="count and show the words two dumps read otherwise")
    diffing.add_argument("before", type=Path)
    diffing.add_argument("after", type=Path)
    diffing.add_argument("--show", type=int, default=20, help="words shown per set (held-out ones never)")
    args = parser.parse_args(argv)
    if args.command == "dump":
        return dump(args.out, args.language)
    try:
        return diff(args.before, args.after, args.show)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
