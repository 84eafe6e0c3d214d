"""A read-only view of a Hugging Face tokenizer as SentencePiece pieces: ids, spellings, specials, bytes.

Every scheme works on canonical ids and must keep the text unchanged, so it needs to know exactly what each id
spells. `Vocabulary` gives that view for any SentencePiece-style BPE tokenizer that `AutoTokenizer` loads (the real
Gemma 3 tokenizer with 262,144 pieces, or the small shipped sample tokenizer):

    vocab = Vocabulary.load("data/tokenizer")          # or "google/gemma-3-1b-pt"
    ids = vocab.encode("Kumain ka na ba?")             # canonical ids, no <bos>/<eos>
    assert vocab.decode(ids) == "Kumain ka na ba?"

Facts it relies on (see REFERENCE.md): "▁" marks a space inside pieces; byte-fallback pieces are spelled
`<0xNN>`; specials (pad, eos, bos, unk, mask, ...) are added tokens flagged special. `size` counts the pieces of
the tokenizer's model (what the embedding rows index), and the named specials (pad, eos, bos, unk) where they are
added tokens just past it (Llama 3's `<|begin_of_text|>`); Gemma 3's tokenizer also carries an added token past the
model's vocabulary, so `len(tokenizer)` can exceed it — never resize an embedding from `len(tokenizer)`.

Byte-level BPE tokenizers (GPT-2, Llama 3, Nemotron: a `ByteLevel` decoder) spell each byte as one printable
character (the space is "Ġ"): `byte_level` is set, every piece's bytes are read back through that mapping, so
`decode` and the byte counts behind bits per byte are exact, and "▁" is ordinary text for them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from tokenizers import Tokenizer

from morphcpt.errors import UserError
from morphcpt.jsonio import check_json_files

WORD_START = "\u2581"  # "▁": SentencePiece's spelling of a space inside pieces
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


CACHE_VERSION = 2  # of the cached vocabulary state (morphcpt.tokenization.cache); bump when `_state` changes


class Vocabulary:
    """Pieces, special ids and exact encode/decode of one tokenizer. Build with `Vocabulary.load`."""

    def __init__(self, tokenizer) -> None:
        """Wrap a loaded Hugging Face tokenizer (`Vocabulary.load` does this once and then reads a cache)."""
        self._set_state(_state_of(tokenizer), str(getattr(tokenizer, "name_or_path", "") or ""))
        self._tokenizer = tokenizer

    def _set_state(self, state: dict, source: str) -> None:
        self.source = source  # the folder or Hub id the tokenizer came from
        self._tokenizer = None
        self.size: int = state["size"]
        self.pieces: list[str] = state["pieces"]
        self.special_ids: frozenset[int] = frozenset(state["special_ids"])
        self.byte_values: dict[int, int] = state["byte_values"]
        self.pad_id, self.eos_id, self.bos_id, self.unk_id = state["pad_eos_bos_unk"]
        self.piece_bytes: list[bytes] = state["piece_bytes"]  # what each id spells (specials: nothing)
        self.fingerprint: str = state["fingerprint"]
        self.layout: dict = state["layout"]  # the backend's normalizer and pre_tokenizer, as JSON objects
        self.byte_level: bool = state["byte_level"]  # pieces spell bytes as GPT-2's printable characters
        self._piece_ids = {p: i for i, p in enumerate(self.pieces)}
        by_byte = {value: i for i, value in self.byte_values.items()}
        word_start = WORD_START.encode("utf-8")
        self._word_start_bytes: list[int] | None = (
            [by_byte[b] for b in word_start]
            if all(b in by_byte for b in word_start) and not self.byte_level
            else None
        )
        # Own copy of the backend (`encoder`): special tokens in the text stay text, nothing is added around it.
        self.encoder = Tokenizer.from_str(state["encoder"])
        self.encoder.encode_special_tokens = True
        self.encoder.no_padding()
        self.encoder.no_truncation()

    @property
    def tokenizer(self):
        """The Hugging Face tokenizer itself (loaded on first use: encoding and decoding never need it)."""
        if self._tokenizer is None:
            self._tokenizer = load_hf_tokenizer(self.source)
        return self._tokenizer

    def __getstate__(self) -> dict:  # worker processes get the tables and the encoder, not the HF tokenizer
        return {"state": self._state(), "source": self.source}

    def __setstate__(self, data: dict) -> None:
        self._set_state(data["state"], data["source"])

    def _state(self) -> dict:
        return {
            "size": self.size,
            "pieces": self.pieces,
            "special_ids": sorted(self.special_ids),
            "byte_values": self.byte_values,
            "pad_eos_bos_unk": (self.pad_id, self.eos_id, self.bos_id, self.unk_id),
            "piece_bytes": self.piece_bytes,
            "fingerprint": self.fingerprint,
            "layout": self.layout,
            "byte_level": self.byte_level,
            "encoder": self.encoder.to_str(),
        }

    @classmethod
    def load(cls, name_or_path: str | Path) -> Vocabulary:
        """The vocabulary of a tokenizer folder or Hub id, from the cache when it holds it (well under a second
        for Gemma 3's 262,144 pieces), else through `AutoTokenizer.from_pretrained` (then cached)."""
        from morphcpt.tokenization import cache

        text = str(name_or_path)
        # A path that is not there would otherwise reach the Hub as a malformed repo id, with a baffling error.
        looks_like_path = (
            isinstance(name_or_path, Path) or text.startswith(("/", ".", "~")) or text.count("/") > 1
        )
        local = Path(text).expanduser().is_dir()  # a folder first, as AutoTokenizer does
        if Path(text).expanduser().is_file():
            raise TokenizerNotFound(
                f"{text} is a file; the suite reads tokenizer folders: make one with "
                f"`morphcpt import-tokenizer {text} --out-dir DIR` and give DIR"
            )
        if looks_like_path and not local:
            raise TokenizerNotFound(
                f"tokenizer folder not found: {text} (give a folder or a Hub id such as google/gemma-3-1b-pt)"
            )
        folder = Path(text).expanduser() if local else _hub_folder(text)
        source = str(folder) if local else text
        root = cache.cache_root()
        entry = root / "vocab" / f"{cache.files_key(folder, CACHE_VERSION)}.pkl" if root and folder else None
        state = cache.read_pickle(entry) if entry else None
        if state is not None:
            vocab = cls.__new__(cls)
            vocab._set_state(state, source)
            return vocab
        try:
            vocab = cls(load_hf_tokenizer(source))
        except TokenizerUnfit as error:
            raise TokenizerUnfit(
                f"{source}: {error}; `morphcpt import-tokenizer {source} --out-dir DIR` writes a folder the suite "
                "can use (it names the missing tokens, see docs/eeve-and-sibling-uses.md)"
            ) from None
        vocab.source = source
        if entry:
            cache.write_pickle(entry, vocab._state())
        return vocab

    def encode(self, text: str) -> list[int]:
        """Canonical ids of `text`: no <bos>/<eos> added, literal "<eos>" in the text stays text, and a literal
        "▁" stays "▁" (see `_encode_keeping_word_start`)."""
        if WORD_START in text and not self.byte_level:
            return self._encode_keeping_word_start(text)
        return self.encoder.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        plain = [i for i, text in enumerate(texts) if self.byte_level or WORD_START not in text]
        out: list[list[int]] = [[] for _ in texts]
        encoded = self.encoder.encode_batch_fast([texts[i] for i in plain], add_special_tokens=False)
        for i, encoding in zip(plain, encoded, strict=True):
            out[i] = encoding.ids
        for i, text in enumerate(texts):
            if WORD_START in text and not self.byte_level:
                out[i] = self._encode_keeping_word_start(text)
        return out

    def _encode_keeping_word_start(self, text: str) -> list[int]:
        """Ids of a text holding a literal "▁" (U+2581), which the tokenizer's normaliser cannot tell from a space
        (it spells spaces "▁"; the decoder turns every "▁" back into a space). The text is encoded canonically
        between the "▁"s, and each "▁" becomes its three UTF-8 byte pieces `<0xE2><0x96><0x81>`, which decode to
        "▁" itself (in `decode` and in the tokenizer's own decoder, whose byte fallback runs after the replace)."""
        if self._word_start_bytes is None:
            raise ValueError(
                f"the text holds a literal {WORD_START!r} (U+2581) and this tokenizer has no byte-fallback "
                "pieces to keep it: it would decode as a space"
            )
        ids: list[int] = []
        for n, segment in enumerate(text.split(WORD_START)):
            if n:
                ids.extend(self._word_start_bytes)
            if segment:
                ids.extend(self.encoder.encode(segment, add_special_tokens=False).ids)
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        """The exact text of `ids`: specials dropped, byte pieces joined into characters, "▁" read as a space.

        Equals the tokenizer's own `decode(ids, skip_special_tokens=True)`, including for byte runs that are not
        valid UTF-8, which become one U+FFFD per byte as the tokenizer's ByteFallback decoder does (a byte-level
        tokenizer's decoder replaces each invalid sequence as Python's "replace" does).
        """
        ids = list(ids)
        data = b"".join(map(self.piece_bytes.__getitem__, ids))
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            if self.byte_level:
                return data.decode("utf-8", errors="replace")
            return self._decode_with_invalid_bytes(ids)

    def _decode_with_invalid_bytes(self, ids: Sequence[int]) -> str:
        out: list[str] = []
        run = bytearray()
        for i in ids:
            if i in self.special_ids:
                continue
            if i in self.byte_values:
                run.append(self.byte_values[i])
                continue
            if run:
                out.append(_decode_byte_run(run))
                run.clear()
            out.append(self.piece_bytes[i].decode("utf-8"))
        if run:
            out.append(_decode_byte_run(run))
        return "".join(out)

    def spell_plain(self, ids: Iterable[int]) -> str:
        """`decode(ids)` for ids that are neither specials nor byte pieces: their piece strings joined, "▁" read
        as a space (each such piece spells `piece.replace("▁", " ")`), without going through bytes; a byte-level
        vocabulary's pieces through their bytes."""
        if self.byte_level:
            return self.decode(ids)
        return "".join(map(self.pieces.__getitem__, ids)).replace(WORD_START, " ")

    def is_special(self, i: int) -> bool:
        return i in self.special_ids

    def is_byte(self, i: int) -> bool:
        return i in self.byte_values

    def piece_id(self, piece: str) -> int | None:
        """The id of an exact piece string in the vocabulary's own spelling ("▁ma", not " ma"), or None."""
        return self._piece_ids.get(piece)

    def __repr__(self) -> str:
        return f"Vocabulary(size={self.size}, fingerprint={self.fingerprint[:12]})"


class TokenizerLoadError(UserError, ValueError):
    """A tokenizer folder that transformers cannot load; the message names the folder (and a broken file)."""


class TokenizerNotFound(UserError, FileNotFoundError):
    """A tokenizer path that is not there."""


class TokenizerUnfit(UserError, ValueError):
    """A tokenizer that loads but lacks what the suite needs (a named token inside its vocabulary, ...)."""


def load_hf_tokenizer(source: str | Path):
    """`AutoTokenizer.from_pretrained(source)`; when a folder fails to load, the error names it, and a cut-off
    or garbled JSON file in it (transformers reads `tokenizer.json` with a bare `json.load`) is named itself."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(source))
    except Exception as error:
        folder = Path(str(source)).expanduser()
        if not folder.is_dir():
            raise
        check_json_files(folder)  # raises JSONFileError naming the broken file
        raise TokenizerLoadError(
            f"{folder}: transformers cannot load this tokenizer folder ({type(error).__name__}: {error}); "
            "copy or build it again"
        ) from None


def _hub_folder(repo_id: str) -> Path | None:
    """The local snapshot of a Hub tokenizer (downloaded as AutoTokenizer would), or None when it cannot be had
    here (then `AutoTokenizer` runs and reports why)."""
    from morphcpt.tokenization.cache import TOKENIZER_FILES

    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id, allow_patterns=list(TOKENIZER_FILES)))
    except Exception:
        return None


def _state_of(tokenizer) -> dict:
    """Everything `Vocabulary` keeps of a loaded Hugging Face tokenizer (what the cache stores)."""
    backend: Tokenizer = tokenizer.backend_tokenizer
    model_vocab = backend.get_vocab(with_added_tokens=False)
    added = {
        int(i): token for i, token in getattr(tokenizer, "added_tokens_decoder", {}).items()
    }  # id -> AddedToken
    if not model_vocab:
        raise TokenizerUnfit("the tokenizer has no model vocabulary")
    size = max(model_vocab.values()) + 1
    for name in _NAMED:  # a named special added just past the model's vocabulary (Llama 3) is a piece too
        token = getattr(tokenizer, f"{name}_token", None)
        i = next((i for i, t in added.items() if t.content == str(token)), None) if token else None
        if i is not None and i >= size and all(k in added for k in range(size, i)):
            size = i + 1
    pieces: list[str | None] = [None] * size
    for piece, i in model_vocab.items():
        pieces[i] = piece
    for i, token in added.items():
        if i < size and pieces[i] is None:
            pieces[i] = token.content
    missing = [i for i, p in enumerate(pieces) if p is None]
    if missing:
        raise TokenizerUnfit(f"the tokenizer's vocabulary has holes, e.g. ids {missing[:5]}")
    piece_ids = {p: i for i, p in enumerate(pieces)}
    special_ids = {i for i, token in added.items() if token.special and i < size}
    backend_json = json.loads(backend.to_str())
    byte_level = _is_byte_level(backend_json)
    byte_values: dict[int, int] = {}
    for i, p in enumerate(pieces):
        m = None if byte_level else _BYTE_PIECE.fullmatch(p)
        if m and i not in special_ids:
            byte_values[i] = int(m.group(1), 16)
        elif byte_level and len(p) == 1 and p in _UNICODE_BYTES and i not in added:
            byte_values[i] = _UNICODE_BYTES[p]

    def special(name: str) -> int:
        token = getattr(tokenizer, f"{name}_token", None)
        i = piece_ids.get(str(token)) if token is not None else None
        if i is None:
            raise TokenizerUnfit(f"the tokenizer has no {name} token inside its vocabulary")
        return i

    named = tuple(special(n) for n in _NAMED)
    # unk is flagged special by SentencePiece conversions; make sure decode drops it either way.
    special_ids |= set(named)
    piece_bytes = [
        b""
        if i in special_ids
        else bytes([byte_values[i]])
        if i in byte_values
        else _byte_level_bytes(p, i in added)
        if byte_level
        else p.replace(WORD_START, " ").encode("utf-8")
        for i, p in enumerate(pieces)
    ]
    return {
        "size": size,
        "pieces": pieces,
        "special_ids": sorted(special_ids),
        "byte_values": byte_values,
        "pad_eos_bos_unk": named,
        "piece_bytes": piece_bytes,
        "fingerprint": _fingerprint(pieces, special_ids, named),
        "layout": {key: backend_json.get(key) for key in ("normalizer", "pre_tokenizer")},
        "byte_level": byte_level,
        "encoder": backend.to_str(),
    }


_NAMED = ("pad", "eos", "bos", "unk")


def _gpt2_byte_characters() -> dict[int, str]:
    """GPT-2's byte -> character table: printable Latin-1 bytes stand for themselves, the other 68 bytes (controls,
    space, soft hyphen, ...) for the characters from U+0100 on, in byte order."""
    kept = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    table = {b: chr(b) for b in kept}
    for n, b in enumerate(b for b in range(256) if b not in table):
        table[b] = chr(256 + n)
    return table


_UNICODE_BYTES = {char: byte for byte, char in _gpt2_byte_characters().items()}


def _is_byte_level(backend_json: dict) -> bool:
    """Whether the backend's decoder (or pre-tokenizer) is ByteLevel, alone or inside a Sequence."""

    def has(node) -> bool:
        if not isinstance(node, dict):
            return False
        if node.get("type") == "ByteLevel":
            return True
        return any(has(child) for key in ("decoders", "pretokenizers") for child in node.get(key) or [])

    return has(backend_json.get("decoder")) or has(backend_json.get("pre_tokenizer"))


def _byte_level_bytes(piece: str, added: bool) -> bytes:
    """What a byte-level piece spells: each character one byte. An added token (not from the BPE model) is
    written as its text; a piece holding a character outside the byte table is refused."""
    if added:
        return piece.encode("utf-8")
    try:
        return bytes(_UNICODE_BYTES[c] for c in piece)
    except KeyError:
        raise TokenizerUnfit(
            f"byte-level tokenizer piece {piece!r} holds a character that stands for no byte; the tokenizer's "
            "vocabulary and its ByteLevel decoder disagree"
        ) from None


def _fingerprint(pieces: list[str], special_ids: set[int], named: tuple[int, ...]) -> str:
    h = hashlib.sha256()
    h.update(json.dumps(pieces, ensure_ascii=False).encode("utf-8"))
    h.update(json.dumps(sorted(special_ids)).encode("utf-8"))
    h.update(json.dumps(list(named)).encode("utf-8"))
    return h.hexdigest()


def _decode_byte_run(run: bytes) -> str:
    try:
        return run.decode("utf-8")
    except UnicodeDecodeError:
        return "\ufffd" * len(run)
