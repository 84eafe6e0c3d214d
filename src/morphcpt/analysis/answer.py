"""The research question's comparisons and the answer's sentences and table (the report's first screen).

`findings` pairs the arms the question asks about (Patok, StochasTok and EEVE against the baseline; Patok against
StochasTok and EEVE) on some focus groups, in both modes, as one Bonferroni family: each `Finding` holds McNemar's
exact p and the interval that inverts it at the family's simultaneous confidence 1 - ALPHA / m, so the interval
excludes 0 exactly when the adjusted p < ALPHA (`stats`). `answer_sentences` and `answer_table` say the answer
from the first focus group evaluated (Level 2 first).

    primary = findings(comparisons, roles, "en", ["hierarchical-level2"])
    print(answer_sentences(scores, primary, roles, "en"))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from morphcpt.analysis.results import PRIMARY_METRIC, ModelInfo
from morphcpt.analysis.stats import PairedDifference, bonferroni, paired_difference
from morphcpt.analysis.tables import ComparisonRow, ScoreRow, cell, markdown_table, p_text, percent

ALPHA = 0.05
# Where the question is asked, most important first: Level 2 is morpheme decomposition.
FOCUS_GROUPS = ("hierarchical-level2", "hierarchical", "pacute-affixation", "pacute")
QUESTIONS = (
    ("patok", "baseline"),
    ("stochastok", "baseline"),
    ("patok", "stochastok"),
    ("eeve", "baseline"),  # the fourth arm: own Filipino tokens instead of re-cut ones
    ("patok", "eeve"),
)
ROLE_NAMES = {
    "base": "base model",
    "baseline": "baseline (vanilla CPT)",
    "stochastok": "StochasTok CPT",
    "patok": "Patok CPT",
    "eeve": "EEVE (expanded vocabulary)",
}


ARMS = ("baseline", "stochastok", "patok", "eeve")


@dataclass(frozen=True)
class Finding:
    """One research-question comparison, A minus B, inside a Bonferroni family of `family` comparisons."""

    group: str
    mode: str
    role_a: str
    role_b: str
    mean_a: float
    mean_b: float
    difference: PairedDifference  # interval at the family's simultaneous confidence, 1 - ALPHA / family
    family: int

    @property
    def p_adjusted(self) -> float:
        return bonferroni(self.difference.p_value, self.family)

    @property
    def significant(self) -> bool:
        return self.p_adjusted < ALPHA

    def interval(self) -> str:
        d = self.difference
        return f"{100 * d.diff:+.1f} pp ({confidence_text(d.confidence)} CI {100 * d.low:+.1f} to {100 * d.high:+.1f})"

    def sentence(self) -> str:
        d = self.difference
        numbers = f"{self.interval()}, McNemar {p_phrase(d.p_value)}, adjusted {p_phrase(self.p_adjusted)}, n = {d.n}"
        a, b = ROLE_NAMES[self.role_a], ROLE_NAMES[self.role_b]
        if self.significant:
            return f"{a} is significantly {'better' if d.diff > 0 else 'worse'} than {b}: {numbers}."
        return f"No significant difference between {a} and {b}: {numbers}; this does not show that {a} beats {b}."


def p_phrase(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def confidence_text(confidence: float) -> str:
    """95%, 99.17%: as many decimals as it takes to tell the level apart (Bonferroni levels are not round)."""
    text = f"{100 * confidence:.2f}".rstrip("0").rstrip(".")
    return f"{text}%"


def _counts(
    rows: Sequence[ComparisonRow], a: str, b: str, group: str, mode: str, language: str
) -> tuple[int, int, int, float, float] | None:
    """(items only A got right, only B, n, mean A, mean B) of models a and b on a group, either orientation."""
    for row in rows:
        if (row.group, row.mode, row.language, row.metric) != (group, mode, language, PRIMARY_METRIC[mode]):
            continue
        if (row.model_a, row.model_b) == (a, b):
            return row.a_only, row.b_only, row.n, row.mean_a, row.mean_b
        if (row.model_a, row.model_b) == (b, a):
            return row.b_only, row.a_only, row.n, row.mean_b, row.mean_a
    return None


def findings(
    comparisons: Sequence[ComparisonRow], roles: dict[str, ModelInfo], language: str, groups: Sequence[str]
) -> list[Finding]:
    """The research-question pairs present on `groups` (both modes): one Bonferroni family."""
    found = []
    for group in groups:
        for mode in ("mcq", "gen"):
            for role_a, role_b in QUESTIONS:
                if role_a in roles and role_b in roles:
                    counts = _counts(
                        comparisons, roles[role_a].name, roles[role_b].name, group, mode, language
                    )
                    if counts is not None:
                        found.append((group, mode, role_a, role_b, counts))
    family = len(found)
    return [
        Finding(
            group,
            mode,
            a,
            b,
            mean_a,
            mean_b,
            paired_difference(a_only, b_only, n, confidence=1 - ALPHA / family),
            family,
        )
        for group, mode, a, b, (a_only, b_only, n, mean_a, mean_b) in found
    ]


def primary_group(
    comparisons: Sequence[ComparisonRow], roles: dict[str, ModelInfo], language: str
) -> str | None:
    """The focus group the answer is about: the first one (Level 2 first) holding a research-question pair."""
    return next((g for g in FOCUS_GROUPS if findings(comparisons, roles, language, [g])), None)


def _score(scores: Sequence[ScoreRow], model: str, group: str, mode: str, language: str) -> ScoreRow | None:
    return next(
        (
            s
            for s in scores
            if (s.model, s.group, s.mode, s.language, s.metric)
            == (model, group, mode, language, PRIMARY_METRIC[mode])
        ),
        None,
    )


def group_title(group: str) -> str:
    return "hierarchical Level 2 (morpheme decomposition)" if group == "hierarchical-level2" else group


def arm_scores(scores, roles, group, mode, language) -> list[tuple[str, ScoreRow]]:
    return [
        (role, s)
        for role in ARMS
        if role in roles and (s := _score(scores, roles[role].name, group, mode, language)) is not None
    ]


def at_chance(levels: list[tuple[str, ScoreRow]]) -> list[str]:
    return [role for role, s in levels if s.chance is not None and s.low <= s.chance]


def _verdict(here: list[Finding]) -> str:
    by_pair = {(f.role_a, f.role_b): f for f in here}
    versus_base, versus_stochastok = by_pair.get(("patok", "baseline")), by_pair.get(("patok", "stochastok"))
    if versus_base is None:
        return "**Answer: open** — without both a Patok and a baseline model the main question stays open"
    diff = versus_base.difference.diff
    if versus_base.significant and diff < 0:
        return "**Answer: no** — Patok is worse than vanilla CPT"
    if not versus_base.significant:
        return "**Answer: not shown** — the difference between Patok and vanilla CPT is not significant"
    if versus_stochastok is None:
        return "**Answer: yes against vanilla CPT** — there is no StochasTok model to compare with"
    if versus_stochastok.significant and versus_stochastok.difference.diff > 0:
        return "**Answer: yes** — Patok beats both vanilla CPT and StochasTok"
    return (
        "**Answer: partly** — Patok beats vanilla CPT but not StochasTok, so the gain may come from varied "
        "segmentation in general rather than from morpheme boundaries"
    )


def answer_sentences(scores, primary: list[Finding], roles, language) -> list[str]:
    """At most three sentences: the verdict with its number, Patok against StochasTok, the method."""
    group, mode = primary[0].group, primary[0].mode
    here = [f for f in primary if f.mode == mode]
    metric = f"{mode.upper()} {PRIMARY_METRIC[mode]}"
    levels = arm_scores(scores, roles, group, mode, language)
    verdict = _verdict(here)
    by_pair = {(f.role_a, f.role_b): f for f in here}
    main = by_pair.get(("patok", "baseline"))
    if levels and len(at_chance(levels)) == len(levels):
        first = (
            f"**Answer: not shown** — on {group_title(group)}, {metric}, every model's interval includes guessing "
            f"({percent(levels[0][1].chance)}%), so this run cannot tell the schemes apart."
        )
    elif main is not None:
        first = (
            f"{verdict} on {group_title(group)}, {metric}: Patok − vanilla CPT {main.interval()}, adjusted "
            f"{p_phrase(main.p_adjusted)}."
        )
    else:
        first = f"{verdict} on {group_title(group)}, {metric}."
    sentences = [first]
    other = by_pair.get(("patok", "stochastok"))
    if other is not None:
        sentences.append(
            f"Patok − StochasTok: {other.interval()}, adjusted {p_phrase(other.p_adjusted)}"
            f" ({'significant' if other.significant else 'not significant'})."
        )
    family = primary[0].family
    sentences.append(
        f"Each difference comes with McNemar's exact p and the interval that inverts that test, both Bonferroni-"
        f"adjusted over the {family} comparison{'s' if family > 1 else ''} of this group (simultaneous "
        f"{confidence_text(1 - ALPHA / family)} intervals), so an interval excludes 0 exactly when its adjusted "
        f"p < {ALPHA}; accuracies have Wilson 95% intervals."
    )
    return sentences


def answer_table(scores, primary: list[Finding], roles, language) -> str:
    body = []
    for mode in ("mcq", "gen"):
        here = {(f.role_a, f.role_b): f for f in primary if f.mode == mode}
        for role, s in arm_scores(scores, roles, primary[0].group, mode, language):
            f = here.get((role, "baseline"))
            versus = (
                "—"
                if f is None
                else f"{100 * f.difference.diff:+.1f} [{100 * f.difference.low:+.1f}, {100 * f.difference.high:+.1f}]"
            )
            body.append(
                [
                    ROLE_NAMES[role],
                    mode.upper(),
                    PRIMARY_METRIC[mode],
                    cell(s),
                    "—" if s.chance is None else percent(s.chance),
                    versus,
                    "—" if f is None else p_text(f.p_adjusted),
                ]
            )
    family = primary[0].family
    return markdown_table(
        [
            "arm",
            "mode",
            "metric",
            "accuracy % [95% CI]",
            "guessing %",
            f"vs baseline, pp [{confidence_text(1 - ALPHA / family)} CI]",
            "adjusted p",
        ],
        body,
    )
