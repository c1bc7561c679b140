"""The languages a checkpoint declares, the English-only warning, and what --language auto
changes in a run's plan."""

from docbeam.model.checkpoint import default_checkpoint_dir
from docbeam.pipeline.ingest import language_id
from docbeam.pipeline.launch.planning.model_languages import (
    MULTILINGUAL,
    ModelLanguages,
    counts,
    model_card_languages,
    of_model,
    warning,
)

ENGLISH_ONLY = ModelLanguages(("en",), "model card")


def test_the_default_checkpoint_declares_english():
    assert model_card_languages(default_checkpoint_dir()) == ("en",)
    assert of_model(default_checkpoint_dir(), "sentence-transformers/all-MiniLM-L6-v2").english_only


def test_a_multilingual_card_and_a_bare_folder(tmp_path):
    card = tmp_path / "card"
    card.mkdir()
    (card / "README.md").write_text("---\nlanguage:\n- multilingual\n- de\n- tr\nlicense: mit\n---\n# model\n")
    assert of_model(card, "x/y") == ModelLanguages(("de", "multilingual", "tr"), "model card")
    assert not of_model(card, "x/y").english_only
    bare = tmp_path / "all-MiniLM-L6-v2"
    bare.mkdir()  # no model card: the documented list of known English-only checkpoints
    assert of_model(bare, str(bare)) == ModelLanguages(("en",), "known English-only checkpoints")
    assert of_model(bare, "my-own-model") == ModelLanguages(None, "unknown")


def test_warning_from_a_fifth_of_the_documents():
    assert counts(["en", None, "de", "en"]) == {"en": 2, "de": 1, "und": 1}
    text = warning({"en": 4, "tr": 1}, ENGLISH_ONLY, "all-MiniLM-L6-v2")
    assert text.startswith("1 of 5 documents (20%) are not in English (tr: 1), but the model all-MiniLM-L6-v2")
    assert all(f"--model {m}" in text for m in MULTILINGUAL)
    assert warning({"en": 5, "tr": 1}, ENGLISH_ONLY, "m") is None  # 17%
    assert warning({"en": 1, "und": 4}, ENGLISH_ONLY, "m") is None  # undetermined is no other language
    assert warning({"tr": 5}, ModelLanguages(("multilingual",), "model card"), "m") is None
    assert warning({"tr": 5}, ModelLanguages(None, "unknown"), "m") is None


def test_auto_is_the_default_and_puts_the_detector_in_the_fingerprint(tmp_path):
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.launch.planning.planner import make_plan
    from tests.helpers import SAMPLES

    def plan(*flags):
        argv = ["--input", str(SAMPLES / "notes.txt"), "--output", str(tmp_path), "--extract", "summary", *flags]
        return make_plan(PipelineOptions(argv))

    auto, en = plan(), plan("--language", "en")
    assert auto.parse.language == "auto" and en.parse.language == "en"
    assert auto.settings["language_detector"] == language_id.identity()
    assert "language_detector" not in en.settings
    # No run-wide language in the windowing or the extractors' settings: each document's own applies.
    assert not hasattr(auto.windowing, "language")
    assert "language" not in auto.settings["extractors"]["summary"]
    assert auto.model_languages == {"languages": ["en"], "from": "model card"}
