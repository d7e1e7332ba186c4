"""Faults a long run meets, made for real: a full file system (a small tmpfs mounted here, as
root, as CI runs), a runner killed with SIGKILL, a process gone. Each gets one message, leaves
no temporary file, and leaves the run marked with its cause."""

import contextlib
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis import load
from analysis import __main__ as cli
from common import disk, messages, rundir
from runner import bench, qemu
from tests.conftest import FIXTURES

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@contextlib.contextmanager
def tmpfs(where: Path, size: str):
    """A tmpfs of `size` mounted at `where`, unmounted afterwards whatever happens."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tpbench-test", str(where)],
                   check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@needs_root
def test_a_write_to_a_full_disk_names_the_file_and_the_space_and_leaves_no_temporary(tmp_path):
    with tmpfs(tmp_path / "small", "64k") as small:
        target = small / "samples.csv"
        with pytest.raises(disk.DiskFault) as e:
            disk.write_atomically(target, "x" * 200_000)
        words = str(e.value)
        assert words.startswith(f"cannot write {target}: No space left on device; {small} has ")
        assert "free space there" in words and "TPBENCH_CACHE" in words
        assert list(small.iterdir()) == []       # neither the file nor its temporary


@needs_root
def test_a_run_that_fills_its_disk_still_says_why_it_stopped(tmp_path):
    """The samples do not fit; the context, written in place after, says why."""
    with tmpfs(tmp_path / "small", "64k") as run:
        context = {"complete": False, "incomplete_reason": "running"}
        (run / "context.json").write_text(json.dumps(context))
        rows = [dict(arch="x86_64", config="jump_label", accel="tcg", variant="c_trace",
                     state="disabled", n=10**6, rep=i, cycles=10**9) for i in range(4000)]
        with pytest.raises(disk.DiskFault, match="samples.csv: No space left on device"):
            bench.close_run(run, context, rows)
        after = json.loads((run / "context.json").read_text())
        assert after["complete"] is False
        assert "No space left on device" in after["incomplete_reason"]
        assert sorted(p.name for p in run.iterdir()) == ["context.json"]


@needs_root
def test_a_step_is_refused_before_it_starts_when_the_disk_is_too_small(tmp_path):
    with tmpfs(tmp_path / "small", "1m") as small:
        with pytest.raises(disk.DiskFault, match=r"building x86_64 needs about 1.1 GB free, "
                                                 rf"and {small} has 1.0 MB free of 1.0 MB"):
            disk.require_space(small, "kernel", "building x86_64")


@needs_root
def test_the_report_on_a_full_disk_is_one_message(tmp_path, monkeypatch, capsys):
    """REPORT.md does not fit: one line naming it, exit 2, no traceback, no temporary."""
    run = tmp_path / "data" / "run-short"
    import shutil
    shutil.copytree(FIXTURES / "run-short", run)
    with tmpfs(tmp_path / "repo", "4k") as repo:
        (repo / "filler").write_bytes(b"x" * 4096)
        monkeypatch.setattr(cli, "REPO", repo)
        assert cli.main(["report", "--run", str(run), "--allow-incomplete"]) == 2
        err = capsys.readouterr().err
        assert f"cannot write {repo / 'REPORT.md'}: No space left on device" in err
        assert "Traceback" not in err
        assert sorted(p.name for p in repo.iterdir()) == ["filler"]


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_run_whose_runner_is_gone_is_named_interrupted(tmp_path):
    """context.json still says running, but the process that ran it is gone: the next make
    bench marks it interrupted, and make report says so instead of "running"."""
    run = tmp_path / "data" / "20990101T000000Z-0000000"
    run.mkdir(parents=True)
    context = json.loads((FIXTURES / "run-short" / "context.json").read_text())
    context.update(complete=False, incomplete_reason="running",
                   runner={"pid": dead_pid(), "boot_id": rundir.boot_id()})
    (run / "context.json").write_text(json.dumps(context))
    (run / "samples.csv").write_text((FIXTURES / "run-short" / "samples.csv").read_text())
    with pytest.raises(SystemExit, match=r"incomplete \(interrupted: its runner \(pid \d+\) "
                                         "ended without closing the run"):
        load.load_run(run, allow_incomplete=False)
    assert bench.close_orphans(tmp_path / "data") == [run.name]
    assert json.loads((run / "context.json").read_text())["incomplete_reason"].startswith(
        "interrupted: its runner")
    assert bench.close_orphans(tmp_path / "data") == []      # once


def test_a_run_whose_runner_lives_is_left_alone():
    alive = {"incomplete_reason": "running", "runner": bench.runner_identity()}
    assert rundir.runner_gone(alive) is None
    other_boot = {"incomplete_reason": "running", "runner": {"pid": 1, "boot_id": "x"}}
    assert "machine restarted" in rundir.runner_gone(other_boot)
    assert rundir.runner_gone({"complete": True, "incomplete_reason": None}) is None


def test_a_child_dies_with_the_runner_that_started_it(tmp_path):
    """A parent starts a long child with qemu.die_with_parent, as the runner starts QEMU, and
    is killed with SIGKILL: the child does not outlive it."""
    script = ("import subprocess, sys, time\n"
              "from runner import qemu\n"
              "p = subprocess.Popen(['sleep', '60'], preexec_fn=qemu.die_with_parent)\n"
              "print(p.pid, flush=True)\n"
              "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parent.parent)
    child = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists() and \
            "Z" not in Path(f"/proc/{child}/stat").read_text().split()[2]:
        time.sleep(0.05)
    stat = Path(f"/proc/{child}/stat")
    assert not stat.exists() or stat.read_text().split()[2] == "Z", "the child outlived its parent"


# --- with a kernel: the runner itself, faulted mid-run ------------------------------------

def qemu_processes(tag: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", f"qemu-system.*{tag}"], capture_output=True, text=True)
    return out.stdout.split()


def start_runner(data: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "runner", "bench", "--archs", "x86_64", "--configs", "jump_label",
         "--accel", "tcg", "--compare-kernels", "", "--ns", "1,10,100,1000", "--reps", "20",
         "--data", str(data)],
        cwd=Path(__file__).resolve().parent.parent, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def wait_for_guest(runner: subprocess.Popen, data: Path, timeout: float = 300) -> Path:
    """Waits until the runner's guest is running (its console log has its first lines)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        logs = list(data.glob("*/console-x86_64-jump_label.log"))
        if logs and logs[0].stat().st_size > 2000:
            return logs[0].parent
        assert runner.poll() is None, runner.stderr.read()
        time.sleep(0.2)
    raise AssertionError("the guest did not start")


def test_a_runner_killed_mid_guest_takes_its_guest_with_it(kernels, tmp_path):
    data = tmp_path / "data"
    runner = start_runner(data)
    run = wait_for_guest(runner, data)
    assert qemu_processes(str(run))
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    deadline = time.monotonic() + 5
    while qemu_processes(str(run)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not qemu_processes(str(run)), "QEMU outlived its runner"
    # Whatever the run had when it was killed, make report names it interrupted.
    with pytest.raises((SystemExit, Exception), match="interrupted: its runner"):
        load.load_run(run, allow_incomplete=False)
    assert run.name in bench.close_orphans(data)


def fill(path: Path, size: int) -> None:
    """Writes up to `size` bytes; the runner writing meanwhile may fill the disk first, which
    is the point (a race seen once in CI: ENOSPC here, not in the runner)."""
    try:
        path.write_bytes(b"\0" * size)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise


@needs_root
def test_a_disk_that_fills_under_a_guest_stops_the_run_with_one_message(kernels, tmp_path):
    """Enough room when the run starts; then another writer fills the disk while the guest
    runs: the runner says so in one line, keeps what it had, leaves no temporary file and
    no QEMU."""
    with tmpfs(tmp_path / "data", "300m") as data:
        runner = start_runner(data)
        run = wait_for_guest(runner, data)
        free, _ = disk.free_and_total(data)
        fill(data / "filler", free - (64 << 10))
        _, err = runner.communicate(timeout=300)
        assert runner.returncode == 2, err
        errors = [line for line in err.splitlines() if "error" in line]
        assert len(errors) == 1 and "no space left" in errors[0].lower(), err
        assert "Traceback" not in err
        assert not list(run.glob(".*.tmp"))
        ctx = json.loads((run / "context.json").read_text())
        assert ctx["complete"] is False and "space" in ctx["incomplete_reason"].lower()
        assert not qemu_processes(str(run))


@needs_root
def test_a_cache_entry_cut_by_a_full_disk_is_not_taken_for_made(source_tree, tmp_path,
                                                               monkeypatch):
    """The guest's init built into a cache on a disk too small for its headers: the build
    fails, and neither the entry nor its scratch directory is left for a later run."""
    from runner import config as cfg
    with tmpfs(tmp_path / "cache", "2m") as cache:
        monkeypatch.setattr(cfg, "cache_root", lambda: cache)
        with pytest.raises((messages.Failure, OSError)):
            qemu.guest_init(source_tree, cfg.ARCHS["x86_64"])
        assert [p.name for p in cache.iterdir() if p.name.startswith("init-")] == []


@needs_root
def test_an_analysis_whose_data_link_leads_to_a_full_disk_names_the_file_and_that_disk(
        tmp_path, monkeypatch, capsys):
    """data/ a link to a full file system: the one line names the file the analysis could not
    write and the free space where the link leads, not the working directory's (issue 33)."""
    from analysis import __main__ as analysis_cli
    with tmpfs(tmp_path / "full", "1m") as full:
        shutil.copytree(FIXTURES / "run-short", full / "run")
        with contextlib.suppress(OSError), open(full / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 65536)
        (tmp_path / "data").symlink_to(full)
        run = tmp_path / "data" / "run"
        monkeypatch.setattr(analysis_cli, "REPO", tmp_path)
        assert analysis_cli.main(["report", "--run", str(run), "--allow-incomplete"]) == 2
        words = capsys.readouterr().err.strip()
        # The run is named as the analysis resolved it: where the link leads.
        assert words.startswith(f"analysis: cannot write {full}/run/summary.csv: No space "
                                f"left on device; {full}/run has "), words
        assert "\n" not in words
        # A path through the link is named with where it leads.
        assert disk.where_words(run / "summary.csv").startswith(f"{run} (on {full}/run) has ")
