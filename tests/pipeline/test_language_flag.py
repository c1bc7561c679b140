"""--language takes `auto` and the codes every language-dependent part supports; anything else
is one line, exit 2, before Beam and JAX load, with the choices and what was likely meant."""

import subprocess
import sys

import pytest

from docbeam.pipeline.core import languages
from docbeam.pipeline.ingest.sentences import sentences
from tests.helpers import REPO

CASES = [
    ("deutsch", "'deutsch' is de; docbeam's date and money patterns do not support it yet"),
    ("German", "'German' is de;"),
    ("de", "de: docbeam's date and money patterns do not support it yet"),
    ("english", "(did you mean en?)"),
    ("englsh", "(did you mean en?)"),
    ("autp", "(did you mean auto?)"),
    ("xx", "choose from auto, en"),
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
    assert f"--language: unsupported language {value!r}; choose from auto, en" in out.stderr, out.stderr
    assert message in out.stderr, out.stderr


def test_supported_codes_are_those_every_part_has_and_auto_splits_as_the_default():
    assert languages.supported() == ["en"]  # stop words and date patterns are English-only so far
    assert languages.check("en") == "en" and languages.check("auto") == "auto"
    text = "Dr. Smith arrived at 3 p.m. on Monday. He left.\n\nA new paragraph."
    assert sentences(text, "auto") == sentences(text, "en")
