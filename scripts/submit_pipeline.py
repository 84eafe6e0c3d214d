"""Submit the whole pipeline as one chain of dependent jobs (PBS Pro or Slurm, as SCHEDULER in .env says).

    python scripts/submit_pipeline.py [--from STAGE] [--to STAGE] [--schemes vanilla patok] [--dry-run]
    python scripts/submit_pipeline.py --status
    python scripts/submit_pipeline.py --local --sample          (run the same scripts here, on the shipped sample)

Library code: `morphcpt.chain.pipeline` (stages, markers, the CPT gate), `morphcpt.chain.scheduler` (qsub/sbatch) and
`morphcpt.chain.local` (--local).
"""

import sys

from morphcpt.chain.pipeline import main

if __name__ == "__main__":
    sys.exit(main())
