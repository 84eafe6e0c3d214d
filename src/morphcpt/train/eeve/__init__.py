"""EEVE's staged training on the hf engine: resize a model to an expanded tokenizer, then seven stages that each
train a chosen part of it (`engine.py` runs them, `params.py` says which parameters train in each)."""
