"""Tests for the benchmark generators, quality gates and formats (run: pytest tests/bench/test_generators.py).

Sets are generated small (a few dozen items per subset) from the shipped lexicon; the lexicon is analysed once
per session.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from morphcpt import paths
from morphcpt.bench import gates
from morphcpt.bench.generate import balanced_positions, generate, load_config, main
from morphcpt.bench.io import Record, from_row, read_records, to_row, write_records
from morphcpt.bench.settings import BenchmarkConfig
from morphcpt.bench.suites import HIERARCHICAL_LEVELS, PACUTE_SUBSETS
from morphcpt.bench.words import BenchLexicon
from morphcpt.morphology import apply_affix, get_language_pack, syllabify

SMALL_PACUTE = {"affixation": 32, "composition": 40, "manipulation": 42, "syllabification": 30}
SMALL_LEVELS = {f"level{n}": 24 for n in HIERARCHICAL_LEVELS}


def small_config(out: Path, seed: int = 0) -> BenchmarkConfig:
    return BenchmarkConfig(
        output_dir=str(out),
        seed=seed,
        word_pool=3000,
        pacute=dict(SMALL_PACUTE),
        hierarchical=dict(SMALL_LEVELS),
    )


@pytest.fixture(scope="session")
def generated(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("bench")
    return out, generate(small_config(out))


def all_records(out: Path) -> dict[str, list[Record]]:
    return {str(p.relative_to(out)): read_records(p) for p in sorted(out.rglob("*.jsonl"))}


def mcq_records(out: Path) -> list[Record]:
    return [r for recs in all_records(out).values() for r in recs if r.mode == "mcq"]


def test_layout_and_manifest(generated):
    out, manifest = generated
    expected = {f"pacute/{s}_{m}.jsonl" for s in PACUTE_SUBSETS for m in ("mcq", "gen")}
    expected |= {f"hierarchical/level{n}_{m}.jsonl" for n in HIERARCHICAL_LEVELS for m in ("mcq", "gen")}
    assert set(all_records(out)) == expected
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk["seed"] == 0 and set(on_disk["files"]) == expected
    assert on_disk["counts"]["pacute"]["affixation"]["items"] == SMALL_PACUTE["affixation"]
    assert "stress" in " ".join(manifest["skipped"])
    for name, records in all_records(out).items():
        size = SMALL_PACUTE.get(name.split("/")[1].rsplit("_", 1)[0]) or 24
        assert len(records) == size, name


def test_same_seed_same_bytes_other_seed_differs(generated, tmp_path):
    out, manifest = generated
    again = generate(small_config(tmp_path / "a"))
    assert again["files"] == manifest["files"]
    for rel in manifest["files"]:
        assert (tmp_path / "a" / rel).read_bytes() == (out / rel).read_bytes()
    other = generate(small_config(tmp_path / "b", seed=1))
    assert other["files"] != manifest["files"]


def test_generated_files_pass_the_gates(generated):
    out, _ = generated
    for name, records in all_records(out).items():
        gates.check(records, name)


def test_correct_position_is_balanced_and_not_always_a(generated):
    out, _ = generated
    for name, records in all_records(out).items():
        if name.endswith("_mcq.jsonl"):
            counts = Counter(r.correct_index for r in records)
            assert set(counts) == {0, 1, 2, 3}, name
            assert max(counts.values()) - min(counts.values()) <= 1, name
    positions = balanced_positions(10, __import__("random").Random(0))
    assert Counter(positions[:8]) == {0: 2, 1: 2, 2: 2, 3: 2}


def corrupt(records: list[Record], index: int = 0, **changes) -> list[Record]:
    return [dataclasses.replace(r, **changes) if i == index else r for i, r in enumerate(records)]


@pytest.fixture()
def mcq_file(generated) -> list[Record]:
    out, _ = generated
    return read_records(out / "pacute" / "composition_mcq.jsonl")


def test_gates_fail_on_duplicate_option(mcq_file):
    r = mcq_file[0]
    wrong = [o for o in r.options if o != r.answer]
    options = tuple(wrong[0] if o == wrong[1] else o for o in r.options)
    with pytest.raises(gates.GateError, match="duplicate options"):
        gates.check(corrupt(mcq_file, options=options))


def test_gates_fail_on_two_correct_options(generated):
    out, _ = generated
    records = read_records(out / "hierarchical" / "level2_mcq.jsonl")
    i = next(k for k, r in enumerate(records) if r.subcategory == "prefix_identification")
    r = records[i]
    # The answer again in capitals stands in for a distractor: two options are then right.
    j = next(k for k, o in enumerate(r.options) if o != r.answer)
    options = tuple(r.answer.upper() if k == j else o for k, o in enumerate(r.options))
    with pytest.raises(gates.GateError, match="options match the answer"):
        gates.check(corrupt(records, i, options=options))


def test_gates_fail_on_unbalanced_positions(mcq_file):
    def first(r: Record) -> Record:
        others = [o for o in r.options if o != r.answer]
        return dataclasses.replace(r, options=(r.answer, *others))

    with pytest.raises(gates.GateError, match="unbalanced"):
        gates.check([first(r) for r in mcq_file])


def test_gates_fail_on_wrong_answer_and_duplicates(mcq_file):
    r = mcq_file[0]
    other = next(o for o in r.options if o != r.answer)
    with pytest.raises(gates.GateError, match="task gives"):
        gates.check(corrupt(mcq_file, answer=other))
    with pytest.raises(gates.GateError, match="duplicate item"):
        gates.check([*mcq_file, dataclasses.replace(mcq_file[1], id="copy")])
    with pytest.raises(gates.GateError, match="implausible"):
        gates.check(corrupt(mcq_file, options=tuple(o if o == r.answer else o * 9 for o in r.options)))


def test_round_trip_both_formats(generated, tmp_path):
    out, _ = generated
    for name, records in all_records(out).items():
        path = tmp_path / Path(name).name
        write_records(path, records)
        assert read_records(path) == records
        assert path.read_bytes() == (out / name).read_bytes()
        subset, mode = path.stem.rsplit("_", 1)
        assert [from_row(to_row(r), subset, mode) for r in records] == records


def test_rows_follow_the_official_fields(generated):
    out, _ = generated
    row = json.loads((out / "pacute" / "affixation_mcq.jsonl").read_text().splitlines()[5])
    prompt = row["prompts"][0]
    assert {"category", "subcategory", "prompts", "label", "id"} <= set(row)
    assert {"text_en", "text_tl", "mcq_options", "choice1", "choice4"} <= set(prompt)
    assert prompt[f"choice{'ABCD'.index(row['label']) + 1}"] == prompt["mcq_options"]["correct"]
    gen = json.loads((out / "pacute" / "affixation_gen.jsonl").read_text().splitlines()[5])
    assert isinstance(gen["answer"], str) and "choice1" not in gen["prompts"][0]
    hier = json.loads((out / "hierarchical" / "level2_gen.jsonl").read_text().splitlines()[0])
    keys = {
        "level",
        "category",
        "subcategory",
        "prompt_en",
        "prompt_tl",
        "options",
        "answer",
        "word",
        "metadata",
        "id",
    }
    assert set(hier) == keys and hier["options"] == [] and hier["level"] == 2


def test_evaluation_loader_reads_the_files(generated):
    out, _ = generated
    from morphcpt.evaluate.items import load_benchmark

    for mode in ("mcq", "gen"):
        tasks = load_benchmark("hierarchical-level4", mode, out)
        items = tasks["hierarchical-level4"]
        assert len(items) == 24
        if mode == "mcq":
            assert all(i.options[i.correct_index] == i.answer for i in items)


def _quoted(prompt: str) -> list[str]:
    return re.findall(r"'([^']*)'", prompt)


ORD = re.compile(r"(\d+)(?:st|nd|rd|th)")


def _swapped(q: list[str], n: list[int]) -> str:
    chars = list(q[0])
    chars[n[0] - 1], chars[n[1] - 1] = chars[n[1] - 1], chars[n[0] - 1]
    return "".join(chars)


# Answers re-solved from the English prompt alone (q: quoted strings, n: ordinals), without the generator's code.
INDEPENDENT = {
    "spelling": lambda q, n: "-".join(q[0]),
    "letter_count": lambda q, n: str(q[1].count(q[0])),
    "length": lambda q, n: str(len(q[0])),
    "uppercase_count": lambda q, n: str(sum(c.isupper() for c in q[0])),
    "insert": lambda q, n: q[1][: n[0]] + q[0] + q[1][n[0] :],
    "delete": lambda q, n: q[0][: n[0] - 1] + q[0][n[0] :],
    "substitute": lambda q, n: q[1].replace(q[0], q[2]),
    "duplicate": lambda q, n: q[0][: n[0]] + q[0][n[0] - 1 :],
    "permute": _swapped,
    "nth_letter": lambda q, n: q[0][n[0] - 1],
    "letter_position": lambda q, n: str(q[1].index(q[0]) + 1),
    "syllable_count": lambda q, n: str(len(syllabify(q[0]))),
}


def test_answers_recomputed_independently(generated):
    out, _ = generated
    checked = Counter()
    for r in mcq_records(out):
        if r.subcategory in INDEPENDENT:
            q, n = _quoted(r.prompt_en), [int(x) for x in ORD.findall(r.prompt_en)]
            assert INDEPENDENT[r.subcategory](q, n) == r.answer, r
            checked[r.subcategory] += 1
    assert set(checked) == set(INDEPENDENT)


def test_affix_items_are_real_affixed_words(generated):
    out, _ = generated
    lex_words = set()
    for name in ("tgl_words.txt", "fil_tesseract_words.txt"):
        lex_words |= set((paths.LEXICON_DIR / name).read_text(encoding="utf-8").split())
    fil = get_language_pack("fil")
    affix_tasks = {"prefix_identification", "infix_identification", "suffix_identification"}
    affix_tasks |= {"circumfix_identification", "prefix_inflection", "infix_inflection", "suffix_inflection"}
    affix_tasks |= {"circumfix_inflection", "root_extraction", "prefix_removal", "multi_step"}
    seen = 0
    for r in mcq_records(out):
        if r.metadata["task"] not in affix_tasks:
            continue
        p = r.metadata["params"]
        assert r.word in lex_words, r.word
        assert fil.parse(r.word).is_affixed and fil.parse(r.word).root == p["root"]
        assert fil.is_root(p["root"])
        assert apply_affix(p["root"], p["spec"], glottal=p["glottal"]) == r.word
        seen += 1
    assert seen > 50


def test_lexicon_pools(generated):
    lex = BenchLexicon(paths.LEXICON_DIR, pool_size=500)
    assert len(lex.words) == 500 and all(w.isalpha() and w.islower() for w in lex.words)
    assert {"P", "I", "S"} <= set(lex.affixed)
    assert all(
        a.word == apply_affix(a.root, a.spec, glottal=a.glottal)
        for items in lex.affixed.values()
        for a in items
    )


def test_config_layers_and_cli(tmp_path, capsys):
    cfg = load_config(paths.CONF_DIR / "benchmarks.yaml", ["pacute.affixation=8", "seed=3"])
    assert cfg.pacute["affixation"] == 8 and cfg.seed == 3 and cfg.pacute["composition"] == 900
    with pytest.raises(Exception, match="nosuchkey"):
        load_config(None, ["nosuchkey=1"])
    sizes = [f"pacute.{s}=0" for s in PACUTE_SUBSETS] + [
        f"hierarchical.level{n}=0" for n in HIERARCHICAL_LEVELS
    ]
    args = ["--output-dir", str(tmp_path), "--seed", "5", "word_pool=1000", *sizes, "pacute.affixation=8"]
    assert main(args) == 0
    assert "pacute/affixation" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.rglob("*.jsonl")) == [
        "affixation_gen.jsonl",
        "affixation_mcq.jsonl",
    ]
    assert json.loads((tmp_path / "manifest.json").read_text())["seed"] == 5


def test_a_generated_set_says_calmly_once_that_stress_is_not_generated(generated, tmp_path, caplog):
    """The generator cannot make PACUTE's stress subset: a run on a generated set notes it once (with how to
    add the official files), never as an INCOMPLETE warning, and the report says so in one calm line."""
    from morphcpt.analysis.report import build_report
    from morphcpt.evaluate.items import load_benchmark
    from morphcpt.evaluate.runner import EvalConfig, run_evaluation

    out, _ = generated
    items = [i for mode in ("mcq", "gen") for v in load_benchmark("pacute", mode, out).values() for i in v]
    answers = {i.prompt(): i.answer for i in items}

    class Oracle:
        def loglikelihood(self, requests):
            return [0.0 if k[1:] == answers[c] else -9.0 for c, k in requests]

        def generate(self, prompts, max_new_tokens=50):
            return [answers[p] for p in prompts]

    folders = [tmp_path / "models" / name for name in ("vanilla", "patok")]
    for folder in folders:
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")  # an exported model, as far as resolution looks
        (folder / "morphcpt_metadata.json").write_text(json.dumps({"scheme": folder.name}))
        (folder / "config.json").write_text("{}")  # an export folder (the fake model is never loaded from it)
    cfg = EvalConfig(
        models=[str(f) for f in folders],
        benchmarks=["pacute"],
        benchmark_dir=out,
        output_dir=tmp_path / "results",
    )
    with caplog.at_level("INFO"):
        written = run_evaluation(cfg, lambda spec, cfg: Oracle())
    assert "INCOMPLETE" not in caplog.text
    assert caplog.text.count("pacute-stress is not part of the generated set") == 1
    assert "copy the official stress_mcq.jsonl and stress_gen.jsonl" in caplog.text
    result = json.loads(written[0].read_text())
    assert result["missing_subsets"] == [] and "stress" in result["not_generated"]
    report = build_report(tmp_path / "results", plots=False).read_text()
    assert "**Warning" not in report and report.count("Not evaluated: pacute-stress") == 1
