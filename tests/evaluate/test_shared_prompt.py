"""Prompt sharing in MCQ scoring (`evaluate.shared_prompt`): one row per prompt with every option after it must
give the log-likelihoods and predictions of one row per option, through Gemma 3's sliding-window layers, at a
token-merging prompt/option boundary, with duplicated options and prompts, and where context must be truncated;
models it does not support fall back to one row per option."""

from __future__ import annotations

from pathlib import Path

import pytest

from morphcpt.evaluate.items import load_file
from morphcpt.evaluate.mcq import mcq_requests, score_mcq
from morphcpt.evaluate.shared_prompt import group_rows
from suite_paths import DATA

SLIDING_WINDOW = 8


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, sample_tokenizer_dir) -> Path:
    """Tiny random Gemma 3 whose sliding window (8 tokens) is shorter than every fixture prompt."""
    from morphcpt.modeling.models import save_tiny_gemma3

    return save_tiny_gemma3(
        sample_tokenizer_dir,
        tmp_path_factory.mktemp("shared") / "model",
        seed=1,
        num_layers=2,
        num_heads=2,
        intermediate_size=128,
        sliding_window=SLIDING_WINDOW,
    )


def load_lm(model_dir: Path, attention: str = "sdpa", batch_size: int = 4):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from morphcpt.evaluate.hf_model import HFCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation=attention)
    return HFCausalLM(model, AutoTokenizer.from_pretrained(model_dir), batch_size=batch_size)


@pytest.fixture(scope="module")
def items():
    files = [
        ("pacute", "affixation"),
        ("pacute", "syllabification"),
        ("pacute", "stress"),
        ("langgame", "langgame"),  # options joined without a separator (multi-digit addition's prompts are
        # shorter than the sliding window this test needs)
        ("hierarchical", "hierarchical"),
    ]
    found = [(DATA / "official" / f"{name}_mcq.jsonl", benchmark) for benchmark, name in files]
    return [item for path, benchmark in found for item in load_file(path, benchmark, "mcq")]


def both_ways(lm, requests):
    """(per-option rows, shared rows, rows the model saw in the shared pass)."""
    seen = []  # the decoder runs in both paths (the shared one projects to the vocabulary itself)
    hook = lm.model.model.register_forward_pre_hook(
        lambda _, args, kwargs: seen.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        lm.share_prompt = False
        separate = lm.loglikelihood(requests)
        seen.clear()
        lm.share_prompt = True
        shared = lm.loglikelihood(requests)
    finally:
        hook.remove()
    return separate, shared, sum(seen)


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_shared_prompts_give_the_log_likelihoods_of_one_row_per_option(model_dir, items, attention):
    lm = load_lm(model_dir, attention)
    requests = [r for item in items for r in mcq_requests(item)]
    assert min(len(lm.encode([c])[0]) for c, _ in requests) > SLIDING_WINDOW  # local layers drop old tokens
    separate, shared, rows = both_ways(lm, requests)
    assert rows == len({c for c, _ in requests}) < len(requests)  # the prompt really ran once
    assert shared == pytest.approx(separate, abs=1e-4, rel=0)


def test_shared_prompts_predict_what_one_row_per_option_predicts(model_dir, items):
    lm = load_lm(model_dir, batch_size=3)
    lm.share_prompt = False
    separate = score_mcq(lm, items)
    lm.share_prompt = True
    shared = score_mcq(lm, items)
    assert [(p.pred, p.pred_norm, p.acc, p.acc_norm) for p in shared] == [
        (p.pred, p.pred_norm, p.acc, p.acc_norm) for p in separate
    ]
    for a, b in zip(shared, separate, strict=True):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4, rel=0)


def test_a_merging_boundary_keeps_context_and_continuation_tokens_apart(model_dir):
    """'...ma' + 'ganda' encodes as other tokens joined; both paths score 'ganda''s own tokens after the context's
    own tokens, exactly as one sequence `<bos> + encode(context) + encode(continuation)` does."""
    import torch

    lm = load_lm(model_dir)
    context = "Ano ang salitang nabubuo sa pagdaragdag ng unlaping ma sa ganda? Sagot: ma"
    continuations = ["ganda", "gandahan", " maganda", "ganda"]
    assert lm.encode([context + "ganda"])[0] != lm.encode([context])[0] + lm.encode(["ganda"])[0]
    separate, shared, _ = both_ways(lm, [(context, c) for c in continuations])
    prompt = lm.prefix + lm.encode([context])[0]
    for continuation, value in zip(continuations, shared, strict=True):
        target = lm.encode([continuation])[0]
        with torch.no_grad():
            logprobs = lm.model(input_ids=torch.tensor([prompt + target])).logits[0].log_softmax(-1)
        reference = sum(logprobs[len(prompt) - 1 + j, t].item() for j, t in enumerate(target))
        assert value == pytest.approx(reference, abs=1e-4)
    assert shared == pytest.approx(separate, abs=1e-4, rel=0)
    assert shared[0] == shared[3]  # a repeated option is scored once and given to both


def test_requests_that_need_truncation_keep_the_per_option_path(model_dir, items):
    lm = load_lm(model_dir)
    requests = [r for item in items[:6] for r in mcq_requests(item)]
    lengths = sorted(len(lm.prefix + lm.encode([c + k])[0]) for c, k in requests)
    lm.max_length = lengths[len(lengths) // 2]  # about half the requests lose their oldest context tokens
    separate, shared, rows = both_ways(lm, requests)
    assert 0 < rows < len(requests)
    assert shared == pytest.approx(separate, abs=1e-4, rel=0)


def test_a_model_without_tree_masks_is_scored_one_row_per_option(tmp_path, sample_tokenizer_dir):
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from morphcpt.evaluate.hf_model import HFCausalLM

    tokenizer = AutoTokenizer.from_pretrained(sample_tokenizer_dir)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    lm = HFCausalLM(LlamaForCausalLM(config), tokenizer, batch_size=4)
    requests = [("Ano ang ugat ng kumain?", " kain"), ("Ano ang ugat ng kumain?", " um")]
    separate, shared, rows = both_ways(lm, requests)
    assert rows == len(requests) and shared == separate


def test_rows_group_identical_prompts_score_repeated_options_once_and_stay_bounded():
    prompts = [[2, 5, 6]] * 5 + [[2, 7]]
    continuations = [[9], [10, 11], [9], [12], [13], [9]]
    rows = group_rows(prompts, continuations, range(6), max_continuations=2)
    assert [(r.prompt, r.continuations, r.owners) for r in rows] == [
        ([2, 5, 6], [[9], [10, 11]], [[0, 2], [1]]),
        ([2, 5, 6], [[12], [13]], [[3], [4]]),
        ([2, 7], [[9]], [[5]]),
    ]


@pytest.mark.parametrize(("flag", "expected"), [([], True), (["--no-share-prompt"], False)])
def test_the_command_line_switch_reaches_the_loaded_model(model_dir, flag, expected):
    from morphcpt.evaluate.runner import build_parser, config_from_args, load_hf_model, model_specs

    cfg = config_from_args(build_parser().parse_args(["--models", str(model_dir), "--device", "cpu", *flag]))
    assert load_hf_model(model_specs(cfg.models)[0], cfg).share_prompt is expected


@pytest.mark.parametrize("share", [True, False])
def test_a_continuation_with_nothing_before_it_is_refused_on_either_path(model_dir, share):
    lm = load_lm(model_dir)
    lm.share_prompt, lm.prefix = share, []  # a tokenizer with neither <bos> nor <eos>
    with pytest.raises(ValueError, match="at least one token before it"):
        lm.loglikelihood([("Q", " a"), ("", " a")])
    with pytest.raises(ValueError, match="encodes to no tokens"):
        lm.loglikelihood([("Q", "")])
