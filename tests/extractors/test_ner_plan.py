"""--ner-model at launch: resolved and checked before the job, in the fingerprint, staged for
remote workers; --help says how to get a model."""

import shutil

import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from safetensors.numpy import load_file, save_file

from docbeam.model.checkpoint import default_checkpoint_dir, sha256_of
from docbeam.pipeline.core.flags import UsageError, job_parser
from docbeam.pipeline.encode.runtime import TOKEN_CLASSIFICATION
from docbeam.pipeline.io import checkpoints
from docbeam.pipeline.launch.planning.planner import make_plan, stage_for_workers
from tests.extractors.ner_checkpoints import CONLL, ner_checkpoint
from tests.helpers import SAMPLES
from tests.io.test_hub import COMMIT, lay_out_cache


def plan_of(*flags: str, extract: str = "entities"):
    argv = ["--input", str(SAMPLES / "notes.txt"), "--extract", extract, *flags]
    return make_plan(PipelineOptions(argv), needs_output=False)


def test_without_ner_model_the_settings_are_unchanged():
    plan = plan_of()
    assert plan.ner is None and "ner" not in plan.settings  # earlier runs keep their fingerprints


def test_the_classifier_is_planned_and_in_the_fingerprint():
    bert, xlmr = ner_checkpoint("bert"), ner_checkpoint("xlm-roberta")
    plan = plan_of("--ner-model", str(bert))
    ner = plan.ner
    assert ner.labels == CONLL and ner.aggregation == "first" and ner.config.arch == "bert"
    assert ner.encoder.task == TOKEN_CLASSIFICATION and ner.encoder.model == str(bert)
    assert ner.encoder.model_sha256 == ner.weights_sha256 == sha256_of(bert / "model.safetensors")
    assert ner.windowing.max_seq_len == 512 and ner.encoder.pack.seq_len == 512
    hashes = {
        plan.settings_hash,
        plan_of("--ner-model", str(xlmr)).settings_hash,
        plan_of("--ner-model", str(bert), "--ner-aggregation", "simple").settings_hash,
        plan_of().settings_hash,
    }
    assert len(hashes) == 4  # --reuse never copies entities from another classifier or rule


@pytest.fixture(scope="module")
def without_classifier(tmp_path_factory):
    """A checkpoint with BIO labels whose weights lack the classifier (a bare encoder)."""
    dest = tmp_path_factory.mktemp("bare") / "bare"
    shutil.copytree(ner_checkpoint("bert"), dest)
    tensors = load_file(dest / "model.safetensors")
    save_file({k: v for k, v in tensors.items() if not k.startswith("classifier.")}, dest / "model.safetensors")
    return dest


@pytest.mark.parametrize(
    "case, match",
    [
        ("no entities", "--ner-model adds to the entities extractor: add --extract entities"),
        ("embedding model", r"--ner-model: .*config.json: id2label .* has no B-/I- tags"),
        ("no classifier", r"--ner-model: .*model.safetensors: no classifier.weight, classifier.bias"),
        ("missing", r"--ner-model: .*not a directory"),
    ],
)
def test_a_model_that_cannot_tag_fails_at_launch_in_one_line(case, match, without_classifier, tmp_path):
    path = {
        "no entities": ner_checkpoint("bert"),
        "embedding model": default_checkpoint_dir(),
        "no classifier": without_classifier,
        "missing": tmp_path / "nowhere",
    }[case]
    with pytest.raises(UsageError, match=match):
        plan_of("--ner-model", str(path), extract="summary" if case == "no entities" else "entities")


def test_hub_id_resolved_once_and_staged_for_remote_workers(tmp_path, monkeypatch, gcs_emulator):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    snapshot = lay_out_cache(tmp_path / "hf", "acme/tiny-ner", ner_checkpoint("bert"))
    with pytest.raises(UsageError, match="--ner-model acme/absent: not in the Hugging Face cache"):
        plan_of("--ner-model", "acme/absent")
    temp = f"gs://{gcs_emulator.create_bucket()}/tmp"
    with pytest.raises(UsageError, match="--ner-model is local: a remote runner needs --temp_location"):
        stage_for_workers(plan_of("--ner-model", "acme/tiny-ner"), PipelineOptions([]))
    argv = ["--input", str(SAMPLES / "notes.txt"), "--extract", "entities", "--ner-model", "acme/tiny-ner"]
    options = PipelineOptions([*argv, f"--temp_location={temp}"])
    plan = make_plan(options, needs_output=False)
    assert plan.ner.model_name == f"acme/tiny-ner@{COMMIT}" and plan.ner.encoder.model == str(snapshot)
    staged = stage_for_workers(plan, options).ner
    assert staged.encoder.model == f"{temp}/docbeam-models/{checkpoints.staging_key(plan.ner.encoder.files_sha256)}"
    local = checkpoints.localize_checkpoint(staged.encoder.model, tmp_path / "worker", staged.encoder.model_sha256)
    assert sha256_of(local / "model.safetensors") == plan.ner.weights_sha256


def test_help_says_how_to_get_a_model():
    text = "".join(job_parser("docbeam run").format_help().split())  # argparse wraps inside hyphenated words
    assert "--ner-modelPATH|HUB_ID" in text and "dslim/bert-base-NER" in text and "docs/ner.md" in text
    assert "--ner-aggregation{first,simple,average,max}" in text and "entitiesarethepatternsonly" in text
