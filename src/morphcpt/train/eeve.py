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

Frozen tensors have `requires_grad=False`, so the optimiser holds no state for them. A matrix of which only the
new rows train gets a gradient hook that zeroes the other rows' gradients, and sits in a parameter group with
weight decay 0; the decoupled decay AdamW would have applied is applied to the new rows alone by an optimiser
step pre-hook. Masked rows therefore never move: with a zero gradient Adam's moments stay zero and its update is
exactly zero (the tests check frozen rows bit for bit). Each stage is an ordinary hf-engine run in
`<run_dir>/stages/stage<k>` (resumable inside the stage); `stage_done.json` marks a finished stage, and a rerun
skips it. The final stage is exported to `<output_root>/exports/<run_name>` with the EEVE facts in its metadata.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch

from morphcpt.train.plan import CPTPlan

STAGE_NAMES = {
    1: "new input rows",
    2: "new output rows",
    3: "new input and output rows",
    4: "whole output head",
    5: "new input rows + whole output head",
    6: "all parameters",
    7: "transformer layers only",
}
# stage -> (input embedding, output head, transformer layers): "new" rows, "all" rows, or None (frozen)
STAGE_TRAINS = {
    1: ("new", None, False),
    2: (None, "new", False),
    3: ("new", "new", False),
    4: (None, "all", False),
    5: ("new", "all", False),
    6: ("all", "all", True),
    7: (None, None, True),
}
RESIZE_FILE = "eeve_resize.json"
STAGE_DONE = "stage_done.json"


@dataclass
class EEVEResult:
    run_dir: Path
    stages_run: list[int]  # every stage finished so far (this call or earlier ones)
    interrupted: bool  # a stage stopped early (SIGTERM or loop.max_steps_per_run); rerun to continue
    val_bpb: float
    export: Path | None


# --- resizing -------------------------------------------------------------------------------------------------


def resize(base_model: str | Path, tokenizer_dir: str | Path, out_dir: str | Path) -> dict:
    """Write the base model grown to the expanded tokenizer, EEVE-initialised and untied, as an HF folder."""
    from transformers import AutoTokenizer, Gemma3ForCausalLM

    from morphcpt.tokenization.eeve import Expansion, ExpansionError
    from morphcpt.tokenization.vocabulary import Vocabulary
    from morphcpt.train.models import load_pretrained

    expansion = Expansion.load(tokenizer_dir)
    expanded = Vocabulary.load(tokenizer_dir)
    base_vocab = Vocabulary.load(base_model)
    if base_vocab.fingerprint != expansion.base_fingerprint:
        raise ExpansionError(
            f"{tokenizer_dir} expands another tokenizer than {base_model}'s (vocabulary fingerprints differ)"
        )
    model = load_pretrained(base_model)
    old_in = model.get_input_embeddings().weight.detach()
    old_out = model.get_output_embeddings().weight.detach()
    rows, size = old_in.shape[0], expanded.size
    if rows > expansion.first_new_id:
        raise ExpansionError(
            f"the base model has {rows} rows, past the first new id {expansion.first_new_id}"
        )
    mean_in, mean_out = old_in.mean(0), old_out.mean(0)
    new_in = torch.cat([old_in, mean_in.expand(size - rows, -1)]).clone()
    new_out = torch.cat([old_out, mean_out.expand(size - rows, -1)]).clone()
    for k, pieces in enumerate(expansion.base_pieces):
        row = expansion.first_new_id + k
        new_in[row] = old_in[pieces].mean(0)
        new_out[row] = old_out[pieces[0]]
    config = copy.deepcopy(model.config)
    config.vocab_size = size
    config.tie_word_embeddings = False
    state = {
        k: v
        for k, v in model.state_dict().items()
        if k not in ("model.embed_tokens.weight", "lm_head.weight")
    }
    state["model.embed_tokens.weight"], state["lm_head.weight"] = new_in, new_out
    resized = Gemma3ForCausalLM(config).float()  # fp32 like the loaded weights, so the copy below is exact
    resized.load_state_dict(state, strict=True)
    out = Path(out_dir)
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    resized.save_pretrained(staging)
    AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(staging)
    facts = {
        "base_model": str(base_model),
        "tokenizer": str(tokenizer_dir),
        "base_rows": rows,
        "rows": size,
        "first_new_id": expansion.first_new_id,
        "added_tokens": expansion.num_new,
        "tie_word_embeddings": False,
    }
    (staging / RESIZE_FILE).write_text(json.dumps(facts, indent=2) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(staging, out)
    return facts


# --- which parameters train -------------------------------------------------------------------------------------


class StageParams:
    """`TrainHooks` for one stage: trainable tensors, row masks, parameter groups and the row-wise decay."""

    def __init__(self, stage: int, new_rows: tuple[int, int]) -> None:
        self.stage = stage
        self.new_rows = new_rows
        self.counts: dict[str, int] = {}

    def param_groups(self, model: torch.nn.Module, weight_decay: float) -> list[dict]:
        embed = model.get_input_embeddings().weight
        head = model.get_output_embeddings().weight
        if embed is head:
            raise ValueError("EEVE stages need untied input and output embeddings (resize the model first)")
        train_in, train_out, train_body = STAGE_TRAINS[self.stage]
        decay, no_decay, row_decay = [], [], []
        counts = {"total": 0, "trainable": 0}
        for param in model.parameters():
            mode = (
                train_in
                if param is embed
                else train_out
                if param is head
                else ("all" if train_body else None)
            )
            counts["total"] += param.numel()
            param.requires_grad_(mode is not None)
            if mode is None:
                continue
            if mode == "new":
                self._mask_rows(param)
                row_decay.append(param)
                counts["trainable"] += (self.new_rows[1] - self.new_rows[0]) * param.shape[1]
            else:
                (decay if param.ndim >= 2 else no_decay).append(param)
                counts["trainable"] += param.numel()
        self.counts = counts
        groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
        if row_decay:
            groups.append(
                {
                    "params": row_decay,
                    "weight_decay": 0.0,
                    "row_decay": weight_decay,
                    "rows": list(self.new_rows),
                }
            )
        return [g for g in groups if g["params"]]

    def _mask_rows(self, param: torch.nn.Parameter) -> None:
        frozen = torch.ones(param.shape[0], 1, dtype=torch.bool, device=param.device)
        frozen[self.new_rows[0] : self.new_rows[1]] = False
        param.register_hook(lambda grad: grad.masked_fill(frozen, 0.0))

    @staticmethod
    def on_optimizer(optimizer: torch.optim.Optimizer) -> None:
        """AdamW's decoupled decay, p <- p (1 - lr wd), on the new rows only (masked rows are never decayed)."""

        @torch.no_grad()
        def decay_rows(opt, args, kwargs) -> None:
            for group in opt.param_groups:
                if group.get("row_decay"):
                    start, stop = group["rows"]
                    for param in group["params"]:
                        param[start:stop].mul_(1 - group["lr"] * group["row_decay"])

        optimizer.register_step_pre_hook(decay_rows)


# --- the stages -------------------------------------------------------------------------------------------------


def stage_dir(plan: CPTPlan, stage: int) -> Path:
    return Path(plan.run_dir) / "stages" / f"stage{stage}"


def stage_plan(plan: CPTPlan, stage: int, start_from: Path) -> CPTPlan:
    """The hf-engine plan of one stage: the EEVE plan with this stage's folder, start, length and learning rate."""
    from morphcpt.train.plan import validate

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
    from morphcpt.train import hf

    if plan.engine != "hf":
        raise ValueError(
            "EEVE stages run with the hf engine (engine=hf); for Megatron see the README's EEVE section"
        )
    if not plan.model.pretrained or not plan.model.tokenizer:
        raise ValueError(
            "EEVE needs model.pretrained (the model to expand) and model.tokenizer (the expanded one)"
        )
    plan.eeve.check()
    main = hf._setup_ranks().main  # torchrun: one process resizes, marks and exports; the others wait
    root = Path(plan.run_dir)
    root.mkdir(parents=True, exist_ok=True)
    resized = root / "resized"
    if main and not (resized / RESIZE_FILE).exists():
        resize(plan.model.pretrained, plan.model.tokenizer, resized)
    _barrier()
    facts = json.loads((resized / RESIZE_FILE).read_text())
    new_rows = (facts["first_new_id"], facts["rows"])
    start_from, done, val_bpb = resized, [], float("nan")
    for stage in plan.eeve.stages:
        sub = stage_plan(plan, stage, start_from)
        marker = stage_dir(plan, stage) / STAGE_DONE
        if marker.exists() and json.loads(marker.read_text())["config_hash"] == sub.config_hash():
            record = json.loads(marker.read_text())
            print(f"EEVE stage {stage} ({STAGE_NAMES[stage]}): already done, skipped")
        else:
            params = StageParams(stage, new_rows)
            result = hf.train(sub, hf.TrainHooks(params.param_groups, params.on_optimizer))
            counts = params.counts
            _barrier()
            if main:
                print(
                    f"EEVE stage {stage} ({STAGE_NAMES[stage]}): {counts['trainable']:,} of {counts['total']:,} "
                    f"parameters trainable; {result.final_step} steps, val bits/byte {result.val_bpb:.4f}"
                )
            if result.interrupted:
                return EEVEResult(root, done, True, result.val_bpb, None)
            record = {
                "stage": stage,
                "name": STAGE_NAMES[stage],
                "config_hash": sub.config_hash(),
                "checkpoint": str(result.checkpoint_dir),
                "steps": result.final_step,
                "trainable_parameters": counts["trainable"],
                "total_parameters": counts["total"],
                "val_loss": result.val_loss,
                "val_bpb": result.val_bpb,
            }
            if main:
                marker.write_text(json.dumps(record, indent=2) + "\n")
        done.append(stage)
        start_from, val_bpb = Path(record["checkpoint"]) / "model", record["val_bpb"]
    export = export_final(plan, done, facts) if main else None
    _barrier()
    return EEVEResult(root, done, False, val_bpb, export)


def _barrier() -> None:
    import torch.distributed as dist

    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


def export_final(plan: CPTPlan, stages: list[int], facts: dict) -> Path:
    """Export the last stage's final checkpoint to `<output_root>/exports/<run_name>` with the EEVE facts."""
    from morphcpt.export import METADATA_FILE, export_run

    output = Path(plan.output_root) / "exports" / plan.run_name
    last = stage_dir(plan, stages[-1])
    marker = json.loads((last / STAGE_DONE).read_text())
    existing = output / METADATA_FILE
    if existing.exists():
        meta = json.loads(existing.read_text())
        if meta.get("checkpoint") == marker["checkpoint"] and meta.get("eeve", {}).get("stages") == stages:
            return output
    eeve = {
        "added_tokens": facts["added_tokens"],
        "first_new_id": facts["first_new_id"],
        "stages": stages,
        "stage_names": [STAGE_NAMES[k] for k in stages],
        "stage_steps": [plan.eeve.steps[k - 1] for k in stages],  # `step` is the last stage's own step
        "tie_word_embeddings": False,
    }
    extra = {"eeve": eeve, "base_model": facts["base_model"], "run_name": plan.run_name}
    return export_run(last, output=output, extra=extra).output
