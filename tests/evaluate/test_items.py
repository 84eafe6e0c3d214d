"""Benchmark loaders, both formats: the official release's row shapes normalised to the recorded answer, our layout
and the official one holding the same questions, benchmark names, and invalid rows failing with file and line."""

from __future__ import annotations

import json
import shutil

import pytest

from evaluate_helpers import OFFICIAL, OracleModel, all_items
from morphcpt.evaluate.items import (
    PACUTE_SUBSETS,
    BenchmarkFormatError,
    Item,
    expand_benchmark,
    load_benchmark,
    load_file,
)
from morphcpt.evaluate.mcq import mcq_requests
from morphcpt.evaluate.runner import EvalConfig, run_evaluation


def test_official_pacute_mcq_rows_normalise_to_the_recorded_correct_option():
    items = load_file(OFFICIAL / "affixation_mcq.jsonl", "pacute", "mcq", subset="affixation")
    raw = [json.loads(line) for line in (OFFICIAL / "affixation_mcq.jsonl").open()]
    assert len(items) == len(raw) == 6
    for item, row in zip(items, raw, strict=True):
        assert item.options[item.correct_index] == item.answer == row["prompts"][0]["mcq_options"]["correct"]
        assert item.prompt("tl") == row["prompts"][0]["text_tl"]
    # labels "B", "C", "d", "A", "(B)", and a row with only mcq_options (answer listed first)
    assert [item.correct_index for item in items] == [1, 2, 3, 0, 1, 0]
    assert len({item.id for item in items}) == len(items)


def test_official_gen_rows_take_the_answer_from_label_or_answer():
    items = load_benchmark("pacute", "gen", OFFICIAL)
    affixation = {i.id: i for i in items["pacute-affixation"]}
    assert [i.answer for i in affixation.values()] == ["kumain", "hugasan", "nag"]
    assert "aff-gen-custom-id" in affixation
    assert items["pacute-syllabification"][0].answer == "3"  # a numeric label
    assert all(not i.options and i.correct_index is None for v in items.values() for i in v)


def test_hierarchical_combined_file_splits_by_level_and_answers_are_not_always_first():
    tasks = load_benchmark("hierarchical", "mcq", OFFICIAL)
    assert {t: len(v) for t, v in tasks.items()} == {
        "hierarchical-level0": 2,
        "hierarchical-level2": 3,
        "hierarchical-level3": 1,
    }
    items = [i for v in tasks.values() for i in v]
    assert all(i.options[i.correct_index] == i.answer for i in items)
    assert any(i.correct_index != 0 for i in items)
    assert any(i.has_duplicate_options for i in items)  # tolerated: the official file has them
    assert load_benchmark("hierarchical-2", "mcq", OFFICIAL) == {
        "hierarchical-level2": tasks["hierarchical-level2"]
    }
    gen = load_benchmark("hierarchical", "gen", OFFICIAL)
    assert sorted(gen) == ["hierarchical-level0", "hierarchical-level2", "hierarchical-level4"]


def test_our_layout_and_the_official_layout_hold_the_same_questions(benchmark_dir):
    for name, official in (("pacute", OFFICIAL), ("hierarchical", OFFICIAL)):
        for mode in ("mcq", "gen"):
            ours = {i.fingerprint for i in all_items(benchmark_dir, name, mode)}
            theirs = {i.fingerprint for i in all_items(official, name, mode)}
            assert ours == theirs


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pacute", ("pacute", ["affixation", "composition", "manipulation", "stress", "syllabification"])),
        ("pacute-affixation", ("pacute", ["affixation"])),
        ("pacute-stress", ("pacute", ["stress"])),
        ("cute", ("cute", ["cute"])),
        ("Multi-Digit-Addition", ("multi_digit_addition", ["multi_digit_addition"])),
        ("Hierarchical-Level2", ("hierarchical", ["level2"])),
        ("hierarchical-l5", ("hierarchical", ["level5"])),
        ("hierarchical", ("hierarchical", [f"level{n}" for n in range(6)])),
    ],
)
def test_benchmark_names(name, expected):
    assert expand_benchmark(name) == expected


@pytest.mark.parametrize("name", ["cutie", "pacute-spelling", "hierarchical-level9", "langgame-x"])
def test_unknown_benchmark_names_are_rejected(name):
    with pytest.raises(ValueError):
        expand_benchmark(name)


@pytest.mark.parametrize("name", ["cutie", "pacute-spelling"])
def test_an_unknown_benchmark_on_the_command_line_is_a_usage_error(name, capsys):
    from morphcpt.evaluate.runner import build_parser

    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["--benchmarks", "pacute", name])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert "argument --benchmarks" in error and name in error and "Traceback" not in error


# The 17 files of the official release and what each holds (row shapes as in the release, our own rows).
OFFICIAL_FILES = {
    **{f"{s}_{m}.jsonl": "pacute" for s in PACUTE_SUBSETS for m in ("mcq", "gen")},
    **{f"hierarchical_{m}.jsonl": "hierarchical" for m in ("mcq", "gen")},
    "cute_gen.jsonl": "cute",
    **{f"{b}_{m}.jsonl": b for b in ("langgame", "multi_digit_addition") for m in ("mcq", "gen")},
}


def test_every_file_of_the_official_release_is_read_by_its_benchmark():
    from morphcpt.evaluate.items import BENCHMARKS, survey

    assert sorted(p.name for p in OFFICIAL.glob("*.jsonl")) == sorted(OFFICIAL_FILES)  # 17 files
    files = survey(OFFICIAL, BENCHMARKS, ("mcq", "gen"))
    assert files["skipped"] == [] and sorted(files["found"]) == sorted(OFFICIAL_FILES)
    for language in ("en", "tl"):
        loaded = {}
        for name in BENCHMARKS:
            for mode in ("mcq", "gen"):
                try:
                    tasks = load_benchmark(name, mode, OFFICIAL, language=language)
                except FileNotFoundError:  # cute has no MCQ file, as in the release
                    assert (name, mode) == ("cute", "mcq")
                    continue
                for task, items in tasks.items():
                    loaded[(task, mode)] = items
                    assert items and all(i.mode == mode and i.benchmark == name for i in items)
                    if mode == "mcq":
                        assert all(i.options[i.correct_index] == i.answer for i in items)
        assert len(loaded) == 21  # 10 PACUTE tasks, the 6 hierarchical ones the fixtures hold, 5 more


@pytest.mark.parametrize("mode", ["mcq", "gen"])
def test_stress_files_mix_three_row_shapes_each_read_by_its_fields(mode):
    rows = [json.loads(line) for line in (OFFICIAL / f"stress_{mode}.jsonl").open()]
    english = load_file(OFFICIAL / f"stress_{mode}.jsonl", "pacute", mode, subset="stress")
    tagalog = load_file(OFFICIAL / f"stress_{mode}.jsonl", "pacute", mode, subset="stress", language="tl")
    assert len(english) == len(tagalog) == len(rows) == 6
    for en, tl, row in zip(english, tagalog, rows, strict=True):
        assert en.category == row["category"] and en.metadata["word"] == row["word"]
        if "answer_en" in row:  # syllable position: the answer (and options) in the prompt's language
            assert (en.answer, tl.answer) == (row["answer_en"], row["answer_tl"])
            assert (en.language, tl.language) == ("en", "tl")
            assert en.metadata["stress_index"] == row["stress_index"]
            if mode == "mcq":
                assert (list(en.options), list(tl.options)) == (row["options_en"], row["options_tl"])
            with pytest.raises(ValueError, match="load the benchmark with language='tl'"):
                en.prompt("tl")
            assert tl.prompt("tl") == row["prompt_tl"]
        else:  # stress type and accent placement: one answer for both languages
            assert en.answer == tl.answer == row["answer"] and en.language is tl.language is None
            assert en.fingerprint == tl.fingerprint and tl.prompt("tl") == row["prompt_tl"]
    if mode == "mcq":
        assert any(i.correct_index != 0 for i in english)
        assert any(i.has_duplicate_options for i in english)  # accent placement lists "baso" twice


def test_question_rows_are_one_prompt_whose_options_carry_their_own_separator():
    langgame = load_file(OFFICIAL / "langgame_mcq.jsonl", "langgame", "mcq", subset="langgame")
    addition = load_file(OFFICIAL / "multi_digit_addition_mcq.jsonl", "multi_digit_addition", "mcq")
    cute = load_file(OFFICIAL / "cute_gen.jsonl", "cute", "gen", subset="cute")
    for item in langgame + addition + cute:
        assert item.delimiter == "" and item.prompt("en") == item.prompt("tl")
    # the scored text is the question followed by the option exactly as written: one space, never two
    context, continuation = mcq_requests(langgame[0])[0]
    assert context.endswith("Answer:") and continuation == " book" == langgame[0].answer
    assert {c for _, c in mcq_requests(addition[0])} == {"523", "522", "5233", "52"}
    assert mcq_requests(addition[0])[0][0] + mcq_requests(addition[0])[0][1] == "205+318=523"
    assert [i.subcategory for i in cute] == ["spell", "del_char", "contains_char"]
    assert {i.category for i in cute} == {"cute"} and cute[0].answer == "g a r d e n"
    # the separator is part of what is asked: the same question with " "-joined options is another item
    assert langgame[0].fingerprint != Item(**{**langgame[0].__dict__, "delimiter": " "}).fingerprint


def test_a_row_shape_comes_from_its_fields_never_from_the_file_name(tmp_path):
    misnamed = tmp_path / "affixation_mcq.jsonl"
    shutil.copy(OFFICIAL / "langgame_mcq.jsonl", misnamed)
    items = load_file(misnamed, "pacute", "mcq", subset="affixation")
    assert [i.delimiter for i in items] == [""] * 3 and items[0].answer == " book"
    mixed = tmp_path / "mixed_gen.jsonl"
    lines = [
        (OFFICIAL / f"{n}_gen.jsonl").read_text().splitlines()[0] for n in ("stress", "cute", "affixation")
    ]
    mixed.write_text("\n".join(lines) + "\n")
    kinds = [(i.delimiter, i.language) for i in load_file(mixed, "pacute", "gen", subset="x")]
    assert kinds == [(" ", "en"), ("", None), (" ", None)]


def test_a_whole_benchmark_with_a_subset_missing_warns_and_the_results_name_it(tmp_path, caplog):
    root = tmp_path / "benchmarks"
    root.mkdir()
    for name in ("affixation_mcq.jsonl", "syllabification_mcq.jsonl"):
        shutil.copy(OFFICIAL / name, root / name)
    shutil.copy(OFFICIAL / "langgame_mcq.jsonl", root / "langgame_mcq.jsonl")
    items = all_items(root, "pacute", "mcq")
    cfg = EvalConfig(
        models=["m"], benchmarks=["pacute"], eval_mode="mcq", benchmark_dir=root, output_dir=tmp_path
    )
    with caplog.at_level("WARNING"):
        written = run_evaluation(cfg, lambda spec, cfg: OracleModel(items))
    assert "pacute MCQ is INCOMPLETE" in caplog.text and "composition, manipulation, stress" in caplog.text
    assert "skipped (not asked for): langgame_mcq.jsonl" in caplog.text
    for path in written:
        result = json.loads(path.read_text())
        assert result["missing_subsets"] == ["composition", "manipulation", "stress"]


def test_a_missing_subset_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match="affixation_mcq.jsonl"):
        load_benchmark("pacute-affixation", "mcq", tmp_path)


PACUTE_ROW = {
    "category": "affixation",
    "subcategory": "infix",
    "prompts": [
        {
            "text_en": "q",
            "text_tl": "t",
            "mcq_options": {"correct": "a", "incorrect1": "b", "incorrect2": "c", "incorrect3": "d"},
            "choice1": "b",
            "choice2": "a",
            "choice3": "c",
            "choice4": "d",
        }
    ],
    "label": "B",
}
HIER_ROW = {
    "level": 2,
    "category": "c",
    "prompt_en": "q",
    "prompt_tl": "t",
    "options": ["x", "y"],
    "answer": "y",
}


@pytest.mark.parametrize(
    ("lines", "mode", "message"),
    [
        ([{**PACUTE_ROW, "label": "C"}], "mcq", "mcq_options.correct"),
        ([{**PACUTE_ROW, "label": "F"}], "mcq", "points past"),
        ([{**HIER_ROW, "answer": "z"}], "mcq", "not among the options"),
        ([{**HIER_ROW, "id": "1"}, {**HIER_ROW, "id": "1"}], "mcq", "already used on line 1"),
        ([{**HIER_ROW, "options": []}], "mcq", "GEN row in a file read as MCQ"),
        ([{**HIER_ROW, "prompt_en": None, "prompt_tl": None}], "mcq", "no prompt"),
        ([{**HIER_ROW, "level": "two"}], "mcq", "level"),
        ([{**HIER_ROW, "options": ["y", " "]}], "mcq", "empty answer or option"),
        (["{not json"], "mcq", "not valid JSON"),
        ([{**HIER_ROW, "answer_en": "y"}], "mcq", "both 'answer' and 'answer_en'"),
        ([{"category": "c", "prompt_en": "q", "answer_tl": "oo"}], "gen", "not for prompt language 'en'"),
        ([{"question": "2+2=", "answer": "4", "options": ["3", "5"]}], "mcq", "not among the options"),
        ([{"question": "2+2=", "answer": ""}], "gen", "empty answer"),
        ([{"text": "no shape"}], "gen", "unknown row shape"),
    ],
)
def test_invalid_rows_fail_with_file_and_line(tmp_path, lines, mode, message):
    path = tmp_path / "bad_mcq.jsonl"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    with pytest.raises(BenchmarkFormatError, match=message) as error:
        load_file(path, "hierarchical", mode)
    assert f"{path}:" in str(error.value)
