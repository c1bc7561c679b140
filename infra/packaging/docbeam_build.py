"""setuptools' build backend, with editable installs in strict mode.

docbeam's import root maps onto the top-level folders (docbeam.pipeline -> pipeline/), which
setuptools' default editable mode serves through an import hook that editors and type checkers
cannot follow. Strict mode installs a tree of links on a static path instead (build/__editable__.*),
so pyright and mypy resolve `docbeam.*` from a plain `pip install -e .`. A module added or removed
after the install appears once `pip install -e .` runs again."""

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (the whole PEP 517 interface, unchanged)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    config_settings = {"editable_mode": "strict", **(config_settings or {})}
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
