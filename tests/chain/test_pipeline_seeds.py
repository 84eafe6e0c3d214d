"""The chain's seeds: the pilot recipes build every arm once (EEVE through its own seven-stage jobs) for any number
of seeds; seeds added while the first submission is still queued make the evaluation and the report wait for them
too; `--local --sample` takes SEEDS from .env, saying so."""

from __future__ import annotations

import re

import pytest

from chain_helpers import fake_pbs_checkout
from morphcpt.chain import jobs, pipeline

FAKE = """#!/bin/bash
# records its arguments and prints a new id; qstat says every job is queued while $FAKE_QUEUED is set
echo "$(basename "$0") $*" >> "$FAKE_LOG"
n=$(wc -l < "$FAKE_LOG")
case "$(basename "$0")" in qsub) echo "$n.pbs01";; qstat) [[ -n "${FAKE_QUEUED:-}" ]] && echo "    job_state = Q" || exit 1;; esac
"""


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    return fake_pbs_checkout(tmp_path, monkeypatch, FAKE)


def submissions(tmp_path) -> dict[str, tuple[str, list[str]]]:
    """script stem -> (its id, the ids it waits for), the latest submission of each."""
    found = {}
    for n, line in enumerate((tmp_path / "submitted.log").read_text().splitlines(), start=1):
        if line.startswith("qsub"):
            after = re.search(r"depend=afterok:(\S+)", line)
            stem = line.split()[-1].rsplit("/", 1)[-1].removesuffix(".pbs")
            found[stem] = (f"{n}.pbs01", after.group(1).split(":") if after else [])
    return found


@pytest.mark.parametrize("seeds", ["1", "2", "3"])
def test_the_pilot_chain_builds_every_arm_once_for_any_number_of_seeds(cluster, capsys, seeds):
    assert pipeline.main(["--env", ".env", "--recipes", "pilot", "--seeds", seeds, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "cpt_eeve " in out and "export_eeve" not in out and "run_cpt_eeve" not in out.split("cpt_eeve ")[0]
    names = [line.split()[0] for line in out.splitlines() if " would submit " in line]
    assert len(names) == len(set(names))
    assert (cluster / "jobs" / "run_cpt_eeve.pbs").exists() and not (
        cluster / "jobs" / "export_eeve.pbs"
    ).exists()
    assert (
        'EEVE_RECIPE="pilot_eeve"' in (cluster / "jobs" / "run_cpt_eeve.pbs").read_text()
        or "pilot_eeve" in (cluster / "jobs" / "run_cpt_eeve.pbs").read_text()
    )


def test_seeds_added_while_the_first_submission_is_queued_are_evaluated_and_reported(cluster, monkeypatch):
    assert pipeline.main(["--env", ".env", "--schemes", "vanilla", "patok"]) == 0
    first = submissions(cluster)
    monkeypatch.setenv("FAKE_QUEUED", "1")  # nothing has run yet
    assert pipeline.main(["--env", ".env", "--schemes", "vanilla", "patok", "--seeds", "2"]) == 0
    now = submissions(cluster)
    evaluate, analyze = now["run_evaluation"], now["analyze"]
    assert evaluate[0] != first["run_evaluation"][0] and analyze[0] != first["analyze"][0]
    # the new evaluation waits for the queued one and for every new seed's export; the new report for both
    for waited in (first["run_evaluation"][0], now["export_patok_seed1"][0], now["export_baseline_seed1"][0]):
        assert waited in evaluate[1]
    assert set(analyze[1]) == {first["analyze"][0], evaluate[0]}
    assert "gemma3-1b-patok-seed1" in (cluster / "jobs" / "run_evaluation.pbs").read_text()


def test_the_sample_chain_takes_seeds_from_env_and_says_so(cluster, monkeypatch, capsys):
    (cluster / ".env").write_text("SEEDS=2\n")
    seen = {}

    def stop(settings, everything):
        seen["seeds"] = settings["SEEDS"]
        raise SystemExit(0)

    monkeypatch.setattr(pipeline, "build_stages", lambda settings, schemes: stop(settings, schemes))
    with pytest.raises(SystemExit):
        pipeline.main(["--env", ".env", "--local", "--sample", "--output-dir", str(cluster / "s")])
    assert seen["seeds"] == "2" and "SEEDS=2 from .env" in capsys.readouterr().out
    assert jobs.seeds({"SEEDS": seen["seeds"]}) == 2
