"""Run by gdb (runner.binder.step_round_trip): attaches to a Binder guest stopped at its start,
lets it run to a round trip well inside the disabled state's timed loops, and single-steps it:
from one entry to binder_ioctl() to the fourth, three calls being one round trip. Writes every
instruction's address, one a line in hex. QEMU steps with interrupts and timers masked, so
nothing but the round trip's own code is in it."""
import os
import time

import gdb

PORT, ENTRY, SKIP, OUT = (os.environ[k] for k in ("TPBENCH_GDB_PORT", "TPBENCH_ENTRY",
                                                  "TPBENCH_SKIP", "TPBENCH_STEPS"))
CALLS_PER_ROUND_TRIP = 3
gdb.execute("set pagination off")
for attempt in range(50):     # QEMU may not listen yet
    try:
        gdb.execute(f"target remote 127.0.0.1:{PORT}")
        break
    except gdb.error:
        time.sleep(0.2)
else:
    raise gdb.GdbError(f"no gdb stub on port {PORT}")
gdb.execute(f"break *{ENTRY}")
gdb.execute(f"ignore 1 {SKIP}")
gdb.execute("continue")
gdb.execute("delete")
entry, calls, pcs = int(ENTRY, 16), 0, []
while True:
    pc = int(gdb.parse_and_eval("$pc")) & (2**64 - 1)
    if pc == entry:
        calls += 1
        if calls > CALLS_PER_ROUND_TRIP:
            break
    pcs.append(pc)
    gdb.execute("stepi", to_string=True)
with open(OUT + ".tmp", "w") as f:
    f.write("".join(f"{pc:x}\n" for pc in pcs))
os.rename(OUT + ".tmp", OUT)
gdb.execute("kill")
