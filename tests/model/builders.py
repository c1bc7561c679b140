"""Small random-weight checkpoints built with `transformers` and saved by sentence-transformers
(SentenceTransformer(modules=...).save(dir)), so docbeam and the reference read the same
directory. One per architecture, tokenizers included:

- BERT and ModernBERT use all-MiniLM-L6-v2's WordPiece tokenizer ([CLS] ... [SEP]);
- XLM-RoBERTa gets a small Unigram (SentencePiece-style) tokenizer trained here with
  `tokenizers` on the multilingual sentences below, with XLM-R's <s> ... </s> template.

Weights are drawn with a large init range so the vectors of different texts differ clearly.
"""

import functools
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from docbeam.model.checkpoint import default_checkpoint_dir

HIDDEN, HEADS, FFN = 64, 4, 128

# Real sentences (written for these tests): Turkish with its dotted/dotless i and
# cedillas, German with umlauts and ß, Japanese without spaces.
MULTILINGUAL = {
    "tr": [
        "İstanbul'da sabah erkenden vapura bindik ve Boğaz'ın iki yakasını seyrettik.",
        "Öğretmenimiz ödevlerin cuma gününe kadar teslim edilmesi gerektiğini söyledi.",
        "Kışın dağ köylerine ulaşım zorlaşıyor, yollar çoğu zaman karla kapanıyor.",
        "Çarşıdaki eski kitapçı, ışığı az olan dükkânında yüzlerce nadir eser saklıyor.",
        "Şehrin kuzeyindeki ormanda yürüyüş yapmak hafta sonlarının en güzel alışkanlığı oldu.",
    ],
    "de": [
        "Die Straßenbahn fährt heute wegen Bauarbeiten nur bis zum Hauptbahnhof.",
        "Großmutter backt jeden Sonntag einen Apfelkuchen für die ganze Familie.",
        "Über die Brücke gehen täglich tausende Pendler zur Arbeit in die Innenstadt.",
        "Der Bürgermeister eröffnete das neue Schwimmbad mit einer kurzen Rede.",
        "Im Frühling blühen an der Mosel die Obstbäume, und die Weinberge werden grün.",
    ],
    "ja": [
        "昨日は雨が降っていたので、一日中家で本を読んでいました。",
        "東京駅から新幹線に乗って、二時間ほどで京都に着きます。",
        "この店のラーメンはとても美味しいと評判で、いつも行列ができています。",
        "来週の会議では、新しい製品の計画について話し合う予定です。",
        "桜の季節になると、公園は花見をする人々でにぎわいます。",
    ],
}


def _wordpiece(dest: Path) -> None:
    """MiniLM's tokenizer files (WordPiece, [CLS] ... [SEP] template)."""
    src = default_checkpoint_dir()
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        if (src / name).exists():
            shutil.copy(src / name, dest / name)


def _unigram(dest: Path):
    """A small Unigram tokenizer trained here, laid out like XLM-R's (Metaspace, <s> </s>)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    from tests.corpus import varied_texts

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    corpus = [s for sents in MULTILINGUAL.values() for s in sents] * 20 + varied_texts(200, seed=7)
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    tok.train_from_iterator(
        corpus, trainers.UnigramTrainer(vocab_size=2000, special_tokens=specials, unk_token="<unk>")
    )
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        cls_token="<s>",
        sep_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        model_max_length=512,
    )
    fast.save_pretrained(dest)
    return tok.get_vocab_size()


def _vocab_size(dest: Path) -> int:
    return len(json.loads((dest / "tokenizer.json").read_text())["model"]["vocab"])


def encoder_config(arch: str, dest: Path, **fields):
    """A 2-layer BERT or XLM-RoBERTa config with a tokenizer of its kind trained into `dest`."""
    from transformers import BertConfig, XLMRobertaConfig

    if arch == "bert":
        _wordpiece(dest)
        return BertConfig(vocab_size=_vocab_size(dest), num_hidden_layers=2, max_position_embeddings=512, **fields)
    vocab = _unigram(dest)
    return XLMRobertaConfig(
        vocab_size=vocab,
        num_hidden_layers=2,
        max_position_embeddings=514,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        **fields,
    )


def _hf_model(arch: str, dest: Path) -> int:
    """The bare transformers model with random weights, saved to `dest`; returns its max_seq_length."""
    import torch
    from transformers import BertModel, ModernBertConfig, ModernBertModel, XLMRobertaModel

    torch.manual_seed({"bert": 1, "xlm-roberta": 2, "modernbert": 3}[arch])
    # Large enough that texts differ clearly, small enough that attention is not a near-argmax
    # (where bfloat16 rounding flips which key wins: ModernBERT's 4 layers at 0.3 do that).
    init = {"bert": 0.3, "xlm-roberta": 0.3, "modernbert": 0.12}[arch]
    common = dict(hidden_size=HIDDEN, num_attention_heads=HEADS, intermediate_size=FFN, initializer_range=init)
    if arch in ("bert", "xlm-roberta"):
        cfg = encoder_config(arch, dest, **common)
        model_class = BertModel if arch == "bert" else XLMRobertaModel
        model, max_len = model_class(cfg, add_pooling_layer=False), 512
    else:
        _wordpiece(dest)
        # 4 layers: global, local, local, global (global_attn_every_n_layers=3), window 64 either side.
        cfg = ModernBertConfig(
            vocab_size=_vocab_size(dest),
            num_hidden_layers=4,
            max_position_embeddings=8192,
            pad_token_id=0,
            cls_token_id=101,
            sep_token_id=102,
            bos_token_id=101,
            eos_token_id=102,
            local_attention=128,
            **common,
        )
        model, max_len = ModernBertModel(cfg), 8192
    with torch.no_grad():  # visible LayerNorm gains and biases (they start at 1 and 0)
        for name, p in model.named_parameters():
            if "norm" in name.lower():
                p.add_(torch.randn_like(p) * 0.2)
    model.save_pretrained(dest)
    return max_len


def save_sentence_transformer(
    src: Path,
    dest: Path,
    *,
    max_len: int,
    pooling,
    include_prompt: bool = True,
    dense: tuple[tuple[int, str], ...] = (),
    normalize: bool = False,
    prompts: dict | None = None,
) -> Path:
    """sentence-transformers modules around the transformer in `src`, saved to `dest`."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Dense, Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    torch.manual_seed(5)
    modules = [Transformer(str(src), max_seq_length=max_len)]
    modules.append(Pooling(HIDDEN, pooling, include_prompt=include_prompt))
    width = HIDDEN * (1 if isinstance(pooling, str) else len(pooling))
    for out, act in dense:
        activation = {"tanh": torch.nn.Tanh(), "identity": torch.nn.Identity(), "gelu": torch.nn.GELU()}[act]
        modules.append(Dense(width, out, activation_function=activation))
        width = out
    if normalize:
        modules.append(Normalize())
    SentenceTransformer(modules=modules, prompts=prompts or {}).save(str(dest))
    return dest


@functools.cache
def base_model(arch: str) -> tuple[Path, int]:
    """The transformer weights + tokenizer of `arch` (built once per session)."""
    dest = Path(tempfile.mkdtemp(prefix=f"docbeam-{arch}-"))
    return dest, _hf_model(arch, dest)


def checkpoint(arch: str, root: Path, **head) -> Path:
    """A complete checkpoint directory of `arch` with the given sentence-transformers head."""
    src, max_len = base_model(arch)
    name = f"{arch}-{hashlib.sha256(repr(sorted(head.items())).encode()).hexdigest()[:12]}"
    return save_sentence_transformer(src, root / name, max_len=max_len, **head)
