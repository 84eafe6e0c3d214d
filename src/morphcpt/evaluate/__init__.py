"""Evaluation of Hugging Face models on the benchmarks (PACUTE, hierarchical, cute, langgame, multi-digit addition).

`items` reads every official row shape (`rows`) into one `Item` type; `mcq` scores options by log-likelihood (acc and
acc_norm) and `gen` scores greedy answers (exact / prefix / contains), both against small model protocols that
`hf.HFCausalLM` implements; `runner` runs models x benchmarks resumably into `results/`; `lm_eval` exports the
same items as lm-evaluation-harness tasks.

    python -m morphcpt.evaluate --models outputs/export/patok --benchmarks pacute hierarchical --eval-mode both
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    # Imported on call, so importing the package (for `items`, say) stays cheap.
    from morphcpt.evaluate.runner import main as run

    return run(argv)
