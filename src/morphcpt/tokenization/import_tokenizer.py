"""Import a tokenizer the suite did not make: a SentencePiece `.model`, a `tokenizer.json`, or a Hugging Face
tokenizer folder, written as a folder every stage reads (preprocess, train, evaluate, eeve-tokenizer).

    morphcpt import-tokenizer multilingual.model --out-dir outputs/tokenizers/multilingual
    morphcpt import-tokenizer my_bpe/tokenizer.json --out-dir outputs/tokenizers/my-bpe --eos "<|endoftext|>"
    morphcpt import-tokenizer /models/llama-3.2-1b --out-dir outputs/tokenizers/llama3 \
        --check-texts "data/chunks/chunk_01.jsonl"

What the suite needs of a tokenizer, and what the import does about each:
- The text survives: `decode(encode(text)) == text`, byte for byte (schemes never change the text; bits per byte
  counts the bytes the tokens spell). Steps that change text are left out and named in the report: text
  normalisers (NFKC, SentencePiece's `nmt_nfkc`, lowercasing, ...) and the "dummy prefix" space put before
  each text (SentencePiece's `add_dummy_prefix`, Metaspace `prepend_scheme`). Only turning spaces into "▁"
  is kept. Then every check text is encoded and decoded (the shipped Filipino sample, plus `--check-texts`
  in any format `prepare` reads); a tokenizer that still loses text (a character with no piece and no byte
  fallback) is refused, naming the characters.
- Named tokens: end of text (eos), beginning of text (bos), unknown (unk) and padding (pad), each a token of
  the vocabulary. `--eos/--bos/--unk/--pad TOKEN` set them; else the tokenizer's own (its config, or the
  SentencePiece model's ids), else a usual spelling found in the vocabulary (`</s>`, `<|endoftext|>`, ...).
  A missing bos is the eos (GPT-2's convention), a missing unk the eos when the tokenizer cannot produce
  unknowns (byte fallback or byte-level), a missing pad the eos: training never pads (megatron-core's
  dataset treats a pad equal to eos as no pad) and evaluation masks padding.
- SentencePiece models (BPE or unigram) become a `tokenizers` backend with Gemma's layout (spaces as "▁", byte
  fallback as the model has it); a piece sequence the model itself would give on plain text is kept.

The folder holds `tokenizer.json`, `tokenizer_config.json`, `special_tokens_map.json` and `tokenizer_import.json`
(the source, what was changed, the named tokens and the check's figures). The import is refused, with the reason,
for a file of another kind, a tokenizer without an end-of-text token, and one that loses text.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from morphcpt.errors import reported
from morphcpt.tokenization.import_folder import (
    IMPORT_FILE,
    TokenizerImportError,
    replace_with,
    writable_out_dir,
)

NAMED = ("eos", "bos", "unk", "pad")
GUESSES = {
    "eos": ("<eos>", "</s>", "<|endoftext|>", "<|end_of_text|>", "<|im_end|>", "[EOS]", "<|eot_id|>"),
    "bos": ("<bos>", "<s>", "<|begin_of_text|>", "<|startoftext|>", "[BOS]", "<|im_start|>"),
    "unk": ("<unk>", "[UNK]", "<|unk|>"),
    "pad": ("<pad>", "[PAD]", "<|pad|>", "<|finetune_right_pad_id|>"),
}
DEFAULT_CHECK_DOCUMENTS = 2000


@dataclass
class ImportReport:
    """What `tokenizer_import.json` records."""

    source: str
    kind: str  # "sentencepiece", "tokenizer.json" or "folder"
    model: str  # BPE, Unigram, WordPiece, ...
    byte_level: bool
    byte_fallback: bool
    size: int
    named: dict[str, dict] = field(default_factory=dict)  # name -> {token, id, from}
    changes: list[str] = field(default_factory=list)
    check_texts: int = 0
    check_bytes: int = 0
    check_tokens: int = 0


# --- reading the source -----------------------------------------------------------------------------------------


def _sentencepiece(proto: bytes, source: str):
    """A `tokenizers` backend equal to the SentencePiece model on plain text, in Gemma's layout, its named tokens,
    and what of the model's text handling was left out."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2
    from tokenizers import AddedToken, Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import Unigram

    from morphcpt.tokenization.train_tokenizer import hf_backend_from_sentencepiece

    spec = sentencepiece_model_pb2.ModelProto()
    try:
        spec.ParseFromString(proto)
        model = spm.SentencePieceProcessor(model_proto=proto)
    except Exception as error:
        raise TokenizerImportError(
            f"{source}: not a SentencePiece model ({type(error).__name__}: {error}); give a .model file, a "
            "tokenizer.json or a Hugging Face tokenizer folder"
        ) from None
    if model.get_piece_size() == 0 or not spec.pieces:
        raise TokenizerImportError(
            f"{source}: an empty SentencePiece model (no pieces; {len(proto)} bytes); give the .model file "
            "SentencePiece wrote, a tokenizer.json or a Hugging Face tokenizer folder"
        )
    if model.unk_id() < 0:
        raise TokenizerImportError(
            f"{source}: a SentencePiece model without an unknown piece (unk_id is {model.unk_id()}); give the .model "
            "file SentencePiece trained, a tokenizer.json or a Hugging Face tokenizer folder"
        )
    kind = sentencepiece_model_pb2.TrainerSpec.ModelType.Name(spec.trainer_spec.model_type)
    changes = []
    normalizer = spec.normalizer_spec
    if normalizer.name not in ("identity", ""):
        changes.append(f"left out the model's text normaliser {normalizer.name!r} (it changes text)")
    if normalizer.add_dummy_prefix:
        changes.append("left out the dummy-prefix space the model puts before each text (add_dummy_prefix)")
    if normalizer.remove_extra_whitespaces:
        changes.append("whitespace is kept as written (the model collapses runs of spaces)")
    if kind == "BPE":
        backend = hf_backend_from_sentencepiece(proto)
    elif kind == "UNIGRAM":
        pieces = [model.id_to_piece(i) for i in range(model.get_piece_size())]
        plain = [
            i for i in range(len(pieces)) if model.is_byte(i) or model.is_control(i) or model.is_unused(i)
        ]
        floor = min((model.get_score(i) for i in range(len(pieces)) if i not in plain), default=0.0) - 100.0
        # Byte, control and unused pieces score below every ordinary one, so their spellings ("<0x41>", "<s>")
        # in a text are read as text, as SentencePiece reads them.
        scores = [floor if i in plain else model.get_score(i) for i in range(len(pieces))]
        byte_fallback = any(model.is_byte(i) for i in range(len(pieces)))
        backend = Tokenizer(Unigram(list(zip(pieces, scores, strict=True)), model.unk_id(), byte_fallback))
        backend.normalizer = normalizers.Replace(" ", "▁")
        backend.pre_tokenizer = pre_tokenizers.Split(
            pattern=" ", behavior="merged_with_previous", invert=False
        )
        steps = [
            decoders.Replace("▁", " "),
            *([decoders.ByteFallback()] if byte_fallback else []),
            decoders.Fuse(),
        ]
        backend.decoder = decoders.Sequence(steps)
        special = [i for i in range(len(pieces)) if model.is_control(i) or model.is_unknown(i)]
        backend.add_special_tokens([AddedToken(pieces[i], special=True, normalized=False) for i in special])
    else:
        raise TokenizerImportError(
            f"{source}: a SentencePiece {kind.lower()} model; the suite imports BPE and unigram models"
        )

    def piece(index: int) -> str | None:
        return model.id_to_piece(index) if index >= 0 else None

    named = {"eos": piece(model.eos_id()), "bos": piece(model.bos_id()), "unk": piece(model.unk_id())}
    named["pad"] = piece(model.pad_id())
    return backend, named, kind.capitalize() if kind == "UNIGRAM" else kind, changes


def _read(path: Path):
    """(backend, the source's named tokens or {}, kind, changes already made) of a .model, a tokenizer.json or
    a folder."""
    from tokenizers import Tokenizer

    from morphcpt.tokenization.vocabulary import load_hf_tokenizer

    if not path.exists():
        raise TokenizerImportError(f"{path}: no such file or folder")
    if path.is_dir():
        if not (path / "tokenizer.json").is_file() and (path / "tokenizer.model").is_file():
            return (*_sentencepiece((path / "tokenizer.model").read_bytes(), str(path)), "sentencepiece")
        if not (path / "tokenizer.json").is_file() and not (path / "tokenizer_config.json").is_file():
            raise TokenizerImportError(
                f"{path}: a folder without tokenizer.json, tokenizer.model or tokenizer_config.json; give the "
                "folder a Hugging Face tokenizer was saved to, or the tokenizer file itself"
            )
        tokenizer = load_hf_tokenizer(path)
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None:
            raise TokenizerImportError(
                f"{path}: transformers loads this tokenizer without a `tokenizers` backend"
            )
        named = {name: _text(getattr(tokenizer, f"{name}_token", None)) for name in NAMED}
        return Tokenizer.from_str(backend.to_str()), named, "", [], "folder"
    if path.suffix == ".json":
        try:
            return Tokenizer.from_file(str(path)), {}, "", [], "tokenizer.json"
        except Exception as error:
            raise TokenizerImportError(
                f"{path}: the `tokenizers` library cannot read this tokenizer.json ({error})"
            ) from None
    return (*_sentencepiece(path.read_bytes(), str(path)), "sentencepiece")


def _text(token) -> str | None:
    return None if token is None else str(token)


# --- making it lossless -----------------------------------------------------------------------------------------


def _is_space_to_word_start(node: dict) -> bool:
    pattern = node.get("pattern") or {}
    return node.get("type") == "Replace" and pattern.get("String") == " " and node.get("content") == "▁"


def keep_text(backend_json: dict) -> list[str]:
    """Drop, in place, the steps of a tokenizer.json that change text (normalisers other than " " -> "▁", a
    prepended space and the decoder step that strips it); the changes, said for the report."""
    changes = []
    normalizer = backend_json.get("normalizer")
    if normalizer:
        parts = normalizer.get("normalizers") if normalizer.get("type") == "Sequence" else [normalizer]
        kept = [n for n in parts if _is_space_to_word_start(n)]
        for dropped in (n for n in parts if not _is_space_to_word_start(n)):
            what = (
                "a space prepended to each text" if dropped.get("type") == "Prepend" else dropped.get("type")
            )
            changes.append(f"left out the normaliser step {what!r} (it changes text)")
        backend_json["normalizer"] = (
            None if not kept else kept[0] if len(kept) == 1 else {"type": "Sequence", "normalizers": kept}
        )

    def walk(node, key: str):
        if not isinstance(node, dict):
            return
        if node.get("type") == "Metaspace" and node.get("prepend_scheme", "never") != "never":
            changes.append(
                f"no space prepended to each text (Metaspace prepend_scheme {node['prepend_scheme']!r})"
            )
            node["prepend_scheme"] = "never"
        for child in node.get(key) or []:
            walk(child, key)

    walk(backend_json.get("pre_tokenizer"), "pretokenizers")
    walk(backend_json.get("decoder"), "decoders")
    decoder = backend_json.get("decoder")
    if decoder and decoder.get("type") == "Sequence":
        strips = [d for d in decoder["decoders"] if d.get("type") == "Strip"]
        if strips:
            decoder["decoders"] = [d for d in decoder["decoders"] if d.get("type") != "Strip"]
            changes.append("the decoder no longer strips the first space (there is no prepended space)")
    return changes


# --- named tokens -----------------------------------------------------------------------------------------------


def resolve_named(backend, source_named: dict, asked: dict, cannot_make_unknowns: bool, source: str) -> dict:
    """name -> {token, id, from} for eos, bos, unk, pad (see the module docstring for the order of choice)."""
    vocab = backend.get_vocab(with_added_tokens=True)
    named: dict[str, dict] = {}
    for name in NAMED:
        token, origin = asked.get(name), "--" + name
        if token is not None and token not in vocab:
            raise TokenizerImportError(f"{source}: --{name} {token!r} is not a token of this tokenizer")
        if token is None and source_named.get(name) in vocab:
            token, origin = source_named[name], "the tokenizer"
        if token is None:
            token = next((t for t in GUESSES[name] if t in vocab), None)
            origin = "found in the vocabulary"
        if token is None and name != "eos" and "eos" in named:
            if name == "unk" and not cannot_make_unknowns:
                raise TokenizerImportError(
                    f"{source}: no unknown-character token found (looked for {', '.join(GUESSES['unk'])}) and the "
                    "tokenizer has no byte fallback; name it with --unk TOKEN"
                )
            token, origin = named["eos"]["token"], "the eos token (none of its own)"
        if token is None:
            raise TokenizerImportError(
                f"{source}: no end-of-text token found (looked for {', '.join(GUESSES['eos'])}); name it with "
                "--eos TOKEN (every document ends with it)"
            )
        named[name] = {"token": token, "id": vocab[token], "from": origin}
    return named


# --- checking ---------------------------------------------------------------------------------------------------


def check_texts(sources: Iterable[str], limit: int) -> Iterator[tuple[str, str]]:
    """(where, text) of the shipped sample corpus and of `sources` (anything `prepare` reads), `limit` each."""
    from morphcpt import paths
    from morphcpt.corpus.sources import SourceError, SourceSpec, read_source

    for location in [str(paths.SAMPLE_CORPUS), *sources]:
        try:
            records = read_source(SourceSpec.parse(location))
            taken = 0
            for record in records:
                if record.text is None or not record.text:
                    continue
                yield record.where, record.text
                taken += 1
                if taken >= limit:
                    break
        except SourceError as error:
            raise TokenizerImportError(f"--check-texts {location}: {error}") from None


def _lost(text: str, back: str) -> str:
    missing = sorted(set(text) - set(back)) or sorted(set(text) ^ set(back))
    if not missing:
        return "the decoded text differs in its spacing"
    shown = ", ".join(f"{c!r} (U+{ord(c):04X}{' ' + unicodedata.name(c, '')})".rstrip() for c in missing[:5])
    return f"characters that come back as something else: {shown}"


def verify(folder: Path, report: ImportReport, texts: Iterable[tuple[str, str]]) -> None:
    """Every check text encodes and decodes to itself (through `Vocabulary` and the tokenizer's own decoder),
    and the bytes its tokens spell add up to its UTF-8 length; else `TokenizerImportError` naming what is lost."""
    from morphcpt.tokenization.vocabulary import Vocabulary

    vocab = Vocabulary.load(folder)
    hf = vocab.tokenizer
    named = {v["id"]: (name, v["token"]) for name, v in report.named.items()}
    failures, first = 0, None
    for where, text in texts:
        ids = vocab.encode(text)
        inside = next((named[i] for i in ids if i in named), None)
        back = vocab.decode(ids)
        counted = sum(len(vocab.piece_bytes[i]) for i in ids)
        report.check_texts += 1
        report.check_bytes += len(text.encode("utf-8"))
        report.check_tokens += len(ids)
        own = hf.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        if back != text or own != text or counted != len(text.encode("utf-8")):
            failures += 1
            # A tokenizer without byte fallback maps an unknown character to its unk token: that is lost text,
            # not a badly chosen unk, so the unk advice is only for tokenizers that cannot make unknowns.
            lossy_unk = inside and inside[0] == "unk" and not (report.byte_fallback or report.byte_level)
            why = (
                f"its text encodes to the {inside[0]} token {inside[1]!r}, which decoding drops (name one that no "
                "text encodes to)"
                if inside and not lossy_unk
                else _lost(text, back if back != text else own)
            )
            first = first or (where, why)
    if failures:
        fallback = "" if report.byte_fallback or report.byte_level else " and has no byte fallback"
        raise TokenizerImportError(
            f"{report.source}: the tokenizer does not give back {failures} of {report.check_texts} check texts as "
            f"they were (first at {first[0]}: {first[1]}){fallback}. The suite needs decode(encode(text)) == "
            "text (schemes keep the text; bits per byte counts its bytes): use a tokenizer with byte fallback "
            "(SentencePiece byte_fallback=true, or `morphcpt train-tokenizer`) or a byte-level BPE"
        )


# --- the import -------------------------------------------------------------------------------------------------


def import_tokenizer(
    path: str | Path,
    out_dir: str | Path,
    *,
    asked: dict[str, str | None] | None = None,
    check_sources: Iterable[str] = (),
    check_documents: int = DEFAULT_CHECK_DOCUMENTS,
) -> ImportReport:
    """Write `out_dir` from the tokenizer at `path` (see the module docstring); returns what was done."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    from morphcpt.tokenization.vocabulary import _is_byte_level

    path = Path(path).expanduser()
    out = writable_out_dir(out_dir, path)
    backend, source_named, model_kind, changes, kind = _read(path)
    backend_json = json.loads(backend.to_str())
    changes = [*changes, *keep_text(backend_json)]
    backend = Tokenizer.from_str(json.dumps(backend_json))
    model = backend_json.get("model") or {}
    byte_level = _is_byte_level(backend_json)
    byte_fallback = bool(model.get("byte_fallback"))
    named = resolve_named(
        backend,
        source_named,
        {k: v for k, v in (asked or {}).items() if v},
        byte_level or byte_fallback,
        str(path),
    )
    report = ImportReport(
        source=str(path),
        kind=kind,
        model=model_kind or str(model.get("type")),
        byte_level=byte_level,
        byte_fallback=byte_fallback,
        size=backend.get_vocab_size(with_added_tokens=True),
        named=named,
        changes=changes,
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        clean_up_tokenization_spaces=False,
        **{f"{name}_token": named[name]["token"] for name in NAMED},
    )
    with replace_with(out) as staging:
        tokenizer.save_pretrained(staging)
        verify(staging, report, check_texts(check_sources, check_documents))
        (staging / IMPORT_FILE).write_text(json.dumps(asdict(report), indent=2, ensure_ascii=False) + "\n")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="morphcpt import-tokenizer", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "path", type=Path, help="a SentencePiece .model, a tokenizer.json or a tokenizer folder"
    )
    parser.add_argument("--out-dir", type=Path, required=True, help="the folder to write")
    for name in NAMED:
        parser.add_argument(f"--{name}", default=None, metavar="TOKEN", help=f"the {name} token, as spelled")
    parser.add_argument(
        "--check-texts",
        nargs="+",
        default=[],
        metavar="SOURCE",
        help="texts to check the tokenizer on besides the shipped sample (files, folders, globs, as prepare reads)",
    )
    parser.add_argument("--check-documents", type=int, default=DEFAULT_CHECK_DOCUMENTS, help="per source")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    with reported("morphcpt import-tokenizer"):
        report = import_tokenizer(
            args.path,
            args.out_dir,
            asked={name: getattr(args, name) for name in NAMED},
            check_sources=args.check_texts,
            check_documents=args.check_documents,
        )
    named = ", ".join(f"{n} {v['token']!r} ({v['id']}, {v['from']})" for n, v in report.named.items())
    print(f"{args.out_dir}: {report.model} tokenizer, {report.size:,} ids; {named}")
    for change in report.changes:
        print(f"  changed: {change}")
    print(
        f"  checked: {report.check_texts} texts decode to themselves, {report.check_bytes:,} bytes counted "
        f"exactly ({report.check_tokens / max(report.check_bytes, 1):.4f} tokens/byte)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
