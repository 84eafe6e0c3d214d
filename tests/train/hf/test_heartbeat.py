"""The training loop beats into $MORPHCPT_HEARTBEAT (the multi-node launcher watches it): training steps and
validation batches advance the count; without the variable, or on another local rank, nothing is written."""

from __future__ import annotations

from morphcpt.train.hf import heartbeat
from morphcpt.train.hf.engine import train
from train_helpers import tiny_plan, write_data


def test_beats_are_written_only_where_asked(tmp_path, monkeypatch):
    beat = tmp_path / "node0.train"
    monkeypatch.delenv(heartbeat.ENV, raising=False)
    heartbeat.beat(every=0)
    monkeypatch.setenv(heartbeat.ENV, str(beat))
    monkeypatch.setenv("LOCAL_RANK", "1")
    heartbeat.beat(every=0)
    assert not beat.exists()
    monkeypatch.setenv("LOCAL_RANK", "0")
    heartbeat.beat(every=0)
    first = int(beat.read_text())
    heartbeat.beat(every=0)
    assert int(beat.read_text()) == first + 1 and not beat.with_name("node0.train.tmp").exists()


def test_the_training_loop_beats(tmp_path, monkeypatch, sample_corpus):
    data = write_data(tmp_path / "data", sample_corpus, limit=100)
    beat = tmp_path / "node0.train"
    monkeypatch.setenv(heartbeat.ENV, str(beat))
    monkeypatch.setenv("LOCAL_RANK", "0")
    counts = []
    real = heartbeat.beat
    monkeypatch.setattr(
        heartbeat, "beat", lambda every=1.0: (real(every=0), counts.append(int(beat.read_text())))
    )
    train(tiny_plan(data, tmp_path / "out", "checkpoint.async_save=false"))
    assert len(counts) >= 4 and counts == sorted(
        counts
    )  # every step's micro batches and validation's batches
