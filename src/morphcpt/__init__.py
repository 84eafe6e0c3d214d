"""morphcpt: continued pretraining of Gemma 3 on a low-resource language with morphology-aware tokenization.

The suite downloads and chunks a corpus, preprocesses it three ways (vanilla, StochasTok, Patok) into Megatron
indexed datasets, continues pretraining on each, exports the checkpoints, and evaluates them on Filipino morphology
benchmarks. `make demo` runs all of it on CPU with a tiny model; see README.md for the cluster workflow.
"""

__version__ = "0.1.0"

import warnings

# megatron-core warns once per module that the GPU-only Transformer Engine / Apex kernels are missing. The suite uses
# megatron-core only for its datasets off the cluster, where those kernels play no part, so the warnings are noise.
warnings.filterwarnings(
    "ignore", message=r"Transformer Engine and Apex are not installed", category=UserWarning
)
