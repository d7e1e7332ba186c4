// SPDX-License-Identifier: GPL-2.0
/*
 * tpbench: times C trace_<event>() against Rust declare_trace! and the
 * baselines, with the tracepoint off and on, and reports KTAP through
 * debugfs (tpbench/results), a channel apart from the kernel console.
 *
 * The recording state is timed later, when user space asks for it through
 * debugfs (tpbench/control, "time recording") after enabling the events in
 * tracefs, as a user turns tracing on; "fire <variant> <n>" calls a loop
 * once, so that user space can read the records it leaves in the ring
 * buffer.
 *
 * One timed sample is one call of a variant's loop function with interrupts
 * off, between two ordered reads of the cycle counter (the TSC on x86, the
 * PMU cycle counter on arm64, the cycle CSR on riscv, the stable counter on
 * loongarch). Under QEMU TCG with -icount shift=0 each counts guest
 * instructions (loongarch's one tick per 10), so a sample is an instruction
 * count.
 */

#include <linux/debugfs.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#ifdef CONFIG_X86
#include <asm/msr.h>

static void tpbench_counter_init(void)
{
}

/* Under QEMU TCG with -icount shift=0 the TSC counts guest instructions. */
static u64 tpbench_now(void)
{
	return rdtsc_ordered();
}
#elif defined(CONFIG_ARM64)
#include <asm/barrier.h>
#include <asm/sysreg.h>

/* Start the PMU cycle counter, 64 bits wide (PMCR_EL0.E and .LC). */
static void tpbench_counter_init(void)
{
	write_sysreg(read_sysreg(pmcr_el0) | BIT(0) | BIT(6), pmcr_el0);
	write_sysreg(BIT(31), pmcntenset_el0);
	isb();
}

/*
 * The PMU cycle counter. QEMU derives it from its virtual clock at 1 GHz,
 * and under TCG with -icount shift=0 that clock advances 1 ns per guest
 * instruction, so it counts instructions, as the TSC does on x86.
 */
static u64 tpbench_now(void)
{
	u64 now;

	isb();
	now = read_sysreg(pmccntr_el0);
	isb();
	return now;
}
#elif defined(CONFIG_ARM)
#include <asm/barrier.h>

/* Start the PMU cycle counter (PMCR.E, PMCNTENSET.C). */
static void tpbench_counter_init(void)
{
	u32 pmcr;

	asm volatile("mrc p15, 0, %0, c9, c12, 0" : "=r" (pmcr));
	asm volatile("mcr p15, 0, %0, c9, c12, 0" : : "r" (pmcr | BIT(0)));
	asm volatile("mcr p15, 0, %0, c9, c12, 1" : : "r" (BIT(31)));
	isb();
}

/*
 * PMCCNTR, as on arm64 (QEMU's 1 GHz clock: one per instruction under
 * -icount shift=0), but 32 bits wide: differences are taken modulo 2^32,
 * which the longest loop stays far below.
 */
static u64 tpbench_now(void)
{
	u32 now;

	isb();
	asm volatile("mrc p15, 0, %0, c9, c13, 0" : "=r" (now));
	isb();
	return now;
}
#define TPBENCH_COUNTER_MASK	U32_MAX
#elif defined(CONFIG_RISCV)
#include <asm/csr.h>

static void tpbench_counter_init(void)
{
}

/*
 * The cycle CSR, which OpenSBI lets S-mode read (mcounteren.CY). Under
 * -icount QEMU returns its instruction clock for it, one per instruction
 * with shift=0, as the TSC on x86. TCG runs one instruction after another,
 * so the read needs no fence there; real harts would want one.
 */
static u64 tpbench_now(void)
{
	return csr_read(CSR_CYCLE);
}
#elif defined(CONFIG_LOONGARCH)
#include <linux/timex.h>

static void tpbench_counter_init(void)
{
}

/*
 * The stable counter (rdtime.d). QEMU derives it from its virtual clock at
 * 100 MHz, so under -icount shift=0 it ticks once every 10 instructions:
 * the analysis converts ticks to instructions (runner.config's
 * counter_period).
 */
static u64 tpbench_now(void)
{
	/* rdtime.d: 6.12 spells it drdtime(), 7.x rdtime_d(); both kernels' get_cycles(). */
	return get_cycles();
}
#else
#error "tpbench needs an ordered cycle counter for this architecture"
#endif

#ifndef TPBENCH_COUNTER_MASK
#define TPBENCH_COUNTER_MASK	U64_MAX
#endif

#include "tpbench_trace.h"
#include "tpbench.h"

#define TPBENCH_MAX_N		1000000UL
#define TPBENCH_MAX_REPS	1000

/* The event a variant fires when it is on (tpbench_variants.h spells them). */
enum tpbench_event {
	TPBENCH_EVENT_none,
	TPBENCH_EVENT_hit,
	TPBENCH_EVENT_txn,
};

struct tpbench_variant {
	const char *name;
	void (*loop)(unsigned long n);
	enum tpbench_event event;
	unsigned int sites;	/* sites of the event per iteration */
};

/* Transaction k: every field differs from every other transaction's. */
#define TPBENCH_TXN(k)	{ .id = 1000 + (k), .flags = 1U << (k), .code = (k), .size = 64 * (k) }

const struct tpbench_txn tpbench_txns[TPBENCH_TXNS] = {
	TPBENCH_TXN(0), TPBENCH_TXN(1), TPBENCH_TXN(2), TPBENCH_TXN(3),
	TPBENCH_TXN(4), TPBENCH_TXN(5), TPBENCH_TXN(6), TPBENCH_TXN(7),
	TPBENCH_TXN(8), TPBENCH_TXN(9), TPBENCH_TXN(10), TPBENCH_TXN(11),
	TPBENCH_TXN(12), TPBENCH_TXN(13), TPBENCH_TXN(14), TPBENCH_TXN(15),
};

/* Both tables expand tpbench_variants.h, the list the runner and analysis read. */
#define TPBENCH_IN_C(...)	__VA_ARGS__
#ifdef CONFIG_RUST
#define TPBENCH_IN_RUST(...)	__VA_ARGS__
#else
/* No Rust in 6.12 on this architecture (32-bit arm): the C variants alone. */
#define TPBENCH_IN_RUST(...)
#endif

#define TPBENCH_VARIANT(name, language, event, sites, baseline, what) \
	TPBENCH_IN_##language({ #name, tpbench_##name, TPBENCH_EVENT_##event, sites },)
#define TPBENCH_STATE(name, what)
static const struct tpbench_variant tpbench_variants[] = {
#include "tpbench_variants.h"
};
#undef TPBENCH_VARIANT
#undef TPBENCH_STATE

#define TPBENCH_VARIANT(name, language, event, sites, baseline, what)
#define TPBENCH_STATE(name, what) #name,
static const char * const tpbench_states[] = {
#include "tpbench_variants.h"
};
#undef TPBENCH_VARIANT
#undef TPBENCH_STATE

/* NULL: every variant this build has, every state. */
static char *variants;
module_param(variants, charp, 0444);
MODULE_PARM_DESC(variants, "comma-separated variants to time (default: all)");

static char *states;
module_param(states, charp, 0444);
MODULE_PARM_DESC(states, "comma-separated tracepoint states to time (default: all)");

static unsigned long ns[16] = { 0, 1, 10, 100, 1000, 10000 };
static int ns_count = 6;
module_param_array(ns, ulong, &ns_count, 0444);
MODULE_PARM_DESC(ns, "loop lengths N to time (at most 16, each <= 1000000)");

static unsigned int reps = 31;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "timed repetitions per (variant, state, N), 1..1000");

static unsigned int warmup = 3;
module_param(warmup, uint, 0444);
MODULE_PARM_DESC(warmup, "untimed calls before the timed ones, 0..1000");

/*
 * Test only: the results reach the host when the module has finished, so a
 * panic in the middle of a run would lose every sample. With panic_after,
 * each sample is also printed on the console as it is taken, and the module
 * panics after that many, so that the runner's handling of a guest that dies
 * mid-run can be tested for real.
 */
static unsigned int panic_after;
module_param(panic_after, uint, 0444);
MODULE_PARM_DESC(panic_after, "test only: print samples on the console and panic after this many (0: never)");
static unsigned int samples_taken;

static unsigned int results_kib = 4096;
module_param(results_kib, uint, 0444);
MODULE_PARM_DESC(results_kib, "size of the results buffer in KiB, 4..65536 (small sizes test its overflow)");

/* Bitmaps of the selected variants and states, from the parameters. */
static unsigned long variant_mask, state_mask;

/* Room kept at the end of the buffer for the lines that say it filled up. */
#define TPBENCH_RESULTS_TAIL	256

static char *results;
static size_t results_size, results_len;
static bool results_full;
static struct debugfs_blob_wrapper results_blob;
static struct dentry *tpbench_dir;

/*
 * Appends one formatted line, whole or not at all: a sample cut short would
 * still parse as a sample with a wrong count. Once a line does not fit, the
 * buffer is marked full and nothing more is written but the closing lines.
 */
static __printf(2, 3) void emit(size_t limit, const char *fmt, ...)
{
	va_list args;
	int len;

	if (results_full && limit < results_size)
		return;
	va_start(args, fmt);
	len = vsnprintf(results + results_len, limit - results_len, fmt, args);
	va_end(args);
	if (len < 0 || results_len + len >= limit) {
		results[results_len] = '\0';
		results_full = true;
		return;
	}
	results_len += len;
}

#define out(fmt, ...) \
	emit(results_size - TPBENCH_RESULTS_TAIL, fmt, ##__VA_ARGS__)
#define out_tail(fmt, ...) emit(results_size, fmt, ##__VA_ARGS__)

/*
 * What the probes saw; only touched with the probes attached. A hit adds its
 * index, a transaction its id; a transaction whose arguments are not its own
 * fields counts as bad.
 */
static unsigned long probe_hits, probe_sum, probe_last, probe_bad;

static void tpbench_probe(void *data, unsigned long i)
{
	probe_hits++;
	probe_sum += i;
	probe_last = i;
}

static void tpbench_txn_probe(void *data, const void *address, u64 id, u32 flags,
			      size_t size)
{
	const struct tpbench_txn *t = address;

	probe_hits++;
	probe_sum += id;
	probe_last = t - tpbench_txns;
	probe_bad += t->id != id || t->flags != flags || t->size != size;
}

static void probe_reset(void)
{
	probe_hits = 0;
	probe_sum = 0;
	probe_last = 0;
	probe_bad = 0;
}

/* The sum and last value the probes must see after n calls of variant v's loop. */
static void probe_want(const struct tpbench_variant *v, unsigned long n, unsigned long *sum,
		       unsigned long *last)
{
	unsigned long i;

	*sum = 0;
	*last = 0;
	for (i = 0; i < n && v->event != TPBENCH_EVENT_none; i++) {
		*last = v->event == TPBENCH_EVENT_hit ? i : i % TPBENCH_TXNS;
		*sum += v->sites * (v->event == TPBENCH_EVENT_hit ? i :
				    tpbench_txns[i % TPBENCH_TXNS].id);
	}
}

/* Parses a comma list of names into a bitmap over `names`; -EINVAL names the bad one. */
static int parse_list(const char *param, const char *list, const char * const *names,
		      size_t count, unsigned long *mask)
{
	char *copy, *cur, *tok;
	size_t k;
	int ret = 0;

	copy = kstrdup(list, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	*mask = 0;
	cur = copy;
	while ((tok = strsep(&cur, ",")) != NULL) {
		if (!*tok)
			continue;
		for (k = 0; k < count; k++)
			if (!strcmp(tok, names[k]))
				break;
		if (k == count) {
			pr_err("tpbench: parameter %s: unknown value '%s'\n", param, tok);
			ret = -EINVAL;
			break;
		}
		*mask |= BIT(k);
	}
	kfree(copy);
	if (!ret && !*mask) {
		pr_err("tpbench: parameter %s: empty\n", param);
		ret = -EINVAL;
	}
	return ret;
}

static int validate_params(void)
{
	const char *vnames[ARRAY_SIZE(tpbench_variants)];
	size_t k;
	int ret, i, positive;

	for (k = 0; k < ARRAY_SIZE(tpbench_variants); k++)
		vnames[k] = tpbench_variants[k].name;
	variant_mask = GENMASK(ARRAY_SIZE(tpbench_variants) - 1, 0);
	ret = variants ? parse_list("variants", variants, vnames, ARRAY_SIZE(vnames),
				    &variant_mask) : 0;
	if (ret)
		return ret;
	state_mask = GENMASK(ARRAY_SIZE(tpbench_states) - 1, 0);
	ret = states ? parse_list("states", states, tpbench_states,
				  ARRAY_SIZE(tpbench_states), &state_mask) : 0;
	if (ret)
		return ret;
	if (ns_count < 1) {
		pr_err("tpbench: parameter ns: empty\n");
		return -EINVAL;
	}
	for (i = 0, positive = 0; i < ns_count; i++)
		positive += ns[i] > 0;
	if (positive < 2) {
		pr_err("tpbench: parameter ns: the per-call cost is a slope: give at least two values above 0\n");
		return -EINVAL;
	}
	for (i = 0; i < ns_count; i++) {
		if (ns[i] > TPBENCH_MAX_N) {
			pr_err("tpbench: parameter ns: %lu is above %lu (a negative value wraps to a huge one)\n",
			       ns[i], TPBENCH_MAX_N);
			return -EINVAL;
		}
	}
	if (reps < 1 || reps > TPBENCH_MAX_REPS) {
		pr_err("tpbench: parameter reps: %u is not in 1..%d\n", reps, TPBENCH_MAX_REPS);
		return -EINVAL;
	}
	if (results_kib < 4 || results_kib > 65536) {
		pr_err("tpbench: parameter results_kib: %u is not in 4..65536\n", results_kib);
		return -EINVAL;
	}
	if (warmup > TPBENCH_MAX_REPS) {
		pr_err("tpbench: parameter warmup: %u is above %d\n", warmup, TPBENCH_MAX_REPS);
		return -EINVAL;
	}
	return 0;
}

static u64 time_one(void (*loop)(unsigned long n), unsigned long n)
{
	unsigned long flags;
	u64 t0, t1;

	local_irq_save(flags);
	t0 = tpbench_now();
	loop(n);
	t1 = tpbench_now();
	local_irq_restore(flags);
	return (t1 - t0) & TPBENCH_COUNTER_MASK;
}

static int test_number;
static bool all_ok = true;

/* Test results go to the tail too, so a full buffer cannot swallow them. */
static void report(bool ok, const char *name)
{
	out_tail("%s %d %s\n", ok ? "ok" : "not ok", ++test_number, name);
	all_ok &= ok;
}

/* Attaches a probe to each event; on failure, says why and fails the test `name`. */
static bool attach_probes(const char *name)
{
	int ret = register_trace_tpbench_hit(tpbench_probe, NULL);

	if (ret) {
		out("# register_trace_tpbench_hit: %d\n", ret);
		report(false, name);
		return false;
	}
	ret = register_trace_tpbench_txn(tpbench_txn_probe, NULL);
	if (ret) {
		unregister_trace_tpbench_hit(tpbench_probe, NULL);
		tracepoint_synchronize_unregister();
		out("# register_trace_tpbench_txn: %d\n", ret);
		report(false, name);
	}
	return !ret;
}

static void detach_probes(void)
{
	unregister_trace_tpbench_txn(tpbench_txn_probe, NULL);
	unregister_trace_tpbench_hit(tpbench_probe, NULL);
	tracepoint_synchronize_unregister();
}

/* Rust's static branch follows the key: off, on after enabling, off again. */
static void check_key_follows(void)
{
	bool before, during, after;
	int ret;

	before = tpbench_rust_key_is_on();
	ret = register_trace_tpbench_hit(tpbench_probe, NULL);
	during = tpbench_rust_key_is_on();
	if (!ret)
		unregister_trace_tpbench_hit(tpbench_probe, NULL);
	tracepoint_synchronize_unregister();
	after = tpbench_rust_key_is_on();
	out("# key before=%d during=%d after=%d register=%d\n", before, during, after, ret);
	report(!ret && !before && during && !after, "rust_static_branch_follows_key");
}

/* With the probes attached, every firing variant delivers exactly n hits and the same args. */
static void check_hits(unsigned long n)
{
	bool ok = true;
	size_t k;

	if (!attach_probes("probe_sees_every_call"))
		return;
	for (k = 0; k < ARRAY_SIZE(tpbench_variants); k++) {
		const struct tpbench_variant *v = &tpbench_variants[k];
		unsigned long want_sum, want_last;
		bool good;

		probe_want(v, n, &want_sum, &want_last);
		probe_reset();
		v->loop(n);
		good = probe_hits == v->sites * n && probe_sum == want_sum &&
		       probe_last == want_last && !probe_bad;
		out("# hits variant=%s n=%lu hits=%lu sum=%lu last=%lu bad=%lu %s\n", v->name,
		    n, probe_hits, probe_sum, probe_last, probe_bad, good ? "ok" : "WRONG");
		ok &= good;
	}
	detach_probes();
	report(ok, "probe_sees_every_call");
}

/*
 * With a probe attached and the key forced off, no site may call it. This
 * is what a disabled site must do: with no probe at all nothing could be
 * counted even if a site ignored the key, so a check without a probe could
 * never fail. The key is switched back on before the probe goes.
 */
static void check_key_off_no_hits(unsigned long n)
{
	struct static_key *key = TPBENCH_TP_KEY(tpbench_hit);
	struct static_key *txn_key = TPBENCH_TP_KEY(tpbench_txn);
	unsigned long hits = 0;
	bool ok = true;
	size_t k;

	if (!attach_probes("key_off_no_hits"))
		return;
	static_key_disable(key);
	static_key_disable(txn_key);
	for (k = 0; k < ARRAY_SIZE(tpbench_variants); k++) {
		probe_reset();
		tpbench_variants[k].loop(n);
		out("# key off, probe attached: variant=%s n=%lu hits=%lu %s\n",
		    tpbench_variants[k].name, n, probe_hits, probe_hits ? "WRONG" : "ok");
		hits += probe_hits;
	}
	static_key_enable(key);
	static_key_enable(txn_key);
	detach_probes();
	ok = hits == 0 && !static_key_enabled(key) && !static_key_enabled(txn_key);
	report(ok, "key_off_no_hits");
}

static void sample(const char *variant, const char *state, unsigned long n,
		   unsigned int rep, u64 cycles)
{
	out("# sample variant=%s state=%s n=%lu rep=%u cycles=%llu\n",
	    variant, state, n, rep, cycles);
	if (!panic_after)
		return;
	pr_info("tpbench-sample: variant=%s state=%s n=%lu rep=%u cycles=%llu\n",
		variant, state, n, rep, cycles);
	if (++samples_taken == panic_after)
		panic("tpbench: panic_after=%u samples reached (a test)\n", panic_after);
}

static void time_state(size_t s)
{
	const char *state = tpbench_states[s];
	bool enabled = !strcmp(state, "enabled");
	bool recording = !strcmp(state, "recording");
	unsigned int rep;
	size_t k;
	int i;

	if (enabled && !attach_probes("timing_enabled"))
		return;
	/* Only tracefs can have turned the keys on: the module's probes are gone. */
	if (recording && !(static_key_enabled(TPBENCH_TP_KEY(tpbench_hit)) &&
			   static_key_enabled(TPBENCH_TP_KEY(tpbench_txn)))) {
		out("# the tpbench events are off: enable them in tracefs first\n");
		report(false, "timing_recording");
		return;
	}
	for (k = 0; k < ARRAY_SIZE(tpbench_variants); k++) {
		const struct tpbench_variant *v = &tpbench_variants[k];

		if (!(variant_mask & BIT(k)))
			continue;
		pr_info("tpbench: timing %s %s\n", v->name, state);
		for (i = 0; i < ns_count; i++) {
			for (rep = 0; rep < warmup; rep++)
				time_one(v->loop, ns[i]);
			for (rep = 0; rep < reps; rep++)
				sample(v->name, state, ns[i], rep, time_one(v->loop, ns[i]));
		}
	}
	if (enabled)
		detach_probes();
	if (results_full)
		out_tail("# results buffer full: samples after this point were dropped\n");
	{
		char name[32];

		snprintf(name, sizeof(name), "timing_%s", state);
		report(!results_full, name);
	}
}

/* The state user space times through tpbench/control; ARRAY_SIZE if none. */
static size_t recording_state(void)
{
	size_t s;

	for (s = 0; s < ARRAY_SIZE(tpbench_states); s++)
		if (!strcmp(tpbench_states[s], "recording"))
			break;
	return s;
}

/* Serializes the control file's commands. */
static DEFINE_MUTEX(tpbench_lock);
static bool recording_pending;

/* The last line, once every selected state is timed; debugfs serves what is written. */
static void publish(void)
{
	if (!recording_pending)
		out_tail("# tpbench: %s\n", all_ok ? "all passed" : "FAILED");
	results_blob.size = results_len;
}

/* Calls variant `name`'s loop once with n; -EINVAL if there is no such variant. */
static int fire(const char *name, unsigned long n)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(tpbench_variants); k++) {
		if (!strcmp(tpbench_variants[k].name, name)) {
			tpbench_variants[k].loop(n);
			return 0;
		}
	}
	pr_err("tpbench: control: no variant '%s' in this build\n", name);
	return -EINVAL;
}

/*
 * "time recording": time the recording state, once, with the events that
 * the writer enabled in tracefs. "fire <variant> <n>": call a loop once.
 */
static ssize_t control_write(struct file *file, const char __user *ubuf, size_t len,
			     loff_t *ppos)
{
	char cmd[64], name[32];
	unsigned long n;
	int ret;

	if (len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = '\0';
	mutex_lock(&tpbench_lock);
	if (sysfs_streq(cmd, "time recording")) {
		ret = recording_pending ? 0 : -EINVAL;
		if (ret)
			pr_err("tpbench: control: recording is not a selected state, or was timed already\n");
		recording_pending = false;
		if (!ret) {
			time_state(recording_state());
			publish();
		}
	} else if (sscanf(cmd, "fire %31s %lu", name, &n) == 2 && n <= TPBENCH_MAX_N) {
		ret = fire(name, n);
	} else {
		pr_err("tpbench: control: '%s' is neither 'time recording' nor 'fire <variant> <n <= %lu>'\n",
		       strim(cmd), TPBENCH_MAX_N);
		ret = -EINVAL;
	}
	mutex_unlock(&tpbench_lock);
	return ret ? ret : len;
}

static const struct file_operations control_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = control_write,
	.llseek = noop_llseek,
};

static int __init tpbench_init(void)
{
	size_t s;
	int ret;

	ret = validate_params();
	if (ret)
		return ret;
	results_size = (size_t)results_kib << 10;
	results = vzalloc(results_size);
	if (!results)
		return -ENOMEM;

	out("KTAP version 1\n");
	out("1..%lu\n", 2 + IS_ENABLED(CONFIG_RUST) + hweight_long(state_mask));
	tpbench_counter_init();
	if (IS_ENABLED(CONFIG_RUST))
		check_key_follows();
	check_key_off_no_hits(1000);
	check_hits(1000);
	for (s = 0; s < ARRAY_SIZE(tpbench_states); s++) {
		if (!(state_mask & BIT(s)))
			continue;
		if (s == recording_state())
			recording_pending = true;
		else
			time_state(s);
	}

	results_blob.data = results;
	publish();
	tpbench_dir = debugfs_create_dir("tpbench", NULL);
	debugfs_create_blob("results", 0444, tpbench_dir, &results_blob);
	debugfs_create_file("control", 0200, tpbench_dir, NULL, &control_fops);
	return 0;
}

static void __exit tpbench_exit(void)
{
	debugfs_remove_recursive(tpbench_dir);
	vfree(results);
}

module_init(tpbench_init);
module_exit(tpbench_exit);
MODULE_DESCRIPTION("Cost of C and Rust tracepoint sites, off and on");
MODULE_LICENSE("GPL");
