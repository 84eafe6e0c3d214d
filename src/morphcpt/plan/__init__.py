"""The training plan: `schema.py` (the typed config both engines execute, and its checks), `compose.py` (Hydra
composition, reading a run's config back, dry runs), `flags.py` (the flag-style options as plan keys) and
`recipes.py` (the cluster recipes as the job scripts and the chain see them), and `card.py` (the GPU a plan names).
Every layer above reads the plan (the engines, export, evaluation, the chain), so it sits below them all, not in
`train/`.
"""
