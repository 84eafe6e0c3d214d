#!/bin/bash
# Render every job template morphcpt knows (morphcpt/chain/jobs.py: JOBS) into jobs/, from .env and the config tree.
#   bash job_templates/setup_jobs.sh            then e.g.   qsub -J 1-20 jobs/preprocess_data_patok.pbs
#   SCHEDULER=slurm bash job_templates/setup_jobs.sh      (or SCHEDULER=slurm in .env): jobs/*.slurm for sbatch
# Settings come from .env (see .env.example); secrets in it are never written into jobs/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
[[ -x "$PYTHON" ]] || PYTHON=python3
cd "$ROOT"
PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m morphcpt.chain.jobs render \
    --env "${ENV_FILE:-$ROOT/.env}" --templates "$ROOT/job_templates" --out "${JOBS_DIR:-$ROOT/jobs}" \
    ${SCHEDULER:+--scheduler "$SCHEDULER"}
for script in "${JOBS_DIR:-$ROOT/jobs}"/*.{pbs,slurm}; do
    [[ -e "$script" ]] || continue
    bash -n "$script"
done
echo "rendered job scripts pass bash -n. Submit the whole chain: python scripts/submit_pipeline.py [--dry-run]"
echo "(where it stands: python scripts/submit_pipeline.py --status)"
