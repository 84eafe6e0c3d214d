"""The research question's comparisons and the answer's sentences and table (the report's first screen).

`findings` pairs the arms the question asks about (Patok, StochasTok and EEVE against the baseline; Patok against
StochasTok and EEVE) on some focus groups, in both modes, as one Bonferroni family: each `Finding` holds a p-value
and the interval that inverts the same test at the family's simultaneous confidence 1 - ALPHA / m, so the interval
excludes 0 exactly when the adjusted p < ALPHA. The test comes from the evidence (`evidence`): over items and
seeds when an arm has several seeds (`replicates`), over the items of one run per arm otherwise (McNemar's score
test with Tango's interval, `stats`). `answer_sentences` and `answer_table` say the answer from the first focus
group evaluated (Level 2 first).

    primary = findings(evidence, "en", ["hierarchical-level2"])
    print(answer_sentences(evidence, primary, "en"))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from morphcpt.analysis.evidence import ARMS, ArmAccuracy
from morphcpt.analysis.replicates import SeedDifference
from morphcpt.analysis.results import PRIMARY_METRIC
from morphcpt.analysis.stats import PairedDifference, bonferroni
from morphcpt.analysis.tables import markdown_table, p_text, percent

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


@dataclass(frozen=True)
class Finding:
    """One research-question comparison, A minus B, inside a Bonferroni family of `family` comparisons."""

    group: str
    mode: str
    role_a: str
    role_b: str
    mean_a: float
    mean_b: float
    difference: (
        PairedDifference | SeedDifference
    )  # at the family's simultaneous confidence 1 - ALPHA / family
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

    def test_phrase(self) -> str:
        d = self.difference
        if isinstance(d, SeedDifference):
            return f"t test over items and seeds (df {d.df:.1f}) {p_phrase(d.p_value)}"
        return f"McNemar {p_phrase(d.p_value)}"

    def sentence(self) -> str:
        d = self.difference
        seeds = f", seeds {d.seeds_a} and {d.seeds_b}" if isinstance(d, SeedDifference) else ""
        numbers = (
            f"{self.interval()}, {self.test_phrase()}, adjusted {p_phrase(self.p_adjusted)}, n = {d.n}{seeds}"
        )
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


def findings(evidence, language: str, groups: Sequence[str]) -> list[Finding]:
    """The research-question pairs present on `groups` (both modes): one Bonferroni family."""
    found = []
    for group in groups:
        for mode in ("mcq", "gen"):
            for role_a, role_b in QUESTIONS:
                if evidence.difference(role_a, role_b, group, mode, language, 0.95) is not None:
                    found.append((group, mode, role_a, role_b))
    family = len(found)
    out = []
    for group, mode, a, b in found:
        difference, mean_a, mean_b = evidence.difference(a, b, group, mode, language, 1 - ALPHA / family)
        out.append(Finding(group, mode, a, b, mean_a, mean_b, difference, family))
    return out


def primary_group(evidence, language: str) -> str | None:
    """The focus group the answer is about: the first one (Level 2 first) holding a research-question pair."""
    return next((g for g in FOCUS_GROUPS if findings(evidence, language, [g])), None)


def group_title(group: str) -> str:
    return "hierarchical Level 2 (morpheme decomposition)" if group == "hierarchical-level2" else group


def arm_scores(evidence, group, mode, language) -> list[tuple[str, ArmAccuracy]]:
    return [(role, s) for role in ARMS if (s := evidence.accuracy(role, group, mode, language)) is not None]


def at_chance(levels: list[tuple[str, ArmAccuracy]]) -> list[str]:
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


def answer_sentences(evidence, primary: list[Finding], language) -> list[str]:
    """At most three sentences: the verdict with its number, Patok against StochasTok, the method."""
    group, mode = primary[0].group, primary[0].mode
    here = [f for f in primary if f.mode == mode]
    metric = f"{mode.upper()} {PRIMARY_METRIC[mode]}"
    levels = arm_scores(evidence, group, mode, language)
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
    adjusted = (
        f"Bonferroni-adjusted over the {family} comparison{'s' if family > 1 else ''} of this group (simultaneous "
        f"{confidence_text(1 - ALPHA / family)} intervals), so an interval excludes 0 exactly when its adjusted "
        f"p < {ALPHA}"
    )
    if evidence.seeded:
        seeds = ", ".join(f"{ROLE_NAMES[r].split(' (')[0]} {k}" for r, k in evidence.seeds.items())
        sentences.append(
            f"Seeds per arm: {seeds}; each difference is a t test over items and seeds with the interval that "
            f"inverts it, {adjusted}; accuracies are means over seeds with intervals that include the seed "
            "variance."
        )
    else:
        sentences.append(
            f"One run per arm, so the seed variance is unknown: each difference is McNemar's score test over "
            f"items with the interval that inverts it (Tango's), {adjusted}; accuracies have Wilson 95% intervals."
        )
    return sentences


def answer_table(evidence, primary: list[Finding], language) -> str:
    body = []
    for mode in ("mcq", "gen"):
        here = {(f.role_a, f.role_b): f for f in primary if f.mode == mode}
        for role, s in arm_scores(evidence, primary[0].group, mode, language):
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
                    s.cell() + ("" if s.seeds == 1 else f" ({s.seeds} seeds, sd {100 * s.run_sd:.1f})"),
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
