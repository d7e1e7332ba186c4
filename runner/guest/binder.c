// SPDX-License-Identifier: GPL-2.0
/*
 * tpbench's Binder workload, run by the guest init (tpbench.mode=binder) as
 * /binder with its results channel as standard output. Built, as the init
 * is, against the kernel's own nolibc and UAPI headers.
 *
 * It mounts binderfs, makes a child process the context manager, and times
 * round trips from the parent to it: BC_TRANSACTION through
 * BINDER_WRITE_READ, the child's BR_TRANSACTION, its BC_REPLY with as many
 * bytes as it got, and the parent's BR_REPLY; each side frees its buffer
 * with its next write, as libbinder does. For each payload size it times
 * each count of round trips REPS times with the counter the guest's user
 * space can read, and prints one line each:
 *
 *   tpbench-binder payload=<bytes> n=<round trips> rep=<i> ticks=<counter ticks>
 *
 * after one line "tpbench-binder counter_hz=<Hz>" where the architecture
 * lets user space read its counter's frequency (arm's CNTFRQ). The runner
 * fits the slope over n; under TCG -icount shift=0 a guest nanosecond is an
 * instruction, so a tick is 10^9/Hz instructions (x86_64's TSC counts the
 * nanoseconds themselves). A line starting
 * "tpbench-binder error:" names what failed; "tpbench-binder done" ends a
 * run that completed.
 *
 * With the argument "count" it times nothing: it makes COUNT_TRIPS round
 * trips of the smallest payload between two trace_marker lines, so that the
 * runner can count the events one round trip records.
 */
#include <linux/android/binder.h>
#include <linux/android/binderfs.h>
#include <linux/sched.h>

#define BINDERFS "/dev/binderfs"
#define DEVICE BINDERFS "/binder"
#define MAP_BYTES (1024 * 1024)
#define CODE_PING 1
#define CODE_QUIT 2
#define REPS 5
#define WARM_TRIPS 100
#define COUNT_TRIPS 10
#define TRACE_MARKER "/sys/kernel/tracing/trace_marker"

static const unsigned int payloads[] = { 16, 4096 };
static const unsigned int counts[] = { 10, 100 };

/* The counter user space can read: a tick is a fixed number of instructions under -icount. */
static inline unsigned long ticks(void)
{
	unsigned long t;
#if defined(__x86_64__)
	unsigned int lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	t = ((unsigned long)hi << 32) | lo;
#elif defined(__aarch64__)
	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(t) :: "memory");
#elif defined(__riscv)
	__asm__ volatile("rdtime %0" : "=r"(t) :: "memory");
#elif defined(__loongarch__)
	__asm__ volatile("rdtime.d %0, $zero" : "=r"(t) :: "memory");
#elif defined(__arm__)
	unsigned int lo, hi;

	__asm__ volatile("isb; mrrc p15, 1, %0, %1, c14" : "=r"(lo), "=r"(hi) :: "memory");
	t = ((unsigned long long)hi << 32) | lo;
#else
#error "no user-space counter for this architecture"
#endif
	return t;
}

/* The counter's ticks per second, or 0 where user space cannot read it. */
static unsigned long counter_hz(void)
{
	unsigned long hz = 0;
#if defined(__aarch64__)
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
#elif defined(__arm__)
	unsigned int frq;

	__asm__ volatile("mrc p15, 0, %0, c14, c0, 0" : "=r"(frq));
	hz = frq;
#endif
	return hz;
}

static void fail(const char *what, int err)
{
	printf("tpbench-binder error: %s failed (errno %d)\n", what, err);
	exit(1);
}

/* One side of the connection: the device, its mapping, and the command buffer. */
struct side {
	int fd;
	unsigned char out[256];
	size_t out_len;
	unsigned char in[256];
	binder_uintptr_t to_free;	/* the buffer the last return brought, freed with the next write */
};

static void open_side(struct side *s)
{
	struct binder_version version;

	s->fd = open(DEVICE, O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		fail("open " DEVICE, errno);
	if (ioctl(s->fd, BINDER_VERSION, &version) < 0)
		fail("BINDER_VERSION", errno);
	if (version.protocol_version != BINDER_CURRENT_PROTOCOL_VERSION)
		fail("the protocol version check", EPROTO);
	if (mmap(NULL, MAP_BYTES, PROT_READ, MAP_PRIVATE, s->fd, 0) == MAP_FAILED)
		fail("mmap of " DEVICE, errno);
	s->out_len = 0;
	s->to_free = 0;
}

static void put_word(struct side *s, const void *p, size_t len)
{
	memcpy(s->out + s->out_len, p, len);
	s->out_len += len;
}

static void put_command(struct side *s, __u32 cmd, const void *arg, size_t len)
{
	put_word(s, &cmd, sizeof(cmd));
	put_word(s, arg, len);
}

/* Queues BC_FREE_BUFFER for the buffer the last BR_TRANSACTION or BR_REPLY brought. */
static void free_last(struct side *s)
{
	if (s->to_free)
		put_command(s, BC_FREE_BUFFER, &s->to_free, sizeof(s->to_free));
	s->to_free = 0;
}

/*
 * Writes what is queued and reads until a transaction or a reply arrives; returns
 * which (BR_TRANSACTION or BR_REPLY) and its data in *txn.
 */
static __u32 exchange(struct side *s, struct binder_transaction_data *txn)
{
	struct binder_write_read bwr;
	size_t pos;
	__u32 cmd;

	memset(&bwr, 0, sizeof(bwr));
	bwr.write_buffer = (binder_uintptr_t)s->out;
	bwr.write_size = s->out_len;
	for (;;) {
		bwr.read_buffer = (binder_uintptr_t)s->in;
		bwr.read_size = sizeof(s->in);
		bwr.read_consumed = 0;
		if (ioctl(s->fd, BINDER_WRITE_READ, &bwr) < 0)
			fail("BINDER_WRITE_READ", errno);
		s->out_len = 0;
		bwr.write_size = 0;
		bwr.write_consumed = 0;
		for (pos = 0; pos + sizeof(cmd) <= bwr.read_consumed;) {
			memcpy(&cmd, s->in + pos, sizeof(cmd));
			pos += sizeof(cmd);
			switch (cmd) {
			case BR_NOOP:
			case BR_TRANSACTION_COMPLETE:
			case BR_SPAWN_LOOPER:
				break;
			case BR_TRANSACTION:
			case BR_REPLY:
				memcpy(txn, s->in + pos, sizeof(*txn));
				s->to_free = txn->data.ptr.buffer;
				return cmd;
			case BR_DEAD_REPLY:
				fail("the transaction (BR_DEAD_REPLY)", EPIPE);
			case BR_FAILED_REPLY:
				fail("the transaction (BR_FAILED_REPLY)", EIO);
			default:
				printf("tpbench-binder error: unexpected return 0x%x\n", cmd);
				exit(1);
			}
		}
	}
}

static void send_transaction(struct side *s, __u32 bc, __u32 code, const void *data, size_t len)
{
	struct binder_transaction_data txn;

	memset(&txn, 0, sizeof(txn));
	txn.target.handle = 0;		/* the context manager */
	txn.code = code;
	txn.data_size = len;
	txn.data.ptr.buffer = (binder_uintptr_t)data;
	put_command(s, bc, &txn, sizeof(txn));
}

/* The context manager: replies to each transaction with as many bytes as it brought. */
static void serve(int ready)
{
	static unsigned char reply[4096];
	struct binder_transaction_data txn;
	struct side s;
	__u32 cmd;

	open_side(&s);
	if (ioctl(s.fd, BINDER_SET_CONTEXT_MGR, 0) < 0)
		fail("BINDER_SET_CONTEXT_MGR", errno);
	put_command(&s, BC_ENTER_LOOPER, NULL, 0);
	write(ready, "r", 1);
	close(ready);
	for (;;) {
		cmd = exchange(&s, &txn);
		if (cmd != BR_TRANSACTION)
			fail("the server's read (not a transaction)", EPROTO);
		free_last(&s);
		send_transaction(&s, BC_REPLY, 0, reply,
				 txn.data_size < sizeof(reply) ? txn.data_size : sizeof(reply));
		if (txn.code == CODE_QUIT) {
			/* Only the write: the reply goes out, nothing more is read. */
			struct binder_write_read bwr = {
				.write_buffer = (binder_uintptr_t)s.out,
				.write_size = s.out_len,
			};

			if (ioctl(s.fd, BINDER_WRITE_READ, &bwr) < 0)
				fail("the last reply", errno);
			exit(0);
		}
	}
}

static void round_trip(struct side *s, __u32 code, const void *data, size_t len)
{
	struct binder_transaction_data txn;

	free_last(s);
	send_transaction(s, BC_TRANSACTION, code, data, len);
	if (exchange(s, &txn) != BR_REPLY)
		fail("the client's read (not a reply)", EPROTO);
	if (txn.data_size != len)
		fail("the reply's size check", EMSGSIZE);
}

static void mark(const char *line)
{
	int fd = open(TRACE_MARKER, O_WRONLY);

	if (fd < 0 || write(fd, line, strlen(line)) < 0)
		fail("writing " TRACE_MARKER, errno);
	close(fd);
}

static void time_round_trips(struct side *s)
{
	static unsigned char payload[4096];
	unsigned int p, c, rep, i;
	unsigned long t0, t1;

	if (counter_hz())
		printf("tpbench-binder counter_hz=%lu\n", counter_hz());
	memset(payload, 0x5a, sizeof(payload));
	for (p = 0; p < sizeof(payloads) / sizeof(payloads[0]); p++) {
		/* First-time faults and allocations happen here, not in a timed loop. */
		for (i = 0; i < WARM_TRIPS; i++)
			round_trip(s, CODE_PING, payload, payloads[p]);
		for (rep = 0; rep < REPS; rep++) {
			for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
				t0 = ticks();
				for (i = 0; i < counts[c]; i++)
					round_trip(s, CODE_PING, payload, payloads[p]);
				t1 = ticks();
				printf("tpbench-binder payload=%u n=%u rep=%u ticks=%lu\n",
				       payloads[p], counts[c], rep, t1 - t0);
			}
		}
	}
}

static void count_round_trips(struct side *s)
{
	static unsigned char payload[16];
	unsigned int i;

	round_trip(s, CODE_PING, payload, sizeof(payload));	/* warm the path */
	mark("tpbench-binder-count begin");
	for (i = 0; i < COUNT_TRIPS; i++)
		round_trip(s, CODE_PING, payload, sizeof(payload));
	mark("tpbench-binder-count end");
	printf("tpbench-binder count trips=%u\n", COUNT_TRIPS);
}

/*
 * Both processes run SCHED_FIFO at one priority (the server inherits it): a
 * wakeup never preempts the waker, so each round trip takes one path through
 * the scheduler. Under the fair class whether the woken side preempts depends
 * on the two tasks' history, and a whole repetition could take one path or
 * the other, some hundreds of instructions per round trip apart.
 */
static void run_fifo(void)
{
	int priority = 1;	/* struct sched_param: one int */
	long ret = my_syscall3(__NR_sched_setscheduler, 0, SCHED_FIFO, &priority);

	if (ret < 0)
		fail("sched_setscheduler SCHED_FIFO", -ret);
}

int main(int argc, char **argv)
{
	struct side s;
	int fds[2], status;
	char ready;
	pid_t server;

	run_fifo();
	mkdir(BINDERFS, 0755);
	if (mount("binder", BINDERFS, "binder", 0, NULL) < 0)
		fail("mount -t binder (no binderfs in this kernel?)", errno);
	if (pipe(fds) < 0)
		fail("pipe", errno);
	server = fork();
	if (server < 0)
		fail("fork", errno);
	if (server == 0) {
		close(fds[0]);
		serve(fds[1]);
	}
	close(fds[1]);
	if (read(fds[0], &ready, 1) != 1)
		fail("the server's start", ECHILD);
	open_side(&s);
	if (argc > 1 && !strcmp(argv[1], "count"))
		count_round_trips(&s);
	else
		time_round_trips(&s);
	round_trip(&s, CODE_QUIT, NULL, 0);
	if (waitpid(server, &status, 0) != server || !WIFEXITED(status) || WEXITSTATUS(status))
		fail("the server's exit", ECHILD);
	close(s.fd);
	umount2(BINDERFS, 0);
	printf("tpbench-binder done\n");
	return 0;
}
