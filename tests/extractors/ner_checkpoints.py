"""Small random-weight token-classification checkpoints built with `transformers`
(BertForTokenClassification, XLMRobertaForTokenClassification) and saved with
save_pretrained (safetensors, `bert.` / `roberta.` prefixes, CoNLL-2003 labels), so docbeam and
the transformers pipeline read the same directory. Tokenizers as in tests/model/builders.py:
MiniLM's WordPiece for BERT, a Unigram trained there for XLM-R.
"""

import functools
import tempfile
from pathlib import Path

from tests.model.builders import FFN, HEADS, HIDDEN, encoder_config

# dslim/bert-base-NER's label order.
CONLL = ("O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC")


@functools.cache
def ner_checkpoint(arch: str) -> Path:
    """A token classifier of `arch` ("bert" or "xlm-roberta"), built once per session."""
    import torch
    from transformers import BertForTokenClassification, XLMRobertaForTokenClassification

    dest = Path(tempfile.mkdtemp(prefix=f"docbeam-ner-{arch}-"))
    torch.manual_seed({"bert": 17, "xlm-roberta": 18}[arch])
    labels = {"id2label": dict(enumerate(CONLL)), "label2id": {t: i for i, t in enumerate(CONLL)}}
    common = dict(hidden_size=HIDDEN, num_attention_heads=HEADS, intermediate_size=FFN)
    cfg = encoder_config(arch, dest, **common, **labels)
    model = (BertForTokenClassification if arch == "bert" else XLMRobertaForTokenClassification)(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name.lower():  # visible LayerNorm gains and biases (they start at 1 and 0)
                p.add_(torch.randn_like(p) * 0.2)
        # A wide classifier: every label wins somewhere and the top two probabilities of a token
        # stay apart (smallest gap ~1e-4 on a few thousand tokens), so float32 rounding flips no label.
        model.classifier.weight.normal_(0, 0.5)
        model.classifier.bias.zero_()
        model.classifier.bias[0] += 1.0  # about half the tokens outside any entity, as in real text
    model.eval()
    model.save_pretrained(dest)
    return dest
