"""Tiny random Gemma 3 models for the evaluation tests and speed benchmarks (never downloaded).

A SentencePiece BPE with byte fallback and Gemma's special ids (pad 0, eos 1, bos 2, unk 3) is trained on the
given texts and wrapped as a Hugging Face Gemma tokenizer; a randomly initialised two-layer Gemma3ForCausalLM
(one sliding-window layer, one global) is saved beside it. The shipped sample tokenizer can be used instead.

    tokenizer_dir = train_tiny_tokenizer(texts, tmp / "tok")
    model_dir = build_tiny_gemma3(tokenizer_dir, tmp / "model", seed=0)
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path


def train_tiny_tokenizer(texts: Iterable[str], out_dir: Path | str, *, vocab_size: int = 320) -> Path:
    import sentencepiece as spm
    from transformers import GemmaTokenizer

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        corpus = Path(work) / "corpus.txt"
        corpus.write_text("\n".join(t.replace("\n", " ") for t in texts) + "\n", encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(corpus),
            model_prefix=str(Path(work) / "sp"),
            vocab_size=vocab_size,
            model_type="bpe",
            byte_fallback=True,
            split_digits=True,
            add_dummy_prefix=False,  # Gemma adds no dummy prefix
            remove_extra_whitespaces=False,
            normalization_rule_name="identity",
            character_coverage=1.0,
            hard_vocab_limit=False,
            pad_id=0,
            eos_id=1,
            bos_id=2,
            unk_id=3,
            pad_piece="<pad>",
            eos_piece="<eos>",
            bos_piece="<bos>",
            unk_piece="<unk>",
            minloglevel=2,
        )
        shutil.copy(Path(work) / "sp.model", Path(work) / "tokenizer.model")
        tokenizer = GemmaTokenizer.from_pretrained(work, add_bos_token=True)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def build_tiny_gemma3(
    tokenizer_dir: Path | str, out_dir: Path | str, *, seed: int = 0, hidden_size: int = 64
) -> Path:
    import torch
    from transformers import AutoTokenizer, Gemma3ForCausalLM, Gemma3TextConfig

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    head_dim = 16
    config = Gemma3TextConfig(
        vocab_size=max(len(tokenizer), max(tokenizer.get_vocab().values()) + 1),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=head_dim,
        query_pre_attn_scalar=head_dim,
        layer_types=["sliding_attention", "full_attention"],
        sliding_window=8,  # shorter than the test prompts, so the sliding-window path is exercised
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    torch.manual_seed(seed)
    model = Gemma3ForCausalLM(config)
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir
