"""PNG plots of the score table: hierarchical accuracy by level, PACUTE accuracy by category, and a heatmap.

Each plot shows the primary metric of each mode (MCQ acc_norm, GEN exact) with Wilson 95% CIs where it has
room for them; MCQ panels draw the guessing level. matplotlib runs headless (Agg). Files:
`levels.png`, `categories.png`, `heatmap.png` (a `_<language>` suffix for non-English prompts).

    write_plots(score_rows, models, "results/analysis/plots")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from morphcpt.analysis.results import PRIMARY_METRIC
from morphcpt.analysis.tables import ScoreRow


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _primary(
    rows: Sequence[ScoreRow], language: str, kind: str, benchmark: str | None = None
) -> list[ScoreRow]:
    return [
        r
        for r in rows
        if r.language == language
        and r.kind == kind
        and r.metric == PRIMARY_METRIC[r.mode]
        and (benchmark is None or r.benchmark == benchmark)
    ]


def _modes(rows: Sequence[ScoreRow]) -> list[str]:
    return [m for m in ("mcq", "gen") if any(r.mode == m for r in rows)]


def _grouped_bars(
    ax, rows: Sequence[ScoreRow], groups: Sequence[str], models: Sequence[str], labels: Sequence[str]
):
    width = 0.8 / max(1, len(models))
    x = np.arange(len(groups))
    for i, model in enumerate(models):
        found = {r.group: r for r in rows if r.model == model}
        means = np.array([found[g].mean if g in found else np.nan for g in groups])
        low = np.array([found[g].mean - found[g].low if g in found else 0 for g in groups])
        high = np.array([found[g].high - found[g].mean if g in found else 0 for g in groups])
        ax.bar(
            x + (i - (len(models) - 1) / 2) * width,
            100 * means,
            width,
            yerr=100 * np.vstack([low, high]),
            capsize=2,
            label=model,
        )
    ax.set_xticks(x, labels, rotation=20, ha="right")
    ax.set_ylim(0, 100)


def _chance_line(ax, rows: Sequence[ScoreRow]) -> None:
    chances = [r.chance for r in rows if r.chance is not None]
    if chances:
        ax.axhline(100 * float(np.mean(chances)), color="grey", linestyle=":", linewidth=1, label="chance")


def _save(plt, fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _panel_per_mode(
    rows: Sequence[ScoreRow], language: str, benchmark: str, path: Path, draw: Callable
) -> Path | None:
    """One panel per mode, side by side, for one benchmark's task rows; `draw(ax, mode, mode_rows)` fills a panel,
    then MCQ panels get the guessing level and every panel a legend."""
    selected = _primary(rows, language, "task", benchmark)
    if not selected:
        return None
    plt = _pyplot()
    modes = _modes(selected)
    fig, axes = plt.subplots(1, len(modes), figsize=(6 * len(modes), 4), squeeze=False)
    for ax, mode in zip(axes[0], modes, strict=True):
        mine = [r for r in selected if r.mode == mode]
        draw(ax, mode, mine)
        if mode == "mcq":
            _chance_line(ax, mine)
        ax.legend(fontsize=8)
    return _save(plt, fig, path)


def plot_levels(
    rows: Sequence[ScoreRow], models: Sequence[str], path: Path, language: str = "en"
) -> Path | None:
    def draw(ax, mode: str, mine: list[ScoreRow]) -> None:
        for model in models:
            points = sorted((int(r.group.rsplit("level", 1)[1]), r) for r in mine if r.model == model)
            if not points:
                continue
            levels = [level for level, _ in points]
            means = np.array([r.mean for _, r in points])
            errors = np.array([[r.mean - r.low for _, r in points], [r.high - r.mean for _, r in points]])
            ax.errorbar(levels, 100 * means, yerr=100 * errors, marker="o", capsize=3, label=model)
        ax.set(
            xlabel="level",
            ylabel=f"{PRIMARY_METRIC[mode]} (%)",
            ylim=(0, 100),
            title=f"Hierarchical benchmark, {mode.upper()}",
        )
        ax.set_xticks(
            range(6),
            ["0 chars", "1 char ops", "2 morphemes", "3 affix rm", "4 affix add", "5 multi"],
            rotation=20,
            ha="right",
        )

    return _panel_per_mode(rows, language, "hierarchical", path, draw)


def plot_categories(
    rows: Sequence[ScoreRow], models: Sequence[str], path: Path, language: str = "en"
) -> Path | None:
    def draw(ax, mode: str, mine: list[ScoreRow]) -> None:
        groups = sorted({r.group for r in mine})
        present = [m for m in models if any(r.model == m for r in mine)]
        _grouped_bars(ax, mine, groups, present, [g.partition("-")[2] for g in groups])
        ax.set(ylabel=f"{PRIMARY_METRIC[mode]} (%)", title=f"PACUTE by category, {mode.upper()}")

    return _panel_per_mode(rows, language, "pacute", path, draw)


def plot_heatmap(
    rows: Sequence[ScoreRow], models: Sequence[str], path: Path, language: str = "en"
) -> Path | None:
    selected = _primary(rows, language, "task")
    if not selected:
        return None
    plt = _pyplot()
    modes = _modes(selected)
    groups = {mode: sorted({r.group for r in selected if r.mode == mode}) for mode in modes}
    widest = max(len(g) for g in groups.values())
    fig, axes = plt.subplots(
        len(modes),
        1,
        figsize=(max(6, 0.9 * widest + 2), 1.2 + 0.5 * len(models) * len(modes) + 1.5 * len(modes)),
        squeeze=False,
    )
    for ax, mode in zip(axes[:, 0], modes, strict=True):
        present = [m for m in models if any(r.model == m and r.mode == mode for r in selected)]
        found = {(r.model, r.group): r.mean for r in selected if r.mode == mode}
        grid = np.array([[found.get((m, g), np.nan) for g in groups[mode]] for m in present])
        image = ax.imshow(100 * grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
        for (i, j), value in np.ndenumerate(grid):
            if not np.isnan(value):
                ax.text(
                    j,
                    i,
                    f"{100 * value:.0f}",
                    ha="center",
                    va="center",
                    color="white" if value < 0.6 else "black",
                    fontsize=8,
                )
        ax.set_yticks(range(len(present)), present)
        ax.set_xticks(range(len(groups[mode])), groups[mode], rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{PRIMARY_METRIC[mode]} (%), {mode.upper()}")
        fig.colorbar(image, ax=ax, fraction=0.03)
    return _save(plt, fig, path)


def write_plots(rows: Sequence[ScoreRow], models: Sequence[str], out_dir: Path | str) -> list[Path]:
    """Every plot the rows support, for every prompt language; returns the files written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for language in sorted({r.language for r in rows}, key=lambda lang: lang != "en"):
        suffix = "" if language == "en" else f"_{language}"
        for name, plot in (
            ("levels", plot_levels),
            ("categories", plot_categories),
            ("heatmap", plot_heatmap),
        ):
            path = plot(rows, models, out_dir / f"{name}{suffix}.png", language)
            if path is not None:
                written.append(path)
    return written


def write_curve(evidence, fam, language: str, out_dir: Path | str) -> Path | None:
    """`curve.png`: each arm's accuracy and primary metric along its evaluated checkpoints (mean over seeds), the
    base model as a horizontal line; None with fewer than two checkpoints."""
    from morphcpt.analysis.evidence import ARMS
    from morphcpt.analysis.item_scores import FALLBACK

    metrics = list(dict.fromkeys((fam.metric, FALLBACK[fam.mode])))
    curves = {
        (role, m): [
            (s, v) for s, v in evidence.curve(role, fam.group, fam.mode, language, m) if np.isfinite(s)
        ]
        for role in ARMS
        for m in metrics
    }
    if max((len(c) for c in curves.values()), default=0) < 2:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.5 * len(metrics), 4), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        for role in ARMS:
            points = curves[(role, metric)]
            if points:
                ax.plot([s for s, _ in points], [v for _, v in points], marker="o", label=role)
        base = evidence.curve("base", fam.group, fam.mode, language, metric)
        if base:
            ax.axhline(base[-1][1], color="grey", linestyle="--", linewidth=1, label="base model")
        ax.set(xlabel="checkpoint step", ylabel=metric, title=f"{fam.group} {fam.mode.upper()} {metric}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return _save(plt, fig, out_dir / "curve.png")
