// SPDX-License-Identifier: GPL-2.0
/*
 * The C loop with sixteen sites, in a file of its own: with seventeen calls
 * of trace_tpbench_hit() in one file, GCC at -Os (the kernel's
 * CONFIG_CC_OPTIMIZE_FOR_SIZE) stops inlining it, and tpbench_c_trace would
 * then measure a call instead of C's inline site. Here it measures what a
 * driver file with many sites of one event gets.
 */

#include <linux/compiler.h>

#include "tpbench_trace.h"
#include "tpbench.h"

/* Sixteen sites of one event in a row. */
noinline void tpbench_c_dense(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
		trace_tpbench_hit(i);
	}
}
