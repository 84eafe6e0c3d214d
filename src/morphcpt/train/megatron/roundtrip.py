"""The megatron path on real weights, on a CPU: Megatron-Bridge imports a Hugging Face Gemma 3 into a Megatron model,
the model runs one forward pass on the parity prompts, the import is saved as the Megatron checkpoint the
`prepare` stage writes, exported back to Hugging Face with the call `morphcpt.export` makes on the cluster
(`AutoBridge.export_ckpt`), and both ends are compared with the original: logits (HF vs Megatron, HF vs export)
and every weight tensor (original vs export).

    PYTHONPATH=src $ENV/bin/python -m morphcpt.train.megatron.roundtrip --model /work/assets/gemma3-270m \\
        --work /tmp/roundtrip [--json report.json]

`$ENV` is the Megatron-Bridge contract environment (`bash tests/cluster/build_env.sh 0.4`); where the real
Transformer Engine is missing put `tests/cluster/te_stub` on PYTHONPATH as well (Bridge imports TE unguarded). The
model is built with the TE-free Gemma 3 spec of `cpu.py`, in fp32, on one gloo process; everything else
(the provider from the HF config, the name mapping, the weight conversion both ways, the checkpoint format) is
Bridge's own. tests/cluster/test_megatron_real.py runs it when a real model folder is present.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import torch

from morphcpt.modeling.convert import megatron_logits
from morphcpt.modeling.logit_parity import compare_logits, prompt_ids


class _Clock:
    """Wall and CPU seconds of each named step (on a shared machine the two differ: CPU time is the work)."""

    def __init__(self):
        self.seconds: dict[str, dict[str, float]] = {}

    @contextmanager
    def step(self, name: str):
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        self.seconds[name] = {
            "wall": round(time.perf_counter() - wall, 1),
            "cpu": round(time.process_time() - cpu, 1),
        }


def hf_logits(folder: str | Path, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask).logits.float()


def weight_differences(original: str | Path, exported: str | Path) -> dict:
    """Max |original - exported| per tensor (in fp32) over the two folders' safetensors, and the names only one
    side holds."""
    from safetensors import safe_open

    def tensors(folder: Path) -> dict[str, tuple[Path, str]]:
        found = {}
        for path in sorted(Path(folder).glob("*.safetensors")):
            with safe_open(path, framework="pt") as handle:
                found.update({name: (path, name) for name in handle.keys()})  # noqa: SIM118 (not iterable)
        return found

    def load(where: tuple[Path, str]) -> torch.Tensor:
        with safe_open(where[0], framework="pt") as handle:
            return handle.get_tensor(where[1])

    a, b = tensors(Path(original)), tensors(Path(exported))
    per_tensor, dtypes = {}, set()
    for name in sorted(a.keys() & b.keys()):
        x, y = load(a[name]), load(b[name])
        dtypes.add(f"{x.dtype}->{y.dtype}")
        per_tensor[name] = float("inf") if x.shape != y.shape else (x.float() - y.float()).abs().max().item()
    worst = max(per_tensor, key=per_tensor.get) if per_tensor else None
    return {
        "tensors_compared": len(per_tensor),
        "only_in_original": sorted(a.keys() - b.keys()),
        "only_in_export": sorted(b.keys() - a.keys()),
        "max_abs_diff": per_tensor[worst] if worst else None,
        "worst_tensor": worst,
        "tensors_differing": sum(1 for d in per_tensor.values() if d > 0),
        "dtypes": sorted(dtypes),
    }


def import_to_megatron(
    bridge, ids: torch.Tensor, vocab_size: int, megatron_dir: Path, clock: _Clock
) -> torch.Tensor:
    """AutoBridge's import (`to_megatron_provider` + the HF weights, as `AutoBridge.import_ckpt` does) with the CPU
    spec; one forward pass; the model saved as a Megatron checkpoint (`save_megatron_model`, as import_ckpt
    saves it). Returns the logits."""
    from megatron.bridge.training.model_load_save import save_megatron_model, temporary_distributed_context

    from morphcpt.train.megatron.cpu import (
        checkpoint_io_without_cuda,
        rotary_on_cpu,
        use_cpu_spec,
        without_te_hooks,
    )

    with temporary_distributed_context(backend="gloo"), without_te_hooks():
        with clock.step("import"):
            provider = bridge.to_megatron_provider(load_weights=True)
            use_cpu_spec(provider)
            provider.finalize()
            model = provider.provide_distributed_model(wrap_with_ddp=False, use_cpu_initialization=True)
        with clock.step("megatron_forward"):
            logits = megatron_logits(rotary_on_cpu(model[0]).eval(), ids, vocab_size)
        # as import_ckpt saves: the model is freed while it is written
        with clock.step("save_megatron_checkpoint"), checkpoint_io_without_cuda():
            save_megatron_model(model, megatron_dir, hf_tokenizer_path=None, low_memory_save=True)
    return logits


def roundtrip(hf_dir: str | Path, work_dir: str | Path) -> dict:
    """HF → Megatron (logits compared) → Megatron checkpoint → HF (weights and logits compared); the report."""
    import importlib.metadata as metadata

    from megatron.bridge import AutoBridge
    from transformers import AutoTokenizer

    from morphcpt.train.megatron.cpu import without_te_hooks

    hf_dir, work_dir = Path(hf_dir), Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    megatron_dir, export_dir = work_dir / "megatron", work_dir / "hf_export"
    ids, mask = prompt_ids(AutoTokenizer.from_pretrained(hf_dir))
    clock = _Clock()
    with clock.step("hf_load_and_forward"):
        reference = hf_logits(hf_dir, ids, mask)
    with clock.step("bridge_from_hf_pretrained"):
        bridge = AutoBridge.from_hf_pretrained(str(hf_dir), torch_dtype=torch.float32)
    megatron = import_to_megatron(bridge, ids, reference.shape[-1], megatron_dir, clock)
    # export_ckpt opens its own gloo group and builds the model from the checkpoint's saved config
    with clock.step("export_ckpt"), without_te_hooks():
        bridge.export_ckpt(megatron_path=str(megatron_dir), hf_path=str(export_dir), show_progress=False)
    with clock.step("export_load_and_forward"):
        exported = hf_logits(export_dir, ids, mask)
    return {
        "model": str(hf_dir),
        "prompts": int(ids.shape[0]),
        "positions": int(mask.sum()),
        "versions": {
            name: metadata.version(name)
            for name in ("megatron-bridge", "megatron-core", "torch", "transformers")
        },
        "import_parity": compare_logits(megatron, reference, tolerance="bf16", mask=mask).as_dict(),
        "export_weights": weight_differences(hf_dir, export_dir),
        "export_parity": compare_logits(exported, reference, tolerance="bf16", mask=mask).as_dict(),
        "megatron_vs_export_parity": compare_logits(
            megatron, exported, tolerance="bf16", mask=mask
        ).as_dict(),
        "seconds": clock.seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="Hugging Face Gemma 3 folder (weights + tokenizer)")
    parser.add_argument("--work", required=True, help="folder for the Megatron checkpoint and the export")
    parser.add_argument("--json", default=None, help="also write the report here")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    report = roundtrip(args.model, args.work)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
