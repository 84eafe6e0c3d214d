"""Gold segmentations of Tagalog words: the hand-written `data/gold/tl_segmentation.tsv` (rules in its README) and
any file in the same conventions, such as the generated sets of `data/gold_heldout/`.

A line is `segmentation<TAB>types[<TAB>root[<TAB>class[<TAB>tags]]]` (data/gold's layout; `root` is the dictionary
root, `class` a template name such as `AF-um:IPFV`, `tags` comma-separated phenomena), or
`form<TAB>segmentation[<TAB>root[<TAB>class[<TAB>tags]]]`; the segmentation marks every morph boundary with `|`.

It judges the analyser (`analyser_accuracy`) and, because it answers `boundaries(word)` like a language pack,
it can stand in for one wherever morpheme boundaries are counted: for a word it does not hold it answers None,
and `tokenization.alignment` then leaves that word out, so token boundaries are scored against the gold set
on the gold words found in the data, independently of the analyser patok cuts at.

    gold = GoldSegmentation.load()
    gold.boundaries("kumain")              # [1, 3]
    analyser_accuracy(FILIPINO, gold)      # GoldScore(words=802, exact=..., failures=[...])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from morphcpt import paths

GOLD_FILE = paths.DATA_DIR / "gold" / "tl_segmentation.tsv"
HELDOUT_DIR = paths.DATA_DIR / "gold_heldout"
TYPES = frozenset("PISCRFNLH0")


@dataclass(frozen=True)
class GoldWord:
    word: str
    morphs: tuple[str, ...]
    types: str  # data/gold's affix-type letters; "" in the form<TAB>segmentation layout, which has none
    root: str = ""  # the dictionary root, when the file gives it
    cls: str = ""  # the file's class of the word (a template such as "AF-um:IPFV"), when it gives one
    tags: tuple[str, ...] = ()  # phenomena the word shows (syncope, d-r, ...), when the file gives them

    @property
    def boundaries(self) -> list[int]:
        """Inner character offsets between morphs."""
        offsets, at = [], 0
        for morph in self.morphs[:-1]:
            at += len(morph)
            offsets.append(at)
        return offsets


@dataclass
class GoldSegmentation:
    words: dict[str, GoldWord] = field(default_factory=dict)  # by lowercased word

    @classmethod
    def load(cls, path: Path | str = GOLD_FILE) -> GoldSegmentation:
        path = Path(path)
        gold = cls()
        if not path.is_file():
            raise FileNotFoundError(
                f"gold file not found: {path} (give a form<TAB>segmentation or data/gold file)"
            )
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip() or line.startswith("#"):
                continue
            word = parse_line(line)
            if word is None:
                raise ValueError(
                    f"{path}:{number}: expected 'm1|m2|...<TAB>types' or 'form<TAB>m1|m2|...' (then optional root, "
                    f"class, tags columns), got {line!r}"
                )
            if word.word.lower() in gold.words:
                raise ValueError(f"{path}:{number}: {word.word!r} is listed twice")
            gold.words[word.word.lower()] = word
        return gold

    def __len__(self) -> int:
        return len(self.words)

    def boundaries(self, word: str) -> list[int] | None:
        """Gold morph boundaries of `word` (any case), or None when the gold set does not hold it."""
        found = self.words.get(word.lower())
        return found.boundaries if found is not None else None


def parse_line(line: str) -> GoldWord | None:
    """One gold line in either layout (see the module docstring), or None when it is neither."""
    fields = line.rstrip("\n").split("\t")
    if len(fields) < 2:
        return None
    first, second, rest = fields[0], fields[1], fields[2:]
    if second and set(second) <= TYPES:
        segmentation, types = first, second
    elif "|" not in first and second.replace("|", "").lower() == first.lower() and first:
        segmentation, types = second, ""
    else:
        return None
    morphs = tuple(segmentation.split("|"))
    if not all(morphs):
        return None
    root, cls, tags = (*rest, "", "", "")[:3]
    return GoldWord(
        "".join(morphs),
        morphs,
        types,
        root.strip().lower(),
        cls.strip(),
        tuple(filter(None, tags.split(","))),
    )


@dataclass(frozen=True)
class GoldScore:
    words: int
    exact: int  # words whose every boundary the analyser gets right
    failures: list[tuple[str, str, str]]  # (word, gold, analyser), both as m1|m2|...

    @property
    def accuracy(self) -> float:
        return self.exact / self.words if self.words else 0.0


def analyser_accuracy(pack, gold: GoldSegmentation) -> GoldScore:
    """Share of gold words the language pack segments exactly as the gold set does."""
    failures = []
    for entry in gold.words.values():
        predicted = pack.boundaries(entry.word)
        if predicted != entry.boundaries:
            cuts = [0, *predicted, len(entry.word)]
            shown = "|".join(entry.word[a:b] for a, b in zip(cuts, cuts[1:], strict=False))
            failures.append((entry.word, "|".join(entry.morphs), shown))
    return GoldScore(len(gold), len(gold) - len(failures), failures)
