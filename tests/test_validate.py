"""analysis refuses a damaged run with one message naming the file, the line and the
problem: damaged copies of a real samples.csv (tests/fixtures/runs/distro), through
the real command."""

import gzip
import shutil

import pytest

from analysis import __main__ as cli
from analysis import validate
from common import arches
from runner import config as cfg
from tests.conftest import FIXTURES

REAL = FIXTURES / "runs" / "distro"


@pytest.fixture
def run(tmp_path, monkeypatch):
    # A damage the checks miss must not reach the checkout's REPORT.md or cover letter.
    monkeypatch.setattr(cli, "REPO", tmp_path)
    monkeypatch.setattr(cli, "SERIES", tmp_path / "patches")
    dst = tmp_path / "run"
    dst.mkdir()
    for name in ("context.json", "samples.csv"):
        shutil.copy(REAL / name, dst / name)
    return dst


def damage(run, edit):
    path = run / "samples.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(edit(lines)))


def with_variant(line: str, variant: str) -> str:
    fields = line.split(",")
    fields[3] = variant
    return ",".join(fields)


def refused(run, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        cli.main(["report", "--run", str(run)])
    assert e.value.code != 0 and e.value.code is not None
    return str(e.value.code)


def test_the_real_run_is_sound():
    assert validate.samples_problems((REAL / "samples.csv").read_text()) == []


@pytest.mark.parametrize("edit, words", [
    (lambda ls: ls[:100] + [ls[100][:17]], "line 101: the last line has no newline"),
    (lambda ls: ls[:5] + ["x86_64,jump_label,tcg,c_trace\n"] + ls[5:], "line 6: 4 fields, expected 8"),
    (lambda ls: ls[:7] + [ls[7].rsplit(",", 1)[0] + ",12.5\n"] + ls[8:], "line 8: cycles='12.5' is not"),
    (lambda ls: ls[:7] + [ls[7].rsplit(",", 1)[0] + ",-3\n"] + ls[8:], "line 8: cycles='-3' is not a non-negative"),
    (lambda ls: ls[:9] + [ls[9].replace("disabled", "paused")] + ls[10:], "line 10: unknown state 'paused'"),
    (lambda ls: ls[:9] + [with_variant(ls[9], "go_trace")] + ls[10:], "line 10: unknown variant 'go_trace'"),
    (lambda ls: ls[:3] + [ls[2]] + ls[3:], "line 4: the same sample as line 3"),
    (lambda ls: [ls[0].replace("cycles", "ticks")] + ls[1:], "line 1: header"),
    (lambda ls: ls[:1], "a header and no samples"),
    (lambda ls: [], "empty"),
])
def test_damaged_samples_are_refused(run, capsys, edit, words):
    damage(run, edit)
    message = refused(run, capsys)
    assert str(run / "samples.csv") in message and words in message, message
    assert "Traceback" not in capsys.readouterr().err
    assert not (run / "summary.csv").exists()        # nothing was written


def test_many_problems_are_counted_not_all_quoted(run, capsys):
    damage(run, lambda ls: [ls[0]] + [l.replace("disabled", "off") for l in ls[1:40]])
    message = refused(run, capsys)
    assert message.count("unknown state 'off'") == validate.SHOWN and "and " in message


def test_missing_samples_and_damaged_context(run, capsys):
    (run / "samples.csv").unlink()
    assert "samples.csv: missing" in refused(run, capsys)
    (run / "context.json").write_text('{"run_id": ')
    assert "context.json: not valid JSON" in refused(run, capsys)
    (run / "context.json").unlink()
    assert "not a run directory (no context.json)" in refused(run, capsys)


def test_one_table_of_architectures():
    """The runner builds what common/arches.py names, and kelf reads each one's modules."""
    assert arches.NAMES == tuple(cfg.ARCHS)
    assert sorted(arches.MACHINES.values()) == sorted(arches.NAMES)


@pytest.mark.parametrize("key, name", [("other_profiles", "tiny"), ("other_kernels", "mainline")])
def test_a_run_naming_a_further_run_it_lacks_is_refused(run, capsys, key, name):
    """A run of two build profiles (or kernels) keeps the second in a directory of its own;
    one that was cut short before it (or lost it) gets one message naming the directory."""
    import json
    ctx = json.loads((run / "context.json").read_text())
    (run / "context.json").write_text(json.dumps(dict(ctx, **{key: [name]})))
    message = refused(run, capsys)
    assert f"names the further run {name}" in message and str(run / name) in message
    with pytest.raises(SystemExit, match=f"names the further run {name}"):
        cli.main(["profile-runs", "--run", str(run)])


def thunk_samples(run, edit=lambda lines: lines) -> None:
    """native-thunks.csv.gz made from the run's own native samples, as through plain `ret`."""
    lines = (run / "samples.csv").read_text().splitlines(keepends=True)
    header = "arch,config,thunk,accel,variant,state,n,rep,cycles\n"
    rows = [line.replace(",", ",ret,", 2).replace(",ret,", ",", 1) for line in lines[1:]
            if ",native" in line]
    assert rows
    (run / "native-thunks.csv.gz").write_bytes(gzip.compress("".join(edit([header] + rows))
                                                             .encode()))


def test_a_cut_gzip_of_thunk_samples_is_refused_by_name(run, capsys):
    thunk_samples(run)
    path = run / "native-thunks.csv.gz"
    path.write_bytes(path.read_bytes()[:-100])
    message = refused(run, capsys)
    assert "native-thunks.csv.gz: not a whole gzip file" in message
    assert "Traceback" not in message


@pytest.mark.parametrize("edit, words", [
    (lambda lines: lines[:-1] + [lines[-1][:-8]],
     "native-thunks.csv.gz line {last}: the last line has no newline"),
    (lambda lines: lines[:2] + [lines[2].replace(",ret,", ",retpoline,")] + lines[3:],
     "native-thunks.csv.gz line 3: unknown return thunk 'retpoline'"),
    (lambda lines: [lines[0].replace("thunk,", "")] + lines[1:],
     "native-thunks.csv.gz line 1: header"),
])
def test_a_damaged_thunk_samples_file_is_refused_by_name(run, capsys, edit, words):
    """native-thunks.csv is read with samples.csv and refused the same way, naming it."""
    thunk_samples(run)
    good = gzip.decompress((run / "native-thunks.csv.gz").read_bytes()).decode()
    assert validate.samples_problems(good, "native-thunks.csv", (validate.COLUMNS_THUNKS,)) == []
    thunk_samples(run, edit)
    last = len(gzip.decompress((run / "native-thunks.csv.gz").read_bytes()).decode().splitlines())
    message = refused(run, capsys)
    assert words.format(last=last) in message and "Traceback" not in message
