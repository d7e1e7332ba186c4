"""The cover letter's measured paragraphs, from the committed run, as REPORT.md is.

patches/0000-cover-letter.patch is written by hand but for one region: from the line
that starts "Measured by tpbench" to the diffstat, the figures, the run they come from
and the shortlog are made here, so that the letter cannot quote a run, a host or a number
the committed run does not hold. Pure functions of the run's verdict rows, summary and
context, and of the patches' subjects.
"""

import re
import textwrap
from pathlib import Path

import pandas as pd

from analysis import answer, stats
from analysis.verdict import cell as verdict_cell

WIDTH = 72
START = "Measured by tpbench"
# The first line of git's diffstat: " path | count +-".
DIFFSTAT = re.compile(r"^ \S.* \|\s+\d+ [+-]*$", re.M)
LINKS = ["[1] https://lore.kernel.org/r/20241001-tracepoint-v9-0-1ad3b7d78acb@google.com",
         "[2] https://lore.kernel.org/r/20241030-tracepoint-v12-0-eec7f0f8ad22@google.com"]

# The table's rows: what a maintainer compares, each a variant of the benchmark module.
ROWS = (("loop without a site, C", "c_base"), ("loop without a site, Rust", "rust_base"),
        ("C trace_<name>()", "c_trace"), ("Rust declare_trace!", "rust_trace"),
        ("16 sites, C (per site)", "c_dense"), ("16 sites, Rust (per site)", "rust_dense"),
        ("Rust -> C helper -> trace", "rust_helper"),
        ("Rust, count helper (*)", "rust_count_call"))
# Rows per site rather than per loop: the verdict's instructions per site.
PER_SITE = ("c_dense", "rust_dense")


def plain(text: str) -> str:
    """Markdown to the plain text of a mail: no emphasis, no code quotes."""
    return text.replace("**", "").replace("`", "")


def paragraph(text: str) -> str:
    return textwrap.fill(plain(text), WIDTH, break_on_hyphens=False, break_long_words=False)


def table_lines(summary: pd.DataFrame, verdict: pd.DataFrame, profile: str) -> list[str]:
    """Instructions per loop iteration with the tracepoint off, each architecture with Rust
    in both configs; the dense rows per site, beyond their loop without sites."""
    guest = stats.rows(stats.guest(summary), state="disabled")
    archs = [a for a in dict.fromkeys(guest.arch)
             if not stats.rows(guest, arch=a, variant="rust_trace").empty]
    per_call = {(r.arch, r.config, r.variant): r.per_call for r in guest.itertuples()}
    configs = ("jump_label", "no_jump_label")
    out = [f"  tracepoint off, {profile:<12}" + "".join(f"{a:<11}" for a in archs).rstrip(),
           f"  {'CONFIG_JUMP_LABEL':<26}" + "".join(f"{'=y':>4}{'=n':>5}  "
                                                      for _ in archs).rstrip()]
    for label, variant in ROWS:
        cells = []
        for arch in archs:
            for config in configs:
                if variant in PER_SITE:
                    value = verdict_cell(verdict, arch=arch, config=config, variant=variant)
                else:
                    value = per_call.get((arch, config, variant))
                cells.append("-" if value is None or pd.isna(value) else answer.fmt(value))
        pairs = "".join(f"{cells[2 * k]:>4}{cells[2 * k + 1]:>5}  " for k in range(len(archs)))
        out.append(f"  {label:<26}{pairs}".rstrip())
    return out


def shortlog(patches: list[Path], author: str) -> list[str]:
    """git format-patch's shortlog of the series: "author (n):" and each subject."""
    subjects = []
    for patch in patches:
        text = patch.read_text()
        m = re.search(r"^Subject: (.*(?:\n [^\n]*)*)", text, re.M)
        subject = re.sub(r"\s*\n\s*", " ", m.group(1)) if m else patch.name
        subjects.append(re.sub(r"^\[PATCH[^\]]*\]\s*", "", subject))
    return [f"{author} ({len(subjects)}):", *[f"  {s}" for s in subjects]]


def measured(table: pd.DataFrame, summary: pd.DataFrame, context: dict, others: list[dict],
             thunks: pd.DataFrame, found: dict[str, str], patches: list[Path],
             author: str) -> str:
    """The generated region: where the figures come from, the table, what they say (the
    Answer's sentences and the further findings, in plain text), the links, the shortlog."""
    profile = context.get("profile", "distro")
    kernels = ", ".join(f"{answer.kernel_of(c)} {answer.profile_of(c)} on "
                        f"{', '.join(c.get('archs', []))}" for c in [context, *others])
    contexts = [context, *others]
    intro = (f"Measured by tpbench run {context['run_id']} ({context['date'][:10]}), from which "
             f"every figure below comes: {kernels}. In the guest, "
             f"{answer.guest_words(contexts)}. {answer.compilers_words(contexts)}. "
             f"Natively: {answer.native_scope_of_run(context)}.")
    measured_patches = len(context.get("series", []))
    if measured_patches < len(patches):
        intro += (f" That run measured patches 1 to {measured_patches}; "
                  + ", ".join(str(k) for k in range(measured_patches + 1, len(patches) + 1))
                  + " not yet, so no figure below shows what "
                  + ("it changes." if len(patches) - measured_patches == 1 else
                     "they change."))
    own = table[(table.profile == profile) & (table.kernel == answer.kernel_of(context))]
    text = [paragraph(intro), "", *table_lines(summary, own, profile), "",
            paragraph("(*) The benchmark's rust_count_call loop, which calls a C helper to "
                      "read the key count as patch 2's generic path does: an emulation in "
                      "the benchmark module, not a build of the tree before patch 7. The 16 "
                      "sites' rows are per site, beyond their loop without sites."), ""]
    for k, sentence in enumerate(answer.answer_sentences(table, context, others, thunks), 1):
        text += [paragraph(f"{k}. {sentence}"), ""]
    for page in ("guest", "recording", "dense"):
        if page in found:
            text += [paragraph(found[page][0].upper() + found[page][1:]), ""]
    return "\n".join(text + LINKS + [""] + shortlog(patches, author) + [""])


def fill(letter: str, region: str) -> str:
    """The letter with its generated region replaced; the letter unchanged but for it."""
    start = letter.find("\n" + START)
    end = DIFFSTAT.search(letter)
    if start < 0 or end is None or end.start() < start:
        raise ValueError(f"the cover letter has no region from a line starting {START!r} "
                         "to its diffstat")
    return letter[:start + 1] + region + "\n" + letter[end.start():]


def region_of(letter: str) -> str:
    """The generated region of a letter, as fill() writes it."""
    start = letter.find("\n" + START)
    end = DIFFSTAT.search(letter)
    return letter[start + 1:end.start() - 1] if start >= 0 and end else ""


# The series for mainline's letter: its rows, each (label, kernel, variant); its kernels.
MAINLINE_ROWS = (("C trace_<name>()", "mainline", "c_trace"),
                 ("Rust, 7.3.4", "mainline", "rust_trace"),
                 ("Rust, this series", "mainline-series", "rust_trace"),
                 ("16 sites, C (per site)", "mainline", "c_dense"),
                 ("16 sites, Rust, 7.3.4", "mainline", "rust_dense"),
                 ("16 sites, Rust, series", "mainline-series", "rust_dense"))


def mainline_table_lines(table: pd.DataFrame, profile: str) -> list[str]:
    """Instructions per disabled site on mainline and on mainline with the series, each
    architecture the run measured the series on, both configs ("-" where an architecture
    has no such kernel); a branch the site takes on every event marked "t"."""
    mine = table[table.profile == profile]
    archs = list(dict.fromkeys(mine[mine.kernel == "mainline-series"].arch))
    configs = ("jump_label", "no_jump_label")
    out = [f"  tracepoint off, {profile:<12}" + "".join(f"{a:<11}" for a in archs).rstrip(),
           f"  {'CONFIG_JUMP_LABEL':<26}" + "".join(f"{'=y':>4}{'=n':>5}  "
                                                      for _ in archs).rstrip()]
    for label, kernel, variant in MAINLINE_ROWS:
        cells = []
        for arch in archs:
            for config in configs:
                where = dict(kernel=kernel, arch=arch, config=config, variant=variant)
                value = verdict_cell(mine, **where)
                taken = verdict_cell(mine, "taken_per_site", **where)
                cells.append("-" if value is None else answer.fmt(value) + ("t" if taken else ""))
        pairs = "".join(f"{cells[2 * k]:>4}{cells[2 * k + 1]:>5}  " for k in range(len(archs)))
        out.append(f"  {label:<26}{pairs}".rstrip())
    return out


def mainline_measured(table: pd.DataFrame, contexts: list[dict], lazy: list[str],
                      patches: list[Path], author: str) -> str:
    """The series for mainline's generated region: where its figures come from, the table of
    mainline against mainline with the series, the Answer's sentence on it, the lazy site with
    a probe attached (`lazy`: "arch config before -> after"), the links and the shortlog."""
    main = contexts[0]
    profile = main.get("profile", "distro")
    ours = next(c for c in contexts if answer.kernel_of(c) == "mainline-series")
    intro = (f"Measured by tpbench run {main['run_id']} ({main['date'][:10]}), from which "
             f"every figure below comes: 7.3.4 and 7.3.4 with this series, built {profile} "
             f"({answer.compiler_words(ours)}), on {', '.join(ours.get('archs', []))}. In "
             f"the guest, {answer.guest_words(contexts)}. Natively: "
             f"{answer.native_scope_of_run(main)}.")
    text = [paragraph(intro), "", *mainline_table_lines(table, profile), "",
            paragraph("Instructions per disabled site, beyond the same loop without it; \"t\": "
                      "the site takes a branch on every disabled event, which an instruction "
                      "count does not show. The 16 sites' rows are per site."), ""]
    sentence = answer.mainline_series_sentence(table, profile)
    if sentence:
        text += [paragraph(sentence), ""]
    if lazy:
        text += [paragraph("A driver-like site inside if <name>_enabled(), with a probe "
                           "attached, net instructions per event, 7.3.4 (where <name>() "
                           "tests the key again, without jump labels through the helper "
                           "call of patch 1) -> this series (call_<name>()): " + "; ".join(lazy)
                           + "."), ""]
    return "\n".join(text + LINKS + [""] + shortlog(patches, author) + [""])
