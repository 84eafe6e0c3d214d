"""Train a SentencePiece BPE tokenizer with Gemma's conventions and save it as a Hugging Face tokenizer folder.

Used to build the shipped sample tokenizer (`data/tokenizer`) and to train a tokenizer for a new language:

    python -m morphcpt.tokenization.train_tokenizer data/sample/tl_sample.jsonl --out-dir data/tokenizer \
        --vocab-size 4096
    morphcpt train-tokenizer outputs/scratch/corpus.jsonl --out-dir outputs/scratch/tokenizer --vocab-size 2000 \
        --balance-languages [--character-coverage 0.9995] [--no-byte-fallback]

Conventions copied from Gemma: BPE with byte fallback (`<0x00>`…`<0xFF>`), digits split, `▁` marking a word
start, no dummy prefix, identity normalisation (text is never altered, so decoding is lossless), ids pad 0,
eos 1, bos 2, unk 3 (and `<mask>` 4), and a Hugging Face tokenizer that adds `<bos>` (never `<eos>`).
Training is deterministic: one thread, no shuffling, a fixed seed, input read in the given order.

The folder holds `tokenizer.model` (the SentencePiece model), `tokenizer.json` (the same BPE for the
`tokenizers` library), `tokenizer_config.json` and `special_tokens_map.json`; it loads with
`transformers.AutoTokenizer.from_pretrained(folder)` as a `GemmaTokenizer`, offline.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import sentencepiece as spm
from tokenizers import AddedToken, Tokenizer, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import BPE

from morphcpt.errors import UserError, reported

logger = logging.getLogger(__name__)

SPECIAL_PIECES = {"pad": (0, "<pad>"), "eos": (1, "<eos>"), "bos": (2, "<bos>"), "unk": (3, "<unk>")}
MASK_PIECE = "<mask>"  # a control symbol, so it gets id 4 as in Gemma
WORD_START = "▁"
DEFAULT_MAX_SENTENCE_BYTES = 16_384
DEFAULT_INPUT_SENTENCE_SIZE = 2_000_000
DEFAULT_SEED = 0


class TokenizerTrainingError(UserError, ValueError):
    """The tokenizer cannot be trained as asked; the message says why and what size or input would work."""


class LineCounts:
    """Lines read and lines skipped (empty or unreadable) by `read_records`, for the messages below."""

    def __init__(self) -> None:
        self.lines = self.skipped = 0


def read_records(
    paths: Iterable[str | Path], lang_field: str = "lang", counts: LineCounts | None = None
) -> Iterator[tuple[str, str | None]]:
    """(text, language tag) of every non-empty `text` in JSONL files, in order; unreadable lines are skipped and
    counted."""
    skipped = 0
    counts = counts if counts is not None else LineCounts()
    for path in paths:
        if not Path(path).is_file():
            raise TokenizerTrainingError(f"{path}: no such file (give JSONL files with a `text` field)")
        with open(path, "rb") as lines:
            for raw in lines:
                counts.lines += 1
                try:
                    row = json.loads(raw.decode("utf-8"))
                    text = row["text"]
                except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
                    skipped += 1
                    counts.skipped += 1
                    continue
                if isinstance(text, str) and text:
                    lang = row.get(lang_field)
                    yield text, lang if isinstance(lang, str) else None
                else:
                    skipped += 1
                    counts.skipped += 1
    if skipped:
        logger.warning("skipped %d unreadable or empty lines while reading training text", skipped)


def read_texts(paths: Iterable[str | Path], counts: LineCounts | None = None) -> Iterator[str]:
    """The non-empty `text` strings of JSONL files, in order; unreadable lines are skipped and counted."""
    for text, _ in read_records(paths, counts=counts):
        yield text


def language_shares(
    paths: Iterable[str | Path], lang_field: str = "lang", alpha: float = 0.0
) -> dict[str, float]:
    """Keep probability per language tag (untagged text is the language "untagged") so that a language with n
    bytes contributes in proportion to n**alpha: alpha 0 gives every language about as many bytes as the smallest
    one has, alpha 1 keeps everything (natural shares), values between (0.3 is common) flatten the mix. The
    language with the largest keep probability keeps all its text."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    sizes: dict[str, int] = {}
    for text, lang in read_records(paths, lang_field):
        sizes[lang or "untagged"] = sizes.get(lang or "untagged", 0) + len(text.encode("utf-8"))
    if not sizes:
        return {}
    raw = {lang: size ** (alpha - 1) for lang, size in sizes.items()}
    top = max(raw.values())
    return {lang: raw[lang] / top for lang in sorted(sizes)}


def balanced_texts(
    paths: Iterable[str | Path],
    shares: dict[str, float],
    seed: int = DEFAULT_SEED,
    lang_field: str = "lang",
    counts: LineCounts | None = None,
) -> Iterator[str]:
    """The texts of a language kept with its share's probability, decided by a seeded hash of the text (the same
    documents on every run)."""
    from morphcpt.corpus.budget import document_key

    for text, lang in read_records(paths, lang_field, counts):
        if document_key(seed, text) < shares[lang or "untagged"] * 2.0**64:
            yield text


def training_segments(text: str, max_bytes: int) -> Iterator[str]:
    """Cut a document into pieces of at most `max_bytes` UTF-8 bytes, at line ends where possible.

    SentencePiece silently drops training sentences longer than its `max_sentence_length`; cutting keeps long
    documents in the statistics. Newlines stay inside segments so that `\\n` is learned like any character.
    """
    segment, size = [], 0
    for line in text.splitlines(keepends=True):
        encoded = len(line.encode("utf-8"))
        if segment and size + encoded > max_bytes:
            yield "".join(segment)
            segment, size = [], 0
        while encoded > max_bytes:  # one overlong line: hard cut on a character boundary
            head = line.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
            yield head
            line = line[len(head) :]
            encoded = len(line.encode("utf-8"))
        if line:
            segment.append(line)
            size += encoded
    if segment:
        yield "".join(segment)


def train_sentencepiece_model(
    texts: Iterable[str],
    vocab_size: int,
    *,
    character_coverage: float = 0.9995,
    max_sentence_bytes: int = DEFAULT_MAX_SENTENCE_BYTES,
    input_sentence_size: int = DEFAULT_INPUT_SENTENCE_SIZE,
    seed: int = DEFAULT_SEED,
    byte_fallback: bool = True,
) -> bytes:
    """Train the SentencePiece BPE model and return its serialized proto (`TokenizerTrainingError` when the text
    cannot give `vocab_size` pieces: SentencePiece's own RuntimeError, read and said plainly)."""
    if vocab_size < 1:
        raise TokenizerTrainingError(f"--vocab-size must be at least 1, got {vocab_size}")
    sentences = (segment for text in texts for segment in training_segments(text, max_sentence_bytes))
    model = io.BytesIO()
    spm.set_random_generator_seed(seed)
    try:
        _train(
            sentences,
            model,
            vocab_size,
            character_coverage,
            max_sentence_bytes,
            input_sentence_size,
            byte_fallback,
        )
    except RuntimeError as error:
        raise TokenizerTrainingError(_explain(str(error), vocab_size, character_coverage)) from None
    return model.getvalue()


def _explain(message: str, vocab_size: int, character_coverage: float) -> str:
    """SentencePiece's refusal as a sentence about the corpus and `--vocab-size` (the caller adds the corpus)."""
    if "sentences_.empty()" in message:
        return "holds no text to train on"
    if match := re.search(r"Please set it to a value <= (\d+)", message):
        return (
            f"--vocab-size {vocab_size} is more than this corpus can fill: at most {match.group(1)} pieces "
            "(its characters, the merges its text offers, byte pieces and specials); use --vocab-size "
            f"{match.group(1)} or less, or give more text"
        )
    if match := re.search(r"smaller than required_chars\. (\d+) vs (\d+)", message):
        return (
            f"--vocab-size {vocab_size} is too small for this corpus: it needs at least {match.group(2)} pieces "
            f"(every character kept by --character-coverage {character_coverage}, byte pieces and specials); "
            f"use --vocab-size {match.group(2)} or more, or a lower --character-coverage"
        )
    return f"SentencePiece could not train on it: {message.split('] ', 1)[-1].strip()}"


def _train(
    sentences, model, vocab_size, character_coverage, max_sentence_bytes, input_sentence_size, byte_fallback
):
    spm.SentencePieceTrainer.train(
        sentence_iterator=sentences,
        model_writer=model,
        model_type="bpe",
        vocab_size=vocab_size,
        byte_fallback=byte_fallback,
        split_digits=True,
        add_dummy_prefix=False,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        allow_whitespace_only_pieces=True,
        character_coverage=character_coverage,
        pad_id=SPECIAL_PIECES["pad"][0],
        eos_id=SPECIAL_PIECES["eos"][0],
        bos_id=SPECIAL_PIECES["bos"][0],
        unk_id=SPECIAL_PIECES["unk"][0],
        pad_piece=SPECIAL_PIECES["pad"][1],
        eos_piece=SPECIAL_PIECES["eos"][1],
        bos_piece=SPECIAL_PIECES["bos"][1],
        unk_piece=SPECIAL_PIECES["unk"][1],
        control_symbols=[MASK_PIECE],
        num_threads=1,
        shuffle_input_sentence=False,
        input_sentence_size=input_sentence_size,
        max_sentence_length=max_sentence_bytes,
        minloglevel=2,
    )


def hf_backend_from_sentencepiece(model_proto: bytes) -> Tokenizer:
    """The `tokenizers` equivalent of a SentencePiece BPE model, in Gemma's pipeline (spaces as "▁", no dummy
    prefix, no normaliser; the model's own unk and bos pieces).

    SentencePiece merges the adjacent pair whose concatenation is the best-scored piece (pieces are stored in
    score order); ranking every (left, right) split of each piece by the piece's id reproduces that choice.
    """
    model = spm.SentencePieceProcessor(model_proto=model_proto)
    pieces = [model.id_to_piece(i) for i in range(model.get_piece_size())]
    vocab = {piece: index for index, piece in enumerate(pieces)}
    special = [i for i in range(len(pieces)) if model.is_control(i) or model.is_unknown(i)]
    not_mergeable = set(special) | {i for i in range(len(pieces)) if model.is_byte(i) or model.is_unused(i)}
    normal = {piece for index, piece in enumerate(pieces) if index not in not_mergeable}
    merges = []
    for index, piece in enumerate(pieces):
        if piece not in normal:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in normal and right in normal:
                merges.append((index, vocab[left], vocab[right], left, right))
    merges.sort()

    backend = Tokenizer(
        BPE(
            vocab=vocab,
            merges=[(m[3], m[4]) for m in merges],
            unk_token=pieces[model.unk_id()],
            fuse_unk=True,
            byte_fallback=any(model.is_byte(i) for i in range(len(pieces))),
        )
    )
    backend.normalizer = normalizers.Replace(" ", WORD_START)
    # Gemma's own pre-tokenizer: after the normalizer there is no space left, so the whole text is one word and
    # merges follow SentencePiece exactly.
    backend.pre_tokenizer = pre_tokenizers.Split(pattern=" ", behavior="merged_with_previous", invert=False)
    backend.decoder = decoders.Sequence(
        [decoders.Replace(WORD_START, " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    if model.bos_id() >= 0:  # the model's own <bos> (Gemma's id 2 in the models this module trains)
        bos = (model.bos_id(), pieces[model.bos_id()])
        backend.post_processor = processors.TemplateProcessing(
            single=f"{bos[1]}:0 $A:0",
            pair=f"{bos[1]}:0 $A:0 {bos[1]}:1 $B:1",
            special_tokens=[(bos[1], bos[0])],
        )
    backend.add_special_tokens([AddedToken(pieces[i], special=True, normalized=False) for i in special])
    return backend


def tokenizer_config() -> dict:
    names = {f"{role}_token": piece for role, (_, piece) in SPECIAL_PIECES.items()}
    return {
        "tokenizer_class": "GemmaTokenizer",
        "add_bos_token": True,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "spaces_between_special_tokens": False,
        "model_max_length": 32768,
        "padding_side": "left",
        "mask_token": MASK_PIECE,
        **names,
    }


def save_hf_folder(model_proto: bytes, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "tokenizer.model").write_bytes(model_proto)
    hf_backend_from_sentencepiece(model_proto).save(str(out_dir / "tokenizer.json"))
    config = tokenizer_config()
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    special = {key: value for key, value in config.items() if key.endswith("_token")}
    (out_dir / "special_tokens_map.json").write_text(json.dumps(special, indent=2) + "\n", encoding="utf-8")


def train_sentencepiece_tokenizer(
    corpus_jsonl: str | Path | Iterable[str | Path],
    out_dir: str | Path,
    vocab_size: int,
    *,
    character_coverage: float = 0.9995,
    max_sentence_bytes: int = DEFAULT_MAX_SENTENCE_BYTES,
    input_sentence_size: int = DEFAULT_INPUT_SENTENCE_SIZE,
    seed: int = DEFAULT_SEED,
    byte_fallback: bool = True,
    balance_languages: bool = False,
    lang_field: str = "lang",
    balance_alpha: float = 0.0,
) -> Path:
    """Train on the `text` of one or more JSONL files and write a Hugging Face tokenizer folder to `out_dir`.

    `vocab_size` counts every piece (specials, 256 bytes with byte fallback, characters, merges); SentencePiece
    refuses a size the corpus cannot fill. `input_sentence_size` caps how many training segments are read, in
    order. `balance_languages` samples the documents so that every language tag (`lang_field`, as written by
    `morphcpt.corpus.assemble`) gives about as many bytes as the smallest language, or with `balance_alpha` a share
    in proportion to its size**alpha (see `language_shares`).
    """
    paths = [corpus_jsonl] if isinstance(corpus_jsonl, str | Path) else list(corpus_jsonl)
    counts = LineCounts()
    if balance_languages:
        shares = language_shares(paths, lang_field, balance_alpha)
        logger.info("language sampling shares: %s", {k: round(v, 4) for k, v in shares.items()})
        texts = balanced_texts(paths, shares, seed, lang_field, counts)
    else:
        texts = read_texts(paths, counts)
    try:
        model_proto = train_sentencepiece_model(
            texts,
            vocab_size,
            character_coverage=character_coverage,
            max_sentence_bytes=max_sentence_bytes,
            input_sentence_size=input_sentence_size,
            seed=seed,
            byte_fallback=byte_fallback,
        )
    except TokenizerTrainingError as error:
        if any(str(error).startswith(f"{path}:") for path in paths):
            raise  # it names its file already
        names = ", ".join(map(str, paths))
        read = f" ({counts.lines} lines, {counts.skipped} empty or unreadable; each needs a non-empty `text`)"
        detail = f"{error}{read}" if str(error).startswith("holds no text") else str(error)
        raise TokenizerTrainingError(f"{names}: {detail}") from None
    out = Path(out_dir)
    save_hf_folder(model_proto, out)
    return out


def count_tokens(
    corpus_jsonl: str | Path | Iterable[str | Path], tokenizer_dir: str | Path
) -> tuple[int, int]:
    """(documents, tokens without bos/eos) of JSONL corpora under the folder's SentencePiece model."""
    paths = [corpus_jsonl] if isinstance(corpus_jsonl, str | Path) else list(corpus_jsonl)
    model = spm.SentencePieceProcessor(model_file=str(Path(tokenizer_dir) / "tokenizer.model"))
    documents = tokens = 0
    for text in read_texts(paths):
        documents += 1
        tokens += len(model.encode(text))
    return documents, tokens


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="+", type=Path, help="JSONL file(s) with a `text` field")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--vocab-size", type=int, required=True)
    parser.add_argument("--character-coverage", type=float, default=0.9995)
    parser.add_argument("--max-sentence-bytes", type=int, default=DEFAULT_MAX_SENTENCE_BYTES)
    parser.add_argument("--input-sentence-size", type=int, default=DEFAULT_INPUT_SENTENCE_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--no-byte-fallback", action="store_true", help="unknown characters become <unk>, not UTF-8 bytes"
    )
    parser.add_argument(
        "--balance-languages", action="store_true", help="sample so every language tag gives equal bytes"
    )
    parser.add_argument(
        "--balance-alpha",
        type=float,
        default=0.0,
        help="with --balance-languages: a language of n bytes weighs n**alpha (0: equal, 1: natural shares)",
    )
    parser.add_argument("--lang-field", default="lang", help="the JSONL field holding the language tag")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    with reported("morphcpt train-tokenizer", status=2):
        _run(args)


def _run(args: argparse.Namespace) -> None:
    out = train_sentencepiece_tokenizer(
        args.corpus,
        args.out_dir,
        args.vocab_size,
        character_coverage=args.character_coverage,
        max_sentence_bytes=args.max_sentence_bytes,
        input_sentence_size=args.input_sentence_size,
        seed=args.seed,
        byte_fallback=not args.no_byte_fallback,
        balance_languages=args.balance_languages,
        lang_field=args.lang_field,
        balance_alpha=args.balance_alpha,
    )
    documents, tokens = count_tokens(args.corpus, out)
    print(f"tokenizer written to {out}: {documents} training documents are {tokens} tokens")


if __name__ == "__main__":
    main()
