/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the C harness and the loop functions share. Every loop function calls
 * its site n times with the loop index as the argument; the C ones are in
 * tpbench_loops.c, the Rust ones in tpbench_rs.rs.
 */
#ifndef _TPBENCH_H
#define _TPBENCH_H

#include <linux/types.h>
#include <linux/version.h>

struct static_key;

/*
 * The struct static_key of tracepoint <name>: 6.13 made a tracepoint's key a
 * struct static_key_false, which holds it as its member .key.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define TPBENCH_TP_KEY(name)	(&__tracepoint_##name.key.key)
#else
#define TPBENCH_TP_KEY(name)	(&__tracepoint_##name.key)
#endif

/*
 * A driver's transaction, as the txn variants' sites read it: the site loads
 * three fields through the pointer and passes the pointer itself.
 */
struct tpbench_txn {
	u64 id;
	u32 flags;
	u32 code;
	size_t size;
};

/* The transactions the txn loops walk, entry i % TPBENCH_TXNS at call i. */
#define TPBENCH_TXNS	16
extern const struct tpbench_txn tpbench_txns[TPBENCH_TXNS];

void tpbench_trace_helper(unsigned long i);
int tpbench_key_count(struct static_key *key);

/* The loop functions, one per variant of tpbench_variants.h. */
#define TPBENCH_VARIANT(name, language, event, sites, baseline, what) \
	void tpbench_##name(unsigned long n);
#define TPBENCH_STATE(name, what)
#include "tpbench_variants.h"
#undef TPBENCH_VARIANT
#undef TPBENCH_STATE

/* Rust's static branch on the tpbench_hit key, for the functional check. */
bool tpbench_rust_key_is_on(void);

#endif /* _TPBENCH_H */
