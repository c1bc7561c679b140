"""XLM-RoBERTa (and RoBERTa): BERT's layers with two differences docbeam must honour.

- Positions start after the padding index: HF computes `padding_idx + 1 + position`, so
  position embedding rows 0 and 1 are never used and a 514-row table holds 512 positions.
- Its own special tokens (<s> ... </s>), which model.tokenizer reads from the
  post-processor like any other.
"""

from docbeam.model import bert

# One line for `docbeam models` (the docstring above is for readers of this code).
SUMMARY = "XLM-RoBERTa and RoBERTa: BERT's layers; positions counted after the padding index, <s> ... </s> tokens"
MODEL_TYPES = ("xlm-roberta", "roberta")
PREFIXES = ("roberta.",)  # XLMRobertaForX / RobertaForX checkpoints


def config_fields(raw: dict, where: str) -> dict:
    offset = int(raw.get("pad_token_id", 1)) + 1
    fields = bert.config_fields(raw, where)
    return {
        **fields,
        "max_positions": raw["max_position_embeddings"] - offset,
        "layer_norm_eps": raw.get("layer_norm_eps", 1e-5),
        "type_vocab_size": raw.get("type_vocab_size", 1),
        "position_offset": offset,
    }


params_from_tensors = bert.params_from_tensors
encode = bert.encode
