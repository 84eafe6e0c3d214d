"""Gemma 3 weights between Hugging Face and Megatron, both ways, with Megatron-Bridge's AutoBridge, and the logit check
that proves a conversion (the same fixed prompts, bf16 tolerance):

    hf_to_megatron(pretrained, folder)               # the prepare stage's import (`prepare.import_weights`)
    megatron_hf_parity(reference, folder, hf, tok)   # the prepare stage's verification; the export's check
    megatron_to_hf(plan, checkpoint, staging)        # the export of a megatron run (`morphcpt.export`)

All three run on one GPU inside the NeMo container; `morphcpt.train.megatron.roundtrip` runs the same import,
forward (`megatron_logits`) and export on a CPU with a TE-free spec. The conversion lives here, below `train`, because
both the megatron engine's prepare stage and `morphcpt.export` use it.
"""

from __future__ import annotations

import os
from pathlib import Path

from morphcpt.plan.schema import CPTPlan


def hf_to_megatron(pretrained: str, megatron_path: Path) -> None:
    """Import the HF checkpoint `pretrained` (a folder or Hub id) into Megatron format at `megatron_path`, in bf16."""
    import torch
    from megatron.bridge import AutoBridge

    AutoBridge.import_ckpt(
        hf_model_id=pretrained, megatron_path=str(megatron_path), torch_dtype=torch.bfloat16
    )


def megatron_to_hf(plan: CPTPlan, checkpoint: Path, staging: Path) -> dict:
    """Megatron checkpoint -> a Hugging Face folder `staging` (weights and tokenizer), with the parity of the two
    (`morphcpt.export` publishes it; GPU + NeMo container)."""
    import torch
    from megatron.bridge import AutoBridge
    from transformers import AutoTokenizer

    bridge = AutoBridge.from_hf_pretrained(plan.model.pretrained, torch_dtype=torch.bfloat16)
    bridge.export_ckpt(megatron_path=str(checkpoint), hf_path=str(staging))
    tokenizer_dir = plan.model.tokenizer or plan.model.pretrained
    AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(staging)
    parity = megatron_hf_parity(plan.model.pretrained, checkpoint, str(staging), tokenizer_dir)
    return parity.check("export vs Megatron checkpoint").as_dict()


def megatron_logits(model, ids, vocab_size: int):
    """A Megatron GPT model's logits [batch, seq, vocab] for right-padded `ids` (causal attention, so padding
    never reaches an earlier position), cut to the HF vocabulary (Megatron may pad the rows)."""
    import torch

    positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
    with torch.no_grad():
        logits = model(input_ids=ids, position_ids=positions, attention_mask=None)
    return logits[..., :vocab_size].float()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _init_single_process() -> None:
    import torch

    if not torch.distributed.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        # a port the OS says is free, not a fixed one: two jobs' prepare stages may share a node
        os.environ.setdefault("MASTER_PORT", str(_free_port()))
        torch.distributed.init_process_group("nccl", rank=0, world_size=1)
        torch.cuda.set_device(0)


def megatron_hf_parity(hf_reference: str, megatron_dir: Path, hf_dir: str, tokenizer_dir: str):
    """LogitParity ("bf16") of the Megatron checkpoint `megatron_dir` against the HF model `hf_dir` on the fixed
    prompts (one GPU; `hf_reference` tells AutoBridge the architecture)."""
    import torch
    from megatron.bridge import AutoBridge
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from morphcpt.modeling.logit_parity import compare_logits, prompt_ids

    _init_single_process()
    ids, mask = (t.cuda() for t in prompt_ids(AutoTokenizer.from_pretrained(tokenizer_dir)))
    bridge = AutoBridge.from_hf_pretrained(hf_reference, torch_dtype=torch.bfloat16)
    megatron_model = bridge.load_megatron_model(str(megatron_dir), wrap_with_ddp=False)[0].cuda().eval()
    hf_model = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.bfloat16).cuda().eval()
    with torch.no_grad():
        hf_logits = hf_model(input_ids=ids, attention_mask=mask).logits
    # the same forward as the CPU round trip's
    megatron = megatron_logits(megatron_model, ids, hf_logits.shape[-1])
    return compare_logits(megatron, hf_logits, tolerance="bf16", mask=mask)
