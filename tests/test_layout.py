"""The house's shape, as issue 33 left it: data flows one way, and one command runs the
pipeline whose steps are also commands of their own."""

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("common", "kelf", "runner", "analysis", "tpbench")


def imports(package: str) -> dict[str, set[str]]:
    """The repository's packages each module of `package` imports (at any depth)."""
    out = {}
    for path in sorted((REPO / package).glob("*.py")):
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found |= {n.split(".")[0] for n in names if n.split(".")[0] in PACKAGES}
        out[f"{package}/{path.name}"] = found - {package}
    return out


def test_common_and_kelf_import_neither_stage():
    for package in ("common", "kelf"):
        for module, found in imports(package).items():
            assert not found & {"runner", "analysis", "tpbench"}, (module, found)


def test_runner_imports_no_analysis():
    for module, found in imports("runner").items():
        assert not found & {"analysis", "tpbench"}, (module, found)


def test_the_pipeline_runs_each_step_as_its_own_command():
    out = subprocess.run([sys.executable, "-m", "tpbench", "--help"], cwd=REPO, text=True,
                         capture_output=True, check=True).stdout
    for step in ("bench", "run", "native", "codegen", "report"):
        assert step in out
    makefile = (REPO / "Makefile").read_text()
    for target in ("bench", "native", "codegen", "report"):
        assert f"-m tpbench {target} " in makefile, target


def test_analysis_imports_no_runner():
    """Data flows one way: runner -> run directory -> analysis (issue 33)."""
    for module, found in imports("analysis").items():
        assert not found & {"runner", "tpbench"}, (module, found)


def test_no_two_modules_import_each_other():
    graph = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).glob("*.py")):
            mods = set()
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module in PACKAGES:
                    mods |= {f"{node.module}.{a.name}" for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module:
                    mods.add(node.module)
            graph[f"{package}.{path.stem}"] = {m for m in mods if m in graph or
                                               m.split(".")[0] in PACKAGES}
    for a, targets in graph.items():
        for b in targets:
            assert a not in graph.get(b, set()), (a, b)


def test_no_unused_import_or_undefined_name():
    """pyflakes over every package and the tests: an import left behind after a move (the
    fmt aliases, the copies of cfg) is the first thing a newcomer trips over."""
    out = subprocess.run([sys.executable, "-m", "pyflakes", *PACKAGES, "tests"], cwd=REPO,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
