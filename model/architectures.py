"""config.json's model_type -> the module that reads, loads and runs that architecture.

Each module (bert, xlm_roberta, modernbert) exports SUMMARY (its line in `docbeam models`),
MODEL_TYPES, PREFIXES (what task heads prepend to the encoder's tensor names),
config_fields(raw, where), params_from_tensors(tensors, cfg) and encode(params, cfg, tokens,
segment_ids, positions, *, attend), over the same pytree conventions and the same kernel
contract.
"""

from types import ModuleType

from docbeam.model import bert, modernbert, xlm_roberta
from docbeam.model.errors import CheckpointError

ARCHITECTURES: dict[str, ModuleType] = {t: m for m in (bert, xlm_roberta, modernbert) for t in m.MODEL_TYPES}


def architecture(model_type: str, where: str = "config.json") -> ModuleType:
    if model_type not in ARCHITECTURES:
        raise CheckpointError(
            f"{where}: model_type {model_type!r} is not supported; docbeam reads {', '.join(ARCHITECTURES)}"
        )
    return ARCHITECTURES[model_type]
