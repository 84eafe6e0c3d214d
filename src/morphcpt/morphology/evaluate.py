"""Score the Filipino analyser on a gold segmentation file: roots recovered, affixes consistent, exact
segmentations and morph-boundary precision/recall/F1, overall and by class, with the failures listed.

    python -m morphcpt.morphology.evaluate data/gold/tl_segmentation.tsv
    python -m morphcpt.morphology.evaluate data/gold_heldout/dev.tsv --failures 40 --json dev_score.json
    python -m morphcpt.morphology.evaluate data/gold_heldout/heldout.tsv --failures 0   # held out: figures only
    python -m morphcpt.morphology.evaluate data/gold_heldout/paradigms_heldout*.tsv --failures 0   # several: pooled

The file is `segmentation<TAB>types[<TAB>root<TAB>class<TAB>tags]` (data/gold's layout) or
`form<TAB>segmentation[<TAB>root<TAB>class<TAB>tags]` (`morphology.gold`). What each figure means:
- **exact**: every morph boundary as the gold set has it.
- **root**: the analyser's dictionary root equals the file's `root` column, or, where the file gives none, the
  analyser's root morphs spell the gold set's root morphs. Regular spelling alternations count as the same root:
  o/u in the last syllable, d/r, a final h after a vowel (basah|in), a hyphen.
- **affixes**: the affix material before, inside and after the root (hyphens aside) is the gold set's, however
  the analyser cuts it within (naki|pag and nakipag are the same material); with the root right, that is
  "the affixes fit the form".
- **boundary P/R/F1**: inner boundaries, micro-averaged over words.
The root figure comes with two 95 % intervals: Wilson's, as if the words were independent, and a bootstrap over
lemmas (the words of one root resampled together: a root the analyser misses fails in most of its forms). Given
several files, each gets a row and the pooled words one more (a lemma is a root of one file).
Gold root morphs, where the file marks none: the longest morph that is no affix of the inventory, plus a lone
consonant onset right before an -um-/-in- that the root follows (k|um|ain; in s|um|u|sulat the s is a copy's); a
compound's two words where its root column joins them with a hyphen (wala|ng-|dahilan: wala-dahilan).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field, fields
from pathlib import Path

from morphcpt.intervals import cluster_bootstrap, wilson
from morphcpt.morphology.affixation import lower_final_u
from morphcpt.morphology.affixes import INFIXES, ISA_PREFIXES, PREFIXES, SUFFIXES, fold
from morphcpt.morphology.gold import GoldSegmentation, GoldWord

# isa- is left out: as a gold morph, isa is the root (one) far more often (pagka|ka|isa) than the prefix (isa|gawa,
# where the longer morph is the root anyway)
_AFFIXES = (frozenset(PREFIXES) - ISA_PREFIXES) | frozenset(SUFFIXES) | frozenset(INFIXES) | {"ni", "ng", "g"}


def root_key(root: str) -> str:
    """A root with the alternations that still count as the same root undone: o/u in the last syllable, d/r,
    a final h after a vowel, hyphens."""
    r = fold(root).replace("-", "").replace("r", "d")
    if len(r) > 1 and r.endswith("h") and r[-2] in "aeiou":
        r = r[:-1]
    return lower_final_u(r)


def gold_root_pieces(entry: GoldWord) -> list[int]:
    """Indices of the gold morphs that spell the root (see the module docstring); a compound's two words where its
    root column joins them with a hyphen and each is a morph of its own (wala|ng-|dahilan, root wala-dahilan)."""
    morphs = [fold(m).rstrip("-") for m in entry.morphs]
    if len(morphs) == 1:
        return [0]
    compound = _compound_pieces(morphs, entry.root)
    if compound:
        return compound
    last = len(morphs) - (1 if "L" in entry.types and morphs[-1] in ("ng", "g") else 0)
    candidates = range(last)
    best = max(candidates, key=lambda i: (morphs[i] not in _AFFIXES, len(morphs[i]), i))
    pieces = [best]
    if best >= 2 and morphs[best - 1] in ("um", "in") and not any(c in "aeiou" for c in morphs[best - 2]):
        pieces.insert(0, best - 2)
    return pieces


def _compound_pieces(morphs: list[str], root: str) -> list[int]:
    """[first, second]: the last morph that is the second word of a compound root (`root`, two words and a hyphen),
    and the last one before it that is the first word; [] where there are none."""
    first, dash, second = root.partition("-")
    if not dash or not first or not second or "-" in second:
        return []
    keys = [root_key(m) for m in morphs]
    ends = [i for i, key in enumerate(keys) if key == root_key(second)]
    starts = [i for i, key in enumerate(keys[: ends[-1]]) if key == root_key(first)] if ends else []
    return [starts[-1], ends[-1]] if starts else []


def signature(morphs: list[str], root_pieces: list[int]) -> tuple[str, str, str]:
    """(before the root, between its pieces, after it): the affix material, hyphens aside."""
    texts = [fold(m).replace("-", "") for m in morphs]
    first, last = root_pieces[0], root_pieces[-1]
    inside = "".join(t for i, t in enumerate(texts[first:last], start=first) if i not in root_pieces)
    return "".join(texts[:first]), inside, "".join(texts[last + 1 :])


@dataclass
class Tally:
    words: int = 0
    exact: int = 0
    root: int = 0
    affixes: int = 0
    true_pos: int = 0
    predicted: int = 0
    gold: int = 0

    def add(self, exact: bool, root: bool, affixes: bool, tp: int, predicted: int, gold: int) -> None:
        self.words += 1
        self.exact += exact
        self.root += root
        self.affixes += affixes
        self.true_pos += tp
        self.predicted += predicted
        self.gold += gold

    def absorb(self, other: Tally) -> None:
        """Add `other`'s counts to these (several files pooled)."""
        for name in (f.name for f in fields(self)):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def figures(self) -> dict[str, float]:
        p = self.true_pos / self.predicted if self.predicted else 1.0
        r = self.true_pos / self.gold if self.gold else 1.0
        n = self.words or 1
        return {
            "words": self.words,
            "exact": self.exact / n,
            "root": self.root / n,
            "affixes": self.affixes / n,
            "precision": p,
            "recall": r,
            "f1": 2 * p * r / (p + r) if p + r else 0.0,
        }


@dataclass
class Evaluation:
    total: Tally = field(default_factory=Tally)
    by_class: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_tag: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    failures: list[dict[str, str]] = field(default_factory=list)
    # per lemma (a file's root): [words whose root is right, words]
    lemmas: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def absorb(self, other: Evaluation) -> None:
        """Add `other`'s words to these (several files pooled; each file's lemmas are its own)."""
        self.total.absorb(other.total)
        for mine, theirs in ((self.by_class, other.by_class), (self.by_tag, other.by_tag)):
            for key, tally in theirs.items():
                mine[key].absorb(tally)
        for lemma, (right, words) in other.lemmas.items():  # one lemma in both (a file scored twice): summed
            self.lemmas[lemma][0] += right
            self.lemmas[lemma][1] += words
        self.failures += other.failures

    def root_intervals(self) -> dict[str, float]:
        """The root figure's 95 % intervals: Wilson's over words, a bootstrap over lemmas (`intervals`)."""
        _, low, high = wilson(self.total.root, self.total.words)
        lemma_low, lemma_high = cluster_bootstrap([tuple(counts) for counts in self.lemmas.values()])
        return {
            "wilson_low": low,
            "wilson_high": high,
            "lemmas": len(self.lemmas),
            "lemma_low": lemma_low,
            "lemma_high": lemma_high,
        }

    def as_dict(self, intervals: dict[str, float] | None = None) -> dict:
        """The figures and failures; `intervals`, where given, are `root_intervals()` already drawn."""
        if intervals is None and self.total.words:
            intervals = self.root_intervals()
        return {
            "total": self.total.figures(),
            "root_intervals": intervals,
            "by_class": {k: v.figures() for k, v in sorted(self.by_class.items())},
            "by_tag": {k: v.figures() for k, v in sorted(self.by_tag.items())},
            "failures": self.failures,
        }


def evaluate(pack, gold: GoldSegmentation, source: str = "") -> Evaluation:
    """Score `pack` (a language pack) on every word of `gold`. `source` names the file, so that its roots are lemmas
    apart from another file's when results are pooled (`Evaluation.absorb`); a word with no root column is a lemma
    of its own."""
    result = Evaluation()
    for entry in gold.words.values():
        analysis = pack.parse(entry.word)
        got_morphs = [m.text for m in analysis.morphs]
        got_roots = [i for i, m in enumerate(analysis.morphs) if m.kind == "root"] or [0]
        want_roots = gold_root_pieces(entry)
        predicted = {m.start for m in analysis.morphs[1:]}
        wanted = set(entry.boundaries)
        if entry.root:
            root_ok = root_key(analysis.root) == root_key(entry.root)
        else:
            spelled = "".join(got_morphs[i] for i in got_roots)
            root_ok = root_key(spelled) == root_key("".join(entry.morphs[i] for i in want_roots))
        affixes_ok = signature(got_morphs, got_roots) == signature(list(entry.morphs), want_roots)
        exact = predicted == wanted
        counts = (exact, root_ok, affixes_ok, len(predicted & wanted), len(predicted), len(wanted))
        result.total.add(*counts)
        lemma = result.lemmas[f"{source}:{root_key(entry.root or entry.word)}"]
        lemma[0] += root_ok
        lemma[1] += 1
        result.by_class[entry.cls or entry.types or "-"].add(*counts)
        for tag in entry.tags:
            result.by_tag[tag].add(*counts)
        if not (exact and root_ok and affixes_ok):
            result.failures.append(
                {
                    "word": entry.word,
                    "class": entry.cls or entry.types,
                    "gold": "|".join(entry.morphs),
                    "analyser": "|".join(got_morphs),
                    "gold_root": entry.root or "".join(entry.morphs[i] for i in want_roots),
                    "analyser_root": analysis.root,
                    "wrong": ",".join(
                        name
                        for name, ok in (("cut", exact), ("root", root_ok), ("affixes", affixes_ok))
                        if not ok
                    ),
                }
            )
    return result


def format_table(result: Evaluation, detail: bool = True) -> str:
    """The figures, overall and (with `detail`) by class and by phenomenon."""
    header = f"{'':24} {'words':>6} {'exact':>7} {'root':>7} {'affixes':>8} {'P':>6} {'R':>6} {'F1':>6}"

    def row(name: str, t: Tally) -> str:
        f = t.figures()
        return (
            f"{name[:24]:24} {f['words']:6d} {f['exact']:7.2%} {f['root']:7.2%} {f['affixes']:8.2%} "
            f"{f['precision']:6.3f} {f['recall']:6.3f} {f['f1']:6.3f}"
        )

    lines = [header, row("all", result.total)]
    if detail and result.by_class:
        lines += ["by class:"] + [row(k, v) for k, v in sorted(result.by_class.items())]
    if detail and result.by_tag:
        lines += ["by phenomenon:"] + [row(k, v) for k, v in sorted(result.by_tag.items())]
    return "\n".join(lines)


def format_intervals(result: Evaluation, i: dict[str, float]) -> str:
    """The root figure and its intervals `i` (`Evaluation.root_intervals`), one line."""
    return (
        f"root {result.total.figures()['root']:.2%} ({result.total.root:,} of {result.total.words:,} words), 95 % "
        f"interval {i['wilson_low']:.2%}-{i['wilson_high']:.2%} (Wilson), {i['lemma_low']:.2%}-{i['lemma_high']:.2%} "
        f"(bootstrap over {i['lemmas']:,} lemmas)"
    )


def _print_failures(result: Evaluation, limit: int) -> None:
    shown = result.failures if limit < 0 else result.failures[:limit]
    if shown:
        print(f"failures ({len(shown)} of {len(result.failures)}): word  gold  analyser  [what is wrong]")
        for f in shown:
            print(
                f"  {f['word']:22} {f['gold']:26} {f['analyser']:26} [{f['wrong']}] root {f['gold_root']}/{f['analyser_root']}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "files",
        type=Path,
        nargs="+",
        metavar="file",
        help="gold file(s) (data/gold/tl_segmentation.tsv, data/gold_heldout/*.tsv); several are also pooled",
    )
    parser.add_argument(
        "--failures", type=int, default=50, help="failures to list per file (0: none, -1: all)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures and every failure here")
    parser.add_argument("--language", default="fil")
    args = parser.parse_args(argv)
    from morphcpt.morphology import get_language_pack

    twice = sorted({str(path) for path in args.files if args.files.count(path) > 1})
    if twice:  # pooled twice, its words would count twice
        print(f"error: given more than once: {', '.join(twice)}", file=sys.stderr)
        return 2
    try:
        golds = [(path, GoldSegmentation.load(path)) for path in args.files]
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    pack = get_language_pack(args.language)
    results = []  # (file, its evaluation, its intervals): each bootstrap drawn once
    pooled = Evaluation()
    for path, gold in golds:
        result = evaluate(pack, gold, source=str(path))
        pooled.absorb(result)
        intervals = result.root_intervals() if len(gold) else None
        results.append((path, result, intervals))
        print(f"{path}: {len(gold)} words")
        print(format_table(result, detail=len(golds) == 1))
        if intervals:
            print(format_intervals(result, intervals))
        _print_failures(result, args.failures)
    pooled_intervals = pooled.root_intervals() if len(golds) > 1 and pooled.total.words else None
    if len(golds) > 1:
        print(f"pooled: {len(golds)} files, {pooled.total.words} words")
        print(format_table(pooled, detail=False))
        if pooled_intervals:
            print(format_intervals(pooled, pooled_intervals))
    if args.json:
        files = [{"file": str(path), **result.as_dict(intervals)} for path, result, intervals in results]
        document = (
            files[0] if len(files) == 1 else {"files": files, "pooled": pooled.as_dict(pooled_intervals)}
        )
        args.json.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
