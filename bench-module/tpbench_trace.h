/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace event every tpbench variant fires: one unsigned long, the loop
 * index, as a driver's tracepoint would pass a value.
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM tpbench

#if !defined(_TPBENCH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TPBENCH_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(tpbench_hit,

	TP_PROTO(unsigned long i),

	TP_ARGS(i),

	TP_STRUCT__entry(
		__field(unsigned long, i)
	),

	TP_fast_assign(
		__entry->i = i;
	),

	TP_printk("i=%lu", __entry->i)
);

#endif /* _TPBENCH_TRACE_H */

/* Out of tree: tell define_trace.h where this header is. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tpbench_trace

/* This part must be outside protection */
#include <trace/define_trace.h>
