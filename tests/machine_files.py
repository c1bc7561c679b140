"""Real documents of the machine the tests run on, of the kinds docbeam meets in the wild: man
pages rendered to text as a reader saves them, HTML manuals and Markdown under /usr/share/doc,
licences under /usr/share/common-licenses, Markdown of installed Python packages. What exists
differs between machines: each helper picks what it finds, in a fixed order, and the test
helpers (`man_pages`, `markdown_files`, ...) skip the test cleanly when they find none. The
benchmark tests/benchmarks/extraction_defects.py picks its files here too."""

import functools
import glob
import gzip
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

MAN_PAGES = "/usr/share/man/man1/*.1.gz"
TRANSLATED_MAN_PAGES = "/usr/share/man/[a-z][a-z]/man1/*.1.gz"
HTML = ("/usr/share/doc/**/*.html",)
LICENCES = ("/usr/share/common-licenses/*",)
MARKDOWN = ("/usr/share/doc/**/*.md", "/usr/share/doc/**/*.md.gz", f"{sys.prefix}/lib/python3*/site-packages/**/*.md")
FAMILY = re.compile(r"[^_.\-/]+")  # `gcloud` of gcloud_alpha_..., `git` of git-commit: one page per family


def spread(paths: list[str], n: int, key: Callable[[str], str] = str) -> list[str]:
    """`n` of `paths`, one per `key` first (spread over the sorted keys), so one package's
    files do not make the set; then others, spread likewise."""
    paths = sorted(paths)
    firsts: dict[str, str] = {}
    for p in paths:
        firsts.setdefault(key(p), p)
    heads = list(firsts.values())
    heads = heads[:: max(1, len(heads) // n)]
    rest = [p for p in paths if p not in set(heads)]
    return (heads + rest[:: max(1, len(rest) // n)] if rest else heads)[:n]


def family(path: str) -> str:
    """A man page's family: its folder and the first word of its name (`man1/gcloud`)."""
    m = FAMILY.match(Path(path).name)
    return f"{Path(path).parent}/{m.group() if m else Path(path).name}"


@functools.cache
def render_man(page: str, spaces: bool = False) -> str | None:
    """A man page as `MANWIDTH=80 man -l PAGE | col -b` prints it (`col -bx` with `spaces`: no
    tabs), or None where it cannot be."""
    env = {**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8"}
    try:
        raw = subprocess.run(["man", "-l", page], capture_output=True, env=env, timeout=60, check=True).stdout
        col = ["col", "-bx"] if spaces else ["col", "-b"]
        text = subprocess.run(col, input=raw, capture_output=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    decoded = text.decode("utf-8", "replace")
    return decoded if len(decoded) > 300 else None


def find_man_pages(
    n: int, pattern: str = MAN_PAGES, wanted: Callable[[str], bool] | None = None
) -> list[tuple[str, str]]:
    """(page path, its text) for up to `n` man pages of different families, every other one
    rendered with spaces for tabs (both are how people save man pages). `wanted(source)`: only
    pages whose roff source it accepts (looked for among 40 times `n` pages, spread)."""
    if not (shutil.which("man") and shutil.which("col")):
        return []
    pages = spread(glob.glob(pattern), n * 40 if wanted else n * 2, family)
    if wanted is not None:
        pages = [p for p in pages if wanted(read(p))][: n * 2]
    return [(p, t) for i, p in enumerate(pages) if (t := render_man(p, spaces=i % 2 == 1))][:n]


def read(path: str) -> str:
    data = gzip.open(path).read() if path.endswith(".gz") else Path(path).read_bytes()
    return data.decode("utf-8", "replace")


def find_files(
    patterns: tuple[str, ...], n: int, min_bytes: int = 1000, wanted: Callable[[str], bool] | None = None
) -> list[str]:
    """Up to `n` files matching `patterns`, one per folder first; `wanted(text)`: only those."""
    paths = [p for pat in patterns for p in glob.glob(pat, recursive=True) if os.path.isfile(p)]
    paths = [p for p in paths if os.path.getsize(p) >= min_bytes]
    if wanted is not None:
        paths = [p for p in paths if wanted(read(p))]
    return spread(paths, n, lambda p: str(Path(p).parent))


def _or_skip(found: list, what: str) -> list:
    if not found:
        pytest.skip(f"no {what} here")
    return found


def man_pages(
    n: int = 8, pattern: str = MAN_PAGES, wanted: Callable[[str], bool] | None = None
) -> list[tuple[str, str]]:
    return _or_skip(find_man_pages(n, pattern, wanted), f"man page renders ({pattern}; man and col installed?)")


def texts(patterns: tuple[str, ...], n: int, what: str, **kw) -> list[tuple[str, str]]:
    return _or_skip([(p, read(p)) for p in find_files(patterns, n, **kw)], what)


def markdown_files(n: int = 8, **kw) -> list[tuple[str, str]]:
    return texts(MARKDOWN, n, "Markdown files", **kw)


def html_manuals(n: int = 8, **kw) -> list[tuple[str, str]]:
    return texts(HTML, n, "HTML manuals", min_bytes=2000, **kw)


def licences(n: int = 8) -> list[tuple[str, str]]:
    return texts(LICENCES, n, "licences")
