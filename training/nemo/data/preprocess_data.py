"""Tokenize one chunk with one scheme into a Megatron indexed dataset (stage 3; a Hydra app).

    python training/nemo/data/preprocess_data.py scheme=patok input=data/chunks/chunk_07.jsonl \
        output_dir=data/processed tokenizer=google/gemma-3-1b-pt workers=16
    python training/nemo/data/preprocess_data.py validation=true input=data/chunks/validation.jsonl \
        output_dir=data/processed tokenizer=google/gemma-3-1b-pt

Config: src/morphcpt/conf/preprocess.yaml (+ conf/scheme/*.yaml); library code: `morphcpt.preprocess`.
"""

from morphcpt.preprocess import main

if __name__ == "__main__":
    main()
