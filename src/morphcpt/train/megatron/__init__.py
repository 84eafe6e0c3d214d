"""The megatron engine: the training plan executed by Megatron-Bridge inside the NeMo container on the cluster;
README.md in this folder says what each file is for, `engine.py` is its entry."""
