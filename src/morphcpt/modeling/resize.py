"""A model grown to an EEVE-expanded tokenizer (`morphcpt.tokenization.eeve`), untrained: each new row of the input
embedding is the mean of the rows of the pieces it joins, each new output row the row of its first piece, the other
new rows the mean; the embeddings untied. EEVE's first stage starts from it (`morphcpt.train.eeve.engine`), and the
bits per byte of an expanded tokenizer are measured on it before any training (`morphcpt.evaluate.scheme_bpb`).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import torch

from morphcpt.tokenization.eeve import Expansion

RESIZE_FILE = "eeve_resize.json"


def resize(base_model: str | Path, tokenizer_dir: str | Path, out_dir: str | Path) -> dict:
    """Write the base model grown to the expanded tokenizer, EEVE-initialised and untied, as an HF folder."""
    from transformers import AutoTokenizer, Gemma3ForCausalLM

    from morphcpt.modeling.models import load_pretrained
    from morphcpt.tokenization.eeve import ExpansionError
    from morphcpt.tokenization.vocabulary import Vocabulary

    expansion = Expansion.load(tokenizer_dir)
    expanded = Vocabulary.load(tokenizer_dir)
    expansion.check_tokenizer(expanded, tokenizer_dir)
    base_vocab = Vocabulary.load(base_model)
    if base_vocab.fingerprint != expansion.base_fingerprint:
        raise ExpansionError(
            f"{tokenizer_dir} expands another tokenizer than {base_model}'s (vocabulary fingerprints differ)"
        )
    model = load_pretrained(base_model)
    old_in = model.get_input_embeddings().weight.detach()
    old_out = model.get_output_embeddings().weight.detach()
    rows, size = old_in.shape[0], expanded.size
    if rows > expansion.first_new_id:
        raise ExpansionError(
            f"the base model has {rows} rows, past the first new id {expansion.first_new_id}"
        )
    mean_in, mean_out = old_in.mean(0), old_out.mean(0)
    new_in = torch.cat([old_in, mean_in.expand(size - rows, -1)]).clone()
    new_out = torch.cat([old_out, mean_out.expand(size - rows, -1)]).clone()
    for k, pieces in enumerate(expansion.base_pieces):
        row = expansion.first_new_id + k
        new_in[row] = old_in[pieces].mean(0)
        new_out[row] = old_out[pieces[0]]
    config = copy.deepcopy(model.config)
    config.vocab_size = size
    config.tie_word_embeddings = False
    state = {
        k: v
        for k, v in model.state_dict().items()
        if k not in ("model.embed_tokens.weight", "lm_head.weight")
    }
    state["model.embed_tokens.weight"], state["lm_head.weight"] = new_in, new_out
    resized = Gemma3ForCausalLM(config).float()  # fp32 like the loaded weights, so the copy below is exact
    resized.load_state_dict(state, strict=True)
    out = Path(out_dir)
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    resized.save_pretrained(staging)
    AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(staging)
    facts = {
        "base_model": str(base_model),
        "tokenizer": str(tokenizer_dir),
        "base_rows": rows,
        "rows": size,
        "first_new_id": expansion.first_new_id,
        "added_tokens": expansion.num_new,
        "tie_word_embeddings": False,
    }
    (staging / RESIZE_FILE).write_text(json.dumps(facts, indent=2) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(staging, out)
    return facts
