"""Text generation with an exported model (the tiny random Gemma 3): greedy and sampled decoding are reproducible,
batching and streaming change nothing, the sampling options act, and a folder without a causal LM is refused."""

from __future__ import annotations

import io
import json

import pytest
import torch

from morphcpt.evaluate.generate_text import (
    NotACausalLM,
    SamplingConfig,
    TextGenerator,
    check_causal_lm,
    interactive,
    main,
)

PROMPTS = ["Ang mga bata ay", "Kumain ka na", "Magandang umaga po sa inyong lahat", ""]


@pytest.fixture(scope="module")
def generator(tiny_gemma3):
    return TextGenerator.load(tiny_gemma3, device="cpu")


def test_greedy_is_the_argmax_continuation_whatever_the_batch(generator):
    greedy = SamplingConfig(max_new_tokens=12, temperature=0)
    alone = [generator.generate([p], greedy, batch_size=1)[0] for p in PROMPTS]
    batched = generator.generate(PROMPTS, greedy, batch_size=3)
    assert [g.text for g in batched] == [g.text for g in alone]
    assert all(0 < g.new_tokens <= 12 for g in batched)
    # top-k 1 sampling can only pick the argmax: the same text as greedy decoding
    top1 = generator.generate(
        PROMPTS, SamplingConfig(max_new_tokens=12, temperature=1.5, top_k=1), batch_size=3
    )
    assert [g.text for g in top1] == [g.text for g in batched]


def test_sampling_is_reproducible_from_the_seed(generator):
    def run(seed):
        return [g.text for g in generator.generate(PROMPTS, SamplingConfig(max_new_tokens=16, seed=seed), 2)]

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_repetition_penalty_prevents_repeats(generator, tiny_gemma3):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gemma3)
    config = SamplingConfig(max_new_tokens=24, temperature=0, repetition_penalty=1e6)
    prompt = "Ang mga bata ay"
    prompt_ids = set(tokenizer(prompt)["input_ids"])
    result = generator.generate([prompt], config)[0]
    ids = tokenizer(prompt + result.text, add_special_tokens=False)["input_ids"]
    plain = generator.generate([prompt], SamplingConfig(max_new_tokens=24, temperature=0))[0]
    plain_ids = tokenizer(prompt + plain.text, add_special_tokens=False)["input_ids"]
    assert len(plain_ids) - len(set(plain_ids)) > 0  # a random model repeats itself without the penalty
    new_ids = ids[len(tokenizer(prompt, add_special_tokens=False)["input_ids"]) :]
    assert len(new_ids) == len(set(new_ids)) and not set(new_ids) & prompt_ids


def test_streaming_writes_exactly_the_continuation(generator):
    sampling = SamplingConfig(max_new_tokens=10, seed=5)
    out = io.StringIO()
    streamed = generator.stream("Ang mga bata ay", sampling, out)
    assert out.getvalue() == streamed.text
    assert streamed.text == generator.generate(["Ang mga bata ay"], sampling, 1)[0].text


def test_interactive_session_streams_each_prompt_and_reports_speed(generator):
    stdin = io.StringIO("Ang mga bata ay\nKumain ka na\n\n")
    out, err = io.StringIO(), io.StringIO()
    interactive(generator, SamplingConfig(max_new_tokens=6, temperature=0), stdin, out, err)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Ang mga bata ay") and any(line.startswith("Kumain ka na") for line in lines)
    assert err.getvalue().count("tokens/s]") == 2


@pytest.fixture
def keep_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_cli_prompts_file_and_tokens_per_second(tiny_gemma3, tmp_path, capsys, keep_threads):
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("Ang mga bata ay\n\nKumain ka na\n")
    args = [
        "--model",
        str(tiny_gemma3),
        "--prompts-file",
        str(prompts),
        "--max-new-tokens",
        "5",
        "--threads",
        "1",
    ]
    assert main([*args, "--temperature", "0", "--device", "cpu", "--batch-size", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Ang mga bata ay") and "\nKumain ka na" in captured.out
    assert "tokens/s] on cpu" in captured.err and torch.get_num_threads() == 1


def test_a_folder_without_a_causal_lm_is_refused(tmp_path, tiny_gemma3, sample_tokenizer_dir, capsys):
    with pytest.raises(NotACausalLM, match="no such folder"):
        check_causal_lm(tmp_path / "missing")
    with pytest.raises(NotACausalLM, match=r"not a model folder \(no config.json\)"):
        check_causal_lm(sample_tokenizer_dir)
    vit = tmp_path / "vit"
    vit.mkdir()
    (vit / "config.json").write_text(
        json.dumps({"model_type": "vit", "architectures": ["ViTForImageClassification"]})
    )
    with pytest.raises(
        NotACausalLM, match=r"holds a 'vit' model \(ViTForImageClassification\), not a causal language"
    ):
        check_causal_lm(vit)
    with pytest.raises(SystemExit) as exit_info:
        main(["--model", str(vit), "--prompt", "x"])
    assert exit_info.value.code == 2 and "not a causal language model" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--model", str(tiny_gemma3)])  # no prompt, no --interactive
    assert "give --prompt" in capsys.readouterr().err
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit):
            main(["--model", str(tiny_gemma3), "--prompt", "x", "--device", "cuda"])
        assert "no CUDA GPU is available" in capsys.readouterr().err
