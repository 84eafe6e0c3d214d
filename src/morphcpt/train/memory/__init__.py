"""The memory planner: per-GPU memory of a training plan on the card it names, for both engines, before anything is
submitted or allocated (`planner.py`; `python -m morphcpt.train.memory`). `estimate.py` is the bytes of a layout and
how one fits a card (the card itself is `morphcpt.plan.card`), `hf.py` and `megatron.py` are each engine's estimate,
`recipe_table.py` the shipped recipes on the cards their documents name."""
