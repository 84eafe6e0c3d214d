#!/usr/bin/env python
"""Where MCQ scoring time goes, and what sharing the prompt's forward pass across options buys (not a test).

    python benchmarks/mcq_sharing.py [--shape tiny|small|1b] [--tokenizer DIR] [--model DIR] [--items 256]
        [--shots 0 4] [--batch-sizes 1 8 32] [--device auto] [--threads N]

Items are the generated benchmarks' own MCQ items (PACUTE and hierarchical, written to a temporary folder by the
generator with seed 0, shuffled with seed 0), each prompt optionally preceded by `--shots K` solved items of the
same set (`Q: ... A: answer` lines), which is how prompts grow past the zero-shot 11–30 tokens. The model is a
randomly initialised Gemma 3 (`--shape`: tiny is the test model; small is 8 layers of width 512; 1b is
gemma-3-1b-pt's shape) over `--tokenizer` (default: the shipped sample tokenizer; the vocabulary size sets the
cost of the logits), or an exported `--model` folder. Every row prints, for one prompt length, path and batch
size: items/s, the tokens the model ran per item (padding included), and the share of time in tokenization,
collation (ids, padding, masks), the decoder, the vocabulary projection (head), log-softmax and gather, and the
rest (Python). Compare rows of one run only; the load average is printed first.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import torch

from morphcpt import paths
from morphcpt.bench.generate import main as generate_benchmarks
from morphcpt.evaluate import hf_model
from morphcpt.evaluate.hf_model import HFCausalLM
from morphcpt.evaluate.items import Item, load_benchmark
from morphcpt.evaluate.mcq import score_mcq
from morphcpt.modeling.models import GEMMA3_1B_SHAPE, save_tiny_gemma3

SHAPES = {
    "tiny": {},
    "small": dict(hidden_size=512, num_layers=8, num_heads=4, head_dim=128, intermediate_size=2048),
    "1b": dict(GEMMA3_1B_SHAPE),
}
PHASES = ("tokenize", "collate", "decoder", "head", "logsoftmax", "python")


def generated_items(work: Path) -> list[Item]:
    with contextlib.redirect_stdout(io.StringIO()):  # the generator's per-subset report
        generate_benchmarks(["--output-dir", str(work / "benchmarks"), "--seed", "0"])
    items = [
        item
        for name in ("pacute", "hierarchical")
        for subset in load_benchmark(name, "mcq", work / "benchmarks").values()
        for item in subset
    ]
    random.Random(0).shuffle(items)
    return items


def with_shots(items: list[Item], count: int, shots: int) -> list[Item]:
    """`count` items, each prompt preceded by the same `shots` solved items (taken from the front)."""
    examples, items = items[:shots], items[shots : shots + count]
    preamble = "".join(f"Q: {e.prompt_en}\nA: {e.answer}\n\n" for e in examples)
    suffix = "\nA:" if shots else ""
    return [
        Item(**{**i.__dict__, "prompt_en": preamble + ("Q: " if shots else "") + i.prompt_en + suffix})
        for i in items
    ]


class Profile:
    """Wall time per phase, by wrapping the scorer's steps and hooking the vocabulary projection (`lm_head`), with
    a device sync around each where there is a device."""

    def __init__(self, lm: HFCausalLM):
        self.lm, self.seconds, self.tokens = lm, defaultdict(float), 0
        self._wrap(lm, "encode", "tokenize")
        self._wrap(lm, "_forward", "forward", count_tokens=True)  # per option: decoder + projection
        self._wrap(lm, "_forward_hidden", "forward", count_tokens=True)  # shared: decoder
        self._wrap(lm, "_logits", "forward")  # shared: projection of the needed states
        self._wrap(lm, "_sum_logprobs", "logsoftmax")
        self._wrap(lm, "_score_batch", "per_option_batch")  # collation + forward + log-softmax
        self._wrap(hf_model.shared_prompt, "collate", "collate")
        head = lm.model.get_output_embeddings()
        head.register_forward_pre_hook(lambda *_: self._start("head"))
        head.register_forward_hook(lambda *_: self._stop("head"))
        self._started: dict[str, float] = {}

    def _start(self, phase: str) -> None:
        self._sync()
        self._started[phase] = time.perf_counter()

    def _stop(self, phase: str) -> None:
        self._sync()
        self.seconds[phase] += time.perf_counter() - self._started.pop(phase)

    def _wrap(self, owner, name: str, phase: str, count_tokens: bool = False) -> None:
        function = getattr(owner, name)

        def timed(*args, **kwargs):
            if count_tokens:
                self.tokens += kwargs["input_ids"].numel()
            self._sync()
            start = time.perf_counter()
            result = function(*args, **kwargs)
            self._sync()
            self.seconds[phase] += time.perf_counter() - start
            return result

        setattr(owner, name, timed)

    def _sync(self) -> None:
        if self.lm.device.type == "cuda":
            torch.cuda.synchronize()

    def run(self, items: list[Item]) -> tuple[float, dict[str, float], float]:
        """(seconds, seconds per phase, model tokens per item) for scoring `items` once."""
        self.seconds.clear()
        self.tokens = 0
        self._sync()
        start = time.perf_counter()
        score_mcq(self.lm, items)
        self._sync()
        total = time.perf_counter() - start
        s = self.seconds
        batch_rest = s["per_option_batch"] - s["forward"] - s["logsoftmax"] if s["per_option_batch"] else 0.0
        phases = {
            "tokenize": s["tokenize"],
            "collate": s["collate"] + max(batch_rest, 0.0),
            "decoder": s["forward"] - s["head"],
            "head": s["head"],
            "logsoftmax": s["logsoftmax"],
        }
        phases["python"] = max(total - sum(phases.values()), 0.0)
        return total, phases, self.tokens / len(items)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shape", choices=sorted(SHAPES), default="small")
    parser.add_argument("--tokenizer", type=Path, default=paths.SAMPLE_TOKENIZER_DIR)
    parser.add_argument("--model", type=Path, help="an exported HF model folder instead of a random one")
    parser.add_argument("--items", type=int, default=256)
    parser.add_argument("--shots", type=int, nargs="+", default=[0, 4])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        model_dir = args.model or save_tiny_gemma3(
            args.tokenizer, work / "model", seed=0, **SHAPES[args.shape]
        )
        lm = HFCausalLM.load(model_dir, device=args.device)
        profile = Profile(lm)
        parameters = sum(p.numel() for p in lm.model.parameters())
        print(
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; model {args.model or args.shape} "
            f"({parameters / 1e6:.1f} M parameters, vocabulary {lm.model.config.vocab_size}) on {lm.device}, "
            f"{lm.model.dtype}, attention {lm.model.config._attn_implementation}, torch threads "
            f"{torch.get_num_threads()}"
        )
        header = f"{'shots':>5} {'prompt':>6} {'path':<10} {'batch':>5} {'items/s':>8} {'tok/item':>8} "
        print(header + " ".join(f"{p:>10}" for p in PHASES) + f" {'speed-up':>8}")
        pool = generated_items(work)
        for shots in args.shots:
            items = with_shots(pool, args.items, shots)
            prompt = sum(len(lm.prefix) + len(ids) for ids in lm.encode([i.prompt() for i in items])) / len(
                items
            )
            lm.share_prompt = True
            score_mcq(lm, items[:8])  # warm-up: first-call allocations, kernel choice
            for batch_size in args.batch_sizes:
                lm.batch_size = batch_size
                rates = {}
                for path, share in (("per-option", False), ("shared", True)):
                    lm.share_prompt = share
                    seconds, phases, tokens = profile.run(items)
                    rates[path] = len(items) / seconds
                    cells = " ".join(f"{100 * phases[p] / seconds:>9.1f}%" for p in PHASES)
                    gain = f"{rates[path] / rates['per-option']:>7.2f}x" if share else ""
                    print(
                        f"{shots:>5} {prompt:>6.1f} {path:<10} {batch_size:>5} {rates[path]:>8.1f} "
                        f"{tokens:>8.1f} {cells} {gain:>8}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
