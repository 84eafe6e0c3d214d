"""The research question's comparisons, in three families, and the answer's sentences and table (the first screen).

- **Primary** (pre-registered, `plan`): Patok − vanilla CPT on hierarchical Level 2 on the primary metric, tested
  alone at alpha 0.05. The answer's verdict rests on it.
- **Secondary**: the other research pairs (StochasTok, EEVE against the baseline; Patok against StochasTok and
  EEVE) on the same group and metric, Bonferroni among themselves.
- **Exploratory**: every pair on the other mode of the primary group and on the other focus groups, Bonferroni
  among themselves; groups of one family never overlap ("hierarchical" contains Level 2, so it is left out; a
  "pacute" that holds only affixation is the same item set as "pacute-affixation" and counted once).

Each `Finding` holds a p-value and the interval that inverts the same test at its family's simultaneous
confidence 1 - ALPHA / m, so the interval excludes 0 exactly when the adjusted p < ALPHA. The test is whichever the
runs allow (`evidence`), and every sentence names the one it used.

    fam = families(evidence, plan, "en")
    print(answer_sentences(evidence, fam, plan, "en"))
"""

from __future__ import annotations

from dataclasses import dataclass

from morphcpt.analysis.evidence import ARMS, ArmLevel
from morphcpt.analysis.item_scores import FALLBACK, fmt, unit_scale
from morphcpt.analysis.replicates import ITEM_METHOD, SeedDifference
from morphcpt.analysis.stats import PairedDifference, bonferroni

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


def short(role: str) -> str:
    return ROLE_NAMES[role].split(" (")[0]


@dataclass(frozen=True)
class Finding:
    """One comparison, A minus B (oriented: > 0 means A is better), inside a family of `family` comparisons."""

    group: str
    mode: str
    metric: str
    role_a: str
    role_b: str
    mean_a: float
    mean_b: float
    difference: (
        PairedDifference | SeedDifference
    )  # at the family's simultaneous confidence 1 - ALPHA / family
    family: int
    family_name: str = "primary"

    @property
    def p_adjusted(self) -> float:
        return bonferroni(self.difference.p_value, self.family)

    @property
    def significant(self) -> bool:
        return self.p_adjusted < ALPHA

    @property
    def test(self) -> str:
        """McNemar, paired t over items, or t over items and seeds: what this comparison actually used."""
        d = self.difference
        if isinstance(d, PairedDifference):
            return "McNemar"
        return ITEM_METHOD if d.method == ITEM_METHOD else "t over items and seeds"

    @property
    def runs_only(self) -> bool:
        """True when the test could not see seed variance (one run per arm, nothing to pool)."""
        return self.test != "t over items and seeds"

    def interval(self) -> str:
        d, unit = self.difference, ("pp" if unit_scale(self.metric) == 100 else "")
        return (
            f"{fmt(self.metric, d.diff)}{' ' + unit if unit else ''} ({confidence_text(d.confidence)} CI "
            f"{fmt(self.metric, d.low)} to {fmt(self.metric, d.high)})"
        )

    def test_phrase(self) -> str:
        d = self.difference
        if isinstance(d, SeedDifference) and d.method != ITEM_METHOD:
            return f"t test over items and seeds (df {d.df:.1f}) {p_phrase(d.p_value)}"
        if isinstance(d, SeedDifference):
            return f"paired t over items (df {d.df:.0f}) {p_phrase(d.p_value)}"
        return f"McNemar {p_phrase(d.p_value)}"

    def sentence(self) -> str:
        d = self.difference
        seeds = f", seeds {d.seeds_a} and {d.seeds_b}" if isinstance(d, SeedDifference) else ""
        numbers = (
            f"{self.interval()}, {self.test_phrase()}, adjusted {p_phrase(self.p_adjusted)}, n = {d.n}{seeds}"
        )
        a, b = ROLE_NAMES[self.role_a], ROLE_NAMES[self.role_b]
        if self.runs_only:
            a, b = f"this {short(self.role_a)} run", f"this {short(self.role_b)} run"
        if self.significant:
            return f"{a} is significantly {'better' if d.diff > 0 else 'worse'} than {b}: {numbers}."
        return f"No significant difference between {a} and {b}: {numbers}; this does not show that {a} beats {b}."


def p_phrase(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def confidence_text(confidence: float) -> str:
    """95%, 99.17%: as many decimals as it takes to tell the level apart (Bonferroni levels are not round)."""
    text = f"{100 * confidence:.2f}".rstrip("0").rstrip(".")
    return f"{text}%"


def mode_metric(evidence, plan, group: str, mode: str, language: str) -> str:
    """The metric a mode is tested on: the plan's primary in its own mode; in the other mode its continuous score
    (gold_bpb, gold_prob); either falls back to the mode's accuracy where the result files lack it."""
    wanted = plan.primary if plan.mode == mode else ("gold_bpb" if mode == "gen" else "gold_prob")
    return wanted if evidence.arms_on(group, mode, language, wanted) else FALLBACK[mode]


def _family(evidence, language, cells, name) -> list[Finding]:
    """cells: (group, mode, metric, role_a, role_b) present; one Bonferroni family."""
    found = [c for c in cells if evidence.difference(c[3], c[4], c[0], c[1], language, c[2]) is not None]
    out = []
    for group, mode, metric, a, b in found:
        diff, mean_a, mean_b = evidence.difference(
            a, b, group, mode, language, metric, 1 - ALPHA / len(found)
        )
        out.append(Finding(group, mode, metric, a, b, mean_a, mean_b, diff, len(found), name))
    return out


def _item_set(evidence, group, mode, language, metric):
    arms = evidence.arms_on(group, mode, language, metric)
    found = evidence.table(arms, group, mode, language, metric) if arms else None
    return None if found is None else frozenset(found[1])


@dataclass(frozen=True)
class Families:
    primary: Finding | None
    secondary: list[Finding]
    exploratory: list[Finding]
    group: str
    mode: str
    metric: str
    left_out: tuple[str, ...] = ()  # exploratory groups dropped because they overlap another


def families(evidence, plan, language: str) -> Families | None:
    """The three families (module docstring), or None when no research pair shares items on any focus group."""
    group = next(
        (
            g
            for g in (plan.primary_group, *FOCUS_GROUPS)
            for mode in (plan.mode, "mcq", "gen")
            if len(evidence.arms_on(g, mode, language, mode_metric(evidence, plan, g, mode, language))) >= 2
        ),
        None,
    )
    if group is None:
        return None
    mode = next(
        m
        for m in (plan.mode, "gen" if plan.mode == "mcq" else "mcq")
        if len(evidence.arms_on(group, m, language, mode_metric(evidence, plan, group, m, language))) >= 2
    )
    metric = mode_metric(evidence, plan, group, mode, language)
    pair = tuple(plan.primary_pair)
    primary = _family(evidence, language, [(group, mode, metric, *pair)], "primary")
    secondary = _family(
        evidence, language, [(group, mode, metric, a, b) for a, b in QUESTIONS if (a, b) != pair], "secondary"
    )
    cells, left_out = [], []
    seen = [(mode, _item_set(evidence, group, mode, language, metric) or frozenset())]
    other_mode = "gen" if mode == "mcq" else "mcq"
    for g, m in [(group, other_mode)] + [(g, m) for g in FOCUS_GROUPS if g != group for m in ("mcq", "gen")]:
        met = mode_metric(evidence, plan, g, m, language)
        items = _item_set(evidence, g, m, language, met)
        if items is None:
            continue
        if any(m == m2 and items == i2 for m2, i2 in seen):
            continue  # the same item set under another name ("pacute" holding only affixation)
        if any(m == m2 and items & i2 for m2, i2 in seen):
            left_out.append(f"{g} {m.upper()}")
            continue
        seen.append((m, items))
        cells += [(g, m, met, a, b) for a, b in QUESTIONS]
    exploratory = _family(evidence, language, cells, "exploratory")
    return Families(
        primary[0] if primary else None, secondary, exploratory, group, mode, metric, tuple(left_out)
    )


def group_title(group: str) -> str:
    return "hierarchical Level 2 (morpheme decomposition)" if group == "hierarchical-level2" else group


def arm_levels(evidence, group, mode, language, metric, roles=ARMS) -> list[tuple[str, ArmLevel]]:
    return [(r, s) for r in roles if (s := evidence.level(r, group, mode, language, metric)) is not None]


def at_chance(levels: list[tuple[str, ArmLevel]]) -> list[str]:
    return [role for role, s in levels if s.chance is not None and s.low <= s.chance]
