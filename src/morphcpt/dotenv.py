"""The one reader of `.env` files, for Python and for the shell.

Python calls `read_env(path)` (through `morphcpt.paths`). The shell (training/nemo/run_in_enroot.sh) runs this file
with the host's python3, standard library only, and evaluates what it prints, so both read every line the same way:

    python3 src/morphcpt/dotenv.py --shell .env     # `export KEY='value'` for each setting not already set

A line is blank, a `# comment`, or `[export ]KEY=VALUE`. VALUE may be quoted ('...' or "..."), and may be followed
by ` # a comment` (a `#` with whitespace before it, as in the shell; `nvcr.io#nvidia/nemo` keeps its `#`).
"""

import os
import re
import shlex
import sys
from pathlib import Path

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_line(line, where="line"):
    """(KEY, VALUE) of one line, or None for a blank or comment line; ValueError for anything else."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    if text.startswith("export "):
        text = text[len("export ") :]
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not _KEY.fullmatch(key):
        raise ValueError(f"{where}: expected KEY=VALUE, got {line.strip()!r}")
    value = raw.lstrip()
    if value[:1] in ("'", '"'):
        end = value.find(value[0], 1)
        rest = value[end + 1 :].strip() if end > 0 else ""
        if end < 0 or (rest and not rest.startswith("#")):
            raise ValueError(f"{where}: {key}'s quoted value does not end with its quote: {line.strip()!r}")
        return key, value[1:end]
    if value.startswith("#") and value != raw:
        return key, ""  # `KEY= # comment`: an empty value and a comment
    # an inline comment needs whitespace before its `#`
    return key, re.split(r"\s+#", value, maxsplit=1)[0].strip()


def read_env(path):
    """The settings of a `.env` file, in order; a later line wins over an earlier one."""
    values = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        parsed = parse_line(line, where=f"{path}:{number}")
        if parsed:
            values[parsed[0]] = parsed[1]
    return values


def main(argv):
    if len(argv) != 2 or argv[0] != "--shell":
        print("usage: python3 dotenv.py --shell PATH", file=sys.stderr)
        return 2
    try:
        values = read_env(argv[1])
    except (OSError, UnicodeDecodeError, ValueError) as error:
        print(f"cannot read the settings: {error}", file=sys.stderr)
        return 2
    for key, value in values.items():
        if not os.environ.get(key):  # what the job already set wins
            print(f"export {key}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
