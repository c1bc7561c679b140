"""The encoder keeps one batch in flight: while the device works on a batch, the host goes on
with the next documents. Checked by the order of events with a measurement stand-in that
holds each batch as an accelerator would, not by a timer."""

import pytest

from tests.benchmarks import standin
from tests.benchmarks.host_ceiling import measure
from tests.helpers import write_jsonl

pytestmark = pytest.mark.slow


def test_host_work_goes_on_while_a_batch_is_on_the_device(tmp_path):
    docs = [{"id": f"d{i}", "text": f"Document {i} about packed rows and accelerators. " * 120} for i in range(160)]
    for shard in range(4):
        write_jsonl(tmp_path / f"part-{shard}.jsonl", docs[shard::4])
    r = measure([str(tmp_path / "part-*.jsonl")], tmp_path / "out", device_us=20, extra=["--batch-rows", "4"])
    assert r["documents"] == 160  # every batch came back, the last ones through the bundle's flush
    during = standin.HOST_WORK_DURING
    assert len(during) == r["batches"] > 4
    # Documents were chunked while earlier batches were on the device: host and device overlap.
    assert sum(n > 0 for n in during) >= 2, during
