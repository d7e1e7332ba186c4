"""A quilt-style series file: the patches a kernel's tree applies, in order."""

from pathlib import Path


def series_files(patches: Path) -> list[Path]:
    """The patches `patches`/series lists, in order: one path per line, relative to
    `patches`; blank lines and lines starting with # are not patches."""
    names = [line.strip() for line in (patches / "series").read_text().splitlines()]
    return [patches / n for n in names if n and not n.startswith("#")]


def own_patches(patches: Path) -> list[Path]:
    """The patches of the series that live in `patches` itself, not those it borrows from
    another directory (patches-mainline-series/ applies mainline's harness patch first)."""
    return [p for p in series_files(patches) if p.resolve().parent == patches.resolve()]
