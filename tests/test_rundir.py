"""The run directory's names, owned by common/rundir.py: each file is of one kind."""

import json

import pytest

from common import rundir


def test_each_name_is_of_its_most_specific_kind():
    assert rundir.kind_of("console-x86_64-jump_label.log") == "console"
    assert rundir.kind_of("console-x86_64-jump_label-kvm-probe.log") == "probe"
    assert rundir.kind_of("codegen-arm-no_jump_label.txt") == "listing"
    assert rundir.kind_of("codegen-checks-arm-no_jump_label.txt") == "checks"
    assert rundir.kind_of("samples.csv") is None


def test_a_kvm_probe_is_not_a_guest_console(tmp_path):
    for name in ("console-x86_64-jump_label.log", "console-x86_64-jump_label-kvm-probe.log",
                 "console-arm64-no_jump_label.log"):
        (tmp_path / name).write_text("")
    assert list(rundir.guest_files(tmp_path, "console")) == [("arm64", "no_jump_label"),
                                                             ("x86_64", "jump_label")]
    assert list(rundir.guest_files(tmp_path, "probe")) == [("x86_64", "jump_label")]


def test_a_boot_outside_a_run_is_named_the_same_way(tmp_path):
    assert rundir.named_file(tmp_path, "results", "sample-mainline-jump_label-event-on") == (
        tmp_path / "results-sample-mainline-jump_label-event-on.txt")
    assert rundir.guest_file(tmp_path, "probe", "x86_64", "jump_label") == (
        tmp_path / "console-x86_64-jump_label-kvm-probe.log")


def test_a_kernel_in_a_further_profile_is_a_part_of_the_run(tmp_path):
    """<run>/clang/mainline: named by the clang part's context, found after it."""
    def context(where, profiles=(), kernels=()):
        where.mkdir(parents=True, exist_ok=True)
        (where / "context.json").write_text(json.dumps(
            {"other_profiles": list(profiles), "other_kernels": list(kernels)}))
    context(tmp_path, ["clang"], ["mainline"])
    context(tmp_path / "clang", [], ["mainline"])
    context(tmp_path / "clang" / "mainline")
    context(tmp_path / "mainline")
    assert rundir.parts(tmp_path) == [tmp_path, tmp_path / "clang", tmp_path / "clang" / "mainline",
                                      tmp_path / "mainline"]
    (tmp_path / "clang" / "mainline" / "context.json").unlink()
    with pytest.raises(rundir.Damaged, match="names the further run mainline"):
        rundir.parts(tmp_path)
