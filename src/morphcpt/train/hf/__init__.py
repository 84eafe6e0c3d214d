"""The hf engine: the training plan executed with transformers on any machine (CPU, one GPU, torchrun over several);
README.md in this folder says what each file is for, `engine.py` is its entry."""
