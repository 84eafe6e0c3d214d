"""The model layer under training and evaluation: what both read and neither owns.

- `models.py` builds and loads Gemma 3 (the tiny CPU configuration, the 1B reference shape, pretrained weights
  loaded strictly); `loss.py` is the chunked cross entropy and token log-probabilities through the LM head without
  full-vocabulary logits; `logit_parity.py` compares two models' logits (two loads, HF vs Megatron, checkpoint vs
  export); `lora.py` wraps a model in PEFT's LoRA adapters; `resize.py` grows a model to an EEVE-expanded tokenizer;
  `convert.py` moves weights between HF and Megatron (AutoBridge) and checks the conversion by its logits;
  `checkpoint_files.py` finds, verifies and reads the hf engine's checkpoints (resume, export, evaluation).
"""
