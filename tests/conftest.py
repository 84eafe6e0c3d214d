"""Shared test fixtures: the shipped sample tokenizer and corpus, and a tiny random Gemma 3 saved to disk.

Tests never reach the network: the Hugging Face Hub is switched off for the whole session. The tokenizer cache is a
fresh temporary folder per session.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("WANDB_MODE", "disabled")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# What the suite and its subprocesses write outside their tmp_path goes to one temporary folder of this session,
# removed at its end: the subprocesses' temporary files (TMPDIR: torchrun's torchelastic_* folders, compiled
# kernels built without a cache), the tokenizer cache (morphcpt.tokenization.cache) instead of the user's
# ~/.cache/morphcpt, torch.compile's cache, the datasets library's (lm-eval's local files). This process's own
# temporary files stay where they were (pytest's folders among them: a failing test's is kept).
_SCRATCH = Path(tempfile.mkdtemp(prefix="morphcpt-test-session-"))
atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)
for _variable, _name in (
    ("TMPDIR", "tmp"),
    ("MORPHCPT_CACHE_DIR", "morphcpt-cache"),
    ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
    ("HF_DATASETS_CACHE", "datasets"),
):
    (_SCRATCH / _name).mkdir()
    os.environ[_variable] = str(_SCRATCH / _name)

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
