"""Prompts and the real all-MiniLM-L6-v2 with CLS pooling, against sentence-transformers.

Prompts: the checkpoint's prompts come from config_sentence_transformers.json; the prompt's
tokens go in front of the text, and with `include_prompt: false` the pooling mask leaves
them out, exactly as sentence-transformers' `encode(text, prompt_name=...)` does.
"""

import json
import shutil

import pytest

from docbeam.model.checkpoint import default_checkpoint_dir, describe_checkpoint
from docbeam.model.prompts import prompt_tokens
from tests.corpus import varied_texts
from tests.model.builders import MULTILINGUAL, checkpoint
from tests.model.test_architecture_parity import assert_parity, docbeam_vectors, st_vectors

PROMPTS = {"query": "query: ", "passage": "passage: ", "classification": "Classify the topic: "}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("prompts")


def test_which_prompt_documents_and_queries_get(root):
    path = checkpoint("bert", root, pooling="mean", prompts=PROMPTS)
    prompts = describe_checkpoint(path).config.head.prompts
    assert prompts.document == "passage" and prompts.query == "query"
    assert prompts.resolve(None, "--prompt-name") == "passage"
    assert prompts.resolve("classification", "--prompt-name") == "classification"
    with pytest.raises(ValueError, match=r"no prompt named 'nope' \(the checkpoint's prompts: classification"):
        prompts.resolve("nope", "--prompt-name")


@pytest.mark.slow
@pytest.mark.parametrize(("arch", "include_prompt"), [("bert", True), ("xlm-roberta", False)])
def test_prompted_vectors_match_sentence_transformers(root, arch, include_prompt):
    path = checkpoint(arch, root, pooling=("mean", "cls"), include_prompt=include_prompt, prompts=PROMPTS)
    ckpt = describe_checkpoint(path)
    texts = varied_texts(60, seed=12) + (MULTILINGUAL["de"] if arch == "xlm-roberta" else [])
    for name in ("query", "passage"):
        prompt = prompt_tokens(ckpt.tokenizer, name, PROMPTS[name], len(ckpt.special.prefix))
        ours = docbeam_vectors(path, texts, prompt=prompt)
        ref = st_vectors(path, texts, prompt_name=name)
        assert_parity(ours, ref, 0.9999, f"{arch} prompt {name} include_prompt={include_prompt}")
        # The prompt changes the vectors (it is not silently dropped).
        assert assert_differs(ours, st_vectors(path, texts))


def assert_differs(a, b) -> bool:
    from tests.reference import cosine

    return bool(cosine(a, b).min() < 0.999)


def test_prompt_tokens_are_the_ones_the_joint_string_gets(root):
    """A SentencePiece prompt "query: " alone ends with a lone ▁; in front of text it does not."""
    ckpt = describe_checkpoint(checkpoint("xlm-roberta", root, pooling="mean"))
    p = prompt_tokens(ckpt.tokenizer, "query", "query: ", 1)
    text = "Die Straßenbahn fährt heute."
    joint = ckpt.tokenizer.encode("query: " + text, add_special_tokens=False).ids
    assert list(p.ids) + ckpt.tokenizer.encode(text, add_special_tokens=False).ids == joint
    assert p.pool_skip == 1 + len(ckpt.tokenizer.encode("query: ", add_special_tokens=False).ids)


@pytest.mark.slow
def test_real_minilm_with_cls_pooling(tmp_path):
    """all-MiniLM-L6-v2 with its Pooling switched to CLS in a copy of its config."""
    path = tmp_path / "minilm-cls"
    shutil.copytree(default_checkpoint_dir(), path)
    (path / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": 384, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    )
    assert describe_checkpoint(path).config.head.pooling == ("cls",)
    texts = varied_texts(100, seed=13)
    ref = st_vectors(path, texts)
    assert_parity(docbeam_vectors(path, texts), ref, 0.9999, "MiniLM cls float32")
    assert_parity(docbeam_vectors(path, texts[:40], "bfloat16"), ref[:40], 0.999, "MiniLM cls bfloat16")
