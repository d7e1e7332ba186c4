// SPDX-License-Identifier: GPL-2.0
/*
 * Defines the tpbench_hit tracepoint, the function Rust calls when it is on
 * (rust_do_trace_tpbench_hit), the out-of-line helper that the rust_helper
 * variant calls (the wrapper approach the series replaces), and the
 * out-of-line key count reader of the rust_count_call variant.
 */

#define CREATE_TRACE_POINTS
#define CREATE_RUST_TRACE_POINTS
#include "tpbench_trace.h"

#include <linux/atomic.h>
#include <linux/jump_label.h>

#include "tpbench.h"

noinline void tpbench_trace_helper(unsigned long i)
{
	trace_tpbench_hit(i);
}

/*
 * What the series' generic static_branch_unlikely! called before it read the
 * count inline: an out-of-line copy of static_key_count() without
 * CONFIG_JUMP_LABEL.
 */
noinline int tpbench_key_count(struct static_key *key)
{
	return raw_atomic_read(&key->enabled);
}
