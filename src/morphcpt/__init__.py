"""morphcpt: continued pretraining of Gemma 3 on a low-resource language with morphology-aware tokenization.

The suite downloads and chunks a corpus, preprocesses it three ways (vanilla, StochasTok, Patok) into Megatron
indexed datasets, continues pretraining on each, exports the checkpoints, and evaluates them on Filipino morphology
benchmarks. `make demo` runs all of it on CPU with a tiny model; see README.md for the cluster workflow.
"""

__version__ = "0.1.0"
