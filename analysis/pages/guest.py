"""The guest page: every variant in every state, the disabled site per call, the checks."""

from pathlib import Path

import pandas as pd

from analysis import sites, stats
from analysis.plots import ordered
from analysis.pages.paths import explain_pair
from analysis.stats import fmt
from analysis.words import STATE_ORDER, call_path_words, ci, thunk_words
from kelf.rewrites import no_return_thunk


def verdict_table(summary: pd.DataFrame) -> str:
    head = ("| arch | config | state | variant | per call | unit | 95% CI | net of baseline | "
            "site cost vs C | verdict |\n|---|---|---|---|---:|---|---|---:|---:|---|\n")
    rows = []
    for arch, config in stats.panels(summary):
        for state in STATE_ORDER:
            part = stats.rows(summary, arch=arch, config=config, state=state)
            for variant in ordered(part.variant):
                r = part[part.variant == variant].iloc[0]
                rows.append(f"| {arch} | {config} | {state} | `{variant}` | {fmt(r.per_call)} | "
                            f"{r.unit} | {ci(r.ci_lo, r.ci_hi)} | {fmt(r.net)} | "
                            f"{fmt(r.diff_c)} | {r.verdict} |")
    return head + "\n".join(rows) + "\n"


def outlier_notes(summary: pd.DataFrame) -> str:
    mild, severe = int(summary.mild_outliers.sum()), int(summary.severe_outliers.sum())
    first = summary[summary.first_rep_outlier]
    text = (f"Tukey outliers among the per-call samples at the largest N: {mild} mild "
            f"(beyond 1.5 IQR), {severe} severe (beyond 3 IQR).")
    if len(first):
        names = ", ".join(f"{r.arch}/{r.config}/{r.state}/{r.variant}" for r in first.itertuples())
        text += f" Warning: the first repetition is an outlier in {names}."
    else:
        text += " The first repetition is not an outlier anywhere."
    return text


def headline(summary: pd.DataFrame, context: dict, paths: dict) -> list[str]:
    """The disabled site's cost per call inside the guest, C against Rust against the helper,
    with what the disassembly says each runs. (Native time is the native page's, as a spread
    over processes.)"""
    costs = sites.site_costs(stats.guest(summary))
    if costs.empty:
        return []
    out = ["| arch | config | site | per call |", "|---|---|---|---|"]
    spread = sites.over_placements(costs)
    for arch, config in stats.panels(costs):
        for label, variant in sites.SITES:
            guest = stats.rows(costs, arch=arch, config=config, variant=variant)
            if guest.empty:
                continue
            g = sites.cost_text(guest.cost.iloc[0], guest.lo.iloc[0], guest.hi.iloc[0],
                                guest.unit.iloc[0])
            out.append(f"| {arch} | {config} | {label} | {g} |")
    out.append("")
    for arch, config in stats.panels(summary):
        sentence = explain_pair(costs, spread, arch, config, paths.get(f"{arch}-{config}"))
        if sentence:
            out.append(f"- **{arch} {config}**: {sentence}")
    out += ["", "A site's cost is its trace loop minus the same loop without the site "
            "(`c_base`, `rust_base`), so it is the site's own, NOP included; the helper is "
            "measured against `rust_base`. Each language has its own baseline because the two "
            "compilers shape the same loop differently (see the paths below). Runs made before those loops existed use the empty "
            "loops instead.", ""]
    return out


def instruction_check(run: Path, summary: pd.DataFrame, context: dict) -> list[str]:
    """With hardware counters, the native stage also counted retired instructions: each
    variant's per-call count must equal the guest's icount (and so the disassembly's)."""
    files = sorted(run.glob("native-instructions-*.csv"))
    if not files:
        reasons = sorted({i.get("perf", "") for v in context.get("native", {}).values()
                          for i in v.values()})
        return [f"Retired instructions were not counted natively: no hardware counters "
                f"({'; '.join(reasons)}); the instruction counts above are icount's.", ""]
    guest = stats.rows(summary, accel="tcg", state="disabled")
    lines = []
    for f in files:
        tag = f.stem.removeprefix("native-instructions-")
        counts = pd.read_csv(f).rename(columns={"instructions": "cycles"})
        for variant, g in counts.groupby("variant"):
            want = guest[(guest.variant == variant) & [tag.startswith(f"{a}-{c}-") for a, c in
                                                       zip(guest.arch, guest.config)]]
            got = stats.floor_slope(g[g.n > 0])
            if len(want) and abs(got - want.per_call.iloc[0]) > 0.01:
                lines.append(f"`{variant}` ({tag}): {got:.2f} retired instructions per call "
                             f"natively, {fmt(want.per_call.iloc[0])} under icount")
    if lines:
        return ["**Instruction counts differ** between the host's counters and icount: "
                + "; ".join(lines) + ".", ""]
    return ["Retired instructions per call, counted by the host's hardware counters, equal "
            "the icount per-call counts for every variant and placement.", ""]


def sources(summary: pd.DataFrame, context: dict) -> list[str]:
    """Where this run's numbers come from, and which sources it lacks and why."""
    out = ["Sources in this run:", ""]
    for name, c in context["configs"].items():
        unit = stats.unit_of(c["accel"])
        out.append(f"- {name}: guest under {c['accel'].upper()} ({unit}); {c['accel_reason']}")
    native = stats.native(summary)
    done = {f"{a}/{c}" for a, c in stats.panels(native)} if not native.empty else set()
    for name in context["configs"]:
        if name in done:
            out.append(f"- {name}: native on the host CPU ({native.unit.iloc[0]}), at the "
                       f"kernel's placement and {len(set(native.accel)) - 1} shifted ones")
        else:
            out.append(f"- {name}: no native measurement (the native stage runs modules of "
                       "the host's architecture, x86_64, only)")
    return out + [""] + mitigations(context)


def mitigations(context: dict) -> list[str]:
    """What each guest's kernel, and the host's for the native stage, chose against the CPU
    vulnerabilities that touch a call's path, and what that means for the helper's call/ret."""
    out = []
    for name, c in context["configs"].items():
        vulns = c.get("vulnerabilities")
        if not vulns or not name.startswith("x86_64/"):
            continue
        said = call_path_words(vulns)
        ret = ("so it patched every `jmp __x86_return_thunk` back to `ret`: the helper's "
               "call and return are a plain `call` and `ret`"
               if no_return_thunk(vulns) else
               "so every return goes through a return thunk: the helper's `ret` is a jump "
               "to it and its own return (the codegen walk counts `ret`, and would fail)")
        out.append(f"- {name} guest kernel, for QEMU's CPU model: {said}; {ret}. Retpolines "
                   "change indirect calls alone.")
    about = context.get("native_about", {})
    if about.get("rewrites"):
        said = call_path_words(about.get("host_vulnerabilities", {}))
        applied = [f"{section} ({r['action']})" for section, r in about["rewrites"].items()
                   if r["action"] not in ("refuse", "keep")]
        refused = [f"{where} {v}: {why}" for where, vs in about.get("refused", {}).items()
                   for v, why in vs.items()]
        out.append(f"- native: the host's kernel says {said}; its returns: "
                   f"{thunk_words(context)}. The loader wrote what that "
                   f"kernel writes at load time: {', '.join(applied) or 'nothing'}; "
                   + (f"refused: {'; '.join(refused)}." if refused else
                      "no variant reached a site it does not reproduce."))
    return (["Mitigations (the kernels' choices at boot, from "
             "/sys/devices/system/cpu/vulnerabilities):", "", *out, ""] if out else [])
