"""The user docs match the code: every command block marked runnable in README.md and docs/*.md runs against the
sample (the fast ones here; `make docs-check` runs the slow ones too), and every relative link and anchor resolves.
The checker is tools/docs_check.py; see its docstring for the markers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import docs_check  # noqa: E402

BLOCKS = [block for page in docs_check.pages() for block in docs_check.blocks(page)]
FAST = [block for block in BLOCKS if not block.slow]


def test_the_docs_mark_runnable_blocks():
    assert FAST, "no block in README.md or docs/*.md is marked <!-- runnable -->"


def test_every_relative_link_and_anchor_resolves():
    broken = [problem for page in docs_check.pages() for problem in docs_check.broken_links(page)]
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_link_check_sees_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "other.md").write_text("# A heading, with punctuation!\n## Set-up (two commands)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-heading-with-punctuation) [ok](other.md#set-up-two-commands) [ok](#top)\n"
        "# Top\n[gone](missing.md) [no anchor](other.md#nowhere) `[code](ignored.md)` [web](https://x.org/y)\n"
        "```bash\n[not a link](inside-a-fence.md)\n```\n"
    )
    broken = docs_check.broken_links(page)
    assert [problem.split(": ", 1)[1] for problem in broken] == [
        "missing.md (no such file)",
        "other.md#nowhere (no heading #nowhere in other.md)",
    ]


def test_a_runnable_marker_must_open_a_bash_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- runnable -->\n```bash\necho one\n```\n<!-- runnable: slow -->\n```bash\necho two\n```\n"
    )
    assert [(b.line, b.slow, b.code) for b in docs_check.blocks(page)] == [
        (2, False, "echo one\n"),
        (6, True, "echo two\n"),
    ]
    page.write_text("```markdown\n<!-- runnable -->\n```bash\n```\n")  # an example inside a block
    assert docs_check.blocks(page) == []
    page.write_text("<!-- runnable -->\n```yaml\na: 1\n```\n")
    with pytest.raises(ValueError, match="mark bash only"):
        docs_check.blocks(page)
    page.write_text("<!-- runnable -->\n\n```bash\necho\n```\n")
    with pytest.raises(ValueError, match="just before"):
        docs_check.blocks(page)


def test_make_test_is_not_run_again_from_inside_the_docs_check(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- runnable: slow -->\n```bash\nmake demo   # the demo\nmake test   # the suite\n```\n"
    )
    script = docs_check.script(docs_check.blocks(page)[0])
    assert "\nmake demo   # the demo\n" in script and "\nmake test" not in script


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return docs_check.scratch_copy(tmp_path_factory.mktemp("docs"))


@pytest.mark.parametrize("block", FAST, ids=[block.where for block in FAST])
def test_a_runnable_block_runs(block, workdir):
    done = docs_check.run_block(block, workdir)
    assert done.returncode == 0, (
        f"{block.where} failed:\n{block.code}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    )
