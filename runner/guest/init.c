// SPDX-License-Identifier: GPL-2.0
/*
 * tpbench guest init, built against the kernel's own nolibc for every
 * architecture the project boots (Debian has no busybox-static for riscv64
 * or loong64). Kernel messages go to the console; results go to their own
 * channel (tpbench.results=<tty>), so the parser never sees them mixed.
 *
 * The init's own lines reach the console as kernel log records, one write to
 * /dev/kmsg per line, so that the kernel prints each whole between its own
 * messages. Written to the console directly, a line could be cut by kernel
 * output still being printed (7.3 prints the console from a thread of its own,
 * while KUnit's doctests report), and the parser would lose the KTAP line that
 * cut it. nolibc's printf() writes a line in pieces, so tell() formats into a
 * pipe and moves the line to /dev/kmsg in one write.
 *
 * Modes, from the kernel command line:
 *   tpbench.mode=sample  report the rust_sample event and dump the trace
 *   tpbench.mode=bench   load /tpbench.ko with each tpbench.arg=<a>; time the
 *                        recording state with its events enabled in tracefs;
 *                        copy its results from debugfs; then fire each variant
 *                        with the events off and on and copy the trace
 *   tpbench.mode=insmod  load /<name>.ko for each name of tpbench.load=<a>,<b>
 *                        in order, and report each one's status
 *   tpbench.mode=binder  run /binder (runner/guest/binder.c) with the Binder
 *                        driver's events off, then attached (the events of
 *                        tpbench.events=<tracefs system> enabled, tracing_on
 *                        0), then recording, and copy the records of its
 *                        counting pass
 */
#include <linux/reboot.h>

#define EVENT "/sys/kernel/tracing/events/rust_sample/rust_sample_loaded"
#define RESULTS_FILE "/sys/kernel/debug/tpbench/results"
#define CONTROL_FILE "/sys/kernel/debug/tpbench/control"
#define TRACING "/sys/kernel/tracing"
#define EVENTS_ENABLE TRACING "/events/tpbench/enable"
#define PARAMS "/sys/module/tpbench/parameters"
/* Calls per variant in the record check: more than the 16 transactions, so they wrap. */
#define RECORD_CALLS "20"

static char cmdline[4096];
static char modargs[2048];
static char load_list[512];
static char binder_events[64];
static char results_tty[64] = "/dev/ttyS1";
static char mode[32];
static int args_too_long;

static FILE *tell_file;
static int tell_in = -1;
static int kmsg = -1;

/* A line for the console: through /dev/kmsg once tell_start() has opened it. */
static __attribute__((format(printf, 1, 2))) void tell(const char *fmt, ...)
{
	/* A kernel log record holds at most 1024 bytes: a longer line goes out as it is. */
	static char line[1024];
	va_list args;
	ssize_t n;

	va_start(args, fmt);
	vfprintf(tell_file ? tell_file : stdout, fmt, args);
	va_end(args);
	if (!tell_file)
		return;
	n = read(tell_in, line, sizeof(line));
	if (n > 0 && line[n - 1] == '\n' && write(kmsg, line, n) == n)
		return;
	while (n > 0) {
		write(1, line, n);
		if (line[n - 1] == '\n')
			break;
		n = read(tell_in, line, sizeof(line));
	}
}

static void say(const char *msg)
{
	tell("tpbench-init: %s\n", msg);
}

/* Copies one file to an open descriptor; -1 if it cannot be read. */
static int copy_file(const char *path, int out)
{
	static char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		write(out, buf, n);
	close(fd);
	return 0;
}

static void put(int out, const char *s)
{
	write(out, s, strlen(s));
}

/* Writes a string to a file (tracefs, debugfs): 0, or the negative errno. */
static int write_file(const char *path, const char *s)
{
	int ret = 0;
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0 || write(fd, s, strlen(s)) < 0)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret)
		tell("tpbench-init: writing '%s' to %s failed (errno %d)\n", s, path, -ret);
	return ret;
}

static void tell_start(void)
{
	int fds[2];

	/* Else /dev/kmsg takes 10 lines per 5 seconds from a writer. The newline is required. */
	write_file("/proc/sys/kernel/printk_devkmsg", "on\n");
	kmsg = open("/dev/kmsg", O_WRONLY);
	if (kmsg >= 0 && !pipe(fds)) {
		tell_in = fds[0];
		tell_file = fdopen(fds[1], "w");
	}
}

/* The first line of a file into buf (size len), without its newline; "" if unreadable. */
static const char *read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY);

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (strchr(buf, '\n'))
		*strchr(buf, '\n') = '\0';
	return buf;
}

/* Appends `value` of a "key=value" word to `dst` (size `len`), space-separated. */
static void append_word(char *dst, size_t len, const char *value, size_t vlen)
{
	size_t used = strlen(dst);

	if (used + vlen + 2 > len) {
		tell("tpbench-init: the module arguments do not fit in %lu bytes\n",
		       (unsigned long)len);
		args_too_long = 1;
		return;
	}
	if (used)
		dst[used++] = ' ';
	memcpy(dst + used, value, vlen);
	dst[used + vlen] = '\0';
}

static void parse_cmdline(void)
{
	char *word = cmdline;

	read_line("/proc/cmdline", cmdline, sizeof(cmdline));
	while (*word) {
		size_t len = 0;

		while (word[len] && word[len] != ' ')
			len++;
		if (!strncmp(word, "tpbench.mode=", 13) && len - 13 < sizeof(mode)) {
			memcpy(mode, word + 13, len - 13);
			mode[len - 13] = '\0';
		} else if (!strncmp(word, "tpbench.results=", 16) && len - 16 + 6 < sizeof(results_tty)) {
			memcpy(results_tty, "/dev/", 5);
			memcpy(results_tty + 5, word + 16, len - 16);
			results_tty[len - 16 + 5] = '\0';
		} else if (!strncmp(word, "tpbench.load=", 13) && len - 13 < sizeof(load_list)) {
			memcpy(load_list, word + 13, len - 13);
			load_list[len - 13] = '\0';
		} else if (!strncmp(word, "tpbench.events=", 15) && len - 15 < sizeof(binder_events)) {
			memcpy(binder_events, word + 15, len - 15);
			binder_events[len - 15] = '\0';
		} else if (!strncmp(word, "tpbench.arg=", 12)) {
			append_word(modargs, sizeof(modargs), word + 12, len - 12);
		}
		word += len;
		while (*word == ' ')
			word++;
	}
}

static void sample(int out)
{
	struct stat st;
	char enable[16];

	put(out, "tpbench: sample begin\n");
	put(out, stat(EVENT, &st) == 0 ? "event_exists=yes\n" : "event_exists=no\n");
	put(out, "event_enable=");
	put(out, read_line(EVENT "/enable", enable, sizeof(enable)));
	put(out, "\ntpbench: trace begin\n");
	if (copy_file("/sys/kernel/tracing/trace", out) < 0)
		tell("tpbench-init: cannot read the trace (errno %d)\n", errno);
	put(out, "tpbench: trace end\n");
}

/* The next comma-separated word of `s` (or of the string before, with NULL), as strtok. */
static char *strtok_comma(char *s)
{
	static char *next;
	char *word;

	if (s)
		next = s;
	if (!next || !*next)
		return NULL;
	word = next;
	next = strchr(word, ',');
	if (next)
		*next++ = '\0';
	return word;
}

/* Loads a module file: 0, or the negative errno (of open, or of the module's init). */
static long load_module(const char *path, const char *args)
{
	long ret;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	ret = my_syscall3(__NR_finit_module, fd, args, 0);
	close(fd);
	return ret;
}

/* Whether the comma-separated list has the word. */
static int has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p;

	for (p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, word, len) && (p[len] == ',' || !p[len]))
			return 1;
	return 0;
}

/*
 * With the module's events off ("0") or on ("1"), calls each variant of the
 * comma-separated list RECORD_CALLS times, after a trace_marker line that
 * names it, and copies the trace to the results channel between
 * "tpbench: records events=<on> begin" and "tpbench: records end". The
 * runner checks that each call left its records, with the right fields,
 * and that nothing was recorded with the events off.
 */
static void fire_and_copy_trace(int out, const char *variant_list, const char *on)
{
	char list[512], marker[128], cmd[64];
	char *name;

	strlcpy(list, variant_list, sizeof(list));
	write_file(EVENTS_ENABLE, on);
	write_file(TRACING "/trace", "");	/* empties the ring buffer */
	for (name = strtok_comma(list); name; name = strtok_comma(NULL)) {
		strlcpy(marker, "tpbench-fire variant=", sizeof(marker));
		strlcat(marker, name, sizeof(marker));
		strlcat(marker, " n=" RECORD_CALLS, sizeof(marker));
		strlcpy(cmd, "fire ", sizeof(cmd));
		strlcat(cmd, name, sizeof(cmd));
		strlcat(cmd, " " RECORD_CALLS, sizeof(cmd));
		write_file(TRACING "/trace_marker", marker);
		write_file(CONTROL_FILE, cmd);
	}
	write_file(EVENTS_ENABLE, "0");
	put(out, "tpbench: records events=");
	put(out, on);
	put(out, " begin\n");
	if (copy_file(TRACING "/trace", out) < 0)
		tell("tpbench-init: cannot read the trace (errno %d)\n", errno);
	put(out, "tpbench: records end\n");
}

/*
 * What the kernel chose against each CPU vulnerability for QEMU's CPU model, as
 * on real hardware: one console line per file of 6.12's
 * /sys/devices/system/cpu/vulnerabilities that this kernel has.
 */
static void report_vulnerabilities(void)
{
	static const char *const names[] = {
		"gather_data_sampling", "itlb_multihit", "l1tf", "mds", "meltdown",
		"mmio_stale_data", "reg_file_data_sampling", "retbleed",
		"spec_rstack_overflow", "spec_store_bypass", "spectre_v1", "spectre_v2",
		"srbds", "tsx_async_abort", "indirect_target_selection", "tsa", "vmscape",
	};
	char path[128], line[256];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		strcpy(path, "/sys/devices/system/cpu/vulnerabilities/");
		strncat(path, names[i], sizeof(path) - strlen(path) - 1);
		if (read_line(path, line, sizeof(line))[0])
			tell("tpbench-vulnerability %s: %s\n", names[i], line);
	}
}

static void bench(int out)
{
	char line[512];
	long ret;

	report_vulnerabilities();

	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	tell("tpbench-init: insmod /tpbench.ko %s\n", modargs);
	if (args_too_long) {
		put(out, "tpbench: insmod failed\n");
		return;
	}
	ret = load_module("/tpbench.ko", modargs);
	if (ret < 0) {
		tell("tpbench-init: insmod failed with status %ld\n", -ret);
		put(out, "tpbench: insmod failed\n");
		return;
	}
	if (has_word(read_line(PARAMS "/states", line, sizeof(line)), "recording")) {
		/* As a user turns tracing on: the module times while its events record. */
		if (!write_file(EVENTS_ENABLE, "1"))
			write_file(CONTROL_FILE, "time recording");
		write_file(EVENTS_ENABLE, "0");
	}
	if (copy_file(RESULTS_FILE, out) < 0)
		tell("tpbench-init: cannot read %s (errno %d)\n", RESULTS_FILE, errno);
	read_line(PARAMS "/variants", line, sizeof(line));
	/* The records' pointer as an address, which the runner can check. */
	write_file(TRACING "/options/hash-ptr", "0");
	fire_and_copy_trace(out, line, "0");
	fire_and_copy_trace(out, line, "1");
	my_syscall2(__NR_delete_module, "tpbench", O_NONBLOCK);
}

/*
 * One line per module on the results channel, "insmod <name> <errno>": 0 when
 * it loaded, else why not (a module_init() that fails returns its error here).
 */
static void insmod_all(int out)
{
	char path[sizeof(load_list) + 4];
	char *name = strtok_comma(load_list);

	for (; name; name = strtok_comma(NULL)) {
		long ret;

		strcpy(path, "/");
		strncat(path, name, sizeof(path) - 5);
		strncat(path, ".ko", 3);
		ret = load_module(path, "");
		tell("tpbench-init: insmod %s: %ld\n", path, ret);
		put(out, "insmod ");
		put(out, name);
		put(out, " ");
		put(out, ltoa(-ret));
		put(out, "\n");
	}
}

/* Guest seconds /binder may take; under -icount with sleep=off a hang costs little waiting. */
#define BINDER_TIMEOUT_MS 60000

/*
 * Runs /binder <arg> with the results channel as its standard output, between
 * "tpbench-binder state=<state> begin" and "... end status=<s>": 0 when it
 * finished well, else its wait status, or "hung" when it had to be killed.
 */
static void run_binder(int out, const char *state, const char *arg)
{
	char *argv[] = { "/binder", (char *)arg, NULL };
	char *envp[] = { NULL };
	unsigned int waited;
	int status = -1;
	pid_t pid;

	put(out, "tpbench-binder state=");
	put(out, state);
	put(out, " begin\n");
	pid = fork();
	if (pid == 0) {
		/* Its own process group: a hung workload is killed with its server. */
		setpgid(0, 0);
		dup2(out, 1);
		execve(argv[0], argv, envp);
		tell("tpbench-init: cannot run /binder (errno %d)\n", errno);
		exit(127);
	}
	for (waited = 0; pid > 0 && waited < BINDER_TIMEOUT_MS; waited += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		msleep(10);
	}
	put(out, "tpbench-binder state=");
	put(out, state);
	if (pid > 0 && waited >= BINDER_TIMEOUT_MS) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		put(out, " end status=hung\n");
		return;
	}
	put(out, " end status=");
	put(out, ltoa(pid < 0 ? -errno : status));
	put(out, "\n");
}

static void binder(int out)
{
	char enable[sizeof(TRACING) + sizeof(binder_events) + 16];

	report_vulnerabilities();
	run_binder(out, "disabled", "time");
	if (!binder_events[0]) {
		tell("tpbench-init: no tpbench.events= names the driver's events\n");
		return;
	}
	strcpy(enable, TRACING "/events/");
	strlcat(enable, binder_events, sizeof(enable));
	strlcat(enable, "/enable", sizeof(enable));
	/*
	 * Attached: every event's probe in place, the ring buffer off, so each
	 * site calls its probe, which finds nothing to record into. Then, with
	 * the buffer on, recording.
	 */
	if (write_file(TRACING "/tracing_on", "0") || write_file(enable, "1"))
		return;
	run_binder(out, "attached", "time");
	if (write_file(TRACING "/tracing_on", "1"))
		return;
	run_binder(out, "recording", "time");
	write_file(TRACING "/trace", "");	/* empties the ring buffer */
	run_binder(out, "count", "count");
	write_file(enable, "0");
	put(out, "tpbench: records begin\n");
	if (copy_file(TRACING "/trace", out) < 0)
		tell("tpbench-init: cannot read the trace (errno %d)\n", errno);
	put(out, "tpbench: records end\n");
}

int main(void)
{
	int out;

	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	tell_start();
	say("started");

	parse_cmdline();
	out = open(results_tty, O_WRONLY | O_NOCTTY);
	if (out < 0)
		tell("tpbench-init: cannot open %s (errno %d)\n", results_tty, errno);
	else if (!strcmp(mode, "sample"))
		sample(out);
	else if (!strcmp(mode, "bench"))
		bench(out);
	else if (!strcmp(mode, "insmod"))
		insmod_all(out);
	else if (!strcmp(mode, "binder"))
		binder(out);
	else
		tell("tpbench-init: unknown tpbench.mode='%s'\n", mode);
	if (out >= 0)
		close(out);

	say("done");
	my_syscall0(__NR_sync);
	reboot(LINUX_REBOOT_CMD_RESTART);
	return 0;
}
