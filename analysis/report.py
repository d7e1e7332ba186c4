"""REPORT.md from one run directory; every number in it comes from that run's files."""

import json
from pathlib import Path

import pandas as pd

from analysis import stats
from analysis.plots import ordered

STATE_ORDER = ("disabled", "enabled")


def fmt(x: float) -> str:
    return "" if pd.isna(x) else f"{x:g}" if float(x).is_integer() else f"{x:.2f}"


def ci(lo: float, hi: float) -> str:
    if pd.isna(lo):
        return ""
    return "exact" if abs(hi - lo) < 1e-9 else f"{lo:.2f}..{hi:.2f}"


def verdict_table(summary: pd.DataFrame) -> str:
    head = ("| arch | config | state | variant | per call | unit | 95% CI | net of empty loop | "
            "site cost vs C | verdict |\n|---|---|---|---|---:|---|---|---:|---:|---|\n")
    rows = []
    for arch, config in stats.panels(summary):
        for state in STATE_ORDER:
            part = summary[(summary.arch == arch) & (summary.config == config)
                           & (summary.state == state)]
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


def explained(paths: dict[str, list[list[str]]], summary: pd.DataFrame) -> list[str]:
    """Each disabled per-call cost beside the instructions the disassembly says one
    iteration runs; the two counts are compared by `make codegen`."""
    if not paths:
        return []
    out = ["## The disabled path, instruction by instruction", "",
           "What one loop iteration executes with the tracepoint off, walked in the "
           "disassembly of the measured module (calls followed into the module's own "
           "functions). Under icount the measured cost must equal the count.", ""]
    for arch, config in stats.panels(summary):
        if f"{arch}-{config}" not in paths:
            continue
        out += [f"| {arch} {config} | measured | counted | instructions |", "|---|---:|---:|---|"]
        for variant, count, text in paths[f"{arch}-{config}"]:
            r = summary[(summary.arch == arch) & (summary.config == config)
                        & (summary.state == "disabled") & (summary.variant == variant)]
            measured = fmt(r.per_call.iloc[0]) if len(r) else ""
            out.append(f"| `{variant}` | {measured} | {count} | {text} |")
        out.append("")
    out += [
        "Reading the x86_64 jump_label table: GCC places C's enabled block inline, right "
        "after the site, so the disabled path runs the NOP and then a `jmp` over that block; "
        "LLVM places Rust's enabled block after the loop, so the disabled path runs the NOP "
        "alone. The loops differ too: GCC tests at the top (`cmp; je; ...; jmp`), LLVM at "
        "the bottom (`inc; cmp; jne`). Without CONFIG_JUMP_LABEL both languages load the "
        "key count, test it and branch. On arm64 the layouts are the same, but LLVM's empty "
        "loop spends a `mov` on the register the empty asm takes, which the trace loop does "
        "not need, so Rust's net site cost there reads low by one: compare the per-call "
        "costs themselves.",
        "",
    ]
    return out


def headline(summary: pd.DataFrame) -> list[str]:
    out = []
    for arch, config in stats.panels(summary):
        if config != "jump_label":
            continue
        part = summary[(summary.arch == arch) & (summary.config == config)
                       & (summary.state == "disabled")].set_index("variant")
        if not {"c_trace", "rust_trace", "rust_helper"} <= set(part.index):
            continue
        unit = part.loc["c_trace", "unit"]
        out += [
            f"- **{arch}**, CONFIG_JUMP_LABEL=y, tracepoint off: one C `trace_tpbench_hit()` "
            f"site costs {fmt(part.loc['c_trace', 'net'])} {unit} per call on top of C's empty "
            f"loop, one Rust `declare_trace!` site {fmt(part.loc['rust_trace', 'net'])} on top "
            f"of Rust's: Rust **{part.loc['rust_trace', 'verdict']}** than C (whole loop "
            f"iterations: C {fmt(part.loc['c_trace', 'per_call'])}, Rust "
            f"{fmt(part.loc['rust_trace', 'per_call'])}). The wrapper "
            f"approach (an out-of-line C helper per event) costs "
            f"{fmt(part.loc['rust_helper', 'net'])}.",
        ]
    return out + [""] if out else []


def render(run: Path, summary: pd.DataFrame, context: dict, codegen: dict[str, str],
           checks: dict[str, str], repo_root: Path, paths=None) -> str:
    rel = run.relative_to(repo_root)
    accel = sorted({c["accel"] for c in context["configs"].values()})
    units = sorted(set(summary.unit))
    incomplete = "" if context.get("complete") else (
        f"\n> **INCOMPLETE RUN**: {context.get('incomplete_reason')}. "
        "Every figure below covers only what the run recorded.\n")
    archs = [a for a, _ in stats.panels(summary)]
    lines = [
        "# tpbench report: what a disabled tracepoint costs when Rust calls it",
        incomplete,
        f"Run `{context['run_id']}`, {', '.join(dict.fromkeys(archs))}, accelerator "
        f"{', '.join(accel)}; unit: **{' and '.join(units)}** per call"
        + (" (under TCG with -icount shift=0 the guest's counter advances once per "
           "instruction)" if "instructions" in units else "")
        + f". Raw samples: [`{rel}/samples.csv`]({rel}/samples.csv), context: "
        f"[`{rel}/context.json`]({rel}/context.json).",
        "",
        "## Headline",
        "",
        *headline(summary),
        "\"site cost vs C\" is (variant − its language's empty loop) − (`c_trace` − `c_empty`): "
        "the cost of the tracepoint site itself, compared with C's on the same architecture "
        "and config. The verdict calls a difference real only when its whole 95% interval "
        "lies beyond the noise threshold "
        f"({', '.join(f'{a}: {stats.NOISE.get(a, 0.5):g} {stats.UNITS.get(a)}' for a in accel)} "
        "per call).",
        "",
        verdict_table(summary),
        outlier_notes(summary),
        "",
        "## Plots",
        "",
    ]
    for arch, config in stats.panels(summary):
        tag = f"{arch}-{config}"
        lines += [f"![per-call cost, {arch} {config}]({rel}/plots/percall-{tag}.png)", ""]
        for state in STATE_ORDER:
            lines += [f"![scaling, {arch} {config}, {state}]({rel}/plots/scaling-{tag}-{state}.png)",
                      f"![samples, {arch} {config}, {state}]({rel}/plots/box-{tag}-{state}.png)", ""]
    lines += ["SVG versions sit next to each PNG.", ""]
    lines += explained(paths or {}, summary)
    lines += ["## Generated code", ""]
    for tag in sorted(codegen, key=lambda t: (not t.startswith("x86_64"), t)):
        lines += [f"### {tag}", "", "Checks:", "", "```", checks.get(tag, "").rstrip(),
                  "```", "", "Loop bodies (objdump of the measured module; `*` marks the "
                  "instructions of one iteration with the tracepoint off, `SITE` the "
                  "patched NOP):", "", "```", codegen[tag].rstrip(), "```", ""]
    lines += [
        "## Method",
        "",
        "- `bench-module/` is one module of C and Rust objects with its own trace event. Each "
        "variant is a `noinline` loop that calls its site N times with the loop index as "
        "argument: `c_empty`/`rust_empty` (the loop alone; an empty asm takes the index in a "
        "register, as the sites do, without a store), `c_trace` (the real 6.12 "
        "`trace_tpbench_hit()`), `rust_trace` (`declare_trace!`), `rust_helper` (Rust calls an "
        "out-of-line C function that calls `trace_tpbench_hit()`), `rust_load` (Rust reads the "
        "key count with an inline atomic load), `rust_count_call` (the generic path before "
        "patch 7: a call to read the key count).",
        "- States: `disabled` (no probe) and `enabled` (a probe registered by the module that "
        "counts hits and checks arguments).",
        "- One sample is one call of a loop function, with interrupts off, between two ordered "
        "reads of the cycle counter (x86_64: `rdtsc_ordered()`; arm64: PMCCNTR_EL0 between "
        "`isb`s). The per-call cost is the least-squares slope of the samples over N (N=0 left "
        "out: there the Rust loops return before entering the loop), so the call and timer "
        "overhead drops out; its 95% interval comes from 2000 bootstrap resamples of the "
        "repetitions at each N.",
        "- Under TCG with `-icount shift=0,sleep=off` QEMU's virtual clock advances 1 ns per "
        "guest instruction; the x86 TSC and the arm64 cycle counter (1 GHz in QEMU) follow it, "
        "so costs are instruction counts and repeat exactly; the codegen check compares them "
        "with the instructions counted in the disassembly. Under KVM they are cycles.",
        "- Before timing, the module checks (KTAP) that the Rust static branch follows the key, "
        "that no probe means no hits, and that with the probe every firing variant delivers "
        "exactly N hits with the right arguments.",
        "",
        "## Provenance",
        "",
        f"- run: `{context['run_id']}` ({context['date']}), complete: {context['complete']}",
        f"- host CPU: {context['host_cpu']}; host kernel {context['host_kernel']}",
        f"- kernel: {context['kernel_package']}, series hash `{context['series_hash']}` "
        f"({len(context['series'])} patches)",
    ]
    for arch, tools in context["toolchain"].items():
        lines.append(f"- toolchain ({arch}): {tools['rustc']}; {tools['bindgen']}; "
                     f"{tools['gcc']}; {tools['qemu']}")
    lines.append(f"- module parameters: `{' '.join(context['module_params'])}`")
    for name, c in context["configs"].items():
        lines.append(f"- {name}: kernel {c['kernel_release']}, fragments "
                     f"{', '.join(c['fragments'])} (hash `{c['fragment_hash']}`); "
                     f"{c['accel']}: {c['accel_reason']}")
    lines += [
        "",
        "## Reproduce",
        "",
        "```",
        "make bench ARCHS=\"x86_64 arm64\"   # a new run under data/, analysis, plots, codegen, REPORT.md",
        f"make report RUN={context['run_id']}   # this report again, from the committed files",
        "```",
        "",
    ]
    return "\n".join(lines)


def normalize(context: dict, samples: pd.DataFrame):
    """Reads schema 1 runs (x86_64 only, no arch column) as schema 2."""
    if context.get("schema_version", 1) >= 2:
        return context, samples
    arch = context.get("arch", "x86_64")
    if "arch" not in samples.columns:
        samples = samples.copy()
        samples.insert(0, "arch", arch)
    context = dict(context)
    context["configs"] = {f"{arch}/{k}": dict(v, arch=arch, config=k)
                          for k, v in context["configs"].items()}
    context["toolchain"] = {arch: context["toolchain"]}
    return context, samples


def load_run(run: Path, allow_incomplete: bool):
    context = json.loads((run / "context.json").read_text())
    if not context.get("complete") and not allow_incomplete:
        raise SystemExit(f"{run}: the run is incomplete ({context.get('incomplete_reason')}); "
                         "pass ALLOW_INCOMPLETE=1 to analyse what it recorded anyway")
    samples = pd.read_csv(run / "samples.csv")
    if samples.empty:
        raise SystemExit(f"{run}: samples.csv has no samples")
    return normalize(context, samples)
