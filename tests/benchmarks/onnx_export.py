"""The default checkpoint as ONNX models, for the embed benchmark's onnxruntime column only.

The same weights docbeam and sentence-transformers run (nothing is downloaded): the checkpoint's
transformer (sentence-transformers' first module) exported with torch.onnx, and optionally a
dynamically quantised int8 copy (onnxruntime.quantization), as fastembed's users make one. The
pooling (mean) and normalising stay outside, in numpy, as fastembed does them.
"""

from pathlib import Path

FLOAT32 = "model.onnx"
INT8 = "model_int8.onnx"


def export(folder: Path, int8: bool = False) -> Path:
    """Write model.onnx (float32, inputs input_ids, attention_mask, token_type_ids; output
    last_hidden_state), and model_int8.onnx if asked, into the folder."""
    import torch

    from tests.reference import st_model

    class LastHidden(torch.nn.Module):
        """The transformer with three tensors in and one out: what the exporter traces."""

        def __init__(self, bert: torch.nn.Module):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    folder.mkdir(parents=True, exist_ok=True)
    bert = LastHidden(st_model()[0].auto_model).eval()
    ids = torch.ones(2, 16, dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    with torch.inference_mode():
        # The TorchScript exporter: the dynamo one needs onnxscript, which nothing else here needs.
        torch.onnx.export(
            bert,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(folder / FLOAT32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes},
            opset_version=17,
            dynamo=False,
        )
    if int8:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(folder / FLOAT32, folder / INT8, weight_type=QuantType.QInt8)
    return folder
