"""EEVE staged training: resize a model to an expanded tokenizer, then run the seven stages with the hf loop.

    python -m morphcpt.train recipe=eeve                         # data.scheme=eeve runs here (hf engine)
    torchrun --nproc-per-node 8 -m morphcpt.train recipe=eeve    # several GPUs
    result = run(load_plan(["recipe=demo_eeve", ...]))

`model.pretrained` is the model to expand and `model.tokenizer` the expanded tokenizer folder
(`morphcpt.tokenization.eeve`). First the model is resized (once, into `<run_dir>/resized`): embedding and output
rows grow to the expanded vocabulary; a new piece's input row is the mean of the input rows of its pieces under the
base tokenizer and its output row is the output row of its first base piece (EEVE, Kim et al., 2024); rows between
the base model's rows and the first new id (ids only the base tokenizer's added tokens use) start as the mean
row and stay frozen like the old rows.

Gemma 3 ties its input and output embeddings. The resized model is **untied** (`tie_word_embeddings=false`):
stages 1, 2 and 4 train one of the two matrices and freeze the other, and EEVE initialises a new piece's input
and output rows differently, which a single shared matrix cannot hold. The export therefore has its own
`lm_head.weight` and a config that says so, and transformers loads it as two matrices.

Stages (each starts from the previous one's final weights; steps and learning rate per stage in `eeve.*`):

    1 new input rows   2 new output rows   3 both   4 whole output head   5 new input rows + whole output head
    6 all parameters   7 transformer layers only (embeddings and output head frozen)

Frozen tensors have `requires_grad=False`, set before the model is laid out over ranks (DDP and FSDP2 read it
when they wrap), so the optimiser holds no state for them. A matrix of which only the new rows train gets a
gradient mask that zeroes the other rows' gradients, and sits in a parameter group with weight decay 0; the
decoupled decay AdamW would have applied is applied to the new rows alone by an optimiser step pre-hook. Under
fsdp each rank holds a slice of the matrix's rows, so masks and decay act on the rows of that slice, located by
the shard's global offset. Masked rows therefore never move: with a zero gradient Adam's moments stay zero and its
update is exactly zero (the tests check frozen rows bit for bit, on one rank and on two under ddp and fsdp).

Each stage is an ordinary hf-engine run in `<run_dir>/stages/stage<k>` (resumable inside the stage);
`stage_done.json` marks a finished stage, and a rerun skips it. A plan whose first stage is k > 1 continues from
the last stage below k finished in the run folder (`eeve.stages=[3,...]` after `[1,2]` starts from stage 2's
weights), says so, and refuses a stage below k that was started and not finished. The final stage is exported to
`<output_root>/exports/<run_name>` with the EEVE facts (all the stages of the chain) in its metadata.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

from morphcpt import completion
from morphcpt.jsonio import JSONFileError, read_json, write_json
from morphcpt.modeling.resize import RESIZE_FILE, resize
from morphcpt.plan.schema import CPTPlan, PlanError
from morphcpt.tokenization.eeve import Expansion
from morphcpt.train.eeve.params import STAGE_NAMES, StageParams
from morphcpt.train.engine import Engine
from morphcpt.train.hf.parallel import barrier

STAGE_DONE = "stage_done.json"


@dataclass
class EEVEResult:
    run_dir: Path
    stages_run: list[int]  # every stage finished so far (this call or earlier ones)
    interrupted: bool  # a stage stopped early (SIGTERM or loop.max_steps_per_run); rerun to continue
    val_bpb: float
    export: Path | None
    # As `hf.RunResult` says them, for the command's exit status and message (`morphcpt.train.exit_status`):
    # the last stage that ran, its step and newest checkpoint, and whether SIGTERM stopped it.
    stage: int | None = None
    final_step: int = 0
    checkpoint_dir: Path | None = None
    signalled: bool = False


# --- resizing -------------------------------------------------------------------------------------------------


# --- the stages -------------------------------------------------------------------------------------------------


def stage_dir(plan: CPTPlan, stage: int) -> Path:
    return Path(plan.run_dir) / "stages" / f"stage{stage}"


def stage_plan(plan: CPTPlan, stage: int, start_from: Path) -> CPTPlan:
    """The hf-engine plan of one stage: the EEVE plan with this stage's folder, start, length and learning rate."""
    from morphcpt.plan.schema import validate

    sub = copy.deepcopy(plan)
    sub.run_name = f"{plan.run_name}-stage{stage}"
    sub.run_dir = str(stage_dir(plan, stage))
    sub.model.pretrained = str(start_from)
    sub.model.vocab_size = None
    sub.loop.steps = plan.eeve.steps[stage - 1]
    sub.optim.lr = plan.eeve.lr[stage - 1]
    sub.optim.min_lr = plan.eeve.lr[stage - 1] * plan.eeve.min_lr_ratio
    sub.optim.warmup_steps = plan.eeve.warmup_steps[stage - 1]
    sub.eeve.stages = [stage]
    return validate(sub)


def run(plan: CPTPlan) -> EEVEResult:
    """Resize (once), run the plan's stages in order (skipping finished ones), export after the last."""
    from morphcpt.train.data import check_ready
    from morphcpt.train.hf import engine

    if plan.engine != "hf":
        raise PlanError("EEVE stages run with the hf engine (engine=hf); for Megatron see docs/eeve.md")
    if not plan.model.pretrained or not plan.model.tokenizer:
        raise PlanError(
            "EEVE needs model.pretrained (the model to expand) and model.tokenizer (the expanded one)"
        )
    plan.eeve.check()
    main = engine._setup_ranks().main  # torchrun: one process resizes, marks and exports; the others wait
    root = Path(plan.run_dir)
    root.mkdir(parents=True, exist_ok=True)
    resized = root / "resized"
    # what the run is made of, checked before anything is made from it: the expansion record the resize reads,
    # the data, and that none of them changed under a run folder holding stages made from them
    Expansion.load(plan.model.tokenizer)
    check_ready(plan.data)
    check_inputs(plan, main)
    earlier, start_from = earlier_stages(plan)
    if main:
        print(chain_message(plan, earlier, start_from))
    if main and (problem := _resized_problem(resized)):
        if problem != "missing":
            print(f"EEVE: the resized model {resized} is not whole ({problem}); resizing again")
        resize(plan.model.pretrained, plan.model.tokenizer, resized)
    barrier()
    facts = read_json(resized / RESIZE_FILE, keys=("first_new_id", "rows"), fix=f"remove {resized} and rerun")
    new_rows = (facts["first_new_id"], facts["rows"])
    done, val_bpb = [], float("nan")
    finished = finished_stages(plan)
    for stage in plan.eeve.stages:
        sub = stage_plan(plan, stage, start_from)
        if stage in finished:
            record = finished[stage]
            print(f"EEVE stage {stage} ({STAGE_NAMES[stage]}): already done, skipped")
        else:
            params = StageParams(stage, new_rows)
            result = engine.train(
                sub, engine.TrainHooks(params.param_groups, params.on_optimizer, params.freeze)
            )
            counts = params.counts
            barrier()
            if main:
                print(
                    f"EEVE stage {stage} ({STAGE_NAMES[stage]}): {counts['trainable']:,} of {counts['total']:,} "
                    f"parameters trainable; {result.final_step} steps, val bits/byte {result.val_bpb:.4f}"
                )
            if result.interrupted:
                return EEVEResult(
                    root,
                    done,
                    True,
                    result.val_bpb,
                    None,
                    stage=stage,
                    final_step=result.final_step,
                    checkpoint_dir=result.checkpoint_dir,
                    signalled=result.signalled,
                )
            record = {
                "stage": stage,
                "name": STAGE_NAMES[stage],
                "start": str(start_from),  # what it continued from: the resized model or the stage before
                "config_hash": sub.config_hash(),
                "checkpoint": str(result.checkpoint_dir),
                "steps": result.final_step,
                "trainable_parameters": counts["trainable"],
                "total_parameters": counts["total"],
                "val_loss": result.val_loss,
                "val_bpb": result.val_bpb,
            }
            if main:
                write_json(stage_dir(plan, stage) / STAGE_DONE, record)
        done.append(stage)
        start_from, val_bpb = Path(record["checkpoint"]) / "model", record["val_bpb"]
    export = export_final(plan, earlier + done, facts) if main else None
    barrier()
    last = finished.get(done[-1]) or record
    return EEVEResult(
        root,
        done,
        False,
        val_bpb,
        export,
        stage=done[-1],
        final_step=last["steps"],
        checkpoint_dir=Path(last["checkpoint"]),
    )


def _resized_problem(resized: Path) -> str | None:
    """None when the resized model is whole: its record and the model files. The resize is a function of the
    run's inputs, which `check_inputs` has just compared, so one that is not whole is simply made again."""
    if not (resized / RESIZE_FILE).exists():
        return "missing"
    try:
        read_json(resized / RESIZE_FILE, keys=("first_new_id", "rows"))
    except JSONFileError as error:
        return str(error)
    if not (resized / "config.json").is_file() or not any(resized.glob("*.safetensors")):
        return "its config.json or weights are missing"
    return None


def earlier_stages(plan: CPTPlan) -> tuple[list[int], Path]:
    """The stages below the plan's first one that finished in this run folder (a chain: each started from the
    one before it, the first from the resized model), and what the plan's first stage therefore starts from:
    the last of them's final weights, else the resized model. So `eeve.stages=[3,4,5,6,7]` after a run of
    `[1,2]` continues from stage 2. A stage below the first one that was started but not finished, or whose
    final weights are gone, is refused with what to do: going on would silently skip it."""
    start = Path(plan.run_dir) / "resized"
    chain: list[int] = []
    first = plan.eeve.stages[0]
    listed = ",".join(map(str, plan.eeve.stages))
    for stage in range(1, first):
        folder = stage_dir(plan, stage)
        if not folder.exists():
            continue
        marker = folder / STAGE_DONE
        fix = f"rerun with eeve.stages=[{stage},{listed}] to finish stage {stage} first, or remove {folder}"
        record = read_json(marker, default=None, keys=("checkpoint", "steps"), fix=fix)
        if record is None:
            raise PlanError(
                f"EEVE stage {stage} was started in {folder} but not finished, and eeve.stages=[{listed}] starts "
                f"at stage {first}, which would go on without it: {fix} (then stage {first} starts from the "
                "stage before it)"
            )
        model = Path(record["checkpoint"]) / "model"
        if "start" in record and Path(record["start"]).resolve() != start.resolve():
            raise PlanError(
                f"EEVE stage {stage} in {folder} started from {record['start']}, not from {start} (what the "
                f"stages before it in this run folder end with), so stage {first} has no single chain to "
                f"continue: remove {folder} (or the stages it did not start from) and rerun"
            )
        if not (model / "config.json").is_file():
            raise PlanError(
                f"EEVE stage {stage} is marked done in {folder}, but its final weights {model} are gone, and "
                f"stage {first} would start from them: {fix}"
            )
        chain.append(stage)
        start = model
    return chain, start


def chain_message(plan: CPTPlan, earlier: list[int], start: Path) -> str:
    """What the plan's first stage continues from, said before it runs."""
    first = plan.eeve.stages[0]
    if earlier:
        done = ", ".join(map(str, earlier))
        return (
            f"EEVE: stage{'s' * (len(earlier) > 1)} {done} finished earlier in {plan.run_dir}; stage {first} "
            f"continues from stage {earlier[-1]}'s final weights ({start})"
        )
    if first > 1:
        return (
            f"EEVE: no stage before stage {first} finished in {plan.run_dir}; stage {first} starts from the "
            f"resized model ({start})"
        )
    return f"EEVE: stage {first} starts from the resized model ({start})"


def _stage_records(plan: CPTPlan) -> dict[int, dict]:
    """{stage: its `stage_done.json`} for the plan's stages whose marker was written for this plan's settings,
    starting from what the stage before it ended with (a stage after one that is not done is not done either)."""
    records: dict[int, dict] = {}
    start: Path | None = earlier_stages(plan)[1]
    for stage in plan.eeve.stages:
        marker = stage_dir(plan, stage) / STAGE_DONE
        try:
            record = read_json(marker, default=None, fix="the stage runs again, from its newest checkpoint")
        except JSONFileError as error:  # cut off or garbled: not known to be done
            print(f"EEVE stage {stage}: {error}")
            record = None
        if start is None or record is None or not {"checkpoint", "steps", "val_bpb"} <= set(record):
            start = None
            continue
        if record.get("config_hash") != stage_plan(plan, stage, start).config_hash():
            start = None
            continue
        records[stage] = record
        start = Path(record["checkpoint"]) / "model"
    return records


def finished_stages(plan: CPTPlan) -> dict[int, dict]:
    """{stage: its stage_done record} of the plan's finished stages. "Finished" means the marker and the checkpoint
    it names: a stage whose final checkpoint is gone is finished only when nothing needs that checkpoint any more
    (the next stage is finished, or it is the last stage and the export exists); otherwise it runs again and
    continues from its newest intact checkpoint (and the stages after it run again too)."""
    records = _stage_records(plan)
    stages = list(plan.eeve.stages)
    exported = completion.export(Path(plan.output_root) / "exports" / plan.run_name) is None
    finished: dict[int, dict] = {}
    for position in range(len(stages) - 1, -1, -1):
        stage = stages[position]
        if stage not in records:
            finished.clear()  # a stage that runs again changes what every later stage starts from
            continue
        later = stages[position + 1] if position + 1 < len(stages) else None
        needed = (later not in finished) if later is not None else not exported
        model = Path(records[stage]["checkpoint"]) / "model"
        if needed and not (model / "config.json").is_file():
            print(f"EEVE stage {stage}: marked done, but its checkpoint {model} is gone; running it again")
            finished.clear()
            continue
        finished[stage] = records[stage]
    return finished


def made_from_inputs(plan: CPTPlan, changed: set[str]) -> list[str]:
    """What exists in the run folder that the `changed` inputs went into: the resized model (tokenizer, base
    model), every stage with a folder (all inputs), the export."""
    root = Path(plan.run_dir)
    made = []
    if changed & {"tokenizer", "base_model"} and (root / "resized").exists():
        made.append(f"{root / 'resized'} (the model resized for the old tokenizer)")
    for stage in STAGE_NAMES:  # every stage this run folder holds, listed in eeve.stages now or not
        folder = stage_dir(plan, stage)
        if folder.exists():
            done = (folder / STAGE_DONE).exists()
            made.append(f"{folder} (stage {stage}, {STAGE_NAMES[stage]}: {'done' if done else 'started'})")
    export = Path(plan.output_root) / "exports" / plan.run_name
    if export.exists():
        made.append(f"{export} (the export)")
    return made


def check_inputs(plan: CPTPlan, main: bool) -> None:
    """Refuse to go on with a run folder holding stages made from other inputs than the plan's now (a tokenizer
    rebuilt in place, data preprocessed again, another base model), naming what was made from them; record the
    inputs (`morphcpt.train.run_inputs`) when nothing depends on them yet or nothing changed."""
    from morphcpt.train import run_inputs

    root = Path(plan.run_dir)
    try:
        recorded = run_inputs.load(root)
    except JSONFileError:
        if made_from_inputs(plan, {"tokenizer", "base_model", "data"}):
            raise
        recorded = None
    current = run_inputs.snapshot(plan, recorded)
    changed = run_inputs.compare(recorded, current)
    made = made_from_inputs(plan, set(changed)) if changed else []
    if made:
        listing = "\n  ".join(made)
        raise run_inputs.InputsChanged(
            f"{root}: the EEVE run's inputs changed since it started:\n{run_inputs.describe(changed)}\n"
            f"Made from the old inputs, and not valid for the new ones:\n  {listing}\n"
            f"To train on the new inputs, remove those folders and rerun (or set a new run_name); to continue "
            "the run as it was, restore the old inputs."
        )
    if main:
        run_inputs.save(root, current)


def export_final(plan: CPTPlan, stages: list[int], facts: dict) -> Path:
    """Export the last stage's final checkpoint to `<output_root>/exports/<run_name>` with the EEVE facts."""
    from morphcpt.export import METADATA_FILE, export_run

    output = Path(plan.output_root) / "exports" / plan.run_name
    last = stage_dir(plan, stages[-1])
    marker = read_json(last / STAGE_DONE, keys=("checkpoint",))
    existing = output / METADATA_FILE
    if existing.exists() and completion.export(output) is None:  # the metadata and the files it lists
        meta = read_json(existing, default={})
        if meta.get("checkpoint") == marker["checkpoint"] and meta.get("eeve", {}).get("stages") == stages:
            return output
    eeve = {
        "added_tokens": facts["added_tokens"],
        "first_new_id": facts["first_new_id"],
        "stages": stages,
        "stage_names": [STAGE_NAMES[k] for k in stages],
        "stage_steps": [read_json(stage_dir(plan, k) / STAGE_DONE)["steps"] for k in stages],
        "tie_word_embeddings": False,
    }
    extra = {"eeve": eeve, "base_model": facts["base_model"], "run_name": plan.run_name}
    return export_run(last, output=output, extra=extra).output


class EEVEEngine(Engine):
    """`data.scheme=eeve` on the hf engine: training is the seven stages (`run`); the check stage and the dry run
    are the hf engine's."""

    name = "hf"

    def check(self, plan: CPTPlan) -> dict:
        from morphcpt.train.hf.engine import HFEngine

        return HFEngine().check(plan)

    def describe(self, plan: CPTPlan) -> dict:
        from morphcpt.train.hf.engine import HFEngine

        return HFEngine().describe(plan)

    def train(self, plan: CPTPlan) -> EEVEResult:
        return run(plan)
