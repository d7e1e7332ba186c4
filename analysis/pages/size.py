"""The size page: bytes per site and per event."""

from pathlib import Path


from analysis.stats import fmt


def size_section(run: Path, sizes: dict, rel: Path) -> list[str]:
    """Bytes per site and per event, from the symbol sizes of the modules the guests ran
    (`sizes`: size.run_sizes)."""
    out = []
    for (arch, config), rows in sizes.items():
        for r in rows:
            out.append(f"| {arch} | {config} | `{r['variant']}` | {r['sites']} | "
                       f"{fmt(r['site_text'])} | {fmt(r['jump_entry'])} | "
                       f"**{fmt(r['site_text'] + r['jump_entry'])}** | "
                       f"{r['event_c_text']} | {r['kind_text'] or ''} |")
    if not out:
        return []
    return ["## Code size: what each site and each event costs in bytes", "",
            "From the symbol sizes of the modules measured above. *Text per site* is the loop "
            "function with the site minus its baseline loop: the disabled-path instructions, "
            "the enabled block (inline after the site in C, a cold block of the same function "
            "in Rust) and what the compiler arranged around them. An inline site also has one "
            "`__jump_table` entry with CONFIG_JUMP_LABEL. *Once per event*: the functions "
            "`TRACE_EVENT()` generates in C (`__traceiter_`, `__probestub_`, "
            "`trace_event_raw_event_`, `perf_trace_`, `trace_raw_output_`), which C and Rust "
            "sites share, and what the kind of site adds once: for Rust "
            "`rust_do_trace_<event>` (with the helper, also the C helper function; with the "
            "count call, the count reader), for C in a file with many sites the out-of-line "
            "copy of `trace_<event>()` when GCC made one. A loop with 16 sites shares its "
            "growth among them. A driver with k sites of one event pays the once columns "
            "plus k times the per-site total.", "",
            *([f"![bytes against sites]({rel}/plots/size.png)", ""]
              if (run / "plots" / "size.png").exists() else []),
            "| arch | config | loop | sites | text per site (B) | `__jump_table` per site (B) | "
            "per site in all (B) | once per event, C (B) | once, this kind of site adds (B) |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|", *out, ""]
