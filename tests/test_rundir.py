"""The run directory's names, owned by common/rundir.py: each file is of one kind."""

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
