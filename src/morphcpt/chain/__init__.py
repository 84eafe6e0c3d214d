"""Submission: the chain of jobs that runs the pipeline, raw corpus to report, and everything that renders or runs it.

- `pipeline.py` submits the whole chain (PBS Pro or Slurm) or reports its status; `stages.py` says what the chain is
  made of (one stage per job, its inputs, its completion check); `local.py` runs the rendered scripts here instead.
- `jobs.py` renders the job scripts from `job_templates/` and `.env`; `scheduler.py` holds what differs between PBS
  Pro and Slurm; `settings_check.py` refuses bad `.env` numbers and sizes; `setup_check.py` is the pre-flight check
  of a machine (`morphcpt verify-setup`).
"""
