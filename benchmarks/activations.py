"""What one token keeps for backward in one Gemma 3 decoder layer, measured (not a test): the coefficients of the
memory planner's `memory_hf.LAYER_BYTES`, refitted from the real layer on this machine.

    python benchmarks/activations.py                  # every numerics mode, ~10 min on a busy 2-core CPU
    python benchmarks/activations.py --modes bf16-compiled autocast

For each numerics mode (fp32; fp32 weights under bf16 autocast; bf16 weights; each eager or `torch.compile`d per
layer, as the hf engine runs them) and each of five shapes (gemma-3-1b-pt's layer, then half the MLP width, a
smaller hidden size, twice the query heads, twice the KV heads) it runs a 2-layer model's forward pass at two
sequence lengths and reads, from the torch profiler's memory events, the bytes still allocated after it (the
tensors autograd saved, less the output). The slope over the sequence lengths is the bytes per token; the same at
2 and 4 layers separates what each layer keeps from what the model keeps once per token (the embedding's output,
the rotary tables). A linear fit over the shapes gives bytes per hidden unit, per q width (heads x head_dim), per
kv width and per MLP width, plus a constant. The planner's table is printed beside it; a difference above 2 % at
gemma-3-1b's layer is flagged.

Attention runs through SDPA without a mask (the layers' window exceeds the sequence), so the CPU kernel keeps
what a GPU's flash kernel keeps: q, k, v, the output and a log-sum-exp.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from morphcpt.modeling.models import build_model, tiny_config
from morphcpt.train.hf.parallel import decoder_layers
from morphcpt.train.memory import hf

BASE = {"hidden_size": 1152, "num_heads": 4, "num_kv_heads": 1, "head_dim": 256, "intermediate_size": 6912}
SHAPES = [
    BASE,
    {**BASE, "intermediate_size": 3456},
    {**BASE, "hidden_size": 768},
    {**BASE, "num_heads": 8},
    {**BASE, "num_kv_heads": 2},
]
MODES = ["fp32", "autocast", "bf16", "autocast-compiled", "bf16-compiled"]
LAYERS = (2, 4)


def live_bytes_after_forward(mode: str, shape: dict, seq: int, layers: int) -> int:
    config = tiny_config(
        512, num_layers=layers, sliding_window=4096, global_every=2, max_position_embeddings=4096, **shape
    )
    config._attn_implementation = "sdpa"
    model = build_model(config, seed=0)
    if mode.startswith("bf16"):
        model = model.to(torch.bfloat16)
    if mode.endswith("compiled"):
        torch._dynamo.reset()
        for layer in decoder_layers(model):
            layer.compile()
    autocast = mode.startswith("autocast")
    ids = torch.randint(0, 512, (1, seq))

    def forward():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            return model.model(input_ids=ids, use_cache=False).last_hidden_state

    forward().float().sum().backward()  # compile, and create what the first pass creates once
    model.zero_grad(set_to_none=True)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = forward()
    live = sum(e.nbytes() for e in prof.profiler.kineto_results.events() if e.name() == "[memory]")
    return live - out.numel() * out.element_size()


def per_token(mode: str, shape: dict, seqs: tuple[int, int]) -> tuple[float, float]:
    """(bytes per token per layer, bytes per token outside the layers)."""
    slopes = []
    for layers in LAYERS:
        low, high = (live_bytes_after_forward(mode, shape, s, layers) for s in seqs)
        slopes.append((high - low) / (seqs[1] - seqs[0]))
    per_layer = (slopes[1] - slopes[0]) / (LAYERS[1] - LAYERS[0])
    return per_layer, slopes[0] - LAYERS[0] * per_layer


def fit(rows: list[tuple[dict, float]]) -> list[float]:
    """Least squares of bytes per token on (hidden, q width, kv width, MLP width, 1)."""
    a = np.array(
        [
            [
                s["hidden_size"],
                s["num_heads"] * s["head_dim"],
                s["num_kv_heads"] * s["head_dim"],
                s["intermediate_size"],
                1,
            ]
            for s, _ in rows
        ],
        dtype=float,
    )
    b = np.array([value for _, value in rows])
    return np.linalg.lstsq(a, b, rcond=None)[0].tolist()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=MODES)
    parser.add_argument("--seqs", nargs=2, type=int, default=(128, 256))
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    torch.manual_seed(0)
    report = {}
    for mode in args.modes:
        measured = [(shape, per_token(mode, shape, tuple(args.seqs))) for shape in SHAPES]
        rows = [(shape, layer) for shape, (layer, _) in measured]
        coefficients = fit(rows)
        outside = measured[0][1][1]
        planned = hf.LAYER_BYTES.get(mode)
        shape = hf.Shape(
            params=0,
            embedding=0,
            layer_params=0,
            layers=1,
            hidden=BASE["hidden_size"],
            intermediate=BASE["intermediate_size"],
            heads=BASE["num_heads"],
            kv_heads=BASE["num_kv_heads"],
            head_dim=BASE["head_dim"],
            vocab=0,
            lora=0,
        )
        measured_1b = rows[0][1]
        planned_1b = hf.layer_bytes(shape, mode) if planned else None
        flag = "" if planned_1b and abs(planned_1b / measured_1b - 1) <= 0.02 else "  <-- differs"
        print(
            f"{mode:18} per token per layer at gemma-3-1b's layer: measured {measured_1b:9.0f} B, planner "
            f"{planned_1b or float('nan'):9.0f} B{flag}\n{'':18} fit: {coefficients[0]:.2f} h + {coefficients[1]:.2f} q "
            f"+ {coefficients[2]:.2f} kv + {coefficients[3]:.2f} ffn + {coefficients[4]:.0f}; planner: {planned}; "
            f"outside the layers {outside:.0f} B per token",
            flush=True,
        )
        report[mode] = {
            "measured_1b_layer": measured_1b,
            "outside_layers": outside,
            "fit": coefficients,
            "planner": planned,
        }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
