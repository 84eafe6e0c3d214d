"""Which Megatron-Bridge releases the cluster engine supports, and where their APIs differ.

The NeMo 26.04 container ships Megatron-Bridge 0.4.x (megatron-core 0.17); the newest release on PyPI is 0.6.x
(megatron-core 0.19). Both are checked in CI against the real packages (`make test-cluster`, tests/cluster). The
differences that matter to us, each looked up from the installed version, never guessed:

- the Gemma 3 1B pretraining recipe: `recipes.gemma.gemma3.gemma3_1b_pretrain_config` in 0.4; in 0.6 the real
  function is `recipes.gemma.h100.gemma3.gemma3_1b_pretrain_1gpu_h100_bf16_config` and the old name an alias;
- `TokenizerConfig.use_tokenizer_vocab_size` exists only from 0.6: there it must be False, or the model's vocabulary
  follows the tokenizer's size (0.4 has no such field and setting it is an AttributeError on every rank);
- neither has a recipe for another Gemma 3 size (the pilot's gemma-3-270m): `model_shape_from_hf` gives the 1B
  recipe's model that model's shape, read by AutoBridge from its Hugging Face config. (In 0.4 the Gemma 3 bridge
  reads the config again from its path, so `AutoBridge.from_hf_config` fails there; `from_hf_pretrained` on a
  Hub id or a folder with config.json works on both.)

    version = require_supported()            # the installed release, or UnsupportedBridgeError saying why
    cfg = recipe(version)()                  # the recipe's ConfigContainer

The container probe — the one check of a container's versions, run by setup_enroot.sh and by verify_setup:

    python -m morphcpt.train.megatron.compat   # inside the container: versions, then "supported: ..." or exit 1
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class UnsupportedBridgeError(RuntimeError):
    """The installed Megatron-Bridge is missing or a release this code was not checked against."""


@dataclass(frozen=True)
class BridgeAPI:
    """What differs between supported releases."""

    series: tuple[int, int]
    container: str  # where this release comes from, for messages
    recipe_paths: tuple[tuple[str, str], ...]  # (module, function), first importable wins
    extra_overrides: tuple[tuple[str, Any], ...] = ()


SUPPORTED: dict[tuple[int, int], BridgeAPI] = {
    (0, 4): BridgeAPI(
        series=(0, 4),
        container="NeMo Framework 26.04 (megatron-core 0.17)",
        recipe_paths=(("megatron.bridge.recipes.gemma.gemma3", "gemma3_1b_pretrain_config"),),
    ),
    (0, 6): BridgeAPI(
        series=(0, 6),
        container="PyPI / the NeMo 26.08 line (megatron-core 0.19)",
        recipe_paths=(
            ("megatron.bridge.recipes.gemma.h100.gemma3", "gemma3_1b_pretrain_1gpu_h100_bf16_config"),
            ("megatron.bridge.recipes.gemma.gemma3", "gemma3_1b_pretrain_config"),
        ),
        extra_overrides=(("tokenizer.use_tokenizer_vocab_size", False),),
    ),
}


def parse_version(text: str) -> tuple[int, int]:
    """ "0.4.0", "0.6.2rc1", "0.4.0+nv26.04" -> (major, minor)."""
    parts = text.split("+", 1)[0].split(".")
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or "x")
    except (IndexError, ValueError):
        raise UnsupportedBridgeError(f"cannot read the Megatron-Bridge version {text!r}") from None


def installed_version() -> str:
    """The installed megatron-bridge distribution's version (a source checkout reports its package_info)."""
    try:
        return importlib.metadata.version("megatron-bridge")
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        from megatron.bridge.package_info import __version__
    except ImportError:
        raise UnsupportedBridgeError(
            "megatron.bridge is not installed: the megatron engine runs inside the NeMo container "
            "(bash training/nemo/run_in_enroot.sh ...); dry_run=true works anywhere"
        ) from None
    return __version__


def supported_series() -> str:
    return ", ".join(f"{a}.{b}.x ({api.container})" for (a, b), api in SUPPORTED.items())


def api_for(version: str) -> BridgeAPI:
    series = parse_version(version)
    if series not in SUPPORTED:
        raise UnsupportedBridgeError(
            f"Megatron-Bridge {version} is not a release this code was checked against; supported: "
            f"{supported_series()}. Use the container named by CONTAINER_IMAGE in .env (nvcr.io#nvidia/nemo:26.04)."
        )
    return SUPPORTED[series]


def require_supported() -> tuple[str, BridgeAPI]:
    """The installed version and its API, or UnsupportedBridgeError with the reason and the fix."""
    version = installed_version()
    return version, api_for(version)


# What the cluster jobs import inside the container besides Megatron-Bridge (the project comes in on PYTHONPATH).
CONTAINER_MODULES = ("megatron.core", "hydra", "omegaconf", "transformers", "pyarrow", "torch")
PROBE_VERSIONS = ("megatron-bridge", "megatron-core", "torch", "transformers")


def probe() -> list[str]:
    """The container's report: a line of versions, then `supported: <where the release comes from>`. Raises
    UnsupportedBridgeError naming a module the jobs need that does not import, or an unsupported Bridge."""

    def version(distribution: str) -> str:
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    lines = [" | ".join(f"{name} {version(name)}" for name in PROBE_VERSIONS)]
    print(lines[0], flush=True)  # printed first, so a refusal below still shows what the container has
    missing = []
    for module in CONTAINER_MODULES:
        try:
            importlib.import_module(module)
        except ImportError as error:
            missing.append(f"{module} ({error})")
    if missing:
        raise UnsupportedBridgeError(f"the container cannot import what the jobs need: {'; '.join(missing)}")
    _, api = require_supported()
    lines.append(f"supported: {api.container}")
    print(lines[1], flush=True)
    return lines


def main() -> int:
    try:
        probe()
    except UnsupportedBridgeError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 1
    return 0


def recipe(api: BridgeAPI) -> tuple[str, Callable]:
    """The Gemma 3 1B pretraining recipe function of this release, and its dotted name."""
    errors = []
    for module, function in api.recipe_paths:
        try:
            return f"{module}.{function}", getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError) as error:
            errors.append(f"{module}.{function}: {error}")
    raise UnsupportedBridgeError(
        f"Megatron-Bridge {api.series[0]}.{api.series[1]}.x has no Gemma 3 1B recipe where expected: "
        + "; ".join(errors)
    )


def model_shape_from_hf(recipe_model, pretrained: str) -> dict[str, Any]:
    """Set on the recipe's 1B model provider the shape of the Gemma 3 at `pretrained` (Hub id or HF folder; only
    its config.json is read); returns the fields changed. AutoBridge builds providers for it and for the 1B
    reference shape, and the fields where the two differ (layers, widths, ...) are the shape; everything else (the
    recipe's kernels, precision, recompute settings) stays the recipe's."""
    import tempfile

    from megatron.bridge import AutoBridge

    from morphcpt.modeling.models import gemma3_1b_config

    with tempfile.TemporaryDirectory() as reference_dir:
        reference = gemma3_1b_config()
        reference.architectures = ["Gemma3ForCausalLM"]
        reference.save_pretrained(reference_dir)
        one_b = AutoBridge.from_hf_pretrained(reference_dir).to_megatron_provider(load_weights=False)
    target = AutoBridge.from_hf_pretrained(pretrained).to_megatron_provider(load_weights=False)
    ignored = {"hf_model_id", "generation_config"}  # where the config came from, not what the model is
    changed = {
        name: getattr(target, name)
        for name in vars(one_b)
        if name not in ignored
        and hasattr(recipe_model, name)
        and getattr(target, name) != getattr(one_b, name)
    }
    for name, value in changed.items():
        setattr(recipe_model, name, value)
    return changed


if __name__ == "__main__":
    sys.exit(main())
