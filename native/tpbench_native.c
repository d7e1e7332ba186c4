// SPDX-License-Identifier: GPL-2.0
/*
 * tpbench_native: times the loop functions of a measured tpbench module on
 * the host CPU, in an ordinary process.
 *
 * runner/native.py lays the module's .text out for a fixed address, with
 * its relocations applied (data to a zeroed area, so every key reads
 * disabled; external functions to ud2 traps), and hands this program the
 * image and a manifest on stdin. This program maps the image at that
 * address, pins itself to one CPU and times each variant's loop the way the
 * module's harness does in the guest: one sample is one call of the loop
 * between two ordered TSC reads. Where perf_event_open gives hardware
 * counters it also counts core cycles and retired instructions (user space
 * only) around the same call.
 *
 * Manifest (one item a line):
 *   base <hex>  size <hex>  exec <hex>  image <path>  cpu <n>
 *   ns <n> ...  reps <n>  warmup <n>
 *   variant <name> <hex address>    (as many as there are)
 *   trap <name> <hex address>       (as many as there are)
 *   code <hex address> <hex bytes>  (a return thunk's code, mapped executable
 *                                    on pages of its own, filled with int3)
 *   gs <hex>                        (the GS base: the call depth counter of
 *                                    call depth tracking is %gs-relative)
 * Output (stdout):
 *   counter tsc|tsc+perf   tsc_hz <calibrated>   perf <why not, if not>
 *   sample <variant> <n> <rep> <ticks> [<cycles> <instructions>]
 * A variant that reaches a trap or faults ends the program with status 3
 * and a line on stderr naming the variant and the symbol or address.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_ITEMS 64
#define NAME_LEN 96

struct item {
	char name[NAME_LEN];
	uintptr_t addr;
};

#define MAX_CODE 8
#define CODE_LEN 512

struct code {
	uintptr_t addr;
	size_t len;
	unsigned char bytes[CODE_LEN];
};

static struct item variants[MAX_ITEMS], traps[MAX_ITEMS];
static int nvariants, ntraps;
static struct code codes[MAX_CODE];
static int ncodes;
static uintptr_t gs_base;
static unsigned long ns[16];
static int nns;
static unsigned int reps = 31, warmup = 3;
static uintptr_t base, size, exec_size;
static char image_path[4096];
static int cpu = -1;

/* Which variant runs now, for the fault handler. */
static volatile const char *running = "(none)";

static void die(const char *msg)
{
	fprintf(stderr, "tpbench_native: %s\n", msg);
	exit(2);
}

static void say_fault(const char *what, uintptr_t ip, uintptr_t addr)
{
	char buf[512];
	const char *sym = NULL;
	int k, len;

	for (k = 0; k < ntraps; k++)
		if (ip >= traps[k].addr && ip < traps[k].addr + 16)
			sym = traps[k].name;
	if (sym)
		len = snprintf(buf, sizeof(buf),
			       "tpbench_native: variant %s reached the trap for %s: its disabled path calls out of the module\n",
			       running, sym);
	else
		len = snprintf(buf, sizeof(buf),
			       "tpbench_native: variant %s: %s at ip %#lx (address %#lx)\n",
			       running, what, (unsigned long)ip, (unsigned long)addr);
	if (write(2, buf, len) < 0)
		_exit(4);
	_exit(3);
}

static void on_fault(int sig, siginfo_t *info, void *uc_void)
{
	ucontext_t *uc = uc_void;
	uintptr_t ip = uc->uc_mcontext.gregs[REG_RIP];

	say_fault(strsignal(sig), ip, (uintptr_t)info->si_addr);
}

static void read_manifest(void)
{
	char line[8192], word[32];
	int off;

	while (fgets(line, sizeof(line), stdin)) {
		struct item *it;
		char *p;

		if (sscanf(line, "%31s%n", word, &off) != 1)
			continue;
		p = line + off;
		if (!strcmp(word, "base")) {
			base = strtoul(p, NULL, 16);
		} else if (!strcmp(word, "size")) {
			size = strtoul(p, NULL, 16);
		} else if (!strcmp(word, "exec")) {
			exec_size = strtoul(p, NULL, 16);
		} else if (!strcmp(word, "image")) {
			if (sscanf(p, "%4095s", image_path) != 1)
				die("manifest: image needs a path");
		} else if (!strcmp(word, "cpu")) {
			cpu = atoi(p);
		} else if (!strcmp(word, "reps")) {
			reps = strtoul(p, NULL, 10);
		} else if (!strcmp(word, "warmup")) {
			warmup = strtoul(p, NULL, 10);
		} else if (!strcmp(word, "ns")) {
			char *end;

			for (nns = 0; nns < 16; nns++) {
				ns[nns] = strtoul(p, &end, 10);
				if (end == p)
					break;
				p = end;
			}
		} else if (!strcmp(word, "gs")) {
			gs_base = strtoul(p, NULL, 16);
		} else if (!strcmp(word, "code")) {
			struct code *c = &codes[ncodes];
			char hex[2 * CODE_LEN + 1];
			size_t k;

			if (ncodes == MAX_CODE)
				die("manifest: too many code lines");
			if (sscanf(p, "%lx %1024s", &c->addr, hex) != 2 || strlen(hex) % 2)
				die("manifest: a code line needs an address and hex bytes");
			c->len = strlen(hex) / 2;
			for (k = 0; k < c->len; k++)
				if (sscanf(hex + 2 * k, "%2hhx", &c->bytes[k]) != 1)
					die("manifest: a code line's bytes are not hex");
			ncodes++;
		} else if (!strcmp(word, "variant") || !strcmp(word, "trap")) {
			int *count = word[0] == 'v' ? &nvariants : &ntraps;

			if (*count == MAX_ITEMS)
				die("manifest: too many variants or traps");
			it = word[0] == 'v' ? &variants[*count] : &traps[*count];
			if (sscanf(p, "%95s %lx", it->name, &it->addr) != 2)
				die("manifest: variant and trap lines need a name and an address");
			(*count)++;
		} else {
			die("manifest: unknown line");
		}
	}
	if (!base || !size || !exec_size || !image_path[0] || !nvariants || !nns || !reps)
		die("manifest: base, size, exec, image, ns, reps and a variant are required");
}

static void map_image(void)
{
	FILE *f = fopen(image_path, "rb");
	void *at;

	if (!f)
		die("cannot open the image");
	at = mmap((void *)base, size, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (at != (void *)base)
		die("cannot map the image at its fixed address");
	if (fread(at, 1, size, f) != size)
		die("the image is shorter than its manifest says");
	fclose(f);
	if (mprotect(at, exec_size, PROT_READ | PROT_EXEC))
		die("cannot make the code executable");
}

/*
 * Each code line's bytes at their address, on pages of their own (int3
 * elsewhere), then executable: the return thunks sit where the kernel's do
 * relative to a 2 MiB boundary, far from the image.
 */
static void map_code(void)
{
	uintptr_t pages[2 * MAX_CODE];
	int npages = 0, k, j;

	for (k = 0; k < ncodes; k++) {
		uintptr_t page = codes[k].addr & ~4095UL;
		uintptr_t end = codes[k].addr + codes[k].len;

		for (; page < end; page += 4096) {
			void *at;

			for (j = 0; j < npages && pages[j] != page; j++)
				;
			if (j < npages)
				continue;
			if (npages == 2 * MAX_CODE)
				die("code lines span too many pages");
			at = mmap((void *)page, 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (at != (void *)page)
				die("cannot map a code page at its fixed address");
			memset(at, 0xcc, 4096);
			pages[npages++] = page;
		}
		memcpy((void *)codes[k].addr, codes[k].bytes, codes[k].len);
	}
	for (j = 0; j < npages; j++)
		if (mprotect((void *)pages[j], 4096, PROT_READ | PROT_EXEC))
			die("cannot make a code page executable");
	if (gs_base && syscall(SYS_arch_prctl, ARCH_SET_GS, gs_base))
		die("cannot set the GS base");
}

static inline uint64_t tsc_ordered(void)
{
	uint32_t lo, hi;

	asm volatile("lfence; rdtsc; lfence" : "=a" (lo), "=d" (hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* TSC ticks per second against CLOCK_MONOTONIC_RAW, over 200 ms. */
static double calibrate_tsc(void)
{
	struct timespec a, b;
	uint64_t t0, t1;
	double secs;

	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	t0 = tsc_ordered();
	do {
		clock_gettime(CLOCK_MONOTONIC_RAW, &b);
		secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	} while (secs < 0.2);
	t1 = tsc_ordered();
	return (t1 - t0) / secs;
}

/* A group of cycles and instructions in user space, or -1 with the reason printed. */
static int open_counters(void)
{
	struct perf_event_attr attr;
	int leader, fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_GROUP;
	leader = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (leader < 0) {
		printf("perf cycles: %s\n", strerror(errno));
		return -1;
	}
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, leader, 0);
	if (fd < 0) {
		printf("perf instructions: %s\n", strerror(errno));
		close(leader);
		return -1;
	}
	ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	return leader;
}

struct counts {
	uint64_t nr, cycles, instructions;
};

static void read_counters(int fd, struct counts *c)
{
	if (read(fd, c, sizeof(*c)) != sizeof(*c))
		die("cannot read the perf counters");
}

int main(void)
{
	struct sigaction sa;
	cpu_set_t set;
	int perf, v, i;
	int rep;

	read_manifest();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	map_image();
	map_code();

	if (cpu < 0)
		cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("cannot pin to the CPU");
	printf("cpu %d\n", cpu);

	perf = open_counters();
	printf("counter %s\n", perf < 0 ? "tsc" : "tsc+perf");
	printf("tsc_hz %.0f\n", calibrate_tsc());

	/* Repetition-major, so that a slow spell of the machine hits every variant alike. */
	for (rep = -(int)warmup; rep < (int)reps; rep++) {
		for (v = 0; v < nvariants; v++) {
			void (*loop)(unsigned long n) = (void (*)(unsigned long))variants[v].addr;

			running = variants[v].name;
			for (i = 0; i < nns; i++) {
				struct counts c0, c1;
				uint64_t t0, t1;

				if (perf >= 0)
					read_counters(perf, &c0);
				t0 = tsc_ordered();
				loop(ns[i]);
				t1 = tsc_ordered();
				if (perf >= 0)
					read_counters(perf, &c1);
				if (rep < 0)
					continue;
				printf("sample %s %lu %d %llu", variants[v].name, ns[i], rep,
				       (unsigned long long)(t1 - t0));
				if (perf >= 0)
					printf(" %llu %llu",
					       (unsigned long long)(c1.cycles - c0.cycles),
					       (unsigned long long)(c1.instructions - c0.instructions));
				printf("\n");
			}
		}
	}
	running = "(none)";
	return fflush(stdout) ? 2 : 0;
}
