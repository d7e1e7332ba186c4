"""The Debian roots of the cache, for architectures whose toolchain Debian 12 lacks: made
with mmdebstrap, entered under unshare; and the versions of the tools a build uses."""

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from common import disk
from common.messages import Failure, Progress, Stage
from runner import config as cfg
from runner.proc import output_of, run, staged


def debian_version(package: str, root: cfg.DebianRoot | None = None) -> str:
    """The installed version of `package`, on the host or in a Debian root of the cache."""
    admin = [f"--admindir={debian_root(root) / 'var/lib/dpkg'}"] if root else []
    version = output_of(["dpkg-query", *admin, "-W", "-f=${Version}", package])
    if version == "unavailable" or not version:
        raise Failure(f"Debian package {package} is not installed; run `make deps` as root "
                      f"(or: apt-get install {package})")
    return version


def toolchain_versions(arch: cfg.ArchParams = cfg.ARCHS["x86_64"],
                       boot: cfg.ArchParams | None = None) -> dict[str, str]:
    """The compilers `arch` builds with, and the QEMU that `boot` (default: `arch`) boots in:
    a kernel built in a root (mainline) still boots in the host's QEMU."""
    def version(params, *cmd):
        return (output_of(in_root(params, [*cmd, "--version"])).splitlines() or ["none"])[0]
    return {
        "rustc": version(arch, cfg.TOOLCHAIN["RUSTC"]),
        "bindgen": version(arch, cfg.TOOLCHAIN["BINDGEN"]),
        "gcc": version(arch, arch.kernel_compiler),
        "qemu": version(boot or arch, (boot or arch).qemu_binary),
    }


def check_packages(packages=cfg.DEBIAN_PACKAGES) -> list[str]:
    """The packages of `packages` that dpkg does not list as installed."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n", *packages],
                         text=True, capture_output=True).stdout
    installed = {line.split()[0] for line in out.splitlines() if line.endswith(" installed")}
    return [p for p in packages if p not in installed]


# ---------------------------------------------------------------------------
# Debian roots, for architectures whose toolchain Debian 12 lacks


def debian_root(root: cfg.DebianRoot) -> Path:
    """The root's directory in the cache, made with mmdebstrap the first time."""
    final = cfg.root_dir(root)
    if (final / ".tpbench-made").exists():
        return final
    if shutil.which("mmdebstrap") is None:
        raise Failure(f"mmdebstrap not found: it makes the Debian {root.suite} root that "
                      f"builds and boots this architecture; `make deps` installs it")
    if os.geteuid() != 0:
        raise Failure(f"making the Debian {root.suite} root needs root (mmdebstrap's root "
                      f"mode, and chroot to use it); run as root")
    disk.require_space(cfg.cache_root(), "root", f"making the Debian {root.suite} root")
    with staged(final) as work:
        log = work.parent / f"{final.name}.log"
        cmd = ["mmdebstrap", "--variant=apt", f"--include={','.join(root.packages)}",
               root.suite, work, *root.sources]
        with Stage(f"make the Debian {root.suite} root with mmdebstrap (log: {log})"), \
                Progress("mmdebstrap", lambda: last_line(log, "I: ") or "starting"):
            log.write_text("")
            run(cmd, log=log)
        (work / ".tpbench-made").write_text(root.key + "\n")
    return final


def last_line(path: Path, prefix: str) -> str:
    """The last line of `path` that starts with `prefix`, without it ("" if none)."""
    with contextlib.suppress(OSError):
        lines = [l for l in path.read_text(errors="replace").splitlines() if l.startswith(prefix)]
        return lines[-1][len(prefix):] if lines else ""
    return ""


# Enters a root in a private mount namespace: the checkout, the cache and the temporary
# directory appear at their own paths, so every path means the same inside and out.
ENTER_ROOT = cfg.REPO / "runner" / "enter-root.sh"


def in_root(arch: cfg.ArchParams, cmd, share=()) -> list[str]:
    """`cmd` as it runs for `arch`: unchanged on the host, else inside the arch's root, which
    sees the checkout, the cache, the temporary directory and the directories `share`."""
    cmd = [str(c) for c in cmd]
    if arch.root is None:
        return cmd
    shared = sorted({str(cfg.REPO), str(cfg.cache_root().resolve()), tempfile.gettempdir(),
                     *(str(Path(d).resolve()) for d in share)})
    return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", str(ENTER_ROOT),
            str(debian_root(arch.root)), *shared, "--", *cmd]
