"""Bits per byte per scheme (`evaluate.scheme_bpb`) on the tiny model: one denominator, the text's UTF-8 bytes,
for every scheme; ids scored as they are after <bos>; identical ids give identical figures."""

from __future__ import annotations

import json
import math

import pytest
import torch

from morphcpt import paths
from morphcpt.evaluate.scheme_bpb import SCHEME_NAMES, bits_per_byte, measure, scheme_ids


@pytest.fixture(scope="module")
def texts() -> list[str]:
    lines = paths.SAMPLE_CORPUS.read_text(encoding="utf-8").splitlines()[:12]
    found = [json.loads(line)["text"] for line in lines]
    return [*found, "Ang niño ay kumakain ng manggá."]  # characters of two bytes: bytes are not characters


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    from morphcpt.modeling.models import save_tiny_gemma3

    return save_tiny_gemma3(
        paths.SAMPLE_TOKENIZER_DIR, tmp_path_factory.mktemp("tiny") / "model", num_layers=2, num_heads=2
    )


@pytest.fixture(scope="module")
def eeve_dir(tmp_path_factory, tiny_dir):
    from morphcpt.tokenization.eeve import expand

    out = tmp_path_factory.mktemp("eeve") / "tokenizer"
    expand(paths.SAMPLE_CORPUS, tiny_dir, out, num_new=16, max_documents=300)
    return out


def test_every_scheme_divides_by_the_texts_utf8_bytes(tiny_dir, eeve_dir, texts):
    table = measure(
        tiny_dir, texts, SCHEME_NAMES, eeve_tokenizer=eeve_dir, batch_size=4, work_dir=eeve_dir.parent
    )
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    assert nbytes > sum(len(t) for t in texts)
    assert set(table) == set(SCHEME_NAMES)
    assert {row["bytes"] for row in table.values()} == {nbytes}
    # The schemes cut the text differently (so the same denominator is not the same token count) ...
    assert table["stochastok"]["tokens"] > table["vanilla"]["tokens"]
    assert table["patok"]["tokens"] != table["vanilla"]["tokens"]
    assert table["eeve"]["tokens"] < table["vanilla"]["tokens"]
    for row in table.values():  # ... and bits per byte is nats per token rescaled by tokens per byte
        expected = row["nats_per_token"] * row["tokens"] / math.log(2) / nbytes
        assert row["bits_per_byte"] == pytest.approx(expected, rel=1e-12)


def test_identical_ids_give_identical_bits_per_byte_and_equal_a_plain_forward(tiny_dir, texts):
    from morphcpt.evaluate.hf_model import HFCausalLM
    from morphcpt.tokenization.vocabulary import Vocabulary

    vocab = Vocabulary.load(tiny_dir)
    lm = HFCausalLM.load(tiny_dir, device="cpu", batch_size=3)
    vanilla = scheme_ids(texts, "vanilla", vocab)
    unexpanded = scheme_ids(texts, "stochastok", vocab, expand_prop=0.0)
    assert unexpanded == vanilla
    assert bits_per_byte(lm, vanilla, texts) == bits_per_byte(lm, unexpanded, texts)
    expanded = scheme_ids(texts, "stochastok", vocab)
    assert expanded != vanilla
    assert bits_per_byte(lm, expanded, texts) != bits_per_byte(lm, vanilla, texts)
    # The reference: one document at a time through the model's own forward and a full log-softmax.
    nats = 0.0
    with torch.no_grad():
        for doc in expanded:
            ids = torch.tensor([[vocab.bos_id, *doc]])
            logp = torch.log_softmax(lm.model(input_ids=ids).logits[0, :-1].double(), -1)
            nats -= logp.gather(1, ids[0, 1:, None]).sum().item()
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    assert bits_per_byte(lm, expanded, texts)["bits_per_byte"] == pytest.approx(
        nats / math.log(2) / nbytes, rel=1e-5
    )


def test_bad_input_is_refused(tiny_dir, texts):
    from morphcpt.evaluate.hf_model import HFCausalLM

    lm = HFCausalLM.load(tiny_dir, device="cpu")
    with pytest.raises(ValueError, match="id lists for"):
        bits_per_byte(lm, [[5]], texts)
    with pytest.raises(ValueError, match="no ids"):
        bits_per_byte(lm, [[]], [""])
    with pytest.raises(ValueError, match="unknown schemes"):
        measure(tiny_dir, texts, ["bpe-dropout"])
    with pytest.raises(ValueError, match="expanded tokenizer"):
        measure(tiny_dir, texts, ["eeve"])
