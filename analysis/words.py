"""How the report words numbers, tools and builds: one place for each phrase's form."""

import math
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from analysis.stats import fmt, rows
from analysis.load import kernel_of, profile_of
from kelf.rewrites import THUNKS
from common import matrix


# The detail pages live in <run>/report/: their links to the run's files go one level up.
PAGES_DIR = "report"
PAGE_TO_RUN = Path("..")
STATE_ORDER = matrix.STATES
# A config as tables and titles name it.
SHORT = {"jump_label": "JL=y", "no_jump_label": "JL=n"}


def profile_words(context: dict) -> str:
    what = context.get("profile_what") or "tinyconfig's -Os, no function tracer"
    kernel = kernel_of(context)
    return ("" if kernel == "series" else f"kernel **{kernel}** ({context['kernel_what']}), "
            ) + f"build profile **{profile_of(context)}** ({what})"


def build_words(context: dict) -> str:
    """What a heading says of how the numbers under it were built: the profile (and the
    kernel, when it is not the series' 6.12)."""
    kernel = kernel_of(context)
    return ("" if kernel == "series" else f"{kernel}, ") + f"build profile {profile_of(context)}"


def counted_words(words: list[str]) -> str:
    """`mov`, `mov`, `call` as "2 x `mov`, `call`", first-seen order."""
    counts = Counter(words)
    return ", ".join(w if counts[w] == 1 else f"{counts[w]} x {w}" for w in counts)


def possessive(name: str) -> str:
    return name + ("'" if name.endswith("s") else "'s")


def signed(x: float) -> str:
    # To the 2 decimals the tables print: a reader subtracting 597.24 from 608.24 gets 11,
    # whatever the residue below them (11.0038 from the unrounded slopes).
    x = round(x, 2)
    return ("+" if x > 0 else "") + fmt(x)


def tool_words(key: str, text: str) -> str:
    """"GCC 12.2.0", "clang 14.0.6", "rustc 1.96.0" from a tool's --version line: the version
    outside the parentheses ("gcc (Debian 12.2.0-14+deb12u1) 12.2.0"); the C compiler named
    by what it says it is (riscv64's "gcc" is clang)."""
    version = re.search(r"\d+\.\d+\.\d+", re.sub(r"\([^)]*\)", "", text))
    name = {"gcc": "clang" if "clang" in text else "GCC"}.get(key, key)
    return f"{name} {version.group(0)}" if version else ""


def toolchain_words(context: dict, arch: str) -> str:
    """"GCC 12.2.0, rustc 1.96.0, bindgen 0.60.1" from the versions context.json records."""
    tools = context.get("toolchain", {}).get(arch, {})
    return ", ".join(w for w in (tool_words(key, tools.get(key, ""))
                                 for key in ("gcc", "rustc", "bindgen")) if w)


def ci(lo: float, hi: float) -> str:
    if pd.isna(lo):
        return ""
    return "exact" if abs(hi - lo) < 1e-9 else f"{lo:.2f}..{hi:.2f}"


def thunk_label(name: str | None) -> str:
    """How a return thunk is named beside a figure."""
    if name is None:
        return "a return thunk not reproduced here"
    return "plain `ret`" if name == "ret" else f"`{THUNKS[name][0]}`"


def thunk_words(context: dict, why: bool = True) -> str:
    """The return the native figures of samples.csv ran through: the host kernel's choice
    (and why, from its vulnerabilities lines)."""
    chosen = context.get("native_about", {}).get("host_thunk")
    if chosen is None:
        return "plain `ret` (the run predates recording the choice)"
    return thunk_label(chosen["name"]) + (f" ({chosen['why']})" if why else "")


# The vulnerabilities files whose choice decides what a call, a return or an indirect call
# costs in a module's code.
CALL_PATH_VULNERABILITIES = ("spectre_v2", "retbleed", "spec_rstack_overflow",
                             "indirect_target_selection")


def call_path_words(vulns: dict[str, str]) -> str:
    return "; ".join(f"{k}: {vulns[k]}" for k in CALL_PATH_VULNERABILITIES if k in vulns)


def native_hz(context: dict) -> float | None:
    """The TSC frequency for converting native ticks: the host kernel's own value where it
    was readable, the harness's calibration otherwise."""
    about = context.get("native_about") or {}
    if about.get("tsc_hz_kernel"):
        return float(about["tsc_hz_kernel"])
    for per_shift in (context.get("native") or {}).values():
        for info in per_shift.values():
            return float(info["tsc_hz_calibrated"])
    return None


def span(values, unit: str = "") -> str:
    """"3" or "-1 to 2" (with the unit after), for a one-line finding."""
    lo, hi = min(values), max(values)
    text = fmt(lo) if lo == hi else f"{fmt(lo)} to {fmt(hi)}"
    return f"{text} {unit}".strip()


def native_words(row) -> str:
    """A native cost as the reader should take it: "< x, not resolved" when some process put
    it within the A/A noise of zero, else the median and the range over processes."""
    if pd.isna(row.native_median):
        return ""
    if row.native_min <= row.native_noise:
        bound = math.ceil(round(max(row.native_max, row.native_noise) * 100, 6)) / 100
        return f"< {bound:.2f}, not resolved"
    return f"{row.native_median:.2f} ({row.native_min:.2f}..{row.native_max:.2f})"


def native_of(table: pd.DataFrame, **equal) -> str | None:
    """native_words() of the one verdict row matching `equal`; None where it has no native
    figure."""
    part = rows(table, **equal)
    if part.empty or pd.isna(part.native_median.iloc[0]):
        return None
    return native_words(part.iloc[0])
