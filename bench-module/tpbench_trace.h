/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace events of tpbench: tpbench_hit takes one unsigned long, the loop
 * index; tpbench_txn takes what a driver's event takes, fields of a
 * structure and the structure's address.
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

/*
 * The transaction's address goes as const void *: a struct pointer type would
 * reach Rust as a different type on each kernel (mainline's bindings declare
 * the struct, the series' declare_trace! takes the Rust type), and the site's
 * code is the same either way.
 */
TRACE_EVENT(tpbench_txn,

	TP_PROTO(const void *t, u64 id, u32 flags, size_t size),

	TP_ARGS(t, id, flags, size),

	TP_STRUCT__entry(
		__field(const void *, t)
		__field(u64, id)
		__field(u32, flags)
		__field(size_t, size)
	),

	TP_fast_assign(
		__entry->t = t;
		__entry->id = id;
		__entry->flags = flags;
		__entry->size = size;
	),

	TP_printk("t=%p id=%llu flags=0x%x size=%zu", __entry->t, __entry->id,
		  __entry->flags, __entry->size)
);

#endif /* _TPBENCH_TRACE_H */

/* Out of tree: tell define_trace.h where this header is. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tpbench_trace

/* This part must be outside protection */
#include <trace/define_trace.h>
