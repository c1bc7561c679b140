"""What the checkpoint reader refuses, and how it says so: one clear CheckpointError naming
the file and the problem, never a KeyError from deep inside the model."""

import numpy as np
import pytest

from docbeam.model.checkpoint import describe_checkpoint, load_checkpoint
from docbeam.model.config import CheckpointError
from tests.model.tiny import write_tiny_bert


def test_the_tiny_checkpoint_loads(tmp_path):
    ckpt, params = load_checkpoint(write_tiny_bert(tmp_path / "ok"))
    assert ckpt.config.hidden == 8 and params["embeddings"]["word"].shape == (ckpt.config.vocab_size, 8)


def test_unknown_model_type_names_what_is_supported(tmp_path):
    path = write_tiny_bert(tmp_path / "gpt", config={"model_type": "gpt2"})
    with pytest.raises(
        CheckpointError,
        match=r"config.json: model_type 'gpt2' is not supported; docbeam reads bert, xlm-roberta, roberta, modernbert",
    ):
        describe_checkpoint(path)


def test_unknown_pooling_mode_is_refused(tmp_path):
    path = write_tiny_bert(tmp_path / "p", pooling={"pooling_mode": "median"})
    with pytest.raises(CheckpointError, match=r"1_Pooling/config.json: pooling mode\(s\) \['median'\] unknown"):
        describe_checkpoint(path)


def test_legacy_pooling_keys_concatenate_in_sentence_transformers_order(tmp_path):
    path = write_tiny_bert(tmp_path / "p", pooling={"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": True})
    cfg = describe_checkpoint(path).config
    assert cfg.head.pooling == ("cls", "mean") and cfg.embedding_dim == 16


def test_unknown_module_is_refused_by_name(tmp_path):
    path = write_tiny_bert(tmp_path / "m", pooling={"pooling_mode": "mean"}, modules=[("LayerNorm", "2_LayerNorm")])
    with pytest.raises(CheckpointError, match=r"modules.json: module 'LayerNorm' is not supported"):
        describe_checkpoint(path)


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("config.json", "no config.json"),
        ("tokenizer.json", "no tokenizer.json"),
        ("model.safetensors", "no model.safetensors \\(docbeam never loads pickled weights\\)"),
    ],
)
def test_missing_files_are_named(tmp_path, missing, message):
    path = write_tiny_bert(tmp_path / "m")
    (path / missing).unlink()
    with pytest.raises(CheckpointError, match=message):
        describe_checkpoint(path)


def test_pickle_only_weights_are_refused_not_loaded(tmp_path):
    path = write_tiny_bert(tmp_path / "pickle")
    (path / "model.safetensors").unlink()
    (path / "pytorch_model.bin").write_bytes(b"a pickle docbeam must never open")
    with pytest.raises(CheckpointError, match="never loads pickled weights"):
        load_checkpoint(path)


def test_bert_prefixed_weights_load_as_the_bare_encoder(tmp_path):
    """BertForX checkpoints prefix the encoder with `bert.`: same parameters as the bare model."""
    _, bare = load_checkpoint(write_tiny_bert(tmp_path / "bare"))
    _, prefixed = load_checkpoint(write_tiny_bert(tmp_path / "prefixed", prefix="bert."))
    assert np.array_equal(bare["layers"][0]["qkv"]["w"], prefixed["layers"][0]["qkv"]["w"])


def test_foreign_prefixed_weights_are_a_clear_error(tmp_path):
    path = write_tiny_bert(tmp_path / "roberta", prefix="roberta.")
    with pytest.raises(CheckpointError, match="missing tensor .*expected a bert encoder layout"):
        load_checkpoint(path)


def test_weights_that_disagree_with_the_config_are_refused(tmp_path):
    path = write_tiny_bert(tmp_path / "shape", config={"vocab_size": 100})
    with pytest.raises(CheckpointError, match=r"word embeddings \(\d+, 8\), config says \(100, 8\)"):
        load_checkpoint(path)
