"""Where a compiled executable's bytes go (`docbeam compile --bytes N`), on a function compiled
for this CPU: per op, layer numbers folded, summing to XLA's own total here."""

import jax
import jax.numpy as jnp
import pytest

from docbeam.pipeline.encode import hlo_traffic


def layers(x, ws):
    for i, w in enumerate(ws):
        with jax.named_scope(f"layer_{i}"):
            x = jnp.sort(x @ w, axis=-1)  # a sort: no fusion across layers on any backend
    with jax.named_scope("pooling"):
        return x.sum(0).astype(jnp.bfloat16)


@pytest.fixture(scope="module")
def compiled():
    x = jax.ShapeDtypeStruct((64, 128), jnp.float32)
    ws = [jax.ShapeDtypeStruct((128, 128), jnp.float32)] * 3
    return jax.jit(layers).lower(x, ws).compile()


def test_bytes_per_op_fold_the_layers_and_sum_to_xlas_total(compiled):
    ops = hlo_traffic.where_bytes_go(compiled.as_text(), top=10)
    *named, every = ops
    assert every.what == "(all)" and every.bytes == sum(x.bytes for x in named)
    # Each layer's matmul reads x [64, 128] and w [128, 128] and writes [64, 128], float32:
    # three layers, one line.
    matmul = next(x for x in named if x.what == "layer_*/dot_general")
    assert (matmul.count, matmul.bytes) == (3, 3 * (64 * 128 + 128 * 128 + 64 * 128) * 4)
    assert not any("layer_0" in x.what or "layer_2" in x.what for x in named)
    assert any(x.what.startswith("pooling/") for x in named)
    assert named == sorted(named, key=lambda x: -x.bytes)
    # On this CPU the estimate is XLA's own figure (fusions read whole operands here).
    assert every.bytes == compiled.cost_analysis()["bytes accessed"]


def test_a_custom_calls_config_may_span_lines():
    hlo = """HloModule m

ENTRY %main (p: bf16[8,128]) -> bf16[8,128] {
  %p = bf16[8,128]{1,0:T(8,128)} parameter(0)
  %copy.1 = bf16[8,128]{0,1:T(8,128)} copy(%p), metadata={op_name="jit(run)/layer_3/split"}
  %k = (f32[8,128], bf16[8,128]) custom-call(%copy.1, %p), custom_call_target="tpu_custom_call", backend_config={"a": "{
}}", metadata={op_name="jit(run)/layer_3/shard_map/attention_splash/vmap(x)/pallas_call"}
  ROOT %r = bf16[8,128]{1,0} get-tuple-element(%k), index=1
}
"""
    got = {x.what: (x.kind, x.bytes) for x in hlo_traffic.where_bytes_go(hlo)}
    assert got["layer_*/split"] == ("copy", 2 * 8 * 128 * 2)
    assert got["layer_*/shard_map/attention_splash"] == ("custom-call", 8 * 128 * (4 + 2) + 2 * 8 * 128 * 2)
    assert hlo_traffic.shape_bytes("(f32[2,3]{1,0}, pred[4])") == 28


def test_async_collectives_count_once_and_an_op_name_without_a_path_is_kept():
    hlo = """HloModule m

ENTRY %main (p: f32[4,256]) -> f32[4,256] {
  %p = f32[4,256]{1,0} parameter(0)
  %ars = f32[4,256]{1,0} all-reduce-start(%p), replica_groups={}, metadata={op_name="jit(run)/pooling/psum"}
  %ard = f32[4,256]{1,0} all-reduce-done(%ars), metadata={op_name="jit(run)/pooling/psum"}
  ROOT %n = f32[4,256]{1,0} negate(%ard), metadata={op_name="jit(run)"}
}
"""
    got = {x.what: (x.count, x.bytes) for x in hlo_traffic.where_bytes_go(hlo)}
    assert got["pooling/psum"] == (1, 2 * 4 * 256 * 4)  # read and written once; the -done is free
    assert got["jit(run)"] == (1, 2 * 4 * 256 * 4)
