"""Check the user docs against the code: run every command block marked runnable, and resolve every relative link.

    python tools/docs_check.py            # links + the fast runnable blocks (what tests/test_docs.py runs)
    python tools/docs_check.py --all      # + the blocks marked slow (make docs-check)
    python tools/docs_check.py --list     # the runnable blocks, without running them

A block runs when the line just before its opening fence is an HTML comment (invisible on GitHub):

    <!-- runnable -->          run by the test suite: keep it to seconds (--help, dry runs, sample-sized work)
    <!-- runnable: slow -->    run only by `make docs-check` (the demo, whole sample-sized chains)

Blocks run with bash (`set -euo pipefail`) in a scratch copy of the checkout's tracked files, one copy for the
whole check and in document order, so a block may use what an earlier block of the same page wrote; `python` and
`morphcpt` are this environment's (the copy's `.venv` links to the checkout's, so `make demo` installs nothing),
the package is imported from the copy, and the Hugging Face Hub is offline. A line that is `make test` is not run
again: it is the suite this check belongs to (and it needs the checkout's git).
Links: every `[text](target)` that is not a URL must name an existing file, and a `#anchor` a heading of that
page (GitHub's slugs). Build-time tool: not part of the runtime package.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!--\s*runnable(?::\s*(slow))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*(\S*)")
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"`[^`]*`")
FAST_TIMEOUT_S = 120
SLOW_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    slow: bool
    code: str

    @property
    def where(self) -> str:
        return f"{shown(self.page)}:{self.line}"

    @property
    def first_command(self) -> str:
        lines = [line.strip() for line in self.code.splitlines()]
        return next((line for line in lines if line and not line.startswith("#")), "")


def shown(page: Path) -> str:
    return str(page.relative_to(REPO)) if page.is_relative_to(REPO) else str(page)


def pages(root: Path = REPO) -> list[Path]:
    """The user docs: README.md and every docs/*.md."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _fenced(lines: list[str]):
    """(index of the opening fence, language, body lines, closed) for every fenced block."""
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence = opening.group(2)
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            j += 1
        yield i, opening.group(3), lines[i + 1 : j], j < len(lines)
        i = j + 1


def blocks(page: Path) -> list[Block]:
    """The runnable blocks of a page; a marker not followed by a fenced bash/sh block is an error."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found = []
    openings = {start: (language, body, closed) for start, language, body, closed in _fenced(lines)}
    inside = _inside_fences(lines)
    for index, line in enumerate(lines):
        marker = MARKER.match(line.strip())
        if not marker or index in inside:  # a marker shown inside a code block is an example, not a marker
            continue
        where = f"{shown(page)}:{index + 1}"
        if index + 1 not in openings:
            raise ValueError(f"{where}: a runnable marker must stand on the line just before a ```bash fence")
        language, body, closed = openings[index + 1]
        if language not in ("bash", "sh", "shell", "console"):
            raise ValueError(
                f"{where}: the runnable block is ```{language or '(no language)'}; mark bash only"
            )
        if not closed:
            raise ValueError(f"{where}: the runnable block is never closed")
        found.append(Block(page, index + 2, marker.group(1) == "slow", "\n".join(body) + "\n"))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor on a page (repeated headings get -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    lines = page.read_text(encoding="utf-8").splitlines()
    inside = _inside_fences(lines)
    for index, line in enumerate(lines):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading and index not in inside:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    found.update(re.findall(r'<a\s+(?:name|id)="([^"]+)"', "\n".join(lines)))
    return found


def _inside_fences(lines: list[str]) -> set[int]:
    inside = set()
    for start, _, body, _ in _fenced(lines):
        inside.update(range(start, start + len(body) + 2))
    return inside


def broken_links(page: Path) -> list[str]:
    """`page:line: target (why)` for every relative link or anchor that does not resolve."""
    lines = page.read_text(encoding="utf-8").splitlines()
    inside = _inside_fences(lines)
    broken = []
    for index, line in enumerate(lines):
        if index in inside:
            continue
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:, ...
                continue
            path_part, _, anchor = target.partition("#")
            resolved = (page.parent / path_part).resolve() if path_part else page
            where = f"{shown(page)}:{index + 1}: {target}"
            if not resolved.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{where} (no heading #{anchor} in {resolved.name})")
    return broken


def scratch_copy(destination: Path) -> Path:
    """The checkout's tracked files (as they are in the working tree) and untracked, unignored ones; `.venv` is a
    link to the checkout's."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (entry.decode() for entry in listed)):
        source = REPO / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)  # keeps mtimes: make sees the venv's stamp newer than pyproject.toml
    if (REPO / ".venv").is_dir():
        (destination / ".venv").symlink_to(REPO / ".venv")
    return destination


def environment(workdir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PBS_", "SLURM_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = str(workdir / "src")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", WANDB_MODE="disabled")
    return env


NOT_RERUN = re.compile(r"^\s*make test(\s*#.*)?$")  # the suite this check is part of


def script(block: Block) -> str:
    lines = [
        f": not run again here: {line.strip()}" if NOT_RERUN.match(line) else line
        for line in block.code.splitlines()
    ]
    return "set -euo pipefail\n" + "\n".join(lines) + "\n"


def run_block(block: Block, workdir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", script(block)],
        cwd=workdir,
        env=environment(workdir),
        capture_output=True,
        text=True,
        timeout=SLOW_TIMEOUT_S if block.slow else FAST_TIMEOUT_S,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="also run the blocks marked slow")
    parser.add_argument("--list", action="store_true", help="list the runnable blocks, run nothing")
    args = parser.parse_args(argv)

    try:
        found = [block for page in pages() for block in blocks(page)]
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    broken = [problem for page in pages() for problem in broken_links(page)]
    links = sum(len(LINK.findall(page.read_text(encoding="utf-8"))) for page in pages())
    print(f"links: {links} in {len(pages())} pages, {len(broken)} broken")
    for problem in broken:
        print(f"  BROKEN {problem}")
    chosen = [block for block in found if args.all or not block.slow]
    if args.list:
        for block in found:
            print(f"  {'slow' if block.slow else 'fast'}  {block.where}  {block.first_command}")
        return 1 if broken else 0
    failed = 0
    with tempfile.TemporaryDirectory(prefix="morphcpt-docs-") as scratch:
        workdir = scratch_copy(Path(scratch))
        for block in chosen:
            start = time.perf_counter()
            try:
                done = run_block(block, workdir)
                ok, tail = done.returncode == 0, (done.stdout + done.stderr).strip().splitlines()[-5:]
            except subprocess.TimeoutExpired:
                ok, tail = (
                    False,
                    [f"did not finish within {SLOW_TIMEOUT_S if block.slow else FAST_TIMEOUT_S} s"],
                )
            failed += not ok
            print(
                f"  {'ok  ' if ok else 'FAIL'}  {block.where}  ({time.perf_counter() - start:.1f} s)  "
                f"{block.first_command}"
            )
            if not ok:
                print("\n".join(f"        {line}" for line in tail))
    skipped = len(found) - len(chosen)
    print(
        f"blocks: {len(chosen) - failed} of {len(chosen)} passed"
        + (f" ({skipped} slow ones not run: --all runs them)" if skipped else "")
    )
    return 1 if failed or broken else 0


if __name__ == "__main__":
    sys.exit(main())
