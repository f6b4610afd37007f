"""A scorecard for people: Markdown tables, the pass^k plot, the terminal table (written by evalsuite.scoring.runlog).

The plot uses matplotlib's Agg canvas directly, not pyplot, so rendering
never touches a display or the caller's global backend.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from evalsuite.core.markdown import md_table, md_text
from evalsuite.scoring.cost import money
from evalsuite.scoring.measures import measure_cells, measures_table
from evalsuite.scoring.metrics import KPoint
from evalsuite.scoring.recorded import RecordedScore
from evalsuite.scoring.reward_bases import BasisRow
from evalsuite.scoring.scorecard import AgentScore, HumanScore, Scorecard


def interval_cell(mean: float | None, low: float, high: float, digits: int = 3) -> str:
    """A score with its interval as one table cell: `0.750 [0.41, 0.93]`.

    The mean has `digits` decimals and the bounds one fewer (an interval is never known as finely as
    its mean); with mean None the cell is the interval alone, `[0.41, 0.93]`.
    """
    places = max(digits - 1, 0)
    bounds = f"[{low:.{places}f}, {high:.{places}f}]"
    return bounds if mean is None else f"{mean:.{digits}f} {bounds}"


def _point_cell(p: KPoint) -> str:
    return interval_cell(p.pass_hat, p.pass_hat_low, p.pass_hat_high)


def passk_cell(curve: list[KPoint], k: int) -> str:
    """pass^k with its interval, or a dash where the curve stops short of k (fewer trials)."""
    return _point_cell(curve[k - 1]) if k <= len(curve) else "—"


def shown_ks(top: int) -> list[int]:
    """Every k up to 8; beyond, powers of two and the last (the full curve is in scorecard.json/.md)."""
    if top <= 8:
        return list(range(1, top + 1))
    return sorted({2**i for i in range(top.bit_length()) if 2**i <= top} | {top})


def human_cell(h: HumanScore) -> str:
    """People's pass@1 with its Wilson interval."""
    return interval_cell(h.pass_at_1, h.wilson_low, h.wilson_high)


def human_label(h: HumanScore) -> str:
    return f"human ({h.people} {'person' if h.people == 1 else 'people'})"


def console_table(card: Scorecard):
    """Rows k, a column per agent (a rich Table): stays readable at 80 columns for a handful of agents.
    People, when the run has any, are a last column with pass@1 only (a Wilson interval over attempts)."""
    from rich.table import Table

    h = card.humans
    table = Table(title=f"{card.suite} {card.suite_version}: pass^k [95% task-bootstrap interval]",
                  caption="human: pass@1 over attempts [95% Wilson interval]" if h else None)
    table.add_column("")
    for a in card.agents:
        table.add_column(a.agent, justify="right")
    if h:
        table.add_column(human_label(h), justify="right")

    def row(label: str, cells: Iterable[str], human: Callable[[HumanScore], str]) -> None:
        table.add_row(label, *cells, *([human(h)] if h else []))

    row("tasks / trials", (f"{a.tasks} / {a.trials}" for a in card.agents), lambda h: f"{h.tasks} / {h.attempts}")
    row("infra errors", (str(a.outcomes["infra_error"]) for a in card.agents), lambda h: str(h.outcomes["infra_error"]))
    for k in shown_ks(max((len(a.curve) for a in card.agents), default=1)):
        row(f"pass^{k}", (passk_cell(a.curve, k) for a in card.agents), lambda h: human_cell(h) if k == 1 else "—")
    if card.bases:  # each reward basis beside the scorecard's own pass^k (evalsuite.scoring.reward_bases)
        by_agent = {a.agent: {r.basis: r for r in a.rows} for a in card.bases.agents}
        for basis in dict.fromkeys(r.basis for a in card.bases.agents for r in a.rows if r.tasks):  # counted ones
            row(f"{basis} pass^1", (_basis_cell(by_agent.get(a.agent, {}).get(basis)) for a in card.agents),
                lambda h: "—")
    if any(a.cost for a in card.agents):
        for label, cell in cost_cells().items():
            row(label, (cell(a) for a in card.agents), lambda h: "—")
    if any(a.measures for a in card.agents):
        for label in measure_cells(next(a.measures for a in card.agents if a.measures)):
            row(label, (measure_cells(a.measures)[label] if a.measures else "—" for a in card.agents),
                lambda h: "—")
    if h:
        row("time per task (median)", ("—" for _ in card.agents), lambda h: f"{h.median_seconds:.0f} s")
    return table


def _basis_cell(r: BasisRow | None) -> str:
    """A basis's pass^1 over its graded tasks, and how many trials were not graded."""
    if r is None or not r.tasks:
        return "—"
    score = f"{r.curve[0].pass_hat:.3f}" if r.curve else "—"
    return f"{score} ({r.not_graded} not graded)" if r.not_graded else score


def cost_cells() -> dict[str, Callable[[AgentScore], str]]:
    """The cost columns of a scorecard, by label: tokens, priced cost per trial and per success, latency."""
    def of(a: AgentScore, what: Callable[..., str]) -> str:
        return what(a.cost) if a.cost else "—"

    return {
        "tokens in / out": lambda a: of(a, lambda c: f"{c.tokens_in} / {c.tokens_out}" if c.trials_with_usage else "—"),
        "cost per trial": lambda a: of(a, lambda c: money(c.cost_per_trial, c.currency)),
        "cost per success": lambda a: of(a, lambda c: money(c.cost_per_success, c.currency)),
    }


def _curve_rows(curve: list[KPoint]) -> list[list[str]]:
    return [[str(p.k), _point_cell(p), interval_cell(p.pass_at, p.pass_at_low, p.pass_at_high)] for p in curve]


def _agent_section(a: AgentScore, min_tasks: int) -> list[str]:
    o = a.outcomes
    lines = [f"## {a.agent}", "", f"Config: `{json.dumps(a.agent_config, sort_keys=True)}`  ",
             f"Identity sha256: `{a.identity_sha256}`", ""]
    lines.append(md_table(["tasks", "trials", "trials/task", "pass", "fail", "budget exhausted", "infra errors",
                     "tasks with infra errors"],
                    [[str(a.tasks), str(a.trials), f"{a.trials_per_task_min}–{a.trials_per_task_max}", str(o["pass"]),
                      str(o["fail"]), str(o["budget_exhausted"]), str(o["infra_error"]),
                      str(a.tasks_with_infra_error)]]))
    lines += ["", "### pass^k and pass@k (95% task-bootstrap intervals)", ""]
    lines.append(md_table(["k", "pass^k", "pass@k"], _curve_rows(a.curve)))
    if a.measures:
        lines += ["", "### Measures kept apart (outcome, grounding, authority, handoff, latency, resources)", "",
                  measures_table(a.measures)]
    lines += ["", "### By trigger type", ""]
    lines.append(md_table(["trigger", "tasks", "trials", "pass^1", f"pass^{len(a.curve)}"],
                    [[t.trigger_type, str(t.tasks), str(t.trials),
                      _point_cell(t.curve[0]) if t.curve else "—", _point_cell(t.curve[-1]) if t.curve else "—"]
                     for t in a.by_trigger]))
    lines += ["", f"### Slices (pass^1; * = fewer than {min_tasks} tasks, too small to rank)", ""]
    lines.append(md_table(["slice", "value", "tasks", "trials", "pass^1", "Wilson (all trials pass)"],
                    [[s.slice, f"{s.value}{' *' if s.too_small_to_rank else ''}", str(s.tasks), str(s.trials),
                      interval_cell(s.pass_hat_1, s.low, s.high), interval_cell(None, s.wilson_low, s.wilson_high)]
                     for s in a.slices]))
    return lines + [""]


CACHED = "CACHED: model responses may have come from the response cache (--cache); not a fresh measurement."


def warnings(card: Scorecard) -> list[str]:
    """What a reader must know before reading the figures: a capped run, a run that used the response cache."""
    return ([capped_line(card)] if card.capped else []) + ([CACHED] if card.response_cache else [])


def capped_line(card: Scorecard) -> str:
    """What a capped run's scorecard covers: the cap, what was spent, and the tasks scored of those planned."""
    c = card.capped
    scored = max((a.tasks for a in card.agents), default=0)
    return (f"CAPPED: run cap {c.limit} reached ({c.spent}); {c.trials_not_run} trial(s) not run; scored over the "
            f"{scored} of {card.tasks_planned} tasks whose trials all ran. Resume with a higher cap to finish.")


def to_markdown(card: Scorecard, held_out: Mapping[str, int] | None = None) -> str:
    """held_out: the rows of an imported recording's tables on held-out tasks, counted and not listed (the evidence
    site's public copy of the card, evalsuite.site.pages.public_scorecard)."""
    b = card.bootstrap
    lines = [f"# Scorecard: {card.suite} {card.suite_version}", "",
             f"- task set sha256: `{card.task_set_sha256}`", f"- seed sha256: `{card.seed_sha256}`",
             f"- environment image: `{card.environment_image}`", f"- tool schemas sha256: `{card.tool_schemas_sha256}`",
             f"- simulator: `{card.simulator}`", f"- trial mode: {', '.join(card.modes)}",
             f"- run seed: {card.run_seed}",
             f"- intervals: {b['method']}, {b['resamples']} resamples, seed {b['seed']}, {b['confidence']:.0%}", "",
             "## Policy", "", *(f"- **{k}**: {v}" for k, v in card.policy.items()), ""]
    lines[2:2] = [line for w in warnings(card) for line in (f"> **{w}**", "")]
    if card.acceptance:
        acceptance = [[k, str(v)] for k, v in card.acceptance.items()]
        lines += ["## Acceptance", "", md_table(["check", "value"], acceptance), ""]
    lines += ["## Summary", ""]
    k = min((len(a.curve) for a in card.agents), default=1)
    rows = [[a.agent, str(a.tasks), str(a.trials), str(a.outcomes["infra_error"]), _point_cell(a.curve[0]),
             _point_cell(a.curve[k - 1])] for a in card.agents]
    if card.humans:
        h = card.humans
        rows.append([human_label(h), str(h.tasks), str(h.attempts), str(h.outcomes["infra_error"]),
                     f"{human_cell(h)} (pass@1, Wilson)", "—"])
    lines.append(md_table(["agent", "tasks", "trials", "infra errors", "pass^1", f"pass^k (k={k})"], rows))
    lines.append("")
    if any(a.cost for a in card.agents):
        lines += _cost_section(card)
    if card.security:
        lines += _security_section(card)
    if card.bases:
        lines += _bases_section(card)
    if card.recording:
        lines += recording_section(card.recording, held_out or {})
    if card.humans:
        lines += _human_section(card.humans)
    for a in card.agents:
        lines += _agent_section(a, card.min_tasks_to_rank)
    return "\n".join(lines)


def _cost_section(card: Scorecard) -> list[str]:
    p = card.prices or {}
    cells = cost_cells()
    lines = ["## Cost and latency", "",
             f"Tokens as the endpoint reported them, priced with `{p.get('file')}` ({p.get('currency')}, as of "
             f"{p.get('as_of')}, sha256 `{str(p.get('sha256'))[:12]}`); cost per success = cost / passed trials; "
             "— = not reported (baselines, external programs) or a model without a price.", ""]
    lines.append(md_table(["agent", *cells, "pass^1"], [[a.agent, *(c(a) for c in cells.values()),
                                                           f"{a.curve[0].pass_hat:.3f}" if a.curve else "—"]
                                                          for a in card.agents]))
    return lines + [""]


def _security_section(card: Scorecard) -> list[str]:
    cell = lambda r: "—" if r is None else f"{interval_cell(r.mean, r.low, r.high)} ({r.tasks} tasks)"  # noqa: E731
    lines = ["## Under attack", "",
             "Utility: the share of trials reaching the user's goal state, without and under attack; attack success: "
             "the share of trials under attack in which the injection task's effect appeared (judged from the end "
             "state, and from the agent's words only where the effect is something said). Task-bootstrap 95% "
             "intervals.", ""]
    lines.append(md_table(["agent", "utility without attack", "utility under attack", "attack success"],
                            [[s.agent, cell(s.utility_without_attack), cell(s.utility_under_attack),
                              cell(s.attack_success)] for s in card.security]))
    return lines + [""]


def _bases_section(card: Scorecard) -> list[str]:
    """Each reward basis and the reward, per agent: pass, fail and not graded trials, pass^1 and pass^k."""
    b, k = card.bases, min((len(a.curve) for a in card.agents), default=1)
    judges = "; ".join(f"`{j.model}` ({j.version}, prompt sha256 `{j.prompt_sha256[:12]}`, temperature "
                       f"{j.temperature:g}, seed {j.seed})" for j in b.judges) or "none"
    lines = ["## Reward bases", "",
             f"{b.tasks} tasks carry the original's evaluation criteria; a basis is scored over the tasks whose "
             "reward_basis lists it and that ask something of it (an empty list passes), the reward, their "
             "product, over every task. pass^k is over the tasks whose every trial was "
             "graded (tasks scored); not graded: no judge endpoint (EVALSUITE_JUDGE_BASE_URL), never a pass. "
             f"Outside the basis: trials of tasks that ask it without counting it. NL_ASSERTION judge: {judges}.", ""]
    cell = lambda r, i: _point_cell(r.curve[i]) if len(r.curve) > i else "—"  # noqa: E731
    lines.append(md_table(["agent", "basis", "tasks", "pass / fail / not graded", "tasks scored", "pass^1",
                           f"pass^{k}", "outside the basis"],
                          [[a.agent, r.basis, str(r.tasks), f"{r.passed} / {r.failed} / {r.not_graded}",
                            str(r.tasks_scored), cell(r, 0), cell(r, k - 1),
                            f"{r.other_passed} / {r.other_trials}" if r.other_trials else "—"]
                           for a in b.agents for r in a.rows]))
    return lines + [""]


def recording_section(r: RecordedScore, held_out: Mapping[str, int] | None = None) -> list[str]:
    """An imported recording: its provenance, pass^k regraded beside pass^k as recorded (and as the original's DB
    check gives the replayed calls), and every trial where evalsuite and the recording disagree, with the reason.
    What the recording (or its importer) said is shown as written, never read as markup (md_text)."""
    p = r.provenance
    lines = ["## Recorded run, regraded", "",
             f"- recording: {md_text(p.file)} ({p.format}, sha256 `{p.sha256[:12]}…`), from {md_text(p.source)}",
             f"- licence: {md_text(p.license)}", f"- model: {md_text(p.model)}",
             f"- {r.trials} trials on {r.tasks} tasks replayed open loop (the recorded calls, whatever the world now "
             f"answers); {len(r.skipped)} skipped; {r.calls_differing} call(s) answered differently now, "
             f"{r.trials_diverged} trial(s) with a write whose outcome flipped", ""]
    if r.quarantined:
        held = "; ".join(md_text(f"{t} ({', '.join(why)})") for t, why in sorted(r.quarantined.items()))
        lines[-1:-1] = [f"- quarantined in this release, graded from the build's task records: {held}"]
    curves = {"evalsuite (regraded)": r.regraded, "recorded reward": r.recorded, "original's DB check": r.original_db}
    shown = {label: curve for label, curve in curves.items() if curve}
    ks = range(1, max(len(c) for c in shown.values()) + 1) if shown else range(0)
    lines.append(md_table(["k", *shown], [[str(k), *(passk_cell(c, k) for c in shown.values())] for k in ks]))
    held = held_out or {}
    hidden = [f"{n} {what} on held-out tasks, counted only" for what, n in held.items() if n]
    lines += ["", f"{r.agree} trial(s) agree; {len(r.disagreements) + held.get('disagreements', 0)} disagree"
              f"{' (' + '; '.join(hidden) + ')' if hidden else ''}:", ""]
    if r.disagreements:
        lines.append(md_table(["task", "recorded as", "trial", "recorded", "evalsuite", "reason"],
                              [[md_text(d.task_id), md_text(d.recorded_task), str(d.trial), _verdict(d.recorded),
                                _verdict(d.regraded), md_text(d.reason)] for d in r.disagreements]))
    if r.skipped:
        lines += ["", "Skipped:", "", md_table(["recorded task", "trial", "reason"],
                                              [[md_text(s.recorded_task), str(s.trial), md_text(s.reason)]
                                               for s in r.skipped])]
    return lines + [""]


def _verdict(passed: bool) -> str:
    return "pass" if passed else "fail"


def _human_section(h: HumanScore) -> list[str]:
    o = h.outcomes
    lines = ["## People (`evalsuite play`)", ""]
    lines.append(md_table(["people", "attempts", "tasks", "pass", "fail", "budget exhausted", "infra errors",
                     "pass@1 [95% Wilson]", "time per task (median)"],
                    [[str(h.people), str(h.attempts), str(h.tasks), str(o["pass"]), str(o["fail"]),
                      str(o["budget_exhausted"]), str(o["infra_error"]), human_cell(h), f"{h.median_seconds:.0f} s"]]))
    if h.agents_on_same_tasks:
        lines += ["", "Agents on the same tasks (pass^1, weighted as the attempts are):", ""]
        lines.append(md_table(["agent", "pass^1"], [[a, f"{v:.3f}"] for a, v in h.agents_on_same_tasks.items()]))
    return lines + [""]


def plot_passk(card: Scorecard, path: Path) -> None:
    """pass^k against k, one line per agent, bars for the task-bootstrap interval."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # here: importing this module stays cheap
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    n = len(card.agents)
    for i, a in enumerate(card.agents):
        offset = (i - (n - 1) / 2) * 0.06  # agents side by side so equal scores do not hide each other's bars
        ks = [p.k + offset for p in a.curve]
        means = [p.pass_hat for p in a.curve]
        err = [[p.pass_hat - p.pass_hat_low for p in a.curve], [p.pass_hat_high - p.pass_hat for p in a.curve]]
        ax.errorbar(ks, means, yerr=err, marker="o", capsize=3, label=a.agent)
    if card.humans:  # one point: people attempt once, so they have pass@1 and no curve
        h = card.humans
        err = [[h.pass_at_1 - h.wilson_low], [h.wilson_high - h.pass_at_1]]
        ax.errorbar([1 + (n + 1) * 0.03], [h.pass_at_1], yerr=err, marker="s", color="black", capsize=3,
                    linestyle="none", label=f"{human_label(h)}, pass@1 (Wilson)")
    ax.set_xticks(range(1, max((len(a.curve) for a in card.agents), default=1) + 1))
    ax.set_xlabel("k (trials that must all pass)")
    ax.set_ylabel("pass^k")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"{card.suite} {card.suite_version}: pass^k, 95% task-bootstrap intervals", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, format="png")


# The in-place plot: short colour names, and the plot box (left, top, right, bottom) inside SVG_SIZE, with room
# on the right for the legend.
SVG_COLORS = ("blue", "orange", "green", "red", "purple", "brown", "hotpink", "gray", "olive", "teal")
SVG_SIZE, SVG_BOX = (480, 200), (40, 26, 330, 170)


def passk_svg(card: Scorecard) -> str:
    """pass^k against k as a small SVG with readable axes and the legend beside it: text in an SVG costs a few
    bytes, so the plot stays short enough for the Dagster UI to show in place. passk.png has the intervals."""
    (w, h), (x0, y0, x1, y1) = SVG_SIZE, SVG_BOX
    top = max((len(a.curve) for a in card.agents), default=1)
    x = lambda k: round(x0 + (x1 - x0) * ((k - 1) / (top - 1) if top > 1 else 0.5))  # noqa: E731
    y = lambda v: round(y1 - (y1 - y0) * v)  # noqa: E731
    ys = "".join(f"<text x='{x0 - 4}' y='{y(v) + 4}'>{v:g}</text>" for v in (0, 0.5, 1))
    xs = "".join(f"<text x='{x(k)}' y='{y1 + 14}'>{k}</text>" for k in range(1, top + 1))
    n, lines, legend = len(card.agents), [], []
    for i, a in enumerate(card.agents):
        color, lift = SVG_COLORS[i % len(SVG_COLORS)], (i - (n - 1) / 2) * 0.02  # equal scores side by side
        lines.append(f"<polyline points='{' '.join(f'{x(p.k)},{y(p.pass_hat + lift)}' for p in a.curve)}' "
                     f"stroke='{color}'/>")
        legend.append(f"<text x='{x1 + 12}' y='{y0 + 12 + 16 * i}' fill='{color}'>{a.agent}</text>")
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' "
            f"font-size='12'>"
            f"<path d='M{x0} {y0}V{y1}H{x1}' stroke='black' fill='none'/><text x='4' y='12'>pass^k</text>"
            f"<g text-anchor='end'>{ys}</g><g text-anchor='middle'>{xs}<text x='{(x0 + x1) // 2}' y='{h - 2}'>"
            f"k</text></g><g fill='none' stroke-width='2'>{''.join(lines)}</g>{''.join(legend)}</svg>")

