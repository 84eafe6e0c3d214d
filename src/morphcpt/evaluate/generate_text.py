"""Generate text with an exported causal language model: prompts from the command line or a file, or an
interactive session that streams tokens as they come. Works on CPU; prints tokens/s.

    python scripts/generate_text.py --model outputs/scratch/exports/scratch-tiny --prompt "Ang mga" \
        [--max-new-tokens 64] [--temperature 0.8] [--top-k 50] [--top-p 0.95] [--repetition-penalty 1.1] \
        [--seed 0] [--batch-size 8] [--device auto] [--threads N]
    morphcpt generate --model DIR --prompts-file prompts.txt      # one prompt per line
    morphcpt generate --model DIR --interactive                   # type a prompt, get a streamed continuation

`--temperature 0` decodes greedily (top-k/top-p then do nothing). Every prompt starts with the tokenizer's
`<bos>`, as in training. The same seed, prompts and batch size give the same text. The folder must hold a causal
LM (a `config.json` whose model type transformers can load with `AutoModelForCausalLM`) and its tokenizer, as
`morphcpt export` writes; anything else is refused with the reason.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import torch

from morphcpt.evaluate.device import DTYPES, resolve_device, scoring_dtype


class NotACausalLM(ValueError):
    """The --model folder is missing, or holds no causal language model and tokenizer."""


@dataclass
class SamplingConfig:
    max_new_tokens: int = 64
    temperature: float = 0.8  # 0: greedy
    top_k: int = 50  # 0: no top-k cut
    top_p: float = 0.95
    repetition_penalty: float = 1.0
    seed: int = 0

    def generate_kwargs(self) -> dict:
        if self.max_new_tokens < 1:
            raise ValueError(f"--max-new-tokens must be at least 1, got {self.max_new_tokens}")
        if self.temperature < 0 or not 0 < self.top_p <= 1 or self.top_k < 0 or self.repetition_penalty <= 0:
            raise ValueError("need temperature >= 0, 0 < top_p <= 1, top_k >= 0 and repetition_penalty > 0")
        sampling = self.temperature > 0
        return {
            "max_new_tokens": self.max_new_tokens,
            "do_sample": sampling,
            "temperature": self.temperature if sampling else None,
            "top_k": (self.top_k or None) if sampling else None,
            "top_p": self.top_p if sampling else None,
            "repetition_penalty": self.repetition_penalty,
        }


@dataclass
class Generation:
    prompt: str
    text: str  # the continuation only
    new_tokens: int


def check_causal_lm(folder: str | Path) -> Path:
    """The folder, if it holds a causal LM config and a tokenizer; else NotACausalLM saying what is wrong."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    path = Path(folder)
    if not path.is_dir():
        raise NotACausalLM(f"--model {path}: no such folder")
    if not (path / "config.json").exists():
        raise NotACausalLM(
            f"--model {path}: not a model folder (no config.json); give a Hugging Face folder, "
            "e.g. one written by `morphcpt export`"
        )
    config = AutoConfig.from_pretrained(path)
    if config.model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        architectures = ", ".join(getattr(config, "architectures", None) or []) or "unknown architecture"
        raise NotACausalLM(
            f"--model {path}: holds a {config.model_type!r} model ({architectures}), not a causal language "
            "model; text generation needs one (e.g. Gemma3ForCausalLM)"
        )
    if not any(
        (path / name).exists() for name in ("tokenizer.json", "tokenizer.model", "tokenizer_config.json")
    ):
        raise NotACausalLM(f"--model {path}: no tokenizer files beside the model")
    return path


def context_length(folder: str | Path) -> int | None:
    """The model's context in positions (`max_position_embeddings` in its config), or None when it sets none."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(folder)
    config = getattr(config, "text_config", None) or config
    return getattr(config, "max_position_embeddings", None)


def check_new_tokens(max_new_tokens: int, context: int | None) -> None:
    """Refuse more new tokens than the model's context can hold after a one-token prompt (`<bos>`)."""
    if context and max_new_tokens >= context:
        raise ValueError(
            f"--max-new-tokens {max_new_tokens} is more than the model can generate: its context is {context} "
            f"positions (max_position_embeddings in its config.json), so at most {context - 1} new tokens after "
            "the shortest prompt; ask for fewer"
        )


class TextGenerator:
    """A causal LM and its tokenizer, ready to continue prompts in batches or one at a time, streamed.

    The prompt and its continuation must fit the model's context (`max_position_embeddings`): a prompt that
    fills it alone is refused, and a continuation that would run past it is shortened to what fits, with a note
    on `notes` (stderr)."""

    def __init__(self, model, tokenizer) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"  # every row's next token follows its own last token
        self.device = next(model.parameters()).device
        self.pad_id = next(i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id, 0) if i is not None)
        self.max_length = getattr(model.config, "max_position_embeddings", None)
        self.notes: TextIO = sys.stderr

    @classmethod
    def load(cls, folder: str | Path, device: str = "auto") -> TextGenerator:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = check_causal_lm(folder)
        target = resolve_device(device)
        if target.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"--device {device}: no CUDA GPU is available here (use --device auto or cpu)")
        dtype = DTYPES[scoring_dtype(target)]
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(target)
        return cls(model, AutoTokenizer.from_pretrained(path))

    def _inputs(self, prompts: Sequence[str], max_new_tokens: int) -> tuple[dict, int]:
        """The encoded (left-padded) prompts and how many new tokens fit after them in the model's context."""
        encoded = self.tokenizer(list(prompts), return_tensors="pt", padding=True)
        length = encoded["input_ids"].shape[1]
        if self.max_length and length >= self.max_length:
            raise ValueError(
                f"the prompt has {length} tokens; the model's context is {self.max_length} positions, so nothing "
                "can follow it: shorten the prompt"
            )
        if self.max_length and length + max_new_tokens > self.max_length:
            fits = self.max_length - length
            self.notes.write(
                f"note: {length} prompt tokens + {max_new_tokens} new tokens would pass the model's context of "
                f"{self.max_length} positions: generating at most {fits} new tokens\n"
            )
            max_new_tokens = fits
        return {k: v.to(self.device) for k, v in encoded.items()}, max_new_tokens

    def _new_token_counts(self, new: torch.Tensor) -> list[int]:
        """Tokens generated per row: up to and including the first eos (what follows is padding)."""
        counts = []
        for row in new.tolist():
            eos = self.tokenizer.eos_token_id
            counts.append(row.index(eos) + 1 if eos in row else len(row))
        return counts

    @torch.inference_mode()
    def generate(
        self, prompts: Sequence[str], sampling: SamplingConfig, batch_size: int = 8
    ) -> list[Generation]:
        if batch_size < 1:
            raise ValueError(f"--batch-size must be at least 1, got {batch_size}")
        kwargs = sampling.generate_kwargs()
        torch.manual_seed(sampling.seed)
        results = []
        for start in range(0, len(prompts), batch_size):
            batch = list(prompts[start : start + batch_size])
            inputs, max_new = self._inputs(batch, sampling.max_new_tokens)
            output = self.model.generate(
                **inputs,
                **{**kwargs, "max_new_tokens": max_new},
                pad_token_id=self.pad_id,
                eos_token_id=self.tokenizer.eos_token_id,
            )
            new = output[:, inputs["input_ids"].shape[1] :]
            texts = self.tokenizer.batch_decode(new, skip_special_tokens=True)
            for prompt, text, count in zip(batch, texts, self._new_token_counts(new), strict=True):
                results.append(Generation(prompt, text, count))
        return results

    @torch.inference_mode()
    def stream(
        self, prompt: str, sampling: SamplingConfig, out: TextIO, echo_prompt: bool = False
    ) -> Generation:
        """Continue one prompt, writing text to `out` as tokens come (after the prompt, with `echo_prompt`);
        returns the whole continuation."""
        from transformers import TextStreamer

        class _Writer(TextStreamer):
            def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
                out.write(text)
                out.flush()

        torch.manual_seed(sampling.seed)
        inputs, max_new = self._inputs([prompt], sampling.max_new_tokens)
        if echo_prompt:
            out.write(prompt)
        streamer = _Writer(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
        output = self.model.generate(
            **inputs,
            **{**sampling.generate_kwargs(), "max_new_tokens": max_new},
            pad_token_id=self.pad_id,
            eos_token_id=self.tokenizer.eos_token_id,
            streamer=streamer,
        )
        new = output[:, inputs["input_ids"].shape[1] :]
        text = self.tokenizer.decode(new[0], skip_special_tokens=True)
        return Generation(prompt, text, self._new_token_counts(new)[0])


def read_prompts(path: Path) -> list[str]:
    """One prompt per line; blank lines are skipped."""
    prompts = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not prompts:
        raise ValueError(f"{path}: no prompts (one per line)")
    return prompts


def _rate(tokens: int, seconds: float) -> str:
    return f"[{tokens} tokens in {seconds:.2f}s: {tokens / max(seconds, 1e-9):.1f} tokens/s]"


def interactive(
    generator: TextGenerator, sampling: SamplingConfig, stdin: TextIO, out: TextIO, err: TextIO
) -> None:
    err.write("type a prompt and press Enter (an empty line or Ctrl-D ends)\n")
    while True:
        err.write("> ")
        err.flush()
        line = stdin.readline()
        if not line or not line.strip():
            break
        prompt = line.rstrip("\n")
        tic = time.perf_counter()
        try:
            result = generator.stream(prompt, sampling, out, echo_prompt=True)
        except ValueError as error:  # a prompt too long for the model: say so, and wait for the next one
            err.write(f"{error}\n")
            continue
        out.write("\n")
        err.write(_rate(result.new_tokens, time.perf_counter() - tic) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="generate_text", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="a Hugging Face causal LM folder")
    parser.add_argument("--prompt", action="append", default=[], help="a prompt (repeat for several)")
    parser.add_argument("--prompts-file", type=Path, default=None, help="one prompt per line")
    parser.add_argument(
        "--interactive", action="store_true", help="read prompts from stdin, stream the output"
    )
    defaults = SamplingConfig()
    parser.add_argument("--max-new-tokens", type=int, default=defaults.max_new_tokens)
    parser.add_argument("--temperature", type=float, default=defaults.temperature, help="0: greedy")
    parser.add_argument("--top-k", type=int, default=defaults.top_k, help="0: no top-k cut")
    parser.add_argument("--top-p", type=float, default=defaults.top_p)
    parser.add_argument("--repetition-penalty", type=float, default=defaults.repetition_penalty)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--device", default="auto", help="auto (GPU if there is one), cpu, cuda, cuda:1, ...")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="CPU threads (on a busy machine 1 can be several times faster)",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.threads is not None:
        torch.set_num_threads(max(args.threads, 1))
    prompts = list(args.prompt)
    try:
        if args.prompts_file is not None:
            prompts += read_prompts(args.prompts_file)
        if not prompts and not args.interactive:
            parser.error("give --prompt TEXT, --prompts-file FILE or --interactive")
        sampling = SamplingConfig(
            args.max_new_tokens, args.temperature, args.top_k, args.top_p, args.repetition_penalty, args.seed
        )
        sampling.generate_kwargs()  # checks the values before the model loads
        check_new_tokens(sampling.max_new_tokens, context_length(check_causal_lm(args.model)))
        generator = TextGenerator.load(args.model, args.device)
    except (NotACausalLM, ValueError, OSError) as err:
        parser.exit(2, f"generate_text: error: {err}\n")
    if prompts:
        tic = time.perf_counter()
        try:
            results = generator.generate(prompts, sampling, args.batch_size)
        except ValueError as err:  # a prompt longer than the model's context
            parser.exit(2, f"generate_text: error: {err}\n")
        elapsed = time.perf_counter() - tic
        for result in results:
            print(f"{result.prompt}{result.text}\n", flush=True)
        print(_rate(sum(r.new_tokens for r in results), elapsed) + f" on {generator.device}", file=sys.stderr)
    if args.interactive:
        try:
            interactive(generator, sampling, sys.stdin, sys.stdout, sys.stderr)
        except KeyboardInterrupt:  # Ctrl-C ends the session, not with a traceback
            print(file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
