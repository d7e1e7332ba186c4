"""The clang page and the Answer's clang line, on the verdict of a real run with clang builds
(fixtures/verdict-clang.csv, run 20261206T204019Z-fe594e7's)."""

import pandas as pd

from analysis import answer
from analysis.pages import clang
from analysis.stats import fmt
from tests.conftest import FIXTURES


def verdict() -> pd.DataFrame:
    return pd.read_csv(FIXTURES / "verdict-clang.csv", keep_default_na=False, na_values=[""])


def test_the_clang_line_names_every_case_where_c_and_rust_differ():
    """Every (kernel, architecture, config, site kind) of the clang builds where C's and
    Rust's sites cost otherwise is named with both counts; the rest are counted as alike."""
    table = verdict()
    text = answer.clang_sentence(table)
    rows = table[table.profile == "clang"]
    cases = differ = 0
    for (kernel, arch, config), g in rows.groupby(["kernel", "arch", "config"]):
        for words, c, r in answer.PAIRS:
            cv, rv = (answer.cell(g, variant=v) for v in (c, r))
            cases += 1
            if round(cv, 2) != round(rv, 2):
                differ += 1
                assert (f"{kernel} {arch} {answer.SHORT[config]} {words}: C {fmt(cv)}" in text)
    assert f"alike in {cases - differ} of {cases} cases" in text
    # Mainline's inline helpers take its x86_64 Rust site without jump labels from the
    # kernel's count helper (7) to C's own count under clang (2).
    assert "x86_64 JL=n 7 -> 2" in text


def test_the_clang_page_sets_each_clang_site_beside_gccs_build():
    table = verdict()
    lines = clang.beside_gcc(table)
    parts = clang.clang_parts(table)
    assert len(lines) == 2 + len(parts) * len(clang.SITES)
    helpers = clang.inline_helper_lines(table)
    assert len(helpers) == 1 and "calls nothing" in helpers[0] and "x86_64 JL=n" in helpers[0]


def test_a_run_without_clang_builds_has_no_clang_page_nor_line():
    table = verdict()
    gcc = table[table.profile != "clang"]
    assert clang.clang_section(gcc, {}, []) == []
    assert answer.clang_sentence(gcc) == ""
