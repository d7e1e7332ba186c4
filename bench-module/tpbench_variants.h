/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one list of what tpbench measures. The module's tables expand it here;
 * the runner and the analysis read this file (common/matrix.py), so a variant
 * or a state is added in this file alone, besides its loop function.
 *
 * TPBENCH_VARIANT(name, language, event, sites, baseline, what):
 *   name      the loop function is tpbench_<name>(unsigned long n)
 *   language  C or RUST (RUST ones exist only in a CONFIG_RUST build)
 *   event     the trace event the loop fires when it is on: hit, txn, or
 *             none for a loop without a site
 *   sites     how many sites of the event one iteration runs (0 for none)
 *   baseline  the loop without the site, whose cost is subtracted to give
 *             the site's; none for a baseline itself
 *   what      one sentence for the report (Markdown)
 * TPBENCH_STATE(name, what): a state of the trace events while timing.
 *
 * The order is the order of the timing, the tables and the plots. A Rust
 * site is compared with the first C variant of the list firing its event.
 */
TPBENCH_VARIANT(c_empty, C, none, 0, none,
		"the earlier baseline: an empty asm takes the index as an input")
TPBENCH_VARIANT(rust_empty, RUST, none, 0, none,
		"the Rust twin of `c_empty`")
TPBENCH_VARIANT(c_base, C, none, 0, none,
		"the trace loop without its site: an empty asm that claims to update the index in its register, so the loop keeps counting up as the trace loop does, without a copy or a store; every `tpbench_hit` site is measured against it")
TPBENCH_VARIANT(rust_base, RUST, none, 0, none,
		"the Rust twin of `c_base`, the baseline of the Rust `tpbench_hit` sites")
TPBENCH_VARIANT(c_trace, C, hit, 1, c_base,
		"the real 6.12 `trace_tpbench_hit()`")
TPBENCH_VARIANT(rust_trace, RUST, hit, 1, rust_base,
		"`declare_trace!`: Rust tests the static key inline and calls C only when it is on")
TPBENCH_VARIANT(rust_helper, RUST, hit, 1, rust_base,
		"Rust calls an out-of-line C function that calls `trace_tpbench_hit()`")
TPBENCH_VARIANT(rust_load, RUST, hit, 1, rust_base,
		"Rust reads the key count with an inline atomic load")
TPBENCH_VARIANT(rust_count_call, RUST, hit, 1, rust_base,
		"the generic path before patch 7: a call to read the key count")
TPBENCH_VARIANT(c_txn_base, C, none, 0, none,
		"the driver-like loop without its site: it walks an array of 16 transactions and hands each one's address to an empty asm, as a driver has the transaction at hand")
TPBENCH_VARIANT(rust_txn_base, RUST, none, 0, none,
		"the Rust twin of `c_txn_base`")
TPBENCH_VARIANT(c_txn, C, txn, 1, c_txn_base,
		"`c_txn_base` plus `trace_tpbench_txn(t, t->id, t->flags, t->size)`: three arguments loaded through the transaction pointer, which is the fourth")
TPBENCH_VARIANT(rust_txn, RUST, txn, 1, rust_txn_base,
		"`rust_txn_base` plus the same event through `declare_trace!`, its arguments read from a `&Txn`")
TPBENCH_VARIANT(rust_txn_lazy, RUST, txn, 1, rust_txn_base,
		"`rust_txn` written `if tpbench_txn_enabled() { tpbench_txn(...) }`: the arguments are read inside the `if`, only while the event is on")
TPBENCH_VARIANT(c_dense, C, hit, 16, c_base,
		"`c_base` with 16 `trace_tpbench_hit(i)` sites in a row, as a driver's hot path may have many")
TPBENCH_VARIANT(rust_dense, RUST, hit, 16, rust_base,
		"`rust_base` with 16 `declare_trace!` sites in a row")

TPBENCH_STATE(disabled, "no probe: the static keys are off")
TPBENCH_STATE(enabled, "a probe on each event, registered by the module, that counts hits and checks arguments")
TPBENCH_STATE(recording, "the module's events enabled in tracefs (the guest's init writes 1 to events/tpbench/enable, then has the module time its loops through debugfs): each call writes a record into the ring buffer")
