"""`python -m morphcpt.train recipe=... [engine=hf|megatron] [dry_run=true]` (see morphcpt.train)."""

from morphcpt.train import main

main()
