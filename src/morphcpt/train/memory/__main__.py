"""`python -m morphcpt.train.memory recipe=... [gpus=N]`: the memory planner's table (see `planner.py`)."""

from morphcpt.train.memory.planner import main

raise SystemExit(main())
