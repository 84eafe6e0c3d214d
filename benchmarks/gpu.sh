#!/usr/bin/env bash
# The hf engine on one GPU, one command, one table (benchmarks/gpu.py says what each row and column is):
#   bash benchmarks/gpu.sh                     # one GPU: gemma-3-1b's shape, seq 2048, global batch 16 (< 4 min, H100)
#   bash benchmarks/gpu.sh --gpu-memory 40GB   # capped at 40 GB: the user's A100-SXM4-40GB on a larger card
#   bash benchmarks/gpu.sh --cpu-smoke         # the same steps at the tiny shape on a CPU (CI-safe, < 2 min)
# Extra arguments go to benchmarks/gpu.py (--json FILE writes the rows as JSON too).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
[[ -x "$PYTHON" ]] || PYTHON=python3
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
exec "$PYTHON" "$ROOT/benchmarks/gpu.py" "$@"
