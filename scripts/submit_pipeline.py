"""Submit the whole pipeline as one chain of dependent jobs (PBS Pro or Slurm, as SCHEDULER in .env says).

    python scripts/submit_pipeline.py [--from STAGE] [--to STAGE] [--schemes vanilla patok] [--dry-run]
    python scripts/submit_pipeline.py --status

Library code: `morphcpt.pipeline` (stages, markers, the CPT gate) and `morphcpt.scheduler` (qsub/sbatch).
"""

import sys

from morphcpt.pipeline import main

if __name__ == "__main__":
    sys.exit(main())
