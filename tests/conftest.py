"""Shared test fixtures: the shipped sample tokenizer and corpus, and a tiny random Gemma 3 saved to disk.

Tests never reach the network: the Hugging Face Hub is switched off for the whole session. The tokenizer cache is a
fresh temporary folder per session.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("WANDB_MODE", "disabled")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# the tokenizer cache (morphcpt.tokenization.cache) of this session, not the user's ~/.cache/morphcpt
os.environ["MORPHCPT_CACHE_DIR"] = tempfile.mkdtemp(prefix="morphcpt-test-cache-")
atexit.register(shutil.rmtree, os.environ["MORPHCPT_CACHE_DIR"], ignore_errors=True)

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from morphcpt import paths  # noqa: E402


@pytest.fixture(scope="session")
def sample_tokenizer_dir() -> Path:
    if not (paths.SAMPLE_TOKENIZER_DIR / "tokenizer_config.json").exists():
        pytest.fail(f"shipped sample tokenizer missing at {paths.SAMPLE_TOKENIZER_DIR}")
    return paths.SAMPLE_TOKENIZER_DIR


@pytest.fixture(scope="session")
def sample_corpus() -> Path:
    if not paths.SAMPLE_CORPUS.exists():
        pytest.fail(f"shipped sample corpus missing at {paths.SAMPLE_CORPUS}")
    return paths.SAMPLE_CORPUS


@pytest.fixture(scope="session")
def vocab(sample_tokenizer_dir):
    from morphcpt.tokenization.vocabulary import Vocabulary

    return Vocabulary.load(sample_tokenizer_dir)


@pytest.fixture
def span_steps(monkeypatch) -> list:
    """Every contraction step patok asks Python for, as its arguments, from now on: `WordStates.span_step` on the
    Python path, `WordStates.encode_span` from the compiled kernel (a scheme built after this fixture calls the
    counted methods)."""
    from morphcpt.tokenization.schemes.patok_words import WordStates

    asked: list = []
    for name in ("span_step", "encode_span"):
        method = getattr(WordStates, name)
        monkeypatch.setattr(
            WordStates, name, lambda self, *args, method=method: asked.append(args) or method(self, *args)
        )
    return asked


@pytest.fixture(scope="session")
def tiny_gemma3(tmp_path_factory, sample_tokenizer_dir) -> Path:
    """A randomly initialised tiny Gemma 3 with the sample tokenizer, saved as a Hugging Face folder."""
    from morphcpt.modeling.models import save_tiny_gemma3

    return save_tiny_gemma3(sample_tokenizer_dir, tmp_path_factory.mktemp("tiny_gemma3"), seed=0)
