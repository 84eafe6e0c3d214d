"""Gemma 3 models for the hf engine: the tiny CPU configuration, the 1B reference shape, and loading pretrained
weights so that a silent partial load is impossible.

    model = build_model(tiny_config(vocab_size=vocab.size), seed=0)       # random tiny Gemma 3
    model = load_pretrained("google/gemma-3-1b-pt")                       # verified, fp32
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import Gemma3ForCausalLM, Gemma3TextConfig, PreTrainedModel

from morphcpt import paths
from morphcpt.errors import UserError
from morphcpt.jsonio import check_json_files
from morphcpt.modeling.logit_parity import compare_logits, prompt_batch
from morphcpt.plan.schema import ModelPlan

# google/gemma-3-1b-pt's text model (REFERENCE.md), in `tiny_config`'s (and ModelPlan's) terms: the ~1B benchmark
# shape, randomly initialised, never downloaded.
GEMMA3_1B_SHAPE = dict(
    hidden_size=1152,
    num_layers=26,
    num_heads=4,
    num_kv_heads=1,
    head_dim=256,
    intermediate_size=6912,
    sliding_window=512,
    global_every=6,
    max_position_embeddings=32768,
)
GEMMA3_1B_VOCAB = 262_144
# google/gemma-3-270m, the pilot's model (conf/model/gemma3_270m.yaml says where the shape comes from)
GEMMA3_270M_SHAPE = dict(GEMMA3_1B_SHAPE, hidden_size=640, num_layers=18, intermediate_size=2048)


class WeightLoadError(UserError, RuntimeError):
    """Pretrained weights did not load completely or do not reproduce their own logits."""


def layer_types(num_layers: int, global_every: int) -> list[str]:
    """Gemma 3's attention pattern: every `global_every`-th layer is global, the rest use the sliding window."""
    return [
        "full_attention" if (i + 1) % global_every == 0 else "sliding_attention" for i in range(num_layers)
    ]


def tiny_config(
    vocab_size: int,
    *,
    hidden_size: int = 64,
    num_layers: int = 4,
    num_heads: int = 4,
    num_kv_heads: int = 1,
    head_dim: int = 16,
    intermediate_size: int = 256,
    sliding_window: int = 32,
    global_every: int = 2,
    max_position_embeddings: int = 512,
    special_ids: tuple[int | None, int, int] = (0, 1, 2),
) -> Gemma3TextConfig:
    """A Gemma 3 text config; the defaults are the tiny CPU model (few layers, sliding-window and global layers)."""
    return Gemma3TextConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        head_dim=head_dim,
        query_pre_attn_scalar=head_dim,
        sliding_window=sliding_window,
        layer_types=layer_types(num_layers, global_every),
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=True,
        pad_token_id=special_ids[0],
        eos_token_id=special_ids[1],
        bos_token_id=special_ids[2],
    )


def gemma3_1b_config(vocab_size: int = GEMMA3_1B_VOCAB) -> Gemma3TextConfig:
    """The gemma-3-1b-pt text shape (5 local : 1 global layers), for benchmarks."""
    return tiny_config(vocab_size, **GEMMA3_1B_SHAPE)


def gemma3_270m_config(vocab_size: int = GEMMA3_1B_VOCAB) -> Gemma3TextConfig:
    """The gemma-3-270m text shape (same attention layout and vocabulary as 1B, narrower and shallower)."""
    return tiny_config(vocab_size, **GEMMA3_270M_SHAPE)


def config_from_plan(plan: ModelPlan, vocab_size: int, vocab=None) -> Gemma3TextConfig:
    """The model a plan trains from scratch; with its `Vocabulary`, the tokenizer's pad, eos and bos ids (Gemma's
    0, 1, 2 otherwise). The pad id is the embedding's padding row, which never trains: a tokenizer whose pad is
    also its eos or bos (GPT-2 style) gets none."""
    special_ids = (0, 1, 2)
    if vocab is not None:
        pad = vocab.pad_id if vocab.pad_id not in (vocab.eos_id, vocab.bos_id) else None
        special_ids = (pad, vocab.eos_id, vocab.bos_id)
    return tiny_config(
        vocab_size,
        hidden_size=plan.hidden_size,
        num_layers=plan.num_layers,
        num_heads=plan.num_heads,
        num_kv_heads=plan.num_kv_heads,
        head_dim=plan.head_dim,
        intermediate_size=plan.intermediate_size,
        sliding_window=plan.sliding_window,
        global_every=plan.global_every,
        max_position_embeddings=plan.max_position_embeddings,
        special_ids=special_ids,
    )


def build_model(config: Gemma3TextConfig, seed: int, device: str | torch.device = "cpu") -> Gemma3ForCausalLM:
    """A randomly initialised Gemma3ForCausalLM; the same seed gives the same weights on the same device. On a GPU
    the weights are drawn there (a 1B model initialises in a second instead of a CPU's tens of seconds)."""
    device = torch.device(device)
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []), torch.device(device):
        torch.manual_seed(seed)
        return Gemma3ForCausalLM(config)


def save_tiny_gemma3(tokenizer_dir: str | Path, out_dir: str | Path, *, seed: int = 0, **shape) -> Path:
    """A randomly initialised Gemma 3 (`tiny_config(**shape)`) with the tokenizer, saved as a Hugging Face folder:
    the stand-in model of the tests and the CPU benchmarks (never downloaded)."""
    from transformers import AutoTokenizer

    from morphcpt.tokenization.vocabulary import Vocabulary

    out_dir = Path(out_dir)
    build_model(tiny_config(Vocabulary.load(tokenizer_dir).size, **shape), seed=seed).save_pretrained(out_dir)
    AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(out_dir)
    return out_dir


def load_strict(name_or_path: str | Path) -> PreTrainedModel:
    """Any causal LM `AutoModelForCausalLM` loads (Gemma 3 by default), in fp32, refusing a partial load.

    A folder of weights dequantized from a GGUF file may still say `quantization_config: gguf` in its config.json;
    its weights are plain tensors (this never loads a GGUF file), so the mark is dropped: kept, it would make
    every later `save_pretrained` (a checkpoint's export) refuse the model as GGUF-quantized."""
    from transformers import AutoConfig, AutoModelForCausalLM

    source = paths.model_source(name_or_path)
    try:
        config = AutoConfig.from_pretrained(source)
        mark = getattr(config, "quantization_config", None)
        method = mark.get("quant_method") if isinstance(mark, dict) else getattr(mark, "quant_method", None)
        if str(getattr(method, "value", method)) == "gguf":
            del config.quantization_config
        model, info = AutoModelForCausalLM.from_pretrained(
            source, config=config, dtype=torch.float32, output_loading_info=True
        )
    except Exception as error:  # a truncated safetensors file, a broken config: say which folder
        if Path(source).is_dir():
            check_json_files(source)  # a cut-off config.json: named by itself
        raise WeightLoadError(f"{name_or_path}: cannot load the model: {error}") from None
    problems = {k: sorted(v) for k, v in info.items() if k != "error_msgs" and v} | (
        {"error_msgs": info["error_msgs"]} if info.get("error_msgs") else {}
    )
    if problems:
        raise WeightLoadError(f"{name_or_path}: weights did not load cleanly: {problems}")
    return model


def load_pretrained(
    name_or_path: str | Path,
    vocab_size: int | None = None,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
) -> PreTrainedModel:
    """Load pretrained weights and prove they loaded: every tensor matched a checkpoint key (no missing,
    unexpected or mismatched keys) and an independent second load gives the same logits on fixed inputs, so
    nothing between loading and training re-initialised a weight. Then the model goes to `device` with its
    parameters in `dtype` (`place`).

    Both loads and the logits are in fp32 in host memory, one after the other (the reference is gone before the
    model is loaded): the device only ever holds the model, once, in the dtype it trains in.

    `vocab_size`, when given, must equal the model's embedding rows: the vocabulary is never resized in CPT.
    """
    reference = load_strict(name_or_path)
    rows = reference.get_input_embeddings().weight.shape[0]
    if vocab_size is not None and rows != vocab_size:
        raise WeightLoadError(
            f"{name_or_path} has {rows} embedding rows but the plan says vocab_size={vocab_size}; "
            "continued pretraining keeps the model's vocabulary, fix model.vocab_size"
        )
    ids = prompt_batch(rows)
    with torch.no_grad():
        want = reference.eval()(input_ids=ids).logits
    del reference
    model = load_strict(name_or_path)
    with torch.no_grad():
        got = model.eval()(input_ids=ids).logits
    parity = compare_logits(got, want, tolerance="exact")
    if not parity.ok():
        raise WeightLoadError(f"{name_or_path}: the loaded model does not reproduce a fresh load: {parity}")
    return place(model, torch.device(device), dtype).train()


@torch.no_grad()
def place(
    model: torch.nn.Module, device: torch.device, dtype: torch.dtype = torch.float32
) -> torch.nn.Module:
    """`model` on `device` with its floating parameters in `dtype`, cast before they move (never a second copy of
    the model on the device); buffers (rotary tables) keep their dtype."""
    if dtype != torch.float32:
        for param in model.parameters():
            if param.is_floating_point():
                param.data = param.data.to(dtype)
    return model.to(device)
