"""Where the suite finds its shipped assets and writes its outputs.

Shipped data (sample corpus, sample tokenizer, lexicons) lives in the repository's `data/` folder; set
`MORPHCPT_DATA_DIR` to use another copy (for example when the package is installed outside the repository).
The user's settings live in the checkout's `.env` (`read_env`, `env_setting`).
"""

from __future__ import annotations

import os
from pathlib import Path

from morphcpt import dotenv
from morphcpt.errors import UserError

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parents[1]
CONF_DIR = PACKAGE_DIR / "conf"
DATA_DIR = Path(os.environ.get("MORPHCPT_DATA_DIR", REPO_ROOT / "data")).resolve()
SAMPLE_CORPUS = DATA_DIR / "sample" / "tl_sample.jsonl"
SAMPLE_TOKENIZER_DIR = DATA_DIR / "tokenizer"
LEXICON_DIR = DATA_DIR / "lexicon"
OUTPUTS_DIR = REPO_ROOT / "outputs"
ENV_FILE = REPO_ROOT / ".env"  # the user's settings (.env.example), read by the jobs and a few commands


class FolderNotFound(UserError, FileNotFoundError):
    """A model (or tokenizer) path that is not a folder here."""


def model_source(name_or_path: str | Path, what: str = "model") -> str:
    """A local folder or a Hugging Face Hub id, checked before any loader sees it.

    Something that looks like a path (absolute, relative with `./`, `~`, or more than one `/`) but is not a
    folder here raises a one-line `FileNotFoundError`; left to transformers, it becomes a malformed Hub request
    and several chained tracebacks. Anything else is passed on as a Hub id (`google/gemma-3-1b-pt`)."""
    text = str(name_or_path)
    looks_like_path = (
        isinstance(name_or_path, Path) or text.startswith(("/", ".", "~")) or text.count("/") > 1
    )
    if looks_like_path or Path(text).expanduser().exists():
        folder = Path(text).expanduser()
        if not folder.is_dir():
            raise FolderNotFound(
                f"{what} folder not found: {text} (give a folder holding config.json, or a Hub id such as "
                "google/gemma-3-1b-pt)"
            )
        return str(folder)
    return text


def read_env(path: str | Path) -> dict[str, str]:
    """`KEY=VALUE` lines of a `.env` file (comments, inline ` # comments`, blank lines, `export ` and quotes
    allowed): `morphcpt.dotenv`, the reader the shell uses too."""
    return dotenv.read_env(path)


def env_setting(name: str) -> str | None:
    """A setting from the environment, else from the checkout's `.env` (the training plan loads it with a plain
    `source .env`, which exports nothing to the commands it then runs)."""
    if os.environ.get(name):
        return os.environ[name]
    if not ENV_FILE.is_file():
        return None
    return read_env(ENV_FILE).get(name) or None
