"""The training plan: `schema.py` (the typed config both engines execute, and its checks), `compose.py` (Hydra
composition, reading a run's config back, dry runs), `flags.py` (the flag-style options as plan keys) and
`recipes.py` (the cluster recipes as the job scripts and the chain see them).
"""
