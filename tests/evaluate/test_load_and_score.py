"""Evaluation: benchmark loaders (both formats), MCQ and GEN scoring sanity checks, the HF scorer, the resumable
runner and the lm-eval export. Models are an oracle, indifferent or position-biased fakes behind the scorer
protocols, and a tiny random Gemma 3 built on the fly (never downloaded)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
import yaml

from morphcpt.evaluate.answers import first_line, match, normalise
from morphcpt.evaluate.gen import score_gen
from morphcpt.evaluate.items import (
    PACUTE_SUBSETS,
    BenchmarkFormatError,
    Item,
    expand_benchmark,
    load_benchmark,
    load_file,
)
from morphcpt.evaluate.mcq import TIE_TOLERANCE, choose, mcq_requests, score_mcq
from morphcpt.evaluate.runner import EvalConfig, model_specs, result_path, run_evaluation
from suite_paths import DATA

# One hand-written file per file of the official release (data/benchmarks/ of the earlier public pipeline), in
# the same row shapes, with our own rows (see data/NOTICE).
OFFICIAL = DATA / "official"


# ------------------------------------------------------------------------------------------------ fixtures


def synthetic_items(
    n: int, *, correct_at: int | None = None, n_options: int = 4, seed: int = 0
) -> list[Item]:
    """MCQ items with distinct options; the answer sits at `correct_at`, or anywhere when None."""
    rng = random.Random(seed)
    syllables = ["ka", "ma", "pa", "ta", "la", "ng", "si", "bu", "ha", "yo", "in", "um", "an"]
    items = []
    for i in range(n):
        options: list[str] = []
        while len(options) < n_options:
            word = "".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
            if word not in options:
                options.append(word)
        index = rng.randrange(n_options) if correct_at is None else correct_at
        items.append(
            Item(
                id=f"syn-{seed}-{i}",
                benchmark="hierarchical",
                subset="level2",
                mode="mcq",
                category="decomposition",
                subcategory="root_extraction",
                prompt_en=f"What is the root of item {i} ({options[index]}-form)?",
                prompt_tl=f"Ano ang salitang-ugat ng aytem {i}?",
                answer=options[index],
                options=tuple(options),
                correct_index=index,
                level=2,
            )
        )
    return items


def shuffled(item: Item, rng: random.Random) -> Item:
    options = list(item.options)
    rng.shuffle(options)
    return Item(**{**item.__dict__, "options": tuple(options), "correct_index": options.index(item.answer)})


class OracleModel:
    """Prefers the recorded answer of whatever item a prompt belongs to; never ties."""

    def __init__(self, items, language: str = "en"):
        self.answers: dict[str, set[str]] = {}  # prompt -> the right continuations (delimiter + answer)
        for item in items:
            self.answers.setdefault(item.prompt(language).rstrip(), set()).add(item.delimiter + item.answer)
        self.calls = 0

    def loglikelihood(self, requests):
        self.calls += len(requests)
        return [
            -1.0 if continuation in self.answers[context.rstrip()] else -20.0 - len(continuation)
            for context, continuation in requests
        ]

    def generate(self, prompts, max_new_tokens=50):
        return [f" {sorted(self.answers[p.rstrip()])[0].strip()}\nnext line" for p in prompts]


class ConstantModel:
    """Indifferent to the options: every continuation is equally likely."""

    def loglikelihood(self, requests):
        return [0.0] * len(requests)


class FirstOptionModel:
    """Always prefers whichever option it is shown first (position A)."""

    def __init__(self, items, language: str = "en"):
        self.first = {item.prompt(language).rstrip(): item.options[0] for item in items}

    def loglikelihood(self, requests):
        return [0.0 if k[1:] == self.first[c] else -5.0 for c, k in requests]


class ContentModel:
    """Scores a continuation by its text alone (a fixed pseudo-random value), whatever its position."""

    def loglikelihood(self, requests):
        return [-random.Random(f"{c}|{k}").random() * 10 for c, k in requests]


@pytest.fixture(scope="session")
def benchmark_dir(tmp_path_factory) -> Path:
    """Our own layout (pacute/<subset>_<mode>.jsonl, hierarchical/level<N>_<mode>.jsonl, cute/cute_<mode>.jsonl)
    built from the hand-written official-format files, hierarchical rows given ids."""
    root = tmp_path_factory.mktemp("benchmarks")
    for path in OFFICIAL.glob("*.jsonl"):
        name = path.stem.rpartition("_")[0]
        if name == "hierarchical":
            continue
        folder = root / ("pacute" if name in PACUTE_SUBSETS else name)
        folder.mkdir(exist_ok=True)
        shutil.copy(path, folder / path.name)
    (root / "hierarchical").mkdir()
    for mode in ("mcq", "gen"):
        rows = [json.loads(line) for line in (OFFICIAL / f"hierarchical_{mode}.jsonl").open()]
        for level in sorted({r["level"] for r in rows}):
            with (root / "hierarchical" / f"level{level}_{mode}.jsonl").open("w") as handle:
                for i, row in enumerate(r for r in rows if r["level"] == level):
                    handle.write(json.dumps({**row, "id": f"h{level}-{mode}-{i}"}) + "\n")
    return root


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, sample_tokenizer_dir) -> Path:
    """A tiny random Gemma 3 with the sample tokenizer; its 8-token sliding window is shorter than the prompts,
    so the sliding-window attention path is exercised."""
    from morphcpt.modeling.models import save_tiny_gemma3

    model_dir = save_tiny_gemma3(
        sample_tokenizer_dir,
        tmp_path_factory.mktemp("tiny") / "model",
        seed=0,
        num_layers=2,
        num_heads=2,
        intermediate_size=128,
        sliding_window=8,
    )
    (model_dir / "morphcpt_metadata.json").write_text(json.dumps({"scheme": "patok", "step": 7}))
    return model_dir


@pytest.fixture(scope="session")
def tiny_lm(tiny_model_dir):
    from morphcpt.evaluate.hf_model import HFCausalLM

    return HFCausalLM.load(tiny_model_dir, device="cpu", batch_size=4)


def all_items(root: Path, name: str, mode: str) -> list[Item]:
    return [item for items in load_benchmark(name, mode, root).values() for item in items]


# ------------------------------------------------------------------------------------------------- loaders


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


# ------------------------------------------------------------------------------------- MCQ sanity checks


def test_an_oracle_scores_100_percent_wherever_the_answer_sits():
    items = all_items(OFFICIAL, "pacute", "mcq") + all_items(OFFICIAL, "hierarchical", "mcq")
    items += synthetic_items(200, seed=1)
    predictions = score_mcq(OracleModel(items), items)
    assert all(p.acc and p.acc_norm for p in predictions)
    assert {p.correct_index for p in predictions} == {0, 1, 2, 3}


def test_shuffling_options_changes_no_per_item_result():
    items = synthetic_items(300, seed=2)
    rng = random.Random(0)
    moved = [shuffled(item, rng) for item in items]
    assert sum(a.correct_index != b.correct_index for a, b in zip(items, moved, strict=True)) > 150
    oracle_before, oracle_after = score_mcq(OracleModel(items), items), score_mcq(OracleModel(moved), moved)
    assert [p.acc for p in oracle_before] == [p.acc for p in oracle_after] == [True] * len(items)
    # A model that judges options by their text alone picks the same text whatever the order.
    before, after = score_mcq(ContentModel(), items), score_mcq(ContentModel(), moved)
    assert [b.options[b.pred] for b in before] == [a.options[a.pred] for a in after]
    assert [(b.acc, b.acc_norm) for b in before] == [(a.acc, a.acc_norm) for a in after]


@pytest.mark.parametrize("correct_at", [0, 3, None])
def test_an_indifferent_model_scores_near_chance_without_favouring_a_position(correct_at):
    items = synthetic_items(2000, correct_at=correct_at, seed=3)
    predictions = score_mcq(ConstantModel(), items)
    accuracy = sum(p.acc for p in predictions) / len(items)
    assert abs(accuracy - 0.25) < 0.035  # ~3.6 binomial standard deviations
    assert all(p.tied for p in predictions)
    for position in range(4):
        assert abs(sum(p.pred == position for p in predictions) / len(items) - 0.25) < 0.035
    assert score_mcq(ConstantModel(), items) == predictions  # the tie-break is reproducible


def test_answers_not_in_first_position_are_scored_against_the_recorded_answer():
    items = synthetic_items(40, correct_at=0, seed=4) + synthetic_items(120, seed=5)
    predictions = score_mcq(FirstOptionModel(items), items)
    for item, prediction in zip(items, predictions, strict=True):
        assert prediction.pred == 0
        assert prediction.acc is (item.correct_index == 0)


def _item(options, answer, item_id="n1"):
    return Item(
        id=item_id,
        benchmark="pacute",
        subset="affixation",
        mode="mcq",
        category="affixation",
        subcategory="x",
        prompt_en="Q?",
        prompt_tl="T?",
        answer=answer,
        options=tuple(options),
        correct_index=list(options).index(answer),
    )


def test_acc_sums_log_probabilities_and_acc_norm_divides_by_characters():
    item = _item(("ka", "pinagsamasama"), "pinagsamasama")

    class LengthModel:
        def loglikelihood(self, requests):  # long right answer: low total, high per character
            return [{" ka": -4.0, " pinagsamasama": -6.5}[k] for _, k in requests]

    (prediction,) = score_mcq(LengthModel(), [item])
    assert (prediction.acc, prediction.acc_norm) == (False, True)
    assert prediction.logprobs == [-4.0, -6.5]


def test_acc_norm_divides_by_the_option_alone_not_the_delimiter():
    # -2/1 < -5/3 picks "bbb"; dividing by the scored " " + option (-2/2 > -5/4) would pick "a".
    item = _item(("a", "bbb"), "bbb")

    class Model:
        def loglikelihood(self, requests):
            return [{" a": -2.0, " bbb": -5.0}[k] for _, k in requests]

    (prediction,) = score_mcq(Model(), [item])
    assert (prediction.pred, prediction.pred_norm, prediction.acc_norm) == (0, 1, True)


def test_acc_and_acc_norm_equal_lm_eval_on_the_fixtures():
    """lm-eval 0.4.x (`ConfigurableTask.process_results`, multiple_choice): pred = argmax(lls), pred_norm =
    argmax(lls / [len(choice) for choice in choices]), right when the pick is in the gold list the export writes."""
    items = all_items(OFFICIAL, "pacute", "mcq") + all_items(OFFICIAL, "hierarchical", "mcq")
    items += synthetic_items(300, seed=6)
    model = ContentModel()
    for item, prediction in zip(items, score_mcq(model, items), strict=True):
        lls = model.loglikelihood(mcq_requests(item))
        gold = [i for i, option in enumerate(item.options) if option == item.answer]
        lengths = [float(len(choice)) for choice in item.options]
        pred_norm = max(range(len(lls)), key=lambda i: (lls[i] / lengths[i], -i))
        if not prediction.tied_norm:
            assert prediction.pred_norm == pred_norm
            assert prediction.acc_norm is (pred_norm in gold)
        if not prediction.tied:
            assert prediction.acc is (max(range(len(lls)), key=lambda i: (lls[i], -i)) in gold)


def test_a_duplicated_answer_counts_either_copy_in_both_evaluators(tmp_path):
    from morphcpt.evaluate.lm_eval import export_lm_eval

    item = _item(("kain", "kumain", "kinain", "kumain"), "kumain")
    assert item.gold_indices == (1, 3)

    class PrefersLastCopy:
        def loglikelihood(self, requests):
            return [-1.0 if i == 3 else -9.0 for i in range(len(requests))]

    (prediction,) = score_mcq(PrefersLastCopy(), [item])
    assert prediction.pred == 3 and prediction.acc and prediction.acc_norm
    export_lm_eval({("pacute-affixation", "mcq"): [item]}, tmp_path)
    (row,) = [
        json.loads(line) for line in (tmp_path / "data" / "morphcpt_pacute_affixation_mcq.jsonl").open()
    ]
    assert row["gold"] == [1, 3]


def test_scores_within_the_tolerance_are_ties():
    noise = TIE_TOLERANCE / 10
    pick, tied = choose([-3.0, -3.0 + noise, -7.0], "k")
    assert tied and pick in (0, 1)
    assert {choose([-3.0 + noise, -3.0, -7.0], f"k{i}")[0] for i in range(50)} == {0, 1}
    assert choose([-3.0, -3.0 + 10 * TIE_TOLERANCE], "k") == (1, False)


def test_requests_join_prompt_and_option_with_one_space():
    item = synthetic_items(1)[0]
    spaced = Item(**{**item.__dict__, "prompt_en": item.prompt_en + "  "})
    assert mcq_requests(spaced) == mcq_requests(item)
    assert all(k == " " + option for (_, k), option in zip(mcq_requests(item), item.options, strict=True))


def test_nan_scores_never_win():
    assert choose([float("nan"), -3.0, -2.0], "k") == (2, False)


# ------------------------------------------------------------------------------------------------ GEN


@pytest.mark.parametrize(
    ("text", "expected"),
    [("\n\n s i l a\nNext", ("s i l a", True)), ("kumain", ("kumain", False)), ("  \r\n", ("", False))],
)
def test_the_answer_is_the_first_line_after_leading_whitespace(text, expected):
    assert first_line(text) == expected


def test_normalisation_keeps_case_diacritics_and_inner_spaces():
    assert normalise('  "Kumáin."  ') == "Kumáin"
    assert normalise("s  i\tl a") == "s i l a"
    assert match("kumain", "Kumain")["exact"] is False  # case tasks need case
    assert match("Kumáin", "Kumain")["exact"] is False  # diacritic tasks need diacritics
    assert match("Kuma\u0301in", "Kumáin")["exact"] is True  # one Unicode form
    assert match("'", "'") == {"exact": True, "prefix": True, "contains": True}


def test_exact_prefix_and_contains():
    assert match("kumain siya", "kumain") == {"exact": False, "prefix": True, "contains": True}
    assert match("ang sagot ay kain", "kain") == {"exact": False, "prefix": False, "contains": True}
    assert match("“kain”.", "kain") == {"exact": True, "prefix": True, "contains": True}


@pytest.mark.parametrize(
    ("prediction", "answer"),
    [("10", "1"), ("kumain", "kain"), ("maganda", "ganda"), ("abcdefghijklmnopqrstuvwxyz 0123456789", "a")],
)
def test_prefix_and_contains_need_word_boundaries(prediction, answer):
    assert match(prediction, answer) == {"exact": False, "prefix": False, "contains": False}


def test_a_constant_alphabet_string_scores_nothing_on_the_fixtures():
    items = all_items(OFFICIAL, "pacute", "gen") + all_items(OFFICIAL, "hierarchical", "gen")
    constant = "abcdefghijklmnopqrstuvwxyz 0123456789"
    assert not any(any(match(constant, item.answer).values()) for item in items)
    assert match(constant + " 3", "3")["contains"]  # a separate "3" still counts


@pytest.mark.parametrize(
    ("prediction", "answer", "exact"),
    [
        ("‘tangna", "‘tangna", True),
        ("tangna", "‘tangna", False),
        ("“‘tangna”", "‘tangna", True),
        ("Naman!", "Naman!", True),
        ("Naman", "Naman!", False),
        ("Naman!.", "Naman!", True),
        ("Naman!", "Naman", True),  # sentence punctuation the answer lacks is a wrapper
    ],
)
def test_edge_stripping_keeps_the_answers_own_punctuation(prediction, answer, exact):
    assert match(prediction, answer)["exact"] is exact


def test_an_oracle_generator_is_exact_on_every_item():
    items = all_items(OFFICIAL, "pacute", "gen") + all_items(OFFICIAL, "hierarchical", "gen")
    predictions = score_gen(OracleModel(items), items)
    assert all(p.exact and p.prefix and p.contains for p in predictions)
    assert all("\n" not in p.prediction for p in predictions)


# ------------------------------------------------------------------------------------------ the HF scorer


def reference_loglikelihood(lm, context: str, continuation: str) -> float:
    """One unpadded sequence at a time, straight from the model's logits."""
    import torch

    bos = lm.tokenizer.bos_token_id
    ctx = lm.tokenizer(context, add_special_tokens=False)["input_ids"]
    cont = lm.tokenizer(continuation, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([[bos, *ctx, *cont]])
    with torch.no_grad():
        logprobs = lm.model(input_ids=ids).logits[0].float().log_softmax(-1)
    return sum(logprobs[len(ctx) + j, token].item() for j, token in enumerate(cont))


def test_batched_log_likelihoods_equal_an_unbatched_reference(tiny_lm, benchmark_dir):
    items = all_items(benchmark_dir, "pacute", "mcq") + all_items(benchmark_dir, "hierarchical", "mcq")
    requests = [r for item in items for r in mcq_requests(item)][::2] + [("Oo", " at"), ("Q", " a")]
    lengths = {len(tiny_lm.encode([c + k])[0]) for c, k in requests}
    assert min(lengths) < 8 < max(lengths)  # padded batches, and rows past the sliding window (8)
    batched = tiny_lm.loglikelihood(requests)
    for (context, continuation), value in zip(requests, batched, strict=True):
        assert value == pytest.approx(reference_loglikelihood(tiny_lm, context, continuation), abs=1e-4)


@pytest.mark.parametrize("add_bos_token", [True, False])
def test_every_scored_and_generated_sequence_starts_with_exactly_one_bos(tiny_model_dir, add_bos_token):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from morphcpt.evaluate.hf_model import HFCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir, add_bos_token=add_bos_token)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    seen = []  # on the decoder, which scoring (per option or prompt-shared) and generation all run
    model.model.register_forward_pre_hook(
        lambda _, args, kwargs: seen.append(kwargs["input_ids"]), with_kwargs=True
    )
    lm = HFCausalLM(model, tokenizer, batch_size=3)
    lm.loglikelihood(
        [("Ano ang ugat ng <bos> kumain?", " kain"), ("Q", " a b"), ("Mahabang tanong dito", " x")]
    )
    lm.generate(["Baybayin ang salitang sila.", "Q"], max_new_tokens=3)
    bos, pad = tokenizer.bos_token_id, lm.pad_id
    first_calls = [
        ids for ids in seen if ids.shape[1] > 1
    ]  # scoring and generation prefill, not decode steps
    assert first_calls
    for batch in first_calls:
        for row in batch.tolist():
            real = row[next(i for i, t in enumerate(row) if t != pad or i == len(row) - 1) :]
            assert real[0] == bos and real.count(bos) == 1


def test_hf_predictions_do_not_depend_on_option_order(tiny_lm):
    items = synthetic_items(12, seed=6)
    rng = random.Random(1)
    moved = [shuffled(item, rng) for item in items]
    before, after = score_mcq(tiny_lm, items), score_mcq(tiny_lm, moved)
    assert [b.options[b.pred_norm] for b in before] == [a.options[a.pred_norm] for a in after]
    assert [b.acc for b in before] == [a.acc for a in after]


def test_batched_greedy_generation_equals_one_prompt_at_a_time(tiny_lm, benchmark_dir):
    prompts = [i.prompt() for i in all_items(benchmark_dir, "pacute", "gen")]
    steps: list[
        int
    ] = []  # forward calls per batch: a prefill (several ids a row) starts one, each new id adds one

    def count(module, args, kwargs):  # re-encoding decoded text is no measure: count the steps themselves
        if kwargs["input_ids"].shape[1] > 1:
            steps.append(0)
        steps[-1] += 1

    hook = tiny_lm.model.register_forward_pre_hook(count, with_kwargs=True)
    try:
        tiny_lm.batch_size = 1
        single = tiny_lm.generate(prompts, max_new_tokens=8)
        tiny_lm.batch_size = 4
        batched = tiny_lm.generate(prompts, max_new_tokens=8)
    finally:
        hook.remove()
    assert batched == single
    assert steps and max(steps) <= 8


# ------------------------------------------------------------------------------------------------ runner


def test_runner_writes_per_item_results_with_model_metadata(tiny_model_dir, benchmark_dir, tmp_path):
    cfg = EvalConfig(
        models=[str(tiny_model_dir)],
        benchmarks=["pacute-affixation", "hierarchical"],
        eval_mode="both",
        benchmark_dir=benchmark_dir,
        output_dir=tmp_path / "results",
        batch_size=4,
        device="cpu",
        max_new_tokens=5,
    )
    written = run_evaluation(cfg)
    assert len(written) == 2 + 3 + 3  # affixation x 2 modes, hierarchical MCQ levels 0/2/3, GEN levels 0/2/4
    result = json.loads(result_path(cfg.output_dir, "model", "hierarchical-level2", "mcq", "en").read_text())
    assert result["model"]["scheme"] == "patok" and result["model"]["step"] == 7
    assert result["summary"]["overall"]["n"] == len(result["predictions"]) == 3
    for prediction in result["predictions"]:
        assert prediction["options"][prediction["correct_index"]] == prediction["answer"]
        assert prediction["acc"] == (prediction["options"][prediction["pred"]] == prediction["answer"])
    gen = json.loads(result_path(cfg.output_dir, "model", "pacute-affixation", "gen", "en").read_text())
    assert {"exact", "prefix", "contains"} <= set(gen["summary"]["overall"])
    assert not list(cfg.output_dir.rglob("*.partial.jsonl"))


class CrashingModel(OracleModel):
    def __init__(self, items, crash_after: int):
        super().__init__(items)
        self.crash_after = crash_after

    def loglikelihood(self, requests):
        if self.calls >= self.crash_after:
            raise KeyboardInterrupt
        return super().loglikelihood(requests)


def test_an_interrupted_run_resumes_and_matches_an_uninterrupted_one(benchmark_dir, tmp_path):
    items = load_benchmark("hierarchical-level2", "mcq", benchmark_dir)["hierarchical-level2"]
    base = dict(models=["fake-org/fake"], benchmarks=["hierarchical-level2"], eval_mode="mcq")
    base.update(benchmark_dir=benchmark_dir, batch_size=1)
    crashing = CrashingModel(items, crash_after=2 * len(items[0].options))
    with pytest.raises(KeyboardInterrupt):
        run_evaluation(EvalConfig(**base, output_dir=tmp_path / "a"), lambda spec, cfg: crashing)
    final = result_path(tmp_path / "a", "fake-org__fake", "hierarchical-level2", "mcq", "en")
    partial = final.with_name(final.stem + ".partial.jsonl")
    assert not final.exists() and len(partial.read_text().splitlines()) == 1 + 2  # header + two items
    resumed = OracleModel(items)
    run_evaluation(EvalConfig(**base, output_dir=tmp_path / "a"), lambda spec, cfg: resumed)
    assert resumed.calls == sum(len(i.options) for i in items[2:])  # only the missing item
    run_evaluation(EvalConfig(**base, output_dir=tmp_path / "b"), lambda spec, cfg: OracleModel(items))
    clean = result_path(tmp_path / "b", "fake-org__fake", "hierarchical-level2", "mcq", "en")
    assert json.loads(final.read_text())["predictions"] == json.loads(clean.read_text())["predictions"]

    def must_not_load(spec, cfg):
        raise AssertionError("a finished task loaded its model again")

    run_evaluation(EvalConfig(**base, output_dir=tmp_path / "a"), must_not_load)


def test_a_larger_limit_scores_only_the_new_items(benchmark_dir, tmp_path):
    items = all_items(benchmark_dir, "pacute", "mcq")
    base = dict(models=["m"], benchmarks=["pacute"], eval_mode="mcq", benchmark_dir=benchmark_dir)
    base.update(output_dir=tmp_path)
    run_evaluation(EvalConfig(**base, limit=1), lambda spec, cfg: OracleModel(items))
    second = OracleModel(items)
    run_evaluation(EvalConfig(**base), lambda spec, cfg: second)
    firsts = {}
    for item in items:
        firsts.setdefault(item.task, item)
    assert len(firsts) == 5  # one per PACUTE subset
    # the first item of every subset was reused
    assert second.calls == sum(len(i.options) for i in items) - sum(len(i.options) for i in firsts.values())


def test_tagalog_prompts_and_changed_settings_get_their_own_results(benchmark_dir, tmp_path):
    items = all_items(benchmark_dir, "hierarchical", "gen")
    base = dict(models=["m"], benchmarks=["hierarchical"], eval_mode="gen", benchmark_dir=benchmark_dir)
    base.update(output_dir=tmp_path)
    tagalog = OracleModel(items, language="tl")  # knows only the Tagalog prompts
    written = run_evaluation(EvalConfig(**base, language="tl"), lambda spec, cfg: tagalog)
    assert all(path.name.endswith("_gen_tl.json") for path in written)
    assert all(json.loads(path.read_text())["summary"]["overall"]["exact"] == 1.0 for path in written)
    calls = []

    class Recording(OracleModel):
        def generate(self, prompts, max_new_tokens=50):
            calls.append(max_new_tokens)
            return super().generate(prompts, max_new_tokens)

    for max_new_tokens in (5, 5, 6):  # the repeat is skipped; a new limit scores again
        run_evaluation(EvalConfig(**base, max_new_tokens=max_new_tokens), lambda spec, cfg: Recording(items))
    assert calls == [5] * len(written) + [6] * len(written)


def test_models_must_have_distinct_names(tmp_path):
    for folder in ("a", "b"):  # two exported models of the same name
        (tmp_path / folder / "step_10").mkdir(parents=True)
        (tmp_path / folder / "step_10" / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="--model-names"):
        model_specs([str(tmp_path / "a" / "step_10"), str(tmp_path / "b" / "step_10")])
    assert [s.name for s in model_specs(["google/gemma-3-1b-pt"])] == ["google__gemma-3-1b-pt"]


def test_the_command_line_runs_end_to_end(tiny_model_dir, benchmark_dir, tmp_path):
    from morphcpt.evaluate.runner import main

    out = tmp_path / "results"
    argv = ["--models", str(tiny_model_dir), "--benchmarks", "pacute-syllabification", "--eval-mode", "both"]
    argv += ["--benchmark-dir", str(benchmark_dir), "--output-dir", str(out), "--device", "cpu"]
    argv += ["--max-new-tokens", "4", "--export-lm-eval", str(tmp_path / "lm_eval")]
    assert main(argv) == 0
    assert sorted(p.name for p in (out / "model").iterdir()) == [
        "pacute-syllabification_gen.json",
        "pacute-syllabification_mcq.json",
    ]
    assert (tmp_path / "lm_eval" / "morphcpt_pacute_syllabification_mcq.yaml").is_file()


# ----------------------------------------------------------------------------------------- lm-eval export


class _TaskLoader(yaml.SafeLoader):
    """Reads lm-eval's `!function module.name` tag as ("!function", "module.name")."""


_TaskLoader.add_constructor("!function", lambda loader, node: ("!function", loader.construct_scalar(node)))


def test_lm_eval_export_writes_tasks_groups_and_their_data(benchmark_dir, tmp_path):
    from morphcpt.evaluate.lm_eval import export_lm_eval
    from morphcpt.evaluate.runner import load_tasks

    cfg = EvalConfig(benchmarks=["pacute", "hierarchical"], benchmark_dir=benchmark_dir)
    tasks = load_tasks(cfg)
    written = export_lm_eval(tasks, tmp_path)
    configs = {p.stem: yaml.load(p.read_text(), Loader=_TaskLoader) for p in written}
    assert len(configs) == len(tasks) + 4  # one group per benchmark and mode
    mcq = configs["morphcpt_hierarchical_level2_mcq"]
    assert mcq["output_type"] == "multiple_choice"
    assert (mcq["doc_to_choice"], mcq["doc_to_target"], mcq["target_delimiter"]) == ("options", "gold", " ")
    data_file = Path(mcq["dataset_kwargs"]["data_files"]["test"])
    rows = [json.loads(line) for line in data_file.read_text().splitlines()]
    assert len(rows) == len(tasks[("hierarchical-level2", "mcq")])
    assert all(row["gold"] and all(row["options"][g] == row["answer"] for g in row["gold"]) for row in rows)
    gen = configs["morphcpt_pacute_affixation_gen"]
    assert gen["output_type"] == "generate_until" and gen["generation_kwargs"]["until"] == []
    assert gen["process_results"] == ("!function", "morphcpt_answers.process_results")
    assert [m["metric"] for m in gen["metric_list"]] == ["exact", "prefix", "contains"]
    assert configs["morphcpt_hierarchical_mcq"]["task"] == [
        f"morphcpt_hierarchical_level{n}_mcq" for n in (0, 2, 3)
    ]


def test_the_exported_gen_metric_is_our_matcher(tmp_path):
    """lm-eval imports `morphcpt_answers.py` from beside the YAML: it must score raw outputs exactly as we do."""
    import importlib.util

    from morphcpt.evaluate.lm_eval import export_lm_eval

    items = all_items(OFFICIAL, "pacute", "gen") + all_items(OFFICIAL, "hierarchical", "gen")
    export_lm_eval({("pacute-affixation", "gen"): items}, tmp_path)
    spec = importlib.util.spec_from_file_location("exported", tmp_path / "morphcpt_answers.py")
    exported = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exported)
    outputs = [
        "\n kumain\nx",
        " “Naman!”",
        "10",
        " s  i l a",
        "‘tangna",
        "abcdefghijklmnopqrstuvwxyz 0123456789",
    ]
    outputs += [f" {item.answer} at iba pa" for item in items] + [f"{item.answer}." for item in items]

    class Replay:
        def __init__(self, output):
            self.output = output

        def generate(self, prompts, max_new_tokens=50):
            return [self.output] * len(prompts)

    rows = [json.loads(line) for line in (tmp_path / "data" / "morphcpt_pacute_affixation_gen.jsonl").open()]
    for output in outputs:
        ours = score_gen(Replay(output), items)
        theirs = [exported.process_results(row, [output]) for row in rows]
        assert [{m: float(getattr(p, m)) for m in ("exact", "prefix", "contains")} for p in ours] == theirs


def test_a_benchmark_of_one_task_is_exported_as_that_task_not_a_group(tmp_path):
    from morphcpt.evaluate.lm_eval import export_lm_eval

    tasks = {("langgame", mode): all_items(OFFICIAL, "langgame", mode) for mode in ("mcq", "gen")}
    written = export_lm_eval(tasks, tmp_path)
    assert sorted(p.name for p in written) == ["morphcpt_langgame_gen.yaml", "morphcpt_langgame_mcq.yaml"]
    config = yaml.load((tmp_path / "morphcpt_langgame_mcq.yaml").read_text(), Loader=_TaskLoader)
    assert config["output_type"] == "multiple_choice" and "group" not in config


@pytest.mark.slow
def test_lm_eval_runs_every_exported_family_and_scores_what_we_score(tiny_model_dir, tiny_lm, tmp_path):
    """The export of all 17 official-format files, run by lm-evaluation-harness itself on a tiny Gemma 3: every
    task runs, MCQ log-likelihoods are ours (so both scored the same text: the " " and "" delimiters), and GEN
    decodes the same answer lines and scores them alike."""
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    from morphcpt.evaluate.items import BENCHMARKS
    from morphcpt.evaluate.lm_eval import export_lm_eval, task_name

    tasks = {}
    for name in BENCHMARKS:
        for mode in ("mcq", "gen"):
            if (name, mode) != ("cute", "mcq"):
                tasks.update({(t, mode): items for t, items in load_benchmark(name, mode, OFFICIAL).items()})
    export_lm_eval(tasks, tmp_path)
    names = {key: task_name(*key) for key in tasks}
    out = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={tiny_model_dir},add_bos_token=True,dtype=float32",
        tasks=sorted(names.values()),
        task_manager=TaskManager(include_path=str(tmp_path)),
        device="cpu",
        batch_size=8,
        log_samples=True,
        gen_kwargs="max_gen_toks=4",
    )
    assert set(out["samples"]) == set(names.values())
    for key, items in tasks.items():
        samples = {s["doc"]["id"]: s for s in out["samples"][names[key]]}
        assert set(samples) == {item.id for item in items}
        if key[1] == "mcq":
            for p in score_mcq(tiny_lm, items):
                theirs = [float(resp[0]) for resp in samples[p.id]["filtered_resps"]]
                assert theirs == pytest.approx(p.logprobs, abs=1e-4)
                if not p.tied:
                    assert p.acc == bool(samples[p.id]["acc"])
        else:
            for p in score_gen(tiny_lm, items, max_new_tokens=4):
                assert p.prediction == first_line(samples[p.id]["resps"][0][0])[0]
                assert (p.exact, p.contains) == (
                    bool(samples[p.id]["exact"]),
                    bool(samples[p.id]["contains"]),
                )


def test_the_scoring_precision_is_chosen_recorded_and_never_mixed_on_resume(
    tiny_model_dir, benchmark_dir, tmp_path
):
    """--dtype: the model scores in it (auto: fp32 on a CPU), each result records it among its settings, and a rerun
    in the other precision scores again instead of keeping the first one's log-likelihoods (on an H200 the same
    weights in bf16 and fp32 flipped 2 of 100 Level 2 items)."""
    from morphcpt.evaluate.runner import load_hf_model, model_specs

    base = dict(models=[str(tiny_model_dir)], benchmarks=["hierarchical-level2"], eval_mode="mcq")
    base.update(benchmark_dir=benchmark_dir, output_dir=tmp_path / "results", batch_size=4, device="cpu")
    (spec,) = model_specs(base["models"])
    for dtype, expected in (("auto", "float32"), ("fp32", "float32"), ("bf16", "bfloat16")):
        assert str(load_hf_model(spec, EvalConfig(**base, dtype=dtype)).model.dtype) == f"torch.{expected}"
    path = result_path(base["output_dir"], "model", "hierarchical-level2", "mcq", "en")
    logprobs = {}
    for dtype in ("auto", "bf16"):
        run_evaluation(EvalConfig(**base, dtype=dtype))
        result = json.loads(path.read_text())
        logprobs[dtype] = [p["logprobs"] for p in result["predictions"]]
        assert result["settings"]["dtype"] == {"auto": "fp32", "bf16": "bf16"}[dtype]
    assert logprobs["auto"] != logprobs["bf16"]  # scored again in bf16, not the fp32 file kept
    with pytest.raises(SystemExit):
        from morphcpt.evaluate.runner import build_parser

        build_parser().parse_args(["--models", "m", "--dtype", "fp16"])
