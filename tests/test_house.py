"""The house rules the code keeps without anyone remembering them: no import circle, imports that only run down
the layers below, no module in src/ past 500 lines, build-time code out of the runtime package, and tests that
mirror the source, named by what they test (never by an issue number).

Read statically (ast over src/morphcpt, nothing is imported). Every import counts as an edge, the ones inside a
function too: a function-level import breaks a circle only at import time, the two modules still need each other
(the circles this test was written against, train/checkpoints <-> train/state and train/megatron <->
train/megatron_check, were both function-level on one side). `import morphcpt.a.b` and `from morphcpt.a import b`
are edges to the module `morphcpt.a.b` when it exists, else to the package `morphcpt.a` whose name was taken.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "morphcpt"
MAX_LINES = 500

# Low to high: a module may import its own layer and the ones below, never one above. An entry names a package or
# module and everything below it; "=name" names that module (a package's __init__) alone. A module belongs to the
# most specific entry naming it (an "=name" entry before a package entry of the same name). Within a layer, the circle test
# keeps order.
LAYERS: list[tuple[str, ...]] = [
    # "=": morphcpt itself; shared plumbing and the intervals both the analyser's scores and the analysis use
    ("=", "errors", "dotenv", "paths", "jsonio", "lockfile", "indexed", "completion", "intervals"),
    ("corpus", "morphology", "realmodel"),  # raw material: documents, the word analyser, a real model
    ("tokenization",),  # schemes over a vocabulary, built on the analyser
    ("preprocess", "audit", "bench"),  # indexed data from a corpus; benchmarks from the analyser
    ("plan",),  # the training plan every layer above reads, and the card it names
    # models, the chunked loss, logit parity, LoRA, HF<->Megatron conversion, reading checkpoints: below export,
    # evaluation and the engines
    ("modeling",),
    (
        "export",
    ),  # a run's checkpoint to a Hugging Face folder (reads the plan and modeling's checkpoint files)
    ("evaluate",),  # scoring models: needs a model and a plan, never an engine
    # the two engines, EEVE's stages (which export after the last one), the memory planner, the dispatch
    ("train",),
    ("analysis",),
    (
        "chain",
    ),  # submission: job scripts, the scheduler, the chain and its local runner, the pre-flight check
    ("demo", "cli"),  # everything end to end; the console script's dispatch
]
# Build-time code lives in scripts/ or tools/, never in the runtime package.
BUILD_TIME_MODULES = ("morphcpt.sample_data",)


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module an imported name lands in: itself if it is a module, else the nearest package above it."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> dict[str, int]:
    """{imported morphcpt module: first line} for every import in `module`, at any depth."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    edges: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            names = [f"{stem}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] != "morphcpt":
                continue
            target = _resolve(name)
            if target and target != module:
                edges.setdefault(target, node.lineno)
    return edges


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, {}))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer_of(module: str) -> int:
    """The layer of a morphcpt module: the most specific LAYERS entry naming it."""
    relative = module.removeprefix("morphcpt").removeprefix(".")
    best: tuple[tuple[int, bool], int] | None = None  # ((depth, exact), layer)
    for layer, entries in enumerate(LAYERS):
        for entry in entries:
            exact, name = entry.startswith("="), entry.lstrip("=")
            matches = relative == name or (not exact and relative.startswith(name + "."))
            specificity = (name.count("."), exact)
            if matches and (best is None or specificity > best[0]):
                best = (specificity, layer)
    if best is None:
        raise AssertionError(
            f"{module} is in no layer of tests/test_house.py LAYERS: add it where it belongs (it may import "
            "its own layer and the ones below)"
        )
    return best[1]


def test_the_cycle_finder_finds_a_circle_and_passes_a_chain():
    assert _cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) == []


def test_no_import_circle_among_morphcpt_modules():
    circles = _cycles(GRAPH)
    described = [
        " <-> ".join(circle)
        + ": "
        + "; ".join(f"{a} imports {b} (line {GRAPH[a][b]})" for a in circle for b in GRAPH[a] if b in circle)
        for circle in circles
    ]
    assert not circles, "import circles (move the shared names to the lower module):\n" + "\n".join(described)


def test_imports_only_run_down_the_layers():
    assert layer_of("morphcpt.train.eeve.engine") > layer_of("morphcpt.export") > layer_of("morphcpt.plan")
    # export and evaluation read a run's plan and checkpoints and load its model, never an engine
    assert layer_of("morphcpt.train") > layer_of("morphcpt.evaluate.resolve") > layer_of("morphcpt.export")
    assert (
        layer_of("morphcpt.export")
        > layer_of("morphcpt.modeling.checkpoint_files")
        > layer_of("morphcpt.plan")
    )
    upward = [
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)}) at line {line}"
        for module, targets in GRAPH.items()
        for target, line in targets.items()
        if layer_of(target) > layer_of(module)
    ]
    assert not upward, "imports running back up the layers of tests/test_house.py:\n" + "\n".join(upward)


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_no_source_file_past_the_limit():
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in PACKAGE.rglob("*.py")}
    assert sizes, "no source files found: the test looks in the wrong place"
    too_long = sorted(f"{path.relative_to(SRC)}: {n} lines" for path, n in sizes.items() if n > MAX_LINES)
    assert not too_long, f"split by concern, each under {MAX_LINES} lines:\n" + "\n".join(too_long)


def test_build_time_code_is_out_of_the_runtime_package():
    assert not [m for m in BUILD_TIME_MODULES if m in MODULES]
    importers = [m for m, targets in GRAPH.items() for t in targets if t in BUILD_TIME_MODULES]
    assert not importers


# Module names that repeat across folders because the role repeats: a file name says what a module is for, once.
SHARED_NAMES = {
    "engine": "each engine's entry, and the contract every engine meets (train/engine.py)",
    "check": "each engine's check stage",
    "parallel": "each engine's parallel layout",
    "base": "the interface of a folder of interchangeable parts (analysers, schemes, benchmark tasks)",
    "affixation": "the affixation benchmark family is named after what it tests (bench/tasks/<family>.py)",
    "eeve": "the eeve scheme (tokenization/schemes/<scheme>.py) and the `python -m` command that builds its vocabulary",
}


def test_a_module_name_means_one_role():
    folders: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.stem not in ("__init__", "__main__"):
            folders.setdefault(path.stem, []).append(str(path.parent.relative_to(PACKAGE)))
    repeated = {name: sorted(where) for name, where in folders.items() if len(where) > 1}
    assert set(SHARED_NAMES) <= set(repeated), (
        f"no longer repeated: {sorted(set(SHARED_NAMES) - set(repeated))}"
    )
    unexplained = sorted(
        f"{name}.py in {', '.join(where)}" for name, where in repeated.items() if name not in SHARED_NAMES
    )
    assert not unexplained, "modules of one name in different folders: name each by its role\n" + "\n".join(
        unexplained
    )


TESTS = Path(__file__).resolve().parent
# tests/ folders that hold the suite's own material, not tests of a source folder
SUITE_FOLDERS = {"data", "fakes", "cluster", "__pycache__"}
ISSUE_NUMBER = re.compile(r"(^|_)(issue_?)?\d+(_|$)")


def test_issue_number_finder():
    assert ISSUE_NUMBER.search("test_issue14") and ISSUE_NUMBER.search("test_41_layout")
    assert not ISSUE_NUMBER.search("test_fp16_overflow") and not ISSUE_NUMBER.search("test_engine")


def test_no_test_file_is_named_after_an_issue():
    named = sorted(
        str(path.relative_to(TESTS)) for path in TESTS.rglob("test_*.py") if ISSUE_NUMBER.search(path.stem)
    )
    assert not named, "name a test file by what it tests, not by the issue that asked for it:\n" + "\n".join(
        named
    )


def test_test_folders_mirror_the_source():
    """tests/<a>/<b>/ tests src/morphcpt/<a>/<b>/ (or a top-level folder of the repository, e.g. benchmarks/)."""
    stray = []
    for folder in sorted(p for p in TESTS.rglob("*") if p.is_dir()):
        relative = folder.relative_to(TESTS)
        if relative.parts[0] in SUITE_FOLDERS:
            continue
        if not ((PACKAGE / relative).is_dir() or (SRC.parent / relative).is_dir()):
            stray.append(str(relative))
    assert not stray, "test folders with no source folder of the same path:\n" + "\n".join(stray)
    basenames = [path.name for path in TESTS.rglob("test_*.py") if "cluster" not in path.parts]
    assert len(basenames) == len(set(basenames)), "two test files share a name (pytest imports them by name)"
