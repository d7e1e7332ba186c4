"""What a tracepoint site costs in bytes, read from the measured module's ELF file.

A site's text is its loop function's size minus its baseline loop's (the
loops differ only by the site): the disabled-path instructions, the enabled
block (inline in C, a cold block of the same function in Rust) and whatever
the compiler rearranged. Beside it: the __jump_table entries of the loop
(one per inline site with CONFIG_JUMP_LABEL), and the functions each event has once: the C ones that
TRACE_EVENT() generates (used by C and Rust alike) and, for Rust, the
rust_do_trace_<event> that declare_trace! calls (and the C helper that the
rust_helper variant calls, with its own site).
"""

from collections import Counter

from elftools.elf.elffile import ELFFile

from kelf.jump_table import (ABSOLUTE_ENTRY_SIZE, ENTRY_SIZE, functions_by_section,
                                 read_jump_table)
from common import matrix, rundir

# The text TRACE_EVENT() generates for an event of its own class (DEFINE_EVENT shares the
# class's raw_event, perf and output functions).
C_EVENT_FUNCTIONS = ("__traceiter_{}", "__probestub_{}", "trace_event_raw_event_{}",
                     "perf_trace_{}", "trace_raw_output_{}", "__bpf_trace_{}")
RUST_EVENT_FUNCTION = "rust_do_trace_{}"
# The out-of-line functions a variant calls, which a driver has once however many sites: the
# helper of the wrapper approach, the count reader, and the copy of trace_tpbench_hit() that
# GCC makes when it stops inlining it (at -Os, in a file with many sites).
CALLED_ONCE = {"rust_helper": "tpbench_trace_helper", "rust_count_call": "tpbench_key_count",
               "c_dense": "trace_tpbench_hit"}


def function_sizes(path) -> dict[str, int]:
    """Every function symbol of the object and its size in bytes."""
    with open(path, "rb") as f:
        return {name: size for entries in functions_by_section(ELFFile(f)).values()
                for _, size, name in entries}


def jump_entry_bytes(arch: str) -> int:
    return ABSOLUTE_ENTRY_SIZE if arch == "arm" else ENTRY_SIZE


def jump_entries(path) -> dict[str, int]:
    """How many __jump_table entries each function of the object has."""
    return dict(Counter(e.function for e in read_jump_table(path)))


def site_sizes(sizes: dict[str, int], entries: dict[str, int], arch: str) -> list[dict]:
    """One row per variant with sites whose loop and baseline are both in `sizes`: the text
    per site (a loop with several shares its growth among them), the __jump_table entry of
    a site (`entries`: per function, from jump_entries), and the bytes its event and its
    kind of site need once (text, and the __jump_table entries of a function called once)."""
    rows = []
    for v in matrix.VARIANT_TABLE:
        loop, base = f"tpbench_{v.name}", f"tpbench_{v.baseline}"
        if v.event is None or loop not in sizes or base not in sizes:
            continue
        event = f"tpbench_{v.event}"
        c_once = sum(sizes.get(f.format(event), 0) for f in C_EVENT_FUNCTIONS)
        called = CALLED_ONCE.get(v.name)
        kind_once = (sizes.get(RUST_EVENT_FUNCTION.format(event), 0)
                     if v.language == "RUST" else 0) + sizes.get(called, 0) \
            + entries.get(called, 0) * jump_entry_bytes(arch)
        rows.append(dict(variant=v.name, event=event, sites=v.sites,
                         site_text=(sizes[loop] - sizes[base]) / v.sites,
                         jump_entry=entries.get(loop, 0) * jump_entry_bytes(arch) / v.sites,
                         event_c_text=c_once, kind_text=kind_once))
    return rows


def run_sizes(run, panels) -> dict[tuple[str, str], list[dict]]:
    """site_sizes of the module of each (arch, config) of `panels` that the run directory
    holds, each module read once."""
    out = {}
    for arch, config in panels:
        ko = rundir.guest_file(run, "module", arch, config)
        if ko.exists():
            out[(arch, config)] = site_sizes(function_sizes(ko), jump_entries(ko), arch)
    return out


# A driver's sites of one event, one site and many, per language: the size figure's lines.
GROWTH = (("C", ("c_trace", "c_dense")), ("Rust", ("rust_trace", "rust_dense")))


def bytes_for_sites(rows: list[dict]) -> dict[str, list[tuple[int, float]]]:
    """Per language, (sites, bytes a driver's module gains for them): the loop's growth,
    the __jump_table entries, and the text the event and the kind of site need once."""
    by_variant = {r["variant"]: r for r in rows}
    out = {}
    for language, variants in GROWTH:
        points = [(r["sites"], r["sites"] * (r["site_text"] + r["jump_entry"])
                   + r["event_c_text"] + r["kind_text"])
                  for r in (by_variant.get(v) for v in variants) if r]
        if len(points) > 1:
            out[language] = points
    return out
