"""The runner's pure parts and its process handling, without a kernel (QEMU faked)."""

import dataclasses
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from common import console, messages
from runner import __main__ as cli
from runner import config as cfg
from runner import kernel, proc, qemu, roots

X86 = cfg.ARCHS["x86_64"]


def test_parse_kconfig_reads_set_and_unset():
    text = "# comment\nCONFIG_A=y\nCONFIG_B=\"x y\"\n# CONFIG_C is not set\n"
    assert cfg.parse_kconfig(text) == {"CONFIG_A": "y", "CONFIG_B": '"x y"', "CONFIG_C": "n"}


def test_missing_options_names_what_did_not_survive():
    wanted = {"CONFIG_A": "y", "CONFIG_B": "y", "CONFIG_C": "n"}
    dotconfig = "CONFIG_A=y\n# CONFIG_B is not set\n"
    assert cfg.missing_options(wanted, dotconfig) == ["CONFIG_B"]
    assert cfg.missing_options(wanted, dotconfig + "CONFIG_C=y\n") == ["CONFIG_B", "CONFIG_C"]


def wanted_options(arch, config, profile) -> dict[str, str]:
    wanted = {}
    for p in cfg.fragment_paths(arch, config, profile):
        wanted.update(cfg.parse_kconfig(p.read_text()))
    return wanted


def test_fragments_request_what_the_issue_needs():
    for kc in cfg.KERNEL_CONFIGS.values():
        for profile in cfg.PROFILES.values():
            wanted = wanted_options(X86, kc, profile)
            for opt in ("RUST", "TRACEPOINTS", "EVENT_TRACING", "MODULES", "MODULE_UNLOAD",
                        "SERIAL_8250_CONSOLE", "BLK_DEV_INITRD", "DEBUG_FS",
                        "SAMPLE_RUST_PRINT"):
                assert wanted[f"CONFIG_{opt}"] == "y", opt
    distro = wanted_options(X86, cfg.KERNEL_CONFIGS["jump_label"], cfg.PROFILES["distro"])
    tiny = wanted_options(X86, cfg.KERNEL_CONFIGS["jump_label"], cfg.PROFILES["tiny"])
    assert distro["CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE"] == "y"
    assert tiny["CONFIG_CC_OPTIMIZE_FOR_SIZE"] == "y" and tiny["CONFIG_FUNCTION_TRACER"] == "n"
    # The profile's fragments come before the config's: jump_label decides CONFIG_JUMP_LABEL.
    assert cfg.fragment_paths(X86, cfg.KERNEL_CONFIGS["no_jump_label"],
                              cfg.PROFILES["distro"])[-1].name == "no_jump_label.config"
    assert cfg.parse_kconfig((cfg.CONFIGS / "no_jump_label.config").read_text()) == \
        {"CONFIG_JUMP_LABEL": "n"}


DEBIAN_CONFIGS = Path("/usr/src/linux-config-6.12")


def test_the_distro_profile_is_debians_own_config():
    """Every option the distro fragments of x86_64 ask for has the value Debian's amd64
    config gives it (linux-config-6.12, the package of this host's architecture), but the
    ones each fragment says it leaves out on purpose."""
    debian = cfg.parse_kconfig(subprocess.run(
        ["xzcat", DEBIAN_CONFIGS / "config.amd64_none_amd64.xz"], capture_output=True,
        text=True, check=True).stdout)
    profile = cfg.PROFILES["distro"]
    wanted = {}
    for name in profile.fragments(X86):
        wanted.update(cfg.parse_kconfig((cfg.CONFIGS / name).read_text()))
    differ = {k: (v, debian.get(k, "n")) for k, v in wanted.items() if debian.get(k, "n") != v}
    assert differ == {}
    assert len(wanted) >= 30
    # Left out, each with its reason in the fragment: a KVM host's mitigation.
    assert debian["CONFIG_MITIGATION_VMSCAPE"] == "y" and "CONFIG_MITIGATION_VMSCAPE" not in wanted


def test_cache_keys_follow_content(tmp_path, monkeypatch):
    # A known value: a key that changed for the same content would rebuild every kernel.
    assert cfg.digest([b"a"]) == "bf5d3affb73e"
    assert cfg.digest([b"a"]) != cfg.digest([b"b"])
    assert cfg.digest([b"ab", b"c"]) != cfg.digest([b"a", b"bc"])
    monkeypatch.setenv("TPBENCH_CACHE", str(tmp_path))
    assert cfg.cache_root() == tmp_path
    monkeypatch.delenv("TPBENCH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cfg.cache_root() == tmp_path / "xdg" / "tpbench"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cfg.cache_root() == tmp_path / "home" / ".cache" / "tpbench"


def test_tcg_command_counts_instructions():
    cmd = qemu.qemu_command(X86, Path("bz"), Path("rd"), "x=1", "tcg", Path("res"))
    assert cmd[:5] == ["qemu-system-x86_64", "-accel", "tcg", "-icount", "shift=0,sleep=off"]
    assert "-no-reboot" in cmd and cmd[-1] == ("console=ttyS0 panic=-1 tpbench.results=ttyS1 "
                                               "noapictimer x=1")
    assert cmd[cmd.index("-serial", cmd.index("-serial") + 1) + 1] == "file:res"
    # The APIC timer is left alone under KVM, where calibrating it costs nothing.
    kvm = qemu.qemu_command(X86, Path("bz"), Path("rd"), "x=1", "kvm", Path("res"))
    assert kvm[-1] == "console=ttyS0 panic=-1 tpbench.results=ttyS1 x=1"


def test_unknown_accel_fails_before_anything_starts(capsys):
    assert cli.main(["sample", "--accel", "warp"]) == 2
    assert "unknown ACCEL 'warp'; valid values: auto, kvm, tcg" in capsys.readouterr().err
    with pytest.raises(ValueError):
        qemu.qemu_command(X86, Path("bz"), Path("rd"), "", "auto", Path("res"))


def test_unknown_config_and_arch_fail(capsys):
    assert cli.main(["kernels", "--configs", "jump_lable"]) == 2
    assert "unknown kernel config 'jump_lable'" in capsys.readouterr().err
    assert cli.main(["kernels", "--arch", "sparc"]) == 2
    assert "supported: x86_64" in capsys.readouterr().err


def fake_qemu(tmp_path, script):
    exe = tmp_path / "fake-qemu"
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(0o755)
    return [str(exe)]


def test_boot_streams_console_to_log(tmp_path):
    cmd = fake_qemu(tmp_path, "echo 'Linux version 6.12'; echo 'tpbench-init: started'; "
                              "echo 'tpbench-init: done'; echo 'reboot: Restarting system'\n")
    r = qemu._boot_once(cmd, tmp_path / "console.log", tmp_path / "res", "tcg", "test", 10, None)
    assert r.reached_init and not r.timed_out and r.returncode == 0
    assert (tmp_path / "console.log").read_text().splitlines()[1] == "tpbench-init: started"


def test_boot_timeout_kills_a_hung_guest_and_keeps_the_log(tmp_path):
    cmd = fake_qemu(tmp_path, "echo 'Linux version 6.12'; exec sleep 60\n")
    r = qemu._boot_once(cmd, tmp_path / "console.log", tmp_path / "res", "tcg", "test", 1, None)
    assert r.timed_out and not r.reached_init and r.elapsed < 10
    assert (tmp_path / "console.log").read_text() == "Linux version 6.12\n"


def test_init_timeout_gives_up_on_a_silent_kvm_guest(tmp_path):
    cmd = fake_qemu(tmp_path, "exec sleep 60\n")
    r = qemu._boot_once(cmd, tmp_path / "c.log", tmp_path / "res", "kvm", "probe", 60, 1)
    assert r.timed_out and not r.reached_init and r.elapsed < 10


def test_failed_command_names_itself(tmp_path):
    with pytest.raises(messages.Failure, match=r"status 3.*\n.*sh -c"):
        proc.run(["sh", "-c", "echo oops; exit 3"], log=tmp_path / "log")


def small_tree_and_patch(tmp_path, monkeypatch, patch_body):
    """A tiny source tarball and a one-patch series, through the real prepare_source()."""
    src = tmp_path / "linux-source-6.12"
    src.mkdir()
    (src / "README").write_text("line one\nline two\n")
    tarball = tmp_path / "linux-source-6.12.tar.xz"
    subprocess.run(["tar", "-cJf", tarball, "-C", tmp_path, "linux-source-6.12"], check=True)
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "0001-test.patch").write_text(patch_body)
    (patches / "series").write_text("0001-test.patch\n")
    monkeypatch.setattr(cfg.KernelSource, "tarball", property(lambda kernel: tarball))
    monkeypatch.setattr(roots, "debian_version", lambda package, root=None: "0-test")
    monkeypatch.setenv("TPBENCH_CACHE", str(tmp_path / "cache"))
    return cfg.KernelSource("test", "linux-source-6.12", patches)


PATCH = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test <test@example.org>
Date: Thu, 3 Dec 2026 08:00:00 +0000
Subject: [PATCH] readme: change line two

---
 README | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/README b/README
--- a/README
+++ b/README
@@ -1,2 +1,2 @@
 line one
-{old}
+line 2
--
2.39.5
"""


def test_series_is_applied_with_git_am_and_cached(tmp_path, monkeypatch):
    source = small_tree_and_patch(tmp_path, monkeypatch, PATCH.format(old="line two"))
    tree = kernel.prepare_source(source)
    assert (tree.path / "README").read_text() == "line one\nline 2\n"
    log = subprocess.run(["git", "log", "--format=%s"], cwd=tree.path, text=True,
                         capture_output=True, check=True).stdout.splitlines()
    assert log[0] == "readme: change line two"
    again = kernel.prepare_source(source)       # cached: same key, same tree, nothing redone
    assert again == tree


def test_patch_that_does_not_apply_is_named_with_its_rejects(tmp_path, monkeypatch):
    source = small_tree_and_patch(tmp_path, monkeypatch, PATCH.format(old="line 2 as nobody wrote it"))
    with pytest.raises(messages.Failure, match=r"patch 0001-test.patch does not apply.*README.rej"):
        kernel.prepare_source(source)
    # Nothing half-made is left where a later run would take it for a good tree.
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith("src-")]


def test_arm64_command_uses_virt_and_a_virtio_results_console():
    arm = cfg.ARCHS["arm64"]
    cmd = qemu.qemu_command(arm, Path("Image"), Path("rd"), "x=1", "tcg", Path("res"))
    assert cmd[0] == "qemu-system-aarch64" and "-icount" in cmd
    assert cmd[cmd.index("-M") + 1] == "virt"
    assert "file,id=results,path=res" in cmd and "virtconsole,chardev=results" in cmd
    assert cmd[-1] == "console=ttyAMA0 panic=-1 tpbench.results=hvc0 x=1"


def test_kvm_is_refused_for_a_foreign_architecture(tmp_path):
    with pytest.raises(messages.Failure, match="KVM cannot run an arm64 guest on this host"):
        qemu.boot(cfg.ARCHS["arm64"], Path("Image"), Path("rd"), "", "kvm", tmp_path, "x")


def test_boot_failure_names_the_reason_and_the_last_lines(tmp_path):
    from tests.conftest import FIXTURES

    def result(log, timed_out=False):
        lines = (FIXTURES / log).read_text().splitlines()
        return qemu.BootResult("tcg", "test", [], tmp_path / "c", tmp_path / "r", True,
                                timed_out, 0, 1.0, None, lines)

    assert qemu.boot_failure(result("console-clean-jump_label.log")) is None
    panic = qemu.boot_failure(result("console-panic-no-init.log"))
    assert panic.startswith("Kernel panic - not syncing: No working init found")
    assert "last console lines:" in panic
    assert qemu.boot_failure(result("console-clean-jump_label.log"), ["test 2 failed"]) \
        .startswith("test 2 failed")
    hung = qemu.boot_failure(result("console-panic-no-init.log", timed_out=True))
    assert hung.startswith("guest timed out; Kernel panic")


def test_qemu_killed_by_a_signal_is_named(tmp_path):
    """A QEMU that dies of a signal (the OOM killer, a kill -9) before the module reported."""
    cmd = fake_qemu(tmp_path, "echo 'Linux version 6.12'; echo 'tpbench-init: started'; "
                              "kill -9 $$\n")
    r = qemu._boot_once(cmd, tmp_path / "c.log", tmp_path / "res", "tcg", "test", 10, None)
    assert r.returncode == -9 and not r.timed_out
    why = qemu.boot_failure(r)
    assert why.startswith("QEMU was killed by signal 9 (SIGKILL) before the module reported; "
                          "init did not finish")


def test_kernel_warnings_during_a_run_fail_it(tmp_path):
    """A real clean console with a WARNING and a soft lockup spliced in, as a kernel prints
    them: the run fails with the lines quoted."""
    from tests.conftest import FIXTURES
    log = (FIXTURES / "console-clean-jump_label.log").read_text().splitlines()
    at = next(i for i, l in enumerate(log) if "tpbench-init: started" in l) + 1
    bad = (log[:at] + ["WARNING: CPU: 0 PID: 61 at kernel/jump_label.c:245 static_key_disable+0x1a/0x30",
                       "watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [insmod:61]"] + log[at:])
    verdict = console.judge_console(bad)
    assert not verdict.ok and len(verdict.trouble) == 2
    r = qemu.BootResult("tcg", "test", [], tmp_path / "c", tmp_path / "r", True, False, 0, 1.0,
                         None, bad)
    why = qemu.boot_failure(r)
    assert why.startswith("the kernel reported trouble during the run:\n  WARNING: CPU: 0 PID: 61")
    assert "soft lockup" in why
    assert qemu.boot_failure(dataclasses.replace(r, console_lines=log)) is None


def test_a_kvm_run_keeps_the_console_name_readme_gives(tmp_path, monkeypatch):
    """With ACCEL=auto and a KVM that boots, the probe is the run: its log is renamed."""
    cmd = fake_qemu(tmp_path, "echo 'tpbench-init: started'; echo 'tpbench-init: done'\n")
    monkeypatch.setattr(qemu, "kvm_usable", lambda: (True, "test"))
    monkeypatch.setattr(qemu, "qemu_command", lambda *a, **k: cmd)
    r = qemu.boot(X86, Path("bz"), Path("rd"), "", "auto", tmp_path, "x86_64-jump_label")
    assert r.accel == "kvm" and r.console_log == tmp_path / "console-x86_64-jump_label.log"
    assert r.console_log.read_text().startswith("tpbench-init: started")
    assert not (tmp_path / "console-x86_64-jump_label-kvm-probe.log").exists()


def test_loongarch64_runs_inside_its_debian_root(monkeypatch, tmp_path):
    """Commands of an architecture with a root enter it in a private mount namespace, with
    the checkout, the cache and the temporary directory at their own paths; a host
    architecture's commands are left alone."""
    monkeypatch.setenv("TPBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(roots, "debian_root", lambda root: tmp_path / f"root-{root.suite}")
    loong = cfg.ARCHS["loongarch64"]
    cmd = qemu.qemu_command(loong, Path("vmlinux"), Path("rd"), "x=1", "tcg", Path("res"))
    assert cmd[:5] == ["unshare", "--mount", "--propagation", "private", "--"]
    sep = cmd.index("--", 5)
    assert cmd[5:sep] == ["/bin/sh", str(roots.ENTER_ROOT), str(tmp_path / "root-trixie"),
                          *sorted({str(cfg.REPO), str(tmp_path / "cache"), tempfile.gettempdir()})]
    guest = cmd[sep + 1:]
    assert guest[0] == "qemu-system-loongarch64" and guest[guest.index("-net") + 1] == "none"
    assert guest[-1] == "console=ttyS0 panic=-1 tpbench.results=ttyS1 x=1"
    assert roots.in_root(cfg.ARCHS["x86_64"], ["true", Path("x")]) == ["true", "x"]
    assert loong.build_env == {"LIBCLANG_PATH": cfg.TRIXIE_ROOT.libclang_path}
    assert cfg.ARCHS["riscv64"].build_env == {"LIBCLANG_PATH": cfg.LIBCLANG_PATH}


def test_a_root_without_mmdebstrap_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("TPBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(roots.shutil, "which", lambda name: None)
    with pytest.raises(messages.Failure, match="mmdebstrap not found.*make deps"):
        roots.debian_root(cfg.TRIXIE_ROOT)
    assert list(tmp_path.iterdir()) == []


def test_the_root_key_follows_its_package_list_and_suites():
    other = dataclasses.replace(cfg.TRIXIE_ROOT, packages=cfg.TRIXIE_ROOT.packages + ("gdb",))
    assert other.key != cfg.TRIXIE_ROOT.key
    assert dataclasses.replace(cfg.TRIXIE_ROOT).key == cfg.TRIXIE_ROOT.key
    assert dataclasses.replace(cfg.TRIXIE_ROOT, more_suites=()).key != cfg.TRIXIE_ROOT.key
    assert cfg.TRIXIE_ROOT.sources == ["deb http://deb.debian.org/debian trixie main",
                                       "deb http://deb.debian.org/debian trixie-backports main"]


def test_mainline_is_the_pinned_package_of_the_debian_13_root(monkeypatch, tmp_path):
    """A newer upload to backports changes nothing: the root installs the pinned version, and
    the pin is part of the root's key and so of every tree and build made from it."""
    monkeypatch.setenv("TPBENCH_CACHE", str(tmp_path))
    mainline = cfg.KERNELS["mainline"]
    pin = f"{cfg.MAINLINE_PACKAGE}={cfg.MAINLINE_VERSION}"
    assert mainline.root is cfg.TRIXIE_ROOT and pin in cfg.TRIXIE_ROOT.packages
    assert mainline.tarball == cfg.root_dir(cfg.TRIXIE_ROOT) / "usr/src/linux-source-7.3.tar.xz"
    assert cfg.KERNELS[cfg.DEFAULT_KERNEL].tarball == Path("/usr/src/linux-source-6.12.tar.xz")
    # The event header is part of mainline's tree, so of its key; the series' key is as before.
    assert cfg.series_hash(cfg.KERNELS["series"]) == cfg.series_hash()
    assert cfg.series_hash(mainline) != cfg.series_hash(dataclasses.replace(mainline,
                                                                           event_header=False))


def test_mainline_is_built_in_its_root_with_the_roots_llvm():
    mainline = cfg.KERNELS["mainline"]
    x86 = cfg.build_params(mainline, cfg.ARCHS["x86_64"])
    assert x86.root is cfg.TRIXIE_ROOT and x86.build_env["LIBCLANG_PATH"].endswith("llvm-19/lib")
    riscv = cfg.build_params(mainline, cfg.ARCHS["riscv64"])
    assert riscv.make_args == ("LLVM=1",) and riscv.kernel_compiler == "clang"
    assert cfg.build_params(mainline, cfg.ARCHS["loongarch64"]) == cfg.ARCHS["loongarch64"]
    assert cfg.build_params(cfg.KERNELS["series"], cfg.ARCHS["riscv64"]) == cfg.ARCHS["riscv64"]


def test_deps_runs_on_a_machine_without_the_packages_it_installs():
    """`make deps` is the first step on a new machine: the command line it runs must not import
    what it is about to install (pandas, numpy, pyelftools)."""
    blocked = "; ".join(f"sys.modules[{m!r}] = None" for m in ("pandas", "numpy", "elftools"))
    code = f"import sys; {blocked}; import runner.__main__"
    proc = subprocess.run([sys.executable, "-c", code], cwd=cfg.REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_mainline_has_rust_on_arm_and_its_fragment_there_alone():
    mainline, series = cfg.KERNELS["mainline"], cfg.KERNELS["series"]
    arm = cfg.ARCHS["arm"]
    assert cfg.build_params(mainline, arm).rust and not cfg.build_params(series, arm).rust
    jl, distro = cfg.KERNEL_CONFIGS["jump_label"], cfg.PROFILES["distro"]
    names = [p.name for p in cfg.fragment_paths(arm, jl, distro, "mainline")]
    # arm keeps 6.12's voluntary preemption: 7.3 has no lazy model there.
    assert names == ["arm-base.config", "arm-rust.config", "distro.config", "distro-arm.config",
                     "jump_label.config"]
    assert "arm-rust.config" not in [p.name for p in cfg.fragment_paths(arm, jl, distro)]
    arm64 = [p.name for p in cfg.fragment_paths(cfg.ARCHS["arm64"], jl, distro, "mainline")]
    assert "distro-mainline.config" in arm64 and "arm64-rust.config" not in arm64


def test_a_kernel_that_cannot_exist_is_named_with_its_reason(tmp_path):
    """7.3's arm64 selects JUMP_LABEL: asking for mainline's arm64 no_jump_label kernel
    fails at once, saying why, and builds nothing."""
    mainline = cfg.KERNELS["mainline"]
    assert "selects JUMP_LABEL" in mainline.why_impossible("arm64", "no_jump_label")
    assert mainline.why_impossible("arm64", "jump_label") is None
    assert cfg.KERNELS["series"].why_impossible("arm64", "no_jump_label") is None
    source = kernel.SourceTree(tmp_path, "key", mainline)
    with pytest.raises(messages.Failure, match=r"no mainline/arm64/distro/no_jump_label kernel, as 7\.3"):
        kernel.build_kernel(source, cfg.ARCHS["arm64"], cfg.KERNEL_CONFIGS["no_jump_label"])


def test_the_debian_13_root_pins_the_qemu_that_runs_mainline_loongarch64():
    """QEMU 10.0's loongarch TCG aborted under -icount as 7.3 loaded the module; the Debian 13
    root pins 11.1 from the backports, and no run leaves mainline's loongarch64 out. (That it
    boots is the kernel tests' to show: make test-full boots mainline on every architecture.)"""
    packages = cfg.TRIXIE_ROOT.packages
    for name in ("qemu-system-misc", "qemu-system-common", "qemu-system-data"):
        assert f"{name}={cfg.QEMU_BACKPORTS_VERSION}" in packages
    assert "trixie-backports" in cfg.TRIXIE_ROOT.more_suites
    assert cfg.ARCHS["loongarch64"].root == cfg.TRIXIE_ROOT
    for config in cfg.KERNEL_CONFIGS:
        assert cfg.KERNELS["mainline"].why_impossible("loongarch64", config) is None


def test_two_processes_take_turns_at_one_build(tmp_path):
    """A second tpbench process that wants the kernel another is building waits for it, then
    finds the build (make bench beside make kernels must not build one O= tree twice)."""
    import multiprocessing
    lock = tmp_path / "build-x.lock"
    started, holder = multiprocessing.Event(), None

    def hold():
        with proc.locked(lock):
            started.set()
            time.sleep(0.5)
            (tmp_path / "built").write_text("")
    holder = multiprocessing.Process(target=hold)
    holder.start()
    assert started.wait(10)
    with proc.locked(lock):
        assert (tmp_path / "built").exists()
    holder.join()


def test_a_build_says_how_far_it_got(tmp_path, capsys):
    """A kernel build prints its kbuild steps against the last build's and where it is,
    reading only what the log gained; in a log, a line every half minute at most."""
    log = tmp_path / "tpbench-build.log"
    log.write_text("$ make -C src O=build\n  CC      kernel/cpu.o\n  AS      arch/x86/entry/entry.o\n"
                   "  LD [M]  drivers/net/x.ko\n  RUSTC L rust/co")
    progress = kernel.BuildProgress(log, 2000)
    assert progress.describe() == "3 of about 2000 kbuild steps, in drivers/net"
    with open(log, "a") as f:
        f.write("re.o\n  CC      mm/slub.o\n")
    assert progress.describe() == "5 of about 2000 kbuild steps, in mm/slub.o"
    assert kernel.BuildProgress(log, None).describe() == "5 kbuild steps, in mm/slub.o"
    ticker = messages.Progress("build x", lambda: "1 step", tty=False)
    assert ticker.every == 30.0
    ticker.every = 0.05
    with ticker:
        time.sleep(0.2)
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("[tpbench] build x: 1 step, 0:0") for line in lines)


def test_a_clang_profile_refuses_clang_and_rustc_on_different_llvm():
    same = "CONFIG_CLANG_VERSION=220108\nCONFIG_RUSTC_LLVM_VERSION=220108\n"
    kernel.check_llvm_match(same, "series/x86_64/clang/jump_label")
    other = "CONFIG_CLANG_VERSION=220108\nCONFIG_RUSTC_LLVM_VERSION=210107\n"
    with pytest.raises(messages.Failure, match=r"clang is LLVM 22 .* rustc links LLVM 21"):
        kernel.check_llvm_match(other, "series/x86_64/clang/jump_label")
    with pytest.raises(messages.Failure, match="names no clang"):
        kernel.check_llvm_match("CONFIG_RUSTC_LLVM_VERSION=220108\n", "x")


def test_the_clang_profile_is_distro_plus_gki_built_in_its_root():
    clang = cfg.PROFILES["clang"]
    frags = [p.name for p in cfg.fragment_paths(cfg.ARCHS["arm64"], cfg.KERNEL_CONFIGS["jump_label"],
                                                clang, "mainline")]
    assert frags == ["arm64-base.config", "distro.config", "distro-arm64.config",
                     "distro-mainline.config", "clang.config", "clang-arm64.config",
                     "clang-mainline.config", "jump_label.config"]
    arm64 = cfg.build_params(cfg.KERNELS["mainline"], cfg.ARCHS["arm64"], clang)
    assert arm64.root == cfg.CLANG_ROOT and arm64.make_args == ("LLVM=-22",)
    assert arm64.build_env["LIBCLANG_PATH"] == "/usr/lib/llvm-21/lib"
    assert "x86_64, arm64 only" in clang.why_not("riscv64") and clang.why_not("arm64") is None
    # The distro profile is built as before.
    assert cfg.build_params(cfg.KERNELS["series"], cfg.ARCHS["x86_64"],
                            cfg.PROFILES["distro"]) == cfg.ARCHS["x86_64"]
