// SPDX-License-Identifier: GPL-2.0
/*
 * The C loops. Each is noinline so that the harness times one call of it,
 * and its body is what a C driver would write.
 */

#include <linux/compiler.h>

#include "tpbench_trace.h"
#include "tpbench.h"

/*
 * The loop alone. The empty asm takes the index in a register, as the
 * trace site does, so the loop is neither deleted nor given a store.
 */
noinline void tpbench_c_empty(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		asm volatile("" : : "r" (i));
}

/*
 * tpbench_c_trace() without its site, so that c_trace - c_base is what the
 * site costs, NOP included. The empty asm emits nothing; it claims to
 * update the index in its register, which keeps the index counting up as
 * in the trace loop (whose site needs it as the argument) without a copy.
 */
noinline void tpbench_c_base(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		asm volatile("" : "+r" (i));
}

/* The real 6.12 trace_<event>(): C's static branch, untouched. */
noinline void tpbench_c_trace(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		trace_tpbench_hit(i);
}

/*
 * The driver-like loop without its site: the transaction's address goes to
 * an empty asm, as a driver that has just used it holds it in a register.
 */
noinline void tpbench_c_txn_base(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		const struct tpbench_txn *t = &tpbench_txns[i % TPBENCH_TXNS];

		asm volatile("" : : "r" (t));
	}
}

/* c_txn_base plus a site whose arguments are read through the pointer. */
noinline void tpbench_c_txn(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		const struct tpbench_txn *t = &tpbench_txns[i % TPBENCH_TXNS];

		asm volatile("" : : "r" (t));
		trace_tpbench_txn(t, t->id, t->flags, t->size);
	}
}
