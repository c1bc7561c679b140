"""--language takes `auto` and the codes every language-dependent part supports; anything else
is one line, exit 2, before Beam and JAX load, with the choices and what was likely meant."""

import subprocess
import sys

import pytest

from docbeam.pipeline.core import languages
from tests.helpers import REPO

CASES = [
    # Russian (ru has stop words, no date and money patterns)
    ("russian", "'russian' is ru; docbeam's date and money patterns do not support it yet"),
    ("German", "(did you mean de?)"),
    ("türkçe", "(did you mean tr?)"),
    ("ru", "ru: docbeam's date and money patterns do not support it yet"),
    ("english", "(did you mean en?)"),
    ("englsh", "(did you mean en?)"),
    ("autp", "(did you mean auto?)"),
    ("xx", "choose from auto, de, en, es, fr, ja, tr"),
]


@pytest.mark.parametrize(("value", "message"), CASES)
def test_an_unsupported_language_is_a_usage_error_with_the_choices(value, message):
    code = (
        "import sys; from docbeam.pipeline.cli import main; rc = main(sys.argv[1:]); "
        "print(rc, 'apache_beam' in sys.modules, 'jax' in sys.modules)"
    )
    args = ["run", "--input", "x", "--output", "o", "--language", value]
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.stdout.split() == ["2", "False", "False"], (out.stdout, out.stderr)
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert f"--language: unsupported language {value!r}; choose from auto, de, en" in out.stderr, out.stderr
    assert message in out.stderr, out.stderr


def test_supported_codes_are_those_every_part_has_and_auto_is_the_default():
    import argparse

    from docbeam.pipeline.core.flags import add_job_flags

    assert languages.supported() == ["de", "en", "es", "fr", "ja", "tr"]  # every part has rules for these
    assert languages.check("tr") == "tr" and languages.check("auto") == "auto"
    parser = argparse.ArgumentParser()
    add_job_flags(parser)
    assert parser.get_default("language") == "auto"  # each document's own, detected at ingest
