"""Copy the labelled real documents (tests/extractors/data/real/) from a Debian machine.

    python -m tests.benchmarks.collect_real_docs [--check]

The documents are files such a machine holds and nobody here wrote: licences
(/usr/share/common-licenses), HTML manuals, READMEs, Markdown, changelogs and NEWS files
(/usr/share/doc), and man pages rendered to text as people save them (`MANWIDTH=80 man -P cat
PAGE | col -b`), English and translated. Each one's label is in SOURCES below, written from
what the file is (a licence, a manual, a changelog, a list of names), before docbeam was run
on any of them; `null` is a document none of the default labels fits.

Every file comes from a Debian `main` package (free to redistribute under the Debian Free
Software Guidelines); labels.jsonl names the package and its copyright file. Licence texts,
whose own terms allow only verbatim copies, are copied whole; everything else is cut after
MAX_CHARS characters (HTML: MAX_HTML_CHARS), at a line end, to keep the repository small. `--check` rebuilds nothing
and says which copies in the repository differ from the sha256 labels.jsonl records.
"""

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "extractors" / "data" / "real"
MAX_CHARS = 6000
MAX_HTML_CHARS = 16000  # markup is most of an HTML file's characters
DOC = "/usr/share/doc"
LIC = "/usr/share/common-licenses"

LEGAL, TECH, RELEASE, NONE = "legal contract", "technical documentation", "release notes", None

# (name in the repository, label, where it comes from: a path, or "man:[LANG/]SECTION/PAGE")
SOURCES: list[tuple[str, str | None, str]] = [
    # licences
    ("licence-apache-2.0.txt", LEGAL, f"{LIC}/Apache-2.0"),
    ("licence-artistic.txt", LEGAL, f"{LIC}/Artistic"),
    ("licence-bsd.txt", LEGAL, f"{LIC}/BSD"),
    ("licence-cc0-1.0.txt", LEGAL, f"{LIC}/CC0-1.0"),
    ("licence-gfdl-1.3.txt", LEGAL, f"{LIC}/GFDL-1.3"),
    ("licence-gpl-2.txt", LEGAL, f"{LIC}/GPL-2"),
    ("licence-gpl-3.txt", LEGAL, f"{LIC}/GPL-3"),
    ("licence-lgpl-2.1.txt", LEGAL, f"{LIC}/LGPL-2.1"),
    ("licence-lgpl-3.txt", LEGAL, f"{LIC}/LGPL-3"),
    ("licence-mpl-2.0.txt", LEGAL, f"{LIC}/MPL-2.0"),
    ("licence-valgrind-gpl.html", LEGAL, f"{DOC}/valgrind/html/license.gpl.html"),
    ("licence-valgrind-gfdl.html", LEGAL, f"{DOC}/valgrind/html/license.gfdl.html"),
    # man pages, English
    ("man-ls.txt", TECH, "man:1/ls"),
    ("man-cp.txt", TECH, "man:1/cp"),
    ("man-mv.txt", TECH, "man:1/mv"),
    ("man-chmod.txt", TECH, "man:1/chmod"),
    ("man-chsh.txt", TECH, "man:1/chsh"),
    ("man-passwd.txt", TECH, "man:1/passwd"),
    ("man-tar.txt", TECH, "man:1/tar"),
    ("man-grep.txt", TECH, "man:1/grep"),
    ("man-sed.txt", TECH, "man:1/sed"),
    ("man-gzip.txt", TECH, "man:1/gzip"),
    ("man-find.txt", TECH, "man:1/find"),
    ("man-ssh.txt", TECH, "man:1/ssh"),
    ("man-diff.txt", TECH, "man:1/diff"),
    ("man-passwd-file.txt", TECH, "man:5/passwd"),
    # man pages, translated
    ("man-de-passwd.txt", TECH, "man:de/1/passwd"),
    ("man-fr-passwd.txt", TECH, "man:fr/1/passwd"),
    ("man-de-chsh.txt", TECH, "man:de/1/chsh"),
    ("man-de-dpkg.txt", TECH, "man:de/1/dpkg"),
    ("man-fr-chsh.txt", TECH, "man:fr/1/chsh"),
    # HTML manuals
    ("html-users-and-groups.html", TECH, f"{DOC}/base-passwd/users-and-groups.html"),
    ("html-libffi-introduction.html", TECH, f"{DOC}/libffi8/html/Introduction.html"),
    ("html-libffi-closure-example.html", TECH, f"{DOC}/libffi8/html/Closure-Example.html"),
    ("html-libffi-thread-safety.html", TECH, f"{DOC}/libffi8/html/Thread-Safety.html"),
    ("html-libffi-structures.html", TECH, f"{DOC}/libffi8/html/Structures.html"),
    ("html-python-policy.html", TECH, f"{DOC}/python3/python-policy.html"),
    ("html-valgrind-quick-start.html", TECH, f"{DOC}/valgrind/html/quick-start.html"),
    ("html-valgrind-memcheck.html", TECH, f"{DOC}/valgrind/html/mc-manual.html"),
    ("html-valgrind-faq.html", TECH, f"{DOC}/valgrind/html/faq.html"),
    ("html-zlib-how.html", TECH, f"{DOC}/zlib1g-dev/examples/zlib_how.html"),
    # READMEs, Markdown and plain-text manuals
    ("readme-git.md", TECH, f"{DOC}/git/README.md"),
    ("readme-libxml2.md", TECH, f"{DOC}/libxml2/README.md"),
    ("readme-glib.md", TECH, f"{DOC}/libglib2.0-0/README.md"),
    ("readme-libcbor.md", TECH, f"{DOC}/libcbor0.8/README.md"),
    ("readme-pyyaml.md", TECH, f"{DOC}/python3-yaml/README.md"),
    ("readme-procps-bugs.md", TECH, f"{DOC}/procps/bugs.md"),
    ("readme-gzip.txt", TECH, f"{DOC}/gzip/README.gz"),
    ("readme-e2fsprogs.txt", TECH, f"{DOC}/e2fsprogs/README"),
    ("readme-dpkg-api.txt", TECH, f"{DOC}/dpkg/README.api"),
    ("readme-base-passwd.txt", TECH, f"{DOC}/base-passwd/README"),
    ("manual-man-db.txt", TECH, f"{DOC}/man-db/man-db-manual.txt.gz"),
    ("manual-libpng.txt", TECH, f"{DOC}/libpng16-16/libpng-manual.txt.gz"),
    ("spec-dpkg-triggers.txt", TECH, f"{DOC}/dpkg/spec/triggers.txt"),
    ("spec-xz-file-format.txt", TECH, f"{DOC}/liblzma-dev/xz-file-format.txt.gz"),
    ("faq-procps.txt", TECH, f"{DOC}/procps/FAQ.gz"),
    # changelogs, NEWS, release notes
    ("news-gzip.txt", RELEASE, f"{DOC}/gzip/NEWS.gz"),
    ("news-coreutils.txt", RELEASE, f"{DOC}/coreutils/NEWS.gz"),
    ("news-bash.txt", RELEASE, f"{DOC}/bash/NEWS.gz"),
    ("news-gnutls.txt", RELEASE, f"{DOC}/libgnutls30/NEWS.gz"),
    ("changelog-zstd.txt", RELEASE, f"{DOC}/zstd/changelog.gz"),
    ("changelog-libsodium.txt", RELEASE, f"{DOC}/libsodium23/changelog.gz"),
    ("changelog-procps.txt", RELEASE, f"{DOC}/procps/changelog.gz"),
    ("changelog-debian-gzip.txt", RELEASE, f"{DOC}/gzip/changelog.Debian.gz"),
    ("changelog-debian-coreutils.txt", RELEASE, f"{DOC}/coreutils/changelog.Debian.gz"),
    ("relnotes-git-2.38.2.txt", RELEASE, f"{DOC}/git/RelNotes/2.38.2.txt"),
    ("relnotes-git-1.7.0.6.txt", RELEASE, f"{DOC}/git/RelNotes/1.7.0.6.txt"),
    ("news-valgrind.html", RELEASE, f"{DOC}/valgrind/html/dist.news.html"),
    # none of the default labels: lists of people
    ("authors-coreutils.txt", NONE, f"{DOC}/coreutils/AUTHORS"),
    ("thanks-coreutils.txt", NONE, f"{DOC}/coreutils/THANKS.gz"),
    ("authors-dbus.txt", NONE, f"{DOC}/dbus/AUTHORS.gz"),
    ("authors-bc.txt", NONE, f"{DOC}/bc/AUTHORS"),
    ("thanks-dirmngr.txt", NONE, f"{DOC}/dirmngr/THANKS.gz"),
    ("authors-valgrind.html", NONE, f"{DOC}/valgrind/html/dist.authors.html"),
]


def read_source(source: str) -> tuple[str, str]:
    """(text, the file it came from)."""
    if source.startswith("man:"):
        parts = source[4:].split("/")
        lang, section, page = parts if len(parts) == 3 else ["", *parts]
        path = f"/usr/share/man/{lang + '/' if lang else ''}man{section}/{page}.{section}.gz"
        env = {**os.environ, "MANWIDTH": "80", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""}
        shown = subprocess.run(["man", "-P", "cat", "-l", path], env=env, capture_output=True, check=True)
        text = subprocess.run(["col", "-b"], input=shown.stdout, capture_output=True, check=True).stdout
        return text.decode("utf-8"), path
    raw = Path(source).read_bytes()
    if source.endswith(".gz"):
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace"), source


def package_of(path: str) -> str:
    found = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
    return found.stdout.split(":")[0].strip() if found.returncode == 0 else "unknown"


def excerpt(text: str, most: int | None) -> str:
    """The first `most` characters cut at the last line end before them (None: all)."""
    if most is None or len(text) <= most:
        return text
    cut = text.rfind("\n", 0, most)
    return text[: cut + 1 if cut > 0 else most]


def collect() -> list[dict]:
    rows = []
    for name, label, source in SOURCES:
        text, path = read_source(source)
        most = None if source.startswith(LIC) else MAX_HTML_CHARS if name.endswith(".html") else MAX_CHARS
        kept = excerpt(text, most)
        (OUT / name).write_text(kept, encoding="utf-8")
        pkg = package_of(path)
        rows.append(
            {
                "file": name,
                "label": label,
                "source": source,
                "package": pkg,
                "copyright": f"{DOC}/{pkg}/copyright",
                "excerpt": len(kept) < len(text),
                "sha256": hashlib.sha256(kept.encode("utf-8")).hexdigest(),
            }
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only compare the copies with this machine's files")
    args = ap.parse_args()
    if args.check:
        rows = [json.loads(line) for line in (OUT / "labels.jsonl").read_text().splitlines()]
        differ = [r["file"] for r in rows if hashlib.sha256((OUT / r["file"]).read_bytes()).hexdigest() != r["sha256"]]
        print(f"{len(rows) - len(differ)} of {len(rows)} copies as recorded; differ: {differ or 'none'}")
        return 1 if differ else 0
    OUT.mkdir(parents=True, exist_ok=True)
    rows = collect()
    (OUT / "labels.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    counts: dict[str, int] = {}
    for r in rows:
        counts[str(r["label"])] = counts.get(str(r["label"]), 0) + 1
    print(f"{len(rows)} documents in {OUT}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
