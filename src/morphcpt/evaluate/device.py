"""Where and in what precision a model scores: the device ("auto": the GPU when there is one) and the precision
("auto": bf16 on a GPU, fp32 on a CPU). Torch only, so the evaluation's settings (a result records its precision)
need no transformers: a rerun that finds every task done loads neither a model nor that library.

    resolve_device("auto")                   # torch.device("cuda") or torch.device("cpu")
    DTYPES[scoring_dtype("cpu", "auto")]     # torch.float32
"""

from __future__ import annotations

import torch

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def scoring_dtype(device: str | torch.device = "auto", dtype: str = "auto") -> str:
    """ "bf16" or "fp32": `dtype`, or for "auto" what `device` scores in (bf16 on a GPU, fp32 on a CPU)."""
    if dtype != "auto":
        return dtype
    return "bf16" if resolve_device(device).type == "cuda" else "fp32"
