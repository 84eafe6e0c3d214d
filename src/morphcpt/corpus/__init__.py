"""Corpus handling: robust JSONL reading, byte-balanced splitting into chunks, and the SEA-PILE v2 download.

`reader` turns a JSONL file into documents without ever crashing on a bad line (every skipped line is counted
with its reason); `split` cuts a large JSONL file into chunks for PBS array jobs; `download` streams SEA-PILE v2
(or a local folder of its parquet shards) to JSONL; `prepare` builds one corpus from several sources (`sources`:
txt, jsonl, json, csv/tsv, parquet, Hub datasets) to a token budget (`budget`). Each has `python -m
morphcpt.corpus.<module> --help`.
"""

from morphcpt.corpus.reader import BadLineError, ReadReport, Record, iter_documents, split_long_text

__all__ = ["BadLineError", "ReadReport", "Record", "iter_documents", "split_long_text"]
