"""Submit the whole pipeline, raw corpus to report, as one chain of scheduler jobs (PBS Pro or Slurm).

    python scripts/submit_pipeline.py [--from STAGE] [--to STAGE] [--schemes vanilla patok] [--seeds 3] [--dry-run]
    python scripts/submit_pipeline.py --status          (also: morphcpt submit ...)
    python scripts/submit_pipeline.py --local [--sample] [--seeds 2]  (the same scripts, run here in order)
    python scripts/submit_pipeline.py --local --sample --base-model DIR  (the sample chain from a real model)

Seeds: `--seeds N` (or SEEDS in .env) runs every arm N times, seed k = 0..N-1 (docs/replicates-and-power.md):
stochastok and patok get a preprocessing array per seed (`preprocess_patok_seed1`, ids in <scheme>/seed<k>/),
vanilla and eeve one (their ids do not depend on the seed); every arm gets one training run per seed
(`cpt_patok_seed1`, run `<name>-seed1`), each waiting for its own seed's data; the evaluation waits for all.
Seed 0 keeps the names, folders and bytes of a single-seed chain, so a rerun with more seeds adds only the new ones.

Stages, in order: download, split, benchmarks, preprocess (one array per scheme, after the eeve_tokenizer job for
eeve), cpt (the eeve run exports itself), export (one per training run), evaluate (one GPU), analyze. Each job waits (`afterok`) for exactly the jobs that write its inputs. A stage
whose marker is on disk is done and not submitted; a stage whose recorded job the scheduler still holds is not
submitted again (its dependants wait for that job): a rerun after partial completion, or after a rejected
submission, submits only what is left. Job ids are recorded in `$LOG_DIR/pipeline/jobs_<scheduler>.json`.

CPT runs resubmit themselves until they are complete (`AUTO_RESUBMIT=1`), so no job id known at submission time
is the run's last. The chain therefore makes the run's dependants wait for a *gate*: a small CPU job
(`cpt_done_<variant>`) submitted on hold, whose id is written to `<run_dir>/release_on_complete`. Whichever
training job finds `progress.json` complete (the first, the tenth, or one resubmitted by hand) releases it; the
gate itself succeeds only when `progress.json` says complete, so a release by mistake stops the chain instead
of exporting a half-trained model. Until then the gate sits held, using no resources.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from morphcpt import completion, lockfile, paths
from morphcpt.chain import jobs, local, scheduler

# the stages live in chain/stages.py; callers and tests keep reaching them here
from morphcpt.chain.stages import GROUPS, PipelineError, Stage, _chunk_markers, build_stages  # noqa: F401
from morphcpt.errors import UserError
from morphcpt.jsonio import JSONFileError, read_json, write_json

Runner = Callable[..., subprocess.CompletedProcess]


def training_plan_overrides(settings: dict[str, str], stage: Stage) -> list[str]:
    """The plan overrides a CPT stage's job script passes (job_templates/run_cpt.pbs, run_cpt_eeve.pbs)."""
    import shlex

    s = settings
    common = [
        f"data.root={s['PROCESSED_DIR']}",
        f"data.num_chunks={s['NUM_CHUNKS']}",
        f"output_root={s['OUTPUT_ROOT']}",
        f"model.pretrained={s['BASE_MODEL']}",
        f"cluster.nodes={s['TRAIN_NODES']}",
        f"cluster.gpus_per_node={s['TRAIN_NGPUS']}",
        f"cluster.gpu_memory={s['GPU_MEMORY']}",
        f"cluster.gpu_type={s['GPU_TYPE']}",
    ]
    if stage.name.startswith("cpt_eeve"):
        extra = shlex.split(s["TRAIN_OVERRIDES"]) + shlex.split(s["EEVE_OVERRIDES"])
        return [*stage.plan, "engine=hf", f"model.tokenizer={s['EEVE_TOKENIZER']}", *common, *extra]
    engine = ["engine=hf"] if s["TRAIN_ENGINE"] == "hf" else []
    return [
        *stage.plan,
        *engine,
        f"model.tokenizer={s['TOKENIZER']}",
        *common,
        *shlex.split(s["TRAIN_OVERRIDES"]),
    ]


def check_training_memory(settings: dict[str, str], stages: list[Stage], echo=print) -> None:
    """Plan the memory of every CPT run about to be submitted on GPU_MEMORY (its job's check stage does the same),
    so that a chain is not queued for hours to die of out-of-memory; PipelineError naming what fits otherwise."""
    from morphcpt.plan.compose import load_plan
    from morphcpt.train.memory.planner import DoesNotFit, check_fits, engine_world, per_rank_batch

    for stage in stages:
        if stage.group != "cpt" or stage.check() is None:
            continue
        plan = load_plan(training_plan_overrides(settings, stage))
        engine = "hf" if plan.data.scheme == "eeve" else plan.engine
        try:
            per_rank_batch(plan, engine, engine_world(plan, engine))
        except ValueError as error:  # the job's check stage would refuse it after the queue
            raise PipelineError(
                f"{stage.name} cannot split its global batch over TRAIN_NODES={plan.cluster.nodes} x "
                f"TRAIN_NGPUS={plan.cluster.gpus_per_node} GPUs ({error}), so nothing was submitted: choose a "
                "number of nodes that divides it, or another loop.global_batch_size in TRAIN_OVERRIDES"
            ) from None
        try:
            fit = check_fits(plan, engine, engine_world(plan, engine))
        except DoesNotFit as error:
            raise PipelineError(
                f"{stage.name} would not fit its GPUs, so nothing was submitted:\n{error}\nChange TRAIN_OVERRIDES "
                "(or EEVE_OVERRIDES) or GPU_MEMORY in .env and rerun."
            ) from None
        except (
            OSError,
            ValueError,
        ) as error:  # a model or tokenizer the chain makes first, or an offline Hub id
            echo(f"{stage.name:<22} memory not planned here ({error}); its job's check stage plans it")
            continue
        echo(
            f"{stage.name:<22} memory: {fit['estimate_gib']:.1f} of {fit['usable_gib']:.1f} GiB per GPU "
            f"({engine}, {fit['layout']}, micro batch {fit['micro_batch']}, {fit['margin']:.0%} free)"
        )


def select(stages: list[Stage], first: str | None, last: str | None) -> list[Stage]:
    """The stages from group `first` to group `last` (inclusive)."""
    for name in (first, last):
        if name is not None and name not in GROUPS:
            raise PipelineError(f"unknown stage {name!r}: the stages are {', '.join(GROUPS)}")
    lo, hi = GROUPS.index(first or GROUPS[0]), GROUPS.index(last or GROUPS[-1])
    if lo > hi:
        raise PipelineError(f"--from {first} comes after --to {last} (the order is {' → '.join(GROUPS)})")
    return [stage for stage in stages if lo <= GROUPS.index(stage.group) <= hi]


class Chain:
    """Submission and status of a chain of stages with one scheduler; ids recorded in `state_file`."""

    def __init__(self, settings: dict[str, str], jobs_dir: Path, runner: Runner = subprocess.run):
        self.settings = settings
        self.sched = scheduler.get(settings["SCHEDULER"])
        self.jobs_dir = Path(jobs_dir)
        self.runner = runner
        self.state_file = Path(settings["LOG_DIR"]) / "pipeline" / f"jobs_{self.sched.name}.json"
        self.state: dict[str, str] = {}

    def read_state(self) -> dict[str, str]:
        """The job ids recorded by earlier submissions, or `JSONFileError` saying how to go on without them."""
        fix = (
            f"it holds the ids of jobs submitted earlier, so that a rerun waits for them instead of submitting "
            f"them again. See what is still queued ({self.sched.status_command} -u $USER), cancel it or let it "
            f"finish, then move the file aside (mv {self.state_file} {self.state_file}.bad) and rerun: stages "
            "whose outputs are on disk are skipped"
        )
        state = read_json(self.state_file, default={}, what="the chain's job ids", fix=fix)
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in state.items()):
            raise JSONFileError(
                f"{self.state_file} (the chain's job ids) holds other values than job ids; {fix}"
            )
        return state

    def _save(self) -> None:
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.state_file, self.state, indent=1)

    def script(self, stage_script: str) -> str:
        return str(self.jobs_dir / (stage_script + self.sched.suffix))

    def job_state(self, job_id: str | None) -> str | None:
        """The scheduler's state of a job it still holds, else None (finished, failed, never known)."""
        if not job_id or not shutil.which(self.sched.status_command):
            return None
        result = self.runner(self.sched.status_argv(job_id), capture_output=True, text=True)
        return self.sched.parse_state(result.stdout) if result.returncode == 0 else None

    def _latest_training_job(self, stage: Stage) -> str | None:
        latest = Path(stage.run_dir) / "latest_job"
        if latest.exists() and latest.read_text().strip():
            try:
                return self.sched.parse_job_id(latest.read_text())
            except scheduler.SchedulerError:
                return None
        return self.state.get(f"{stage.name}.train")

    def _submit(self, stage_name: str, script: str, after: list[str], hold: bool = False) -> str:
        argv = self.sched.submit_argv(script, after, hold)
        result = self.runner(argv, capture_output=True, text=True)
        if result.returncode != 0:
            message = (result.stderr or result.stdout).strip() or f"exit status {result.returncode}"
            raise PipelineError(
                f"{argv[0]} rejected {stage_name} ({script}): {message}\n"
                f"Nothing after it was submitted; the jobs submitted before it are recorded in {self.state_file}. "
                "Fix the cause and rerun the same command: it submits only what is left."
            )
        lockfile.heartbeat(chain_lock(self.settings))
        return self.sched.parse_job_id(result.stdout)

    def submit(
        self, stages: list[Stage], everything: list[Stage], dry_run: bool, echo=print
    ) -> dict[str, str]:
        """Submit `stages` (a part of `everything`) in order; return the id each stage's dependants wait for."""
        if not dry_run and not shutil.which(self.sched.submit_command):
            raise PipelineError(
                f"{self.sched.submit_command} not found on PATH: run this on a login node of the "
                f"{self.sched.name} cluster, or set SCHEDULER={'slurm' if self.sched.name == 'pbs' else 'pbs'} in .env"
            )
        self.state = self.read_state()
        done = completion.stage_states(everything)
        chosen = {stage.name for stage in stages}
        waits: dict[str, str] = {}
        now: set[str] = set()  # stages submitted by this call
        for stage in everything:
            finished, line = done[stage.name]
            if finished:
                echo(f"{stage.name:<22} {line}")
                continue
            recorded = self.state.get(stage.name)
            state = self.job_state(recorded)
            if state and (stage.group != "cpt" or self.job_state(self._latest_training_job(stage))):
                # A queued job waits only on what it was submitted after: stages this call adds (seeds added
                # while the first submission waits) get it submitted again, after itself and them.
                added = [name for name in stage.inputs if name in now]
                if not added or stage.group == "cpt":
                    waits[stage.name] = recorded
                    echo(f"{stage.name:<22} already in the queue: {recorded} ({state})")
                    continue
                if stage.name not in chosen:
                    waits[stage.name] = recorded
                    echo(
                        f"{stage.name:<22} already in the queue: {recorded} ({state}), but it does not wait for "
                        f"{', '.join(added)} (outside --from/--to): rerun without --from/--to to include them"
                    )
                    continue
                after = [recorded] + [waits[name] for name in stage.inputs if name in waits]
                waits[stage.name] = self._submit_stage(stage, after, dry_run, gate=None)
                now.add(stage.name)
                echo(
                    f"{stage.name:<22} queued {recorded} waits only on the runs submitted before; "
                    f"{'would submit' if dry_run else 'submitted'} {waits[stage.name]} after it and "
                    f"{', '.join(added)}"
                )
                continue
            if stage.name not in chosen:
                if any(stage.name in other.inputs for other in stages):
                    echo(
                        f"{stage.name:<22} not done and outside --from/--to: its dependants will not wait for it"
                    )
                continue
            after = [waits[name] for name in stage.inputs if name in waits]
            waits[stage.name] = self._submit_stage(stage, after, dry_run, gate=recorded if state else None)
            now.add(stage.name)
            shown = f" after {' '.join(after)}" if after else ""
            echo(f"{stage.name:<22} {'would submit' if dry_run else 'submitted'} {waits[stage.name]}{shown}")
        return waits

    def _submit_stage(self, stage: Stage, after: list[str], dry_run: bool, gate: str | None) -> str:
        script = self.script(stage.script)
        if dry_run:
            if stage.group == "cpt":
                print(
                    "  "
                    + " ".join(self.sched.submit_argv(self.script(f"cpt_done_{stage.name[4:]}"), [], True))
                )
            print("  " + " ".join(self.sched.submit_argv(script, after)))
            return f"<{stage.name}>"
        if stage.group != "cpt":
            self.state[stage.name] = self._submit(stage.name, script, after)
            self._save()
            return self.state[stage.name]
        if gate is None:  # the held gate first, so the release file exists before training can finish
            gate = self._submit(stage.name, self.script(f"cpt_done_{stage.name[4:]}"), [], hold=True)
            self.state[stage.name] = gate
            self._save()
        Path(stage.run_dir).mkdir(parents=True, exist_ok=True)
        (Path(stage.run_dir) / "release_on_complete").write_text(gate + "\n")
        training = self._submit(stage.name, script, after)
        (Path(stage.run_dir) / "latest_job").write_text(training + "\n")
        self.state[f"{stage.name}.train"] = training
        self._save()
        return gate

    def status(self, stages: list[Stage], echo=print) -> None:
        """One line per stage: done on disk, or where its job stands in the scheduler."""
        if not shutil.which(self.sched.status_command):
            echo(f"({self.sched.status_command} not found: showing the markers on disk only)")
        try:
            self.state = self.read_state()
        except JSONFileError as error:
            echo(
                f"warning: {error}\n(showing what is on disk only: the jobs of earlier submissions are unknown)"
            )
            self.state = {}
        done = completion.stage_states(stages)
        for stage in stages:
            recorded = self.state.get(stage.name)
            finished, why = done[stage.name]
            if finished:
                line = why
            elif stage.group == "cpt" and recorded:
                training = self._latest_training_job(stage)
                line = (
                    f"training job {training}: {self.job_state(training) or 'not in the queue'}; "
                    f"gate {recorded}: {self.job_state(recorded) or 'not in the queue'}"
                )
            elif recorded:
                line = (
                    f"job {recorded}: {self.job_state(recorded) or 'not in the queue (failed or cancelled?)'}"
                )
            else:
                line = f"not submitted ({why})"
            echo(f"{stage.name:<22} {line}")


def chain_lock(settings: dict[str, str]) -> Path:
    """The claim one submission (or `--local` run) of the chain holds: `$LOG_DIR/pipeline/chain.lock`."""
    return Path(settings["LOG_DIR"]) / "pipeline" / "chain.lock"


def main(argv: list[str] | None = None, runner: Runner = subprocess.run) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="first", metavar="STAGE", help=f"first stage: {', '.join(GROUPS)}")
    parser.add_argument("--to", dest="last", metavar="STAGE", help="last stage")
    parser.add_argument("--schemes", nargs="+", help="tokenization schemes (default: all)")
    parser.add_argument(
        "--seeds",
        type=int,
        metavar="N",
        help="training runs per arm, seeds 0..N-1 (default: SEEDS in .env, else 1)",
    )
    parser.add_argument(
        "--recipes",
        choices=sorted(jobs.RECIPE_SETS),
        help="cpt: gemma-3-1b-pt (default); pilot: gemma-3-270m on a token budget (RECIPES in .env)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would be submitted; submit nothing"
    )
    parser.add_argument("--status", action="store_true", help="where the chain stands, then exit")
    parser.add_argument(
        "--local", action="store_true", help="run the job scripts here, in order, instead of submitting them"
    )
    parser.add_argument(
        "--sample",
        action="store_true",
        help="with --local: the shipped sample, a tiny model on CPU, everything under --output-dir",
    )
    parser.add_argument(
        "--base-model",
        type=Path,
        metavar="DIR",
        help="with --local --sample: continue from this pretrained HF folder (its tokenizer too), e.g. the real "
        "Gemma 3 270M of scripts/fetch_real_model.py, at a CPU's budget (docs/real-model.md)",
    )
    parser.add_argument("--output-dir", type=Path, default=paths.OUTPUTS_DIR / "chain", help="for --sample")
    parser.add_argument("--env", default=".env", help="settings file (skipped when missing)")
    parser.add_argument(
        "--jobs-dir", help="where the job scripts are rendered (default: jobs; --sample: in --output-dir)"
    )
    parser.add_argument("--scheduler", choices=sorted(scheduler.SCHEDULERS), help="overrides SCHEDULER")
    args = parser.parse_args(argv)
    if args.sample and not args.local:
        parser.error("--sample runs the chain here: add --local")
    if args.base_model and not args.sample:
        parser.error("--base-model runs the sample chain from that model: add --local --sample")
    if args.base_model and not (args.base_model / "config.json").is_file():
        parser.error(f"--base-model {args.base_model}: not a Hugging Face model folder (no config.json)")
    env = jobs.read_env(args.env) if Path(args.env).exists() and not args.sample else {}
    if args.sample:
        mine = jobs.read_env(args.env) if Path(args.env).exists() else {}
        env = local.sample_settings(args.output_dir)
        if args.base_model:
            env = local.base_model_settings(args.output_dir, args.base_model)
        if (
            mine.get("SEEDS") and args.seeds is None
        ):  # the sample keeps its own paths, but not silently one seed
            env["SEEDS"] = mine["SEEDS"]
            print(f"--sample: SEEDS={mine['SEEDS']} from {args.env} (--seeds N overrides it)")
    if args.scheduler:
        env["SCHEDULER"] = args.scheduler
    if args.recipes:
        env["RECIPES"] = args.recipes
    if args.seeds is not None:
        if args.seeds < 1:
            parser.error("--seeds must be 1 or more")
        env["SEEDS"] = str(args.seeds)
    jobs_dir = Path(args.jobs_dir or (args.output_dir / "jobs" if args.sample else "jobs"))
    started = time.perf_counter()
    try:
        settings = jobs.derived_settings({**jobs.SETTINGS, **env})
        everything = build_stages(settings, args.schemes)
        stages = select(everything, args.first, args.last)
        chain = Chain(settings, jobs_dir, runner)
        if args.status:
            chain.status(everything)
            return 0
        # one submission (or local run) of the chain at a time: two would submit every job twice
        what = "running the chain here (--local)" if args.local else "submitting the chain"
        training = any(stage.group == "cpt" for stage in stages)
        if args.local and training and settings["TRAIN_NODES"] != "1":
            raise PipelineError(
                f"TRAIN_NODES={settings['TRAIN_NODES']} (.env) trains each run across that many nodes of a "
                "scheduler's job, and --local runs the chain on this one machine: set TRAIN_NODES=1 for --local, "
                "or submit the chain (without --local)"
            )
        with lockfile.claim(chain_lock(settings), what):
            jobs.render_jobs(paths.REPO_ROOT / "job_templates", jobs_dir, env)
            if args.local:
                if args.sample and not args.base_model:
                    local.make_sample_base(Path(settings["BASE_MODEL"]))
                check_training_memory(settings, stages)
                local.run(
                    stages,
                    everything,
                    settings,
                    jobs_dir,
                    no_enroot=args.sample or not shutil.which("enroot"),
                )
                report = Path(settings["RESULTS_DIR"]) / "analysis" / "report.md"
                print(
                    f"the chain ran here in {time.perf_counter() - started:.0f} s; logs in {settings['LOG_DIR']}/local"
                )
                if report.exists():
                    print(f"report: {report}")
                return 0
            if settings["AUTO_RESUBMIT"] != "1" and training:
                print(
                    "note: AUTO_RESUBMIT is not 1: resubmit unfinished CPT runs by hand; the chain waits for them"
                )
            if settings["TRAIN_NODES"] != "1" and training:
                print(
                    f"note: each CPT run trains on {settings['TRAIN_NODES']} nodes of {settings['TRAIN_NGPUS']} "
                    "GPUs (TRAIN_NODES, docs/multi-node.md)"
                )
            check_training_memory(settings, stages)
            chain.submit(stages, everything, args.dry_run)
    except UserError as error:  # a refused submission, a bad setting, a broken file, another submission
        print(f"submit_pipeline: {error}", file=sys.stderr)
        return 1
    if not args.dry_run:
        print(f"where it stands: python scripts/submit_pipeline.py --status   (ids in {chain.state_file})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
