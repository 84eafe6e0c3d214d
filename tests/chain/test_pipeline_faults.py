"""The chain under faults: two submissions at once (one claim, no duplicate jobs; a crashed submitter's claim is
taken over), "done" meaning the marker and the files it lists, and a corrupted jobs file (a clear message and a
way on), with fake qsub/qstat on PATH."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chain_helpers import fake_pbs_checkout
from morphcpt import completion, indexed, lockfile
from morphcpt.chain import jobs, pipeline

FAKE = """#!/bin/bash
# records its arguments and prints a new id, slowly when FAKE_DELAY is set (a busy scheduler)
sleep "${FAKE_DELAY:-0}"
echo "$(basename "$0") $*" >> "$FAKE_LOG"
n=$(wc -l < "$FAKE_LOG")
case "$(basename "$0")" in qsub) echo "$n.pbs01";; qstat) exit 1;; esac
"""


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    return fake_pbs_checkout(tmp_path, monkeypatch, FAKE)


def submitted(tmp_path: Path) -> list[str]:
    log = tmp_path / "submitted.log"
    return [line for line in log.read_text().splitlines() if line.startswith("qsub")] if log.exists() else []


def settings(tmp_path: Path) -> dict[str, str]:
    return jobs.derived_settings({**jobs.SETTINGS, **jobs.read_env(str(tmp_path / ".env"))})


def test_two_submissions_at_once_submit_each_job_once(cluster):
    """Both used to exit 0 after submitting everything: twice the jobs, half of them untracked."""
    env = {**os.environ, "FAKE_DELAY": "2"}
    command = [
        sys.executable,
        "-m",
        "morphcpt.chain.pipeline",
        "--env",
        ".env",
        "--schemes",
        "vanilla",
        "--to",
        "split",
    ]
    procs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    deadline = time.time() + 60
    while not (cluster / "logs" / "pipeline" / "chain.lock").exists() and time.time() < deadline:
        time.sleep(0.02)
    procs.append(
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    )
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 1], outs
    assert f"pid {procs[0].pid} on {socket.gethostname()}" in outs[1][1] and "chain.lock" in outs[1][1]
    names = [line.rsplit("/", 1)[-1] for line in submitted(cluster)]
    assert names == ["download.pbs", "split.pbs"]
    assert not (cluster / "logs" / "pipeline" / "chain.lock").exists()  # released


def test_a_crashed_submitters_claim_is_taken_over(cluster, capsys):
    lock = cluster / "logs" / "pipeline" / "chain.lock"
    lock.parent.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    lock.write_text(
        f"host={socket.gethostname()}\npid={dead.pid}\nsince=earlier\nwhat=submitting the chain\n"
    )
    assert pipeline.main(["--env", ".env", "--to", "download"]) == 0
    assert "took over" in capsys.readouterr().out and len(submitted(cluster)) == 1


def test_a_claim_from_another_host_is_stale_only_once_its_heartbeat_stops(tmp_path):
    lock = tmp_path / "x.lock"
    lock.write_text("host=other-login-node\npid=1\nsince=earlier\nwhat=submitting the chain\n")
    with (
        pytest.raises(lockfile.Claimed, match="pid 1 on other-login-node since earlier is submitting"),
        lockfile.claim(lock, "submitting"),
    ):
        pass
    old = time.time() - lockfile.STALE_AFTER_S - 60
    os.utime(lock, (old, old))
    notes = []
    with lockfile.claim(lock, "submitting", echo=notes.append):
        assert f"pid={os.getpid()}" in lock.read_text()
    assert "untouched for" in notes[0] and not lock.exists()


def finished_preprocess(tmp_path: Path, scheme: str = "vanilla") -> list[Path]:
    """Markers and datasets of a finished preprocess stage, as preprocessing writes them."""
    s = settings(tmp_path)
    markers = pipeline._chunk_markers(s, scheme)
    for marker in markers:
        prefix = marker.parent / (marker.name.removesuffix(".done.json") + "_text_document")
        with indexed.IndexedWriter(prefix, 100) as writer:
            writer.add([2, 5, 1])
        marker.write_text(
            json.dumps({"prefix": prefix.name, "documents": 1, "files": indexed.dataset_digest(prefix)})
        )
    return markers


def test_done_means_the_marker_and_its_files(cluster, capsys):
    """A .bin deleted after its stage finished used to be skipped as done, and stayed missing."""
    markers = finished_preprocess(cluster)
    s = settings(cluster)
    stage = next(st for st in pipeline.build_stages(s, ["vanilla"]) if st.name == "preprocess_vanilla")
    assert stage.check() is None
    bin_file = markers[0].parent / "chunk_01_text_document.bin"
    bin_file.unlink()
    assert stage.check() == f"{bin_file} is missing"
    assert pipeline.main(["--env", ".env", "--schemes", "vanilla", "--status"]) == 0
    shown = next(
        line for line in capsys.readouterr().out.splitlines() if line.startswith("preprocess_vanilla")
    )
    assert shown.endswith(f"not submitted ({bin_file} is missing)")
    assert pipeline.main(["--env", ".env", "--schemes", "vanilla", "--to", "preprocess"]) == 0
    assert any(line.endswith("preprocess_data_vanilla.pbs") for line in submitted(cluster))
    finished_preprocess(cluster)
    indexed.bin_path(markers[0].parent / "chunk_02_text_document").write_bytes(b"\0")  # cut short
    assert "has 1 bytes, the marker recorded 6" in stage.check()


def test_outputs_gone_but_read_by_finished_stages_are_not_rebuilt(cluster, capsys):
    """A corpus deleted after the split (to save space) is not downloaded again; without the split, it is."""
    s = settings(cluster)
    chunks = Path(s["CHUNK_DIR"])
    chunks.mkdir(parents=True)
    for name in ("chunk_01.jsonl", "chunk_02.jsonl"):
        (chunks / name).write_text('{"text": "x"}\n')
    entries = [{"file": n, "bytes": 14, "lines": 1} for n in ("chunk_01.jsonl", "chunk_02.jsonl")]
    (chunks / "manifest.json").write_text(json.dumps({"chunks": entries, "validation": None}))
    Path(s["CORPUS"]).parent.mkdir(parents=True)
    Path(s["CORPUS"] + ".done").write_text("1000\n")  # the corpus itself was deleted
    states = completion.stage_states(pipeline.build_stages(s, ["vanilla"]))
    assert states["download"][0] and "every stage reading them is done" in states["download"][1]
    (chunks / "chunk_02.jsonl").write_text("")
    states = completion.stage_states(pipeline.build_stages(s, ["vanilla"]))
    assert not states["split"][0] and "has 0 bytes" in states["split"][1]
    assert not states["download"][0] and states["download"][1].endswith(
        "seapile-v2-filipino.jsonl is missing"
    )


@pytest.mark.parametrize(
    "content", [b'{"download": "1.pbs01", "split": "2.pb', b"", b'["1.pbs01"]', b'{"a": 1}']
)
def test_a_corrupted_jobs_file_is_a_clear_message_with_a_way_on(cluster, capsys, content):
    state = cluster / "logs" / "pipeline" / "jobs_pbs.json"
    state.parent.mkdir(parents=True)
    state.write_bytes(content)
    assert pipeline.main(["--env", ".env", "--status"]) == 0  # what is on disk is still shown
    out = capsys.readouterr().out
    assert f"warning: {state}" in out and any(line.startswith("download ") for line in out.splitlines())
    assert pipeline.main(["--env", ".env", "--to", "download"]) == 1
    err = capsys.readouterr().err
    assert str(state) in err and "qstat -u $USER" in err and f"mv {state} {state}.bad" in err
    assert submitted(cluster) == []  # nothing submitted blind
    state.rename(state.with_name(state.name + ".bad"))  # the way on the message gives
    assert pipeline.main(["--env", ".env", "--to", "download"]) == 0 and len(submitted(cluster)) == 1


def test_the_jobs_file_is_written_atomically(cluster):
    assert pipeline.main(["--env", ".env", "--to", "split"]) == 0
    folder = cluster / "logs" / "pipeline"
    assert sorted(p.name for p in folder.iterdir()) == ["jobs_pbs.json"]
    assert set(json.loads((folder / "jobs_pbs.json").read_text())) == {"download", "split"}
