"""`HFCausalLM` greedy generation that drops finished rows: token for token what `model.generate` writes on a
left-padded batch whose rows stop at different steps (at `<eos>`, at the end of their first line, at
`max_new_tokens`), past the sliding window, and the model really sees the batch shrink as rows finish."""

from __future__ import annotations

import pytest
import torch

from morphcpt.evaluate.answers import first_line

PROMPTS = [
    "Ang mga bata ay naglalaro sa labas ng bahay habang umuulan ng malakas sa buong lungsod ng Maynila ngayong hapon",
    "Kumain ka na",
    "Magandang umaga po sa inyong lahat",
    "x",
    "Ang pusa ay natutulog sa ilalim ng mesa",
    "Bakit",
    "Isa dalawa tatlo apat lima anim pito walo siyam sampu",
    "Mahal kita",
]
MAX_NEW = 24


@pytest.fixture(scope="module")
def tokenizer(sample_tokenizer_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(sample_tokenizer_dir)


@pytest.fixture(scope="module")
def stopping_gemma3(tokenizer):
    """The tiny random Gemma 3 (sliding window 32) with the newline tokens' and `<eos>`'s embedding rows scaled up
    (tied to the output layer): its rows end their first line, or write `<eos>`, at different steps."""
    from morphcpt.modeling.models import build_model, tiny_config

    model = build_model(tiny_config(len(tokenizer)), seed=0)
    newlines = [i for i in range(len(tokenizer)) if "\n" in tokenizer.decode([i])]
    with torch.no_grad():
        model.get_input_embeddings().weight[newlines] *= 2
        model.get_input_embeddings().weight[tokenizer.eos_token_id] *= 3
    return model.eval()


def lm_for(model, tokenizer, *, drop_finished: bool, batch_size: int = 8):
    from morphcpt.evaluate.hf_model import HFCausalLM

    return HFCausalLM(model, tokenizer, batch_size=batch_size, drop_finished=drop_finished)


def reference_ids(lm, prompts: list[str], max_new_tokens: int) -> list[list[int]]:
    """Each prompt's new ids from `model.generate`, one left-padded batch, no stop rule but `max_new_tokens`."""
    rows = [lm.prefix + ids for ids in lm.encode(prompts)]
    input_ids, mask = lm._left_padded(rows)
    output = lm.model.generate(
        input_ids=input_ids,
        attention_mask=mask,
        max_new_tokens=max_new_tokens,
        do_sample=False,
        temperature=None,
        top_p=None,
        top_k=None,
        eos_token_id=None,
        pad_token_id=lm.pad_id,
    )
    return output[:, input_ids.shape[1] :].tolist()


def stop_lengths(tokenizer, ids: list[list[int]]) -> tuple[list[int], list[str]]:
    """How many new ids each row keeps under the stop rule, and why it stopped (`eos`, `line` or `max`)."""
    lengths, reasons = [], []
    for row in ids:
        stop = (len(row), "max")
        for n in range(1, len(row) + 1):
            if row[n - 1] == tokenizer.eos_token_id:
                stop = (n, "eos")
            elif first_line(tokenizer.decode(row[:n], skip_special_tokens=True))[1]:
                stop = (n, "line")
            if stop[0] == n:
                break
        lengths.append(stop[0])
        reasons.append(stop[1])
    return lengths, reasons


def test_rows_stop_at_eos_at_the_line_end_and_at_max_new_tokens_at_different_steps(
    stopping_gemma3, tokenizer
):
    # The batch the other tests rely on: every way of stopping, at several steps, past the sliding window.
    lm = lm_for(stopping_gemma3, tokenizer, drop_finished=True)
    lengths, reasons = stop_lengths(tokenizer, reference_ids(lm, PROMPTS, MAX_NEW))
    assert {"eos", "line", "max"} <= set(reasons)
    assert len(set(lengths)) >= 4
    longest = max(len(ids) for ids in lm.encode(PROMPTS)) + 1
    assert longest + MAX_NEW > stopping_gemma3.config.sliding_window > longest // 2


@pytest.mark.parametrize("max_new_tokens", [1, 3, MAX_NEW])
@pytest.mark.parametrize("batch_size", [3, 8])
def test_dropping_finished_rows_writes_what_model_generate_writes(
    stopping_gemma3, tokenizer, max_new_tokens, batch_size
):
    compact = lm_for(stopping_gemma3, tokenizer, drop_finished=True, batch_size=batch_size)
    through_hf = lm_for(stopping_gemma3, tokenizer, drop_finished=False, batch_size=batch_size)
    texts = compact.generate(PROMPTS, max_new_tokens=max_new_tokens)
    assert texts == through_hf.generate(PROMPTS, max_new_tokens=max_new_tokens)
    # and token for token the greedy ids, cut where the stop rule cuts them
    ids = reference_ids(compact, PROMPTS, max_new_tokens)
    lengths, _ = stop_lengths(tokenizer, ids)
    expected = [
        tokenizer.decode(row[:n], skip_special_tokens=True) for row, n in zip(ids, lengths, strict=True)
    ]
    assert texts == expected


def test_the_model_sees_only_the_rows_still_writing(stopping_gemma3, tokenizer):
    lm = lm_for(stopping_gemma3, tokenizer, drop_finished=True)
    seen: list[int] = []
    hook = stopping_gemma3.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        lm.generate(PROMPTS, max_new_tokens=MAX_NEW)
    finally:
        hook.remove()
    lengths, _ = stop_lengths(tokenizer, reference_ids(lm, PROMPTS, MAX_NEW))
    assert seen == [sum(n > step for n in lengths) for step in range(max(lengths))]
    assert seen[0] == len(PROMPTS) and seen[-1] < len(PROMPTS)


def test_a_model_without_sliding_layers_drops_rows_the_same_way(tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    model = LlamaForCausalLM(config).eval()
    texts = lm_for(model, tokenizer, drop_finished=True, batch_size=4).generate(PROMPTS, max_new_tokens=12)
    assert texts == lm_for(model, tokenizer, drop_finished=False, batch_size=4).generate(
        PROMPTS, max_new_tokens=12
    )
    assert any(texts)
