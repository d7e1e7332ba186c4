"""The one list of variants and states (bench-module/tpbench_variants.h): what the runner
and analysis read from it, damaged lists refused, and the module's C tables expanding to
the same list."""
import re
import subprocess

import pytest

from common import matrix

MAIN_C = matrix.LIST.parent / "tpbench_main.c"


def test_the_list_in_its_order():
    assert matrix.VARIANTS == ("c_empty", "rust_empty", "c_base", "rust_base", "c_trace",
                               "rust_trace", "rust_helper", "rust_load", "rust_count_call",
                               "c_txn_base", "rust_txn_base", "c_txn", "rust_txn", "rust_txn_lazy",
                               "c_dense", "rust_dense")
    assert matrix.STATES == ("disabled", "enabled", "recording")
    assert [v.name for v in matrix.VARIANT_TABLE if v.language == "C"] == [
        "c_empty", "c_base", "c_trace", "c_txn_base", "c_txn", "c_dense"]
    assert {v.name: (v.event, v.sites, v.baseline) for v in matrix.VARIANT_TABLE if v.fires} == {
        "c_trace": ("hit", 1, "c_base"), "rust_trace": ("hit", 1, "rust_base"),
        "rust_helper": ("hit", 1, "rust_base"), "rust_load": ("hit", 1, "rust_base"),
        "rust_count_call": ("hit", 1, "rust_base"), "c_txn": ("txn", 1, "c_txn_base"),
        "rust_txn": ("txn", 1, "rust_txn_base"), "rust_txn_lazy": ("txn", 1, "rust_txn_base"),
        "c_dense": ("hit", 16, "c_base"),
        "rust_dense": ("hit", 16, "rust_base")}
    assert [matrix.reference_of(v) for v in ("rust_helper", "rust_txn", "rust_dense",
                                             "c_base")] == ["c_trace", "c_txn", "c_dense", None]
    assert all(v.what and s.what for v in matrix.VARIANT_TABLE for s in matrix.STATE_TABLE)


def test_entries_span_lines_and_comments_and_join_literals():
    variants, states = matrix.parse('''/* a list */
        TPBENCH_VARIANT(c_x, C, hit, 2, c_b,
                        "one, (two) " /* why */ "three")
        TPBENCH_VARIANT(c_b, C, none, 0, none, "four")
        TPBENCH_STATE(off, "five")''', "t.h")
    assert variants == (matrix.Variant("c_x", "C", "hit", 2, "c_b", "one, (two) three"),
                        matrix.Variant("c_b", "C", None, 0, None, "four"))
    assert states == (matrix.State("off", "five"),)


@pytest.mark.parametrize("text, message", [
    ('TPBENCH_VARIANT(c_x, GO, none, 0, none, "a") TPBENCH_STATE(off, "b")',
     r't\.h: TPBENCH_VARIANT\(c_x, GO, none, 0, none, "a"...\) is not \(name, C\|RUST'),
    ('TPBENCH_VARIANT(c_x, C, none, 0, none, "a") TPBENCH_STATE(c_x, "b")',
     r"t\.h: named more than once: c_x"),
    ('TPBENCH_VARIANT(c_x, C, none, 0, none, "a") stray TPBENCH_STATE(off, "b")',
     r"t\.h: not an entry: 'stray'"),
    ('TPBENCH_VARIANT(c_x, C, hit, 1, c_y, "a") TPBENCH_STATE(off, "b")',
     r"t\.h: c_x's baseline c_y is not a variant without a site"),
    ('TPBENCH_VARIANT(c_x, C, hit, 0, none, "a") TPBENCH_STATE(off, "b")',
     r"t\.h: c_x: a variant with sites has an event and a baseline, one without has none"),
    ('TPBENCH_VARIANT(c_x, C, none, 0, none, "a")',
     r"t\.h: needs at least one TPBENCH_VARIANT and one"),
    ('TPBENCH_STATE(off)', r"t\.h: TPBENCH_STATE\(off...\) is not \(name, \"what\"\)"),
])
def test_a_damaged_list_is_refused_naming_the_file(text, message):
    with pytest.raises(matrix.TableError, match=message):
        matrix.parse(text, "t.h")


def tables_of_main_c(rust: bool) -> tuple[list, list]:
    """The variant and state tables of tpbench_main.c as the C preprocessor expands them."""
    text = MAIN_C.read_text()
    start = text.index("#define TPBENCH_IN_C(")
    end = text.rindex("#undef TPBENCH_STATE") + len("#undef TPBENCH_STATE")
    out = subprocess.run(
        ["cpp", "-P", f"-I{matrix.LIST.parent}"] + (["-DCONFIG_RUST"] if rust else []),
        input=text[start:end], capture_output=True, text=True, check=True).stdout
    variants = re.findall(r'\{\s*"(\w+)",\s*tpbench_(\w+),\s*TPBENCH_EVENT_(\w+),\s*(\d+)\s*\}',
                          out)
    states = re.findall(r'"(\w+)",', out.split("tpbench_states")[1])
    return variants, states


@pytest.mark.parametrize("rust", [True, False], ids=["CONFIG_RUST", "no Rust (arm)"])
def test_the_module_tables_expand_the_same_list(rust):
    variants, states = tables_of_main_c(rust)
    expected = [(v.name, v.name, v.event or "none", str(v.sites))
                for v in matrix.VARIANT_TABLE if rust or v.language == "C"]
    assert variants == expected
    assert states == list(matrix.STATES)


def test_every_ktap_test_the_module_reports_is_described_and_no_other():
    """bench-module/ktap-tests.tsv describes what tpbench_main.c reports: each literal
    report(..., "name") and timing_<state> for each state."""
    main_c = (matrix.MODULE / "tpbench_main.c").read_text()
    reported = set(re.findall(r'\breport\([^;]*?,\s*"([a-z0-9_]+)"\)', main_c))
    assert 'snprintf(name, sizeof(name), "timing_%s", state);' in main_c
    reported |= {f"timing_{state}" for state in matrix.STATES}
    assert set(matrix.module_tests()) == reported


@pytest.mark.parametrize("line, words", [
    ("key_off_no_hits with no tab", "expected a test name, a tab"),
    ("Key_Off\tcapitals", "expected a test name, a tab"),
    ("key_off_no_hits\t ", "expected a test name, a tab"),
    ("a\tone\na\ttwo", "line 3: a is listed twice"),
])
def test_a_damaged_test_list_is_refused_by_line(line, words):
    with pytest.raises(matrix.TableError, match=words) as e:
        matrix.parse_tests("# comment\n" + line, "ktap-tests.tsv")
    assert "ktap-tests.tsv line" in str(e.value)
