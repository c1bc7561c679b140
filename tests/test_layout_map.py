"""The README's layout map names every folder of the tree, where it is, and nothing else."""

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Folders the map must name: the top level, and below these, each folder one level down.
MAPPED_CHILDREN = ("pipeline", "pipeline/ingest", "pipeline/launch", "infra")


def map_folders() -> set[str]:
    """Folder paths in the map, from each `name/` entry and its indentation (two spaces a level)."""
    text = (REPO / "README.md").read_text()
    block = text.split("## Layout", 1)[1].split("```\n", 2)[1]
    found, parents = set(), []
    for line in block.splitlines():
        m = re.match(r"^( *)([a-z_]+)/ ", line)
        if not m:
            continue
        depth = len(m.group(1)) // 2
        parents[depth:] = [m.group(2)]
        found.add("/".join(parents))
    return found


def tree_folders() -> set[str]:
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    folders = {f.split("/")[0] for f in files if "/" in f and not f.startswith(".")}
    for parent in MAPPED_CHILDREN:
        depth = parent.count("/") + 1
        folders |= {
            "/".join(f.split("/")[: depth + 1]) for f in files if f.startswith(parent + "/") and f.count("/") > depth
        }
    return folders


def test_the_layout_map_matches_the_tree():
    in_map, in_tree = map_folders(), tree_folders()
    assert in_tree - in_map == set(), f"folders the README's layout map leaves out: {sorted(in_tree - in_map)}"
    assert in_map - in_tree == set(), f"folders in the map that the tree lacks: {sorted(in_map - in_tree)}"
    assert {"pipeline/launch/running", "pipeline/stores", "infra/packaging"} <= in_map  # the map was read
