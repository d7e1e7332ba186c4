"""The series: complete, applies to Debian's pristine tree, kernel style."""

import os
import re
import subprocess
import tempfile

import pytest

from common import series
from runner import config as cfg

PATCHES = sorted(p for p in cfg.PATCHES.glob("*.patch") if not p.name.startswith("0000-"))
# The harness patches of the mainline tree: not the series, held to the same style.
HARNESS = cfg.series_files(cfg.KERNELS["mainline"].patches)
# The series for mainline (issue 35): its own patches, after the harness one.
MAINLINE_SERIES = series.own_patches(cfg.KERNELS["mainline-series"].patches)

# checkpatch findings we leave, and the words the patch's "checkpatch:"
# paragraph must use to explain each. Anything else fails the test.
EXPLAINED = {
    "does MAINTAINERS need updating": "MAINTAINERS",
    "is not used in function-like macro": "argument not used",
    "extern prototypes should be avoided": "extern prototype",
    "Macro argument reuse": "argument reuse",
    "Alignment should match open parenthesis": "TRACE_EVENT",
    "Lines should not end with a '('": "TRACE_EVENT",
    "Unknown commit id": "mainline",
    "Non-standard signature: Originally-by:": "Originally-by",
}


def test_series_lists_every_patch_in_order():
    assert [p.name for p in cfg.series_files()] == [p.name for p in PATCHES]
    assert len(PATCHES) == 9
    for k, patch in enumerate(PATCHES, 1):
        assert f"Subject: [PATCH {k}/{len(PATCHES)}]" in patch.read_text(), patch.name


def test_the_mainline_series_numbers_its_patches():
    """Sent as one series of its own: [PATCH k/n] over its patches alone, not the harness."""
    assert len(MAINLINE_SERIES) == 3
    for k, patch in enumerate(MAINLINE_SERIES, 1):
        assert f"Subject: [PATCH {k}/{len(MAINLINE_SERIES)}]" in patch.read_text(), patch.name


def letter_addresses(letter: str, field: str) -> list[str]:
    """The addresses of a mail header field, one per continuation line as git writes them."""
    m = re.search(rf"^{field}: (.*(?:\n    .*)*)", letter.split("\n\n", 1)[0], re.M)
    return [a.strip().rstrip(",") for a in m.group(1).split("\n")] if m else []


def test_the_mainline_cover_letter_goes_to_whom_get_maintainer_names(mainline_tree):
    """Ready to send: To: the maintainers of what the patches touch, Cc: their reviewers and
    lists, as the tree's scripts/get_maintainer.pl gives them (runner.kernel.recipients)."""
    from runner import kernel
    letter = (cfg.KERNELS["mainline-series"].patches / "0000-cover-letter.patch").read_text()
    to, cc = kernel.recipients(mainline_tree.path, MAINLINE_SERIES)
    assert "rust-for-linux@vger.kernel.org" in cc and to
    assert (letter_addresses(letter, "To"), letter_addresses(letter, "Cc")) == (to, cc)
    assert f"Subject: [PATCH 0/{len(MAINLINE_SERIES)}]" in letter


def test_the_mainline_series_follows_the_harness_patch():
    """patches-mainline-series/ applies mainline's harness patch, then its own, each once."""
    files = cfg.series_files(cfg.KERNELS["mainline-series"].patches)
    assert files[:len(HARNESS)] == [cfg.KERNELS["mainline-series"].patches / ".." / p.parent.name
                                    / p.name for p in HARNESS]
    assert [p.name for p in files[len(HARNESS):]] == [p.name for p in MAINLINE_SERIES]
    assert MAINLINE_SERIES and all(p.exists() for p in files)


def test_cover_letter_is_filled_in():
    text = (cfg.PATCHES / "0000-cover-letter.patch").read_text()
    assert "*** SUBJECT HERE ***" not in text and "*** BLURB HERE ***" not in text
    assert "base-commit:" in text


@pytest.mark.parametrize("patch", PATCHES + HARNESS + MAINLINE_SERIES,
                         ids=lambda p: f"{p.parent.name}/{p.name[:4]}")
def test_subject_and_signoff(patch):
    text = patch.read_text()
    subject = re.search(r"^Subject: \[PATCH( \d+/\d+)?\] (.+)$", text, re.M).group(2)
    assert re.match(r"^[a-z0-9_]+(: [a-z0-9_]+)*: \S", subject), subject
    assert len(subject) < 75, subject
    assert re.search(r"^Signed-off-by: .+ <.+>$", text, re.M)
    message = text.split("\n---\n", 1)[0]
    body = message.split("\n\n", 1)[1]
    # A Link: tag holds a URL, which is never wrapped (as in the kernel's own history).
    assert all(len(line) <= 75 for line in body.splitlines() if not line.startswith("Link: ")), \
        "body wrapped at 75 columns"


def test_series_applies_to_the_pristine_tree(source_tree):
    """git apply each patch in turn onto the untouched tarball commit, in a scratch index."""
    repo = source_tree.path
    base = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=repo,
                          text=True, capture_output=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, "index"))
        subprocess.run(["git", "read-tree", base], cwd=repo, env=env, check=True)
        for patch in cfg.series_files():
            proc = subprocess.run(["git", "apply", "--cached", str(patch)], cwd=repo, env=env,
                                  text=True, capture_output=True)
            assert proc.returncode == 0, f"{patch.name} does not apply: {proc.stderr}"
        tree = subprocess.run(["git", "write-tree"], cwd=repo, env=env, text=True,
                              capture_output=True, check=True).stdout.strip()
    head_tree = subprocess.run(["git", "rev-parse", "HEAD^{tree}"], cwd=repo, text=True,
                               capture_output=True, check=True).stdout.strip()
    assert tree == head_tree, "the cached tree is not the pristine tree plus this series"


@pytest.mark.parametrize("patch", PATCHES + HARNESS + MAINLINE_SERIES,
                         ids=lambda p: f"{p.parent.name}/{p.name[:4]}")
def test_checkpatch_strict(source_tree, patch):
    # checkpatch runs scripts/spdxcheck.py with the first python3 on PATH: Debian's, which
    # has python3-ply and python3-git, not a python of the user's own.
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
    proc = subprocess.run([source_tree.path / "scripts/checkpatch.pl", "--strict", "--terse",
                           "--no-summary", str(patch)], cwd=source_tree.path, text=True,
                          capture_output=True, env=env)
    findings = [line for line in proc.stdout.splitlines() if re.search(r": (ERROR|WARNING|CHECK):", line)]
    # checkpatch exits 0 when clean and 1 with findings; anything else (or output on stderr)
    # means it did not check the patch, and an empty findings list would prove nothing.
    assert proc.returncode in (0, 1) and not proc.stderr.strip(), (proc.returncode, proc.stderr)
    assert (proc.returncode == 1) == bool(findings), (proc.returncode, proc.stdout)
    assert not [f for f in findings if ": ERROR:" in f], findings
    # Notes for reviewers go below the "---" line, where git am drops them.
    message, rest = patch.read_text().split("\n---\n", 1)
    assert "checkpatch:" not in message, f"{patch.name}: checkpatch notes belong below ---"
    below = rest.split("\ndiff --git", 1)[0]
    note = below.split("checkpatch:", 1)[1] if "checkpatch:" in below else ""
    note = " ".join(note.split())
    for finding in findings:
        words = next((w for k, w in EXPLAINED.items() if k in finding), None)
        assert words is not None, f"unexplained checkpatch finding: {finding}"
        assert words in note, f"{patch.name}: commit message does not explain: {finding}"
