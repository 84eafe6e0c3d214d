"""EEVE vocabulary expansion: train exactly N new pieces on the target corpus and write an expanded tokenizer.

    python -m morphcpt.tokenization.eeve data/chunks/chunk_*.jsonl --base google/gemma-3-1b-pt \
        --out-dir outputs/tokenizers/gemma3-eeve --num-new 2048 [--candidates morphemes]
    morphcpt eeve-tokenizer "corpus/tl_ui.txt?txt=block" "corpus/forum.csv?column=body" --base ... --out-dir ...

The corpus is read as `prepare` reads sources: files, folders or globs of txt, jsonl, json, csv/tsv or parquet,
with `?column=`, `?txt=block`, `?type=` and `?lang=` settings (quote them); records without text are skipped and
counted.

EEVE (Kim et al., 2024) gives the target language its own tokens. The new pieces are learned by *continuing* the
base tokenizer's BPE on the corpus: every document is tokenized canonically with the base tokenizer, and merges of
adjacent pieces are learned, most frequent first, until N new pieces exist. Each new piece is one merge appended
after the base merges, so it is part of the model vocabulary and of tokenization itself (no literal-string added
tokens). Because every base merge ranks before every new one, encoding first reaches the base tokenization and then
applies the new merges to it: old ids keep their meaning, byte fallback is unchanged, and decode(encode(text)) ==
text stays true (checked on the whole corpus before the folder is written).

Conventions of the base vocabulary are kept: a new piece is letters only, with `▁` only as its first character
(a word start), never digits, punctuation, whitespace runs or byte pieces; pieces the base vocabulary already has
are never added again. `--candidates morphemes` learns merges only inside morphemes found by the language pack
(prefixes, infixes, suffixes, roots, reduplicants), so the new pieces are affixes, roots and their parts; the
default `frequent` learns the most frequent pieces whatever they are, so the two can be compared. Morphemes need
a language pack for the corpus language (`--language`, default fil; only Filipino has one): another language, or a
document tagged with another language (`lang` in prepared JSONL, or a source's `?lang=`), is refused.

The output is a Hugging Face tokenizer folder (tokenizer.json and configs; the base `tokenizer.model` is left out,
as the SentencePiece model would not know the new pieces) plus `eeve_expansion.json`: the base tokenizer and its
fingerprint, the first new id, every new piece with its merge and its base pieces, and tokens per byte before and
after on the training corpus.
"""

from __future__ import annotations

import argparse
import heapq
import json
import logging
import os
import shutil
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from itertools import pairwise
from pathlib import Path

from morphcpt.errors import reported
from morphcpt.jsonio import read_json, write_json
from morphcpt.tokenization.eeve_corpus import ExpansionError, check_language, read_texts
from morphcpt.tokenization.vocabulary import WORD_START, Vocabulary

log = logging.getLogger(__name__)

EXPANSION_FILE = "eeve_expansion.json"
CANDIDATES = ("frequent", "morphemes")
DEFAULT_NUM_NEW = 2048


def _rebuild(folder: str | Path) -> str:
    return f"build the expanded tokenizer again: python -m morphcpt.tokenization.eeve CORPUS --base BASE --out-dir {folder}"


@dataclass
class Expansion:
    """What `eeve_expansion.json` records (see the module docstring)."""

    base_tokenizer: str
    base_fingerprint: str
    base_size: int  # the base vocabulary's pieces (ids 0 .. base_size - 1 keep their meaning)
    first_new_id: int  # ids from here on are the new pieces, in learning order
    pieces: list[str]
    merges: list[tuple[str, str]]  # merge i makes pieces[i]
    base_pieces: list[list[int]]  # each new piece tokenized by the base tokenizer (EEVE initialisation)
    frequencies: list[int]  # how often the merge applied when it was learned
    candidates: str
    min_frequency: int
    documents: int
    corpus_bytes: int
    base_tokens: int  # canonical tokens of the corpus under the base tokenizer
    expanded_tokens: int  # ... and under the expanded one

    @property
    def num_new(self) -> int:
        return len(self.pieces)

    @property
    def new_ids(self) -> range:
        return range(self.first_new_id, self.first_new_id + len(self.pieces))

    @classmethod
    def load(cls, folder: str | Path) -> Expansion:
        path = Path(folder) / EXPANSION_FILE
        if not path.exists():
            raise ExpansionError(
                f"{folder} is not an EEVE-expanded tokenizer ({EXPANSION_FILE} missing); make one with "
                "python -m morphcpt.tokenization.eeve"
            )
        names = tuple(f.name for f in fields(cls))
        data = read_json(path, keys=names, fix=_rebuild(folder))
        try:
            data["merges"] = [tuple(m) for m in data["merges"]]
            return cls(**{name: data[name] for name in names})
        except TypeError as error:
            raise ExpansionError(
                f"{path} does not hold an EEVE expansion ({error}); {_rebuild(folder)}"
            ) from None

    def check_tokenizer(self, vocab: Vocabulary, folder: str | Path) -> None:
        """The expanded tokenizer `vocab` (loaded from `folder`) holds exactly this expansion's pieces at its new
        ids; else the folder's tokenizer and its `eeve_expansion.json` come from different builds."""
        expected = self.first_new_id + self.num_new
        held = vocab.pieces[self.first_new_id :] if vocab.size == expected else None
        if held != self.pieces:
            raise ExpansionError(
                f"{folder}: tokenizer.json ({vocab.size} ids) does not hold the {self.num_new} new pieces that "
                f"{EXPANSION_FILE} records at ids {self.first_new_id}..{expected - 1}: the two files come from "
                f"different builds; {_rebuild(folder)}"
            )


def _is_letters(text: str) -> bool:
    return bool(text) and all(ch.isalpha() or unicodedata.category(ch).startswith("M") for ch in text)


class _Rules:
    """Which adjacent pieces may merge, in the base vocabulary's conventions (see the module docstring)."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.strings: list[str] = list(vocab.pieces)
        self.left_ok: list[bool] = [self._left(i) for i in range(vocab.size)]
        self.right_ok: list[bool] = [self._right(i) for i in range(vocab.size)]

    def _plain(self, i: int) -> bool:
        return not self.vocab.is_special(i) and not self.vocab.is_byte(i)

    def _left(self, i: int) -> bool:
        piece = self.strings[i]
        return self._plain(i) and (piece == WORD_START or _is_letters(piece.removeprefix(WORD_START)))

    def _right(self, i: int) -> bool:
        return self._plain(i) and _is_letters(self.strings[i])

    def add(self, piece: str) -> int:
        self.strings.append(piece)
        self.left_ok.append(True)
        self.right_ok.append(not piece.startswith(WORD_START))
        return len(self.strings) - 1


def word_runs(ids: list[int], rules: _Rules) -> Iterator[tuple[int, ...]]:
    """The stretches of `ids` where merges may happen: letter pieces, a new stretch at every word start."""
    run: list[int] = []
    for i in ids:
        if run and rules.right_ok[i]:
            run.append(i)
            continue
        if len(run) > 1:
            yield tuple(run)
        run = [i] if rules.left_ok[i] else []
    if len(run) > 1:
        yield tuple(run)


def morpheme_pieces(run: tuple[int, ...], vocab: Vocabulary, pack) -> list[tuple[int, ...]]:
    """`run` cut where a morpheme boundary of the language pack falls between two pieces."""
    lengths = [len(vocab.pieces[i]) for i in run]
    text = "".join(vocab.pieces[i] for i in run)
    offset = 1 if text.startswith(WORD_START) else 0
    word = text[offset:]
    if not word:
        return [run]
    cuts = {b + offset for b in pack.boundaries(word)}
    out, current, position = [], [run[0]], lengths[0]
    for i, length in zip(run[1:], lengths[1:], strict=True):
        if position in cuts:
            out.append(tuple(current))
            current = []
        current.append(i)
        position += length
    out.append(tuple(current))
    return [piece for piece in out if len(piece) > 1]


def count_runs(
    texts: Iterable[str],
    vocab: Vocabulary,
    rules: _Rules,
    candidates: str,
    language: str = "fil",
    batch: int = 256,
) -> tuple[Counter, int, int, int]:
    """(run -> count, documents, UTF-8 bytes, base tokens) over the corpus."""
    from tqdm import tqdm

    pack = None
    if candidates == "morphemes":
        from morphcpt.morphology import get_language_pack

        pack = get_language_pack(language)
    runs: Counter = Counter()
    documents = nbytes = tokens = 0
    pending: list[str] = []

    def flush() -> None:
        nonlocal tokens
        for ids in vocab.encode_batch(pending):
            tokens += len(ids)
            runs.update(word_runs(ids, rules))
        pending.clear()

    for text in tqdm(texts, unit="doc", desc="counting base pieces", disable=None):
        documents += 1
        nbytes += len(text.encode("utf-8"))
        pending.append(text)
        if len(pending) >= batch:
            flush()
    flush()
    if pack is not None:
        split: Counter = Counter()
        for run, count in runs.items():
            for piece in morpheme_pieces(run, vocab, pack):
                split[piece] += count
        runs = split
    return runs, documents, nbytes, tokens


def learn_merges(
    runs: Counter, rules: _Rules, num_new: int, min_frequency: int
) -> list[tuple[int, int, str, int]]:
    """Continue BPE on the base tokenization: (left id, right id, new piece, frequency) per new piece, in order.

    The most frequent allowed pair is merged first (ties: lowest ids); pairs whose piece the base vocabulary (or
    an earlier new merge) already spells are skipped. Incremental counts and a lazy heap keep it fast.
    """
    words = [list(run) for run in runs]
    weights = list(runs.values())
    counts: Counter = Counter()
    where: dict[tuple[int, int], set[int]] = defaultdict(set)
    for w, word in enumerate(words):
        for pair in pairwise(word):
            counts[pair] += weights[w]
            where[pair].add(w)
    heap = [(-c, pair) for pair, c in counts.items()]
    heapq.heapify(heap)
    known = set(rules.strings)
    learned: list[tuple[int, int, str, int]] = []
    while len(learned) < num_new and heap:
        negative, pair = heapq.heappop(heap)
        current = counts.get(pair, 0)
        if current != -negative:
            if current > 0:
                heapq.heappush(heap, (-current, pair))
            continue
        if current < min_frequency:
            break
        piece = rules.strings[pair[0]] + rules.strings[pair[1]]
        if piece in known:
            continue  # spelled already: never a second id for one string
        known.add(piece)
        new = rules.add(piece)
        learned.append((pair[0], pair[1], piece, current))
        touched: set[tuple[int, int]] = set()
        for w in where.pop(pair, ()):
            word, weight = words[w], weights[w]
            for old in pairwise(word):
                counts[old] -= weight
            merged, k = [], 0
            while k < len(word):
                if k + 1 < len(word) and (word[k], word[k + 1]) == pair:
                    merged.append(new)
                    k += 2
                else:
                    merged.append(word[k])
                    k += 1
            words[w] = merged
            for fresh in pairwise(merged):
                if rules.right_ok[fresh[1]]:
                    counts[fresh] += weight
                    where[fresh].add(w)
                    touched.add(fresh)
        counts.pop(pair, None)
        for fresh in touched:
            if counts[fresh] > 0:
                heapq.heappush(heap, (-counts[fresh], fresh))
    return learned


def check_base(tokenizer_json: dict, source: str) -> None:
    model = tokenizer_json.get("model", {})
    if model.get("type") != "BPE":
        raise ExpansionError(f"{source}: EEVE expansion needs a BPE tokenizer, got {model.get('type')!r}")
    from morphcpt.tokenization.vocabulary import _is_byte_level

    if _is_byte_level(tokenizer_json):
        raise ExpansionError(
            f"{source}: a byte-level BPE (GPT-2 / Llama 3 style); EEVE expansion here continues a SentencePiece-style "
            "BPE (spaces as ▁, byte fallback), like Gemma's"
        )
    if not model.get("byte_fallback"):
        raise ExpansionError(
            f"{source}: the base tokenizer has no byte fallback; without it text outside the vocabulary "
            "becomes <unk> and the expanded tokenizer could not be lossless"
        )


def _saved_tokenizer_json(base: str | Path) -> dict | None:
    """The base's tokenizer.json as saved: transformers' GemmaTokenizer rebuilds its backend with byte fallback
    on whatever the file says, so the file is what tells whether the base itself has byte fallback."""
    from transformers.utils import cached_file

    path = cached_file(str(base), "tokenizer.json", _raise_exceptions_for_missing_entries=False)
    return read_json(path) if path else None


def expanded_tokenizer_json(base: dict, first_new_id: int, merges: list[tuple[str, str, str]]) -> dict:
    """The base tokenizer.json with the new pieces in its BPE vocabulary and their merges after the base ones."""
    out = json.loads(json.dumps(base))
    vocab, merge_list = out["model"]["vocab"], out["model"]["merges"]
    as_strings = bool(merge_list) and isinstance(merge_list[0], str)
    for k, (left, right, piece) in enumerate(merges):
        vocab[piece] = first_new_id + k
        merge_list.append(f"{left} {right}" if as_strings else [left, right])
    return out


def expand(
    corpus: str | Path | Iterable[str | Path],
    base: str | Path,
    out_dir: str | Path,
    *,
    num_new: int = DEFAULT_NUM_NEW,
    candidates: str = "frequent",
    min_frequency: int = 2,
    max_documents: int | None = None,
    language: str = "fil",
) -> Expansion:
    """Learn `num_new` pieces on the corpus (sources as `prepare` reads them) and write the expanded tokenizer
    folder."""
    from tokenizers import Tokenizer

    if num_new <= 0:
        raise ExpansionError(f"num_new must be a positive number of new pieces, got {num_new}")
    if candidates not in CANDIDATES:
        raise ExpansionError(f"candidates must be one of {CANDIDATES}, got {candidates!r}")
    check_language(candidates, language)
    tagged = language if candidates == "morphemes" else None
    paths = [corpus] if isinstance(corpus, str | Path) else list(corpus)
    vocab = Vocabulary.load(base)
    base_json = json.loads(vocab.tokenizer.backend_tokenizer.to_str())
    check_base(_saved_tokenizer_json(base) or base_json, str(base))
    rules = _Rules(vocab)
    runs, documents, nbytes, base_tokens = count_runs(
        read_texts(paths, max_documents, tagged), vocab, rules, candidates, language
    )
    if documents == 0:
        raise ExpansionError(f"no readable documents in {[str(p) for p in paths]}")
    if not runs:
        raise ExpansionError(
            f"the base tokenizer already covers this corpus: no two adjacent letter pieces occur in its "
            f"{documents} documents, so there is nothing to merge ({candidates} candidates)"
        )
    learned = learn_merges(runs, rules, num_new, min_frequency)
    if len(learned) < num_new:
        raise ExpansionError(
            f"asked for {num_new} new pieces but the corpus offers only {len(learned)} {candidates} candidates "
            f"(merges seen at least min_frequency={min_frequency} times that the base vocabulary lacks); "
            "ask for fewer, lower min_frequency or give more text"
        )
    # New ids start after every id the base tokenizer uses, added tokens past its model vocabulary included.
    first_new = max([vocab.size - 1, *map(int, vocab.tokenizer.added_tokens_decoder)]) + 1
    named = [(rules.strings[a], rules.strings[b], piece) for a, b, piece, _ in learned]
    backend = Tokenizer.from_str(json.dumps(expanded_tokenizer_json(base_json, first_new, named)))

    out = Path(out_dir)
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    vocab.tokenizer.save_pretrained(staging)
    (staging / "tokenizer.model").unlink(missing_ok=True)
    backend.save(str(staging / "tokenizer.json"))
    _drop_slow_tokenizer_file(staging)
    expanded = Vocabulary.load(staging)
    expanded_tokens = verify(
        expanded, vocab, first_new, [p for *_, p in named], read_texts(paths, max_documents)
    )
    expansion = Expansion(
        base_tokenizer=str(base),
        base_fingerprint=vocab.fingerprint,
        base_size=vocab.size,
        first_new_id=first_new,
        pieces=[piece for *_, piece in named],
        merges=[(left, right) for left, right, _ in named],
        base_pieces=[vocab.encode(piece.replace(WORD_START, " ")) for *_, piece in named],
        frequencies=[frequency for *_, frequency in learned],
        candidates=candidates,
        min_frequency=min_frequency,
        documents=documents,
        corpus_bytes=nbytes,
        base_tokens=base_tokens,
        expanded_tokens=expanded_tokens,
    )
    (staging / EXPANSION_FILE).write_text(json.dumps(asdict(expansion), indent=1, ensure_ascii=False) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(staging, out)
    return expansion


def _drop_slow_tokenizer_file(folder: Path) -> None:
    """tokenizer_config.json may name the SentencePiece file; the expanded folder is tokenizer.json only."""
    config_path = folder / "tokenizer_config.json"
    if config_path.exists():
        config = read_json(config_path)
        if config.pop("vocab_file", None) is not None:
            write_json(config_path, config)


def verify(
    expanded: Vocabulary, base: Vocabulary, first_new: int, pieces: list[str], texts: Iterable[str]
) -> int:
    """Old ids unchanged, new pieces where expected, and lossless on every text; returns the expanded tokens."""
    if expanded.pieces[: base.size] != base.pieces:
        raise ExpansionError("the expanded tokenizer changed the meaning of old ids")
    if expanded.pieces[first_new:] != pieces:
        raise ExpansionError("the expanded tokenizer does not hold the new pieces at their ids")
    tokens = 0
    for n, text in enumerate(texts):
        ids = expanded.encode(text)
        tokens += len(ids)
        if expanded.decode(ids) != text or expanded.tokenizer.decode(ids, skip_special_tokens=True) != text:
            raise ExpansionError(f"the expanded tokenizer is not lossless on document {n}: {text[:80]!r}")
    return tokens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="morphcpt eeve-tokenizer", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "corpus",
        nargs="+",
        help="corpus sources as prepare reads them: txt/jsonl/json/csv/tsv/parquet files, folders or globs, with "
        "?column=, ?txt=block, ?lang= settings (quote them)",
    )
    parser.add_argument("--base", required=True, help="base tokenizer: a folder or a Hub id")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--num-new", type=int, default=DEFAULT_NUM_NEW)
    parser.add_argument("--candidates", choices=CANDIDATES, default="frequent")
    parser.add_argument("--min-frequency", type=int, default=2)
    parser.add_argument("--max-documents", type=int, default=None)
    parser.add_argument(
        "--language", default="fil", help="the corpus language, for --candidates morphemes (default fil)"
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO)
    with reported("morphcpt eeve-tokenizer"):
        expansion = expand(
            args.corpus,
            args.base,
            args.out_dir,
            num_new=args.num_new,
            candidates=args.candidates,
            min_frequency=args.min_frequency,
            max_documents=args.max_documents,
            language=args.language,
        )
    print(
        f"{args.out_dir}: {expansion.num_new} new pieces (ids {expansion.first_new_id}.."
        f"{expansion.new_ids[-1]}), tokens/byte {expansion.base_tokens / expansion.corpus_bytes:.4f} -> "
        f"{expansion.expanded_tokens / expansion.corpus_bytes:.4f}; e.g. {', '.join(expansion.pieces[:8])}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
