/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one list of what tpbench measures. The module's tables expand it here;
 * the runner and the analysis read this file (runner/matrix.py), so a variant
 * or a state is added in this file alone, besides its loop function.
 *
 * TPBENCH_VARIANT(name, language, fires, what):
 *   name      the loop function is tpbench_<name>(unsigned long n)
 *   language  C or RUST (RUST ones exist only in a CONFIG_RUST build)
 *   fires     true if the loop calls the tracepoint when it is on
 *   what      one sentence for the report (Markdown)
 * TPBENCH_STATE(name, what): a state of the tracepoint while timing.
 *
 * The order is the order of the timing, the tables and the plots.
 */
TPBENCH_VARIANT(c_empty, C, false,
		"the earlier baseline: an empty asm takes the index as an input")
TPBENCH_VARIANT(rust_empty, RUST, false,
		"the Rust twin of `c_empty`")
TPBENCH_VARIANT(c_base, C, false,
		"the trace loop without its site: an empty asm that claims to update the index in its register, so the loop keeps counting up as the trace loop does, without a copy or a store; every site cost is measured against it")
TPBENCH_VARIANT(rust_base, RUST, false,
		"the Rust twin of `c_base`, the baseline of the Rust sites")
TPBENCH_VARIANT(c_trace, C, true,
		"the real 6.12 `trace_tpbench_hit()`")
TPBENCH_VARIANT(rust_trace, RUST, true,
		"`declare_trace!`: Rust tests the static key inline and calls C only when it is on")
TPBENCH_VARIANT(rust_helper, RUST, true,
		"Rust calls an out-of-line C function that calls `trace_tpbench_hit()`")
TPBENCH_VARIANT(rust_load, RUST, true,
		"Rust reads the key count with an inline atomic load")
TPBENCH_VARIANT(rust_count_call, RUST, true,
		"the generic path before patch 7: a call to read the key count")

TPBENCH_STATE(disabled, "no probe: the static key is off")
TPBENCH_STATE(enabled, "a probe registered by the module that counts hits and checks arguments")
