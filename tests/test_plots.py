"""The figures say what they plot: each line's title is the variant whose samples it draws,
checked on a real run cut to a fixture (runs/five-arches) that has a panel without Rust
(32-bit arm on 6.12)."""

import re

from analysis import load
from analysis import plots, stats
from tests.conftest import FIXTURES

RUN = FIXTURES / "runs" / "five-arches"


def gnuplot_blocks(text: str) -> list[str]:
    """The variant each index of a .dat file holds, as gnuplot counts indices: blocks are
    separated by two blank lines, and a block without data lines is not an index."""
    out = []
    for block in re.split(r"\n\s*\n\s*\n", text):
        lines = [line for line in block.splitlines() if line.strip()]
        data = [line for line in lines if not line.startswith("#")]
        if data:
            (name,) = [re.match(r'# "(\w+)"', line).group(1) for line in lines
                       if line.startswith("#")]
            out.append(name)
    return out


def test_each_scaling_line_is_titled_with_the_variant_it_draws(tmp_path):
    _, samples = load.load_run(RUN, allow_incomplete=False)[:2]
    summary = stats.summarize(samples)
    meta = plots.write_data(stats.guest(samples), stats.guest(summary), tmp_path)
    script = plots.script(meta, "pngcairo", "png")
    titles, last = {}, None
    for line in script.splitlines():
        if m := re.match(r'lines = "([^"]*)"$', line):
            last = m.group(1).split()
        elif line.startswith("plot for") and (m := re.search(r'"(scaling-[^"]+\.dat)"', line)):
            titles[m.group(1)] = last
    checked = 0
    for dat in sorted(tmp_path.glob("scaling-*.dat")):
        assert titles[dat.name] == gnuplot_blocks(dat.read_text()), dat.name
        checked += 1
    arm = gnuplot_blocks((tmp_path / "scaling-arm-jump_label-disabled.dat").read_text())
    assert arm and all(v.startswith("c_") for v in arm)
    assert checked == 30
