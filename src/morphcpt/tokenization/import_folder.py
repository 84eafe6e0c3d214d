"""Where `morphcpt import-tokenizer` may write, and how: it deletes nothing it did not write.

The out folder must be new, empty, or an earlier import (holding only what an import writes); never the source,
a folder that holds it, the current folder or its parents, a file, or a folder that cannot be written. The import
is staged in a folder of its own beside the out folder and moved into place only once checked, so a refused import
leaves nothing behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from morphcpt.errors import UserError

IMPORT_FILE = "tokenizer_import.json"


class TokenizerImportError(UserError, ValueError):
    """The tokenizer cannot be imported as asked; the message says why and what would work."""


# What `save_pretrained` and the import write into the folder; an earlier import holds these and nothing else.
WRITTEN = {
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
    IMPORT_FILE,
}


def writable_out_dir(out_dir: str | Path, source: Path) -> Path:
    """`out_dir` resolved, once it is safe to (re)write: absent or empty, or an earlier import of this command
    holding only what it writes; never the source, a folder that holds the source, a file, or one it cannot
    write. Else `TokenizerImportError` naming it and the way on."""
    given = str(out_dir)
    out = Path(out_dir).expanduser().resolve()
    where = f"--out-dir {given}" + ("" if given == str(out) else f" ({out})")
    src = source.resolve()
    if out == src or out in src.parents:
        raise TokenizerImportError(
            f"{where} is the tokenizer being imported or a folder that holds it; the import never writes over "
            "its source: give a new folder, e.g. --out-dir outputs/tokenizers/<name>"
        )
    if out == Path(out.anchor) or out == Path.cwd() or out in Path.cwd().parents or out == Path.home():
        raise TokenizerImportError(
            f"{where} is the current folder, one of its parents or a root; give a new folder, e.g. "
            "--out-dir outputs/tokenizers/<name>"
        )
    if out.exists() and not out.is_dir():
        raise TokenizerImportError(f"{where} is a file, not a folder; give a new folder's path")
    if out.is_dir():
        held = sorted(p.name for p in out.iterdir())
        if held and (IMPORT_FILE not in held or set(held) - WRITTEN):
            other = [h for h in held if h not in WRITTEN] or held
            shown = ", ".join(other[:5]) + (f" and {len(other) - 5} more" if len(other) > 5 else "")
            raise TokenizerImportError(
                f"{where} holds files an import did not write ({shown}); the import never deletes them: give a "
                "new or empty folder, or remove it yourself"
            )
    parent = out.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise TokenizerImportError(
            f"--out-dir {given}: {parent} is a file, not a folder; give a new folder's path"
        )
    if not os.access(parent, os.W_OK | os.X_OK) or (out.is_dir() and not os.access(out, os.W_OK | os.X_OK)):
        raise TokenizerImportError(
            f"{where}: {out if out.is_dir() else parent} is not writable; choose a folder you can write to"
        )
    return out


@contextmanager
def replace_with(out: Path) -> Iterator[Path]:
    """A fresh staging folder to fill; on a clean exit it becomes `out` (an earlier import there is moved aside,
    then removed). The staging folder is removed on every way out, and `out`'s missing parents are made only
    once the import succeeded."""
    near = next(p for p in out.parents if p.exists())
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.import-", dir=near))
    try:
        yield staging
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            earlier = staging.with_name(staging.name + ".earlier")
            os.replace(out, earlier)
            try:
                os.replace(staging, out)
            except OSError:
                os.replace(earlier, out)
                raise
            shutil.rmtree(earlier, ignore_errors=True)
        else:
            os.replace(staging, out)
    except OSError as error:
        raise TokenizerImportError(
            f"--out-dir {out}: cannot write it ({error.strerror or error}); choose a folder you can write to"
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
