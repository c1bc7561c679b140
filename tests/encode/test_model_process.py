"""Several host processes, one model process (encode.model_process): the model is shared, its
answers equal the in-process encoder's, the host processes never start a JAX backend, and the
connection has Nagle off (encode.nodelay)."""

import multiprocessing
import multiprocessing.connection as mpc
import os
import socket
import uuid

import numpy as np
import pytest

from docbeam.pipeline.encode import model_process, nodelay
from docbeam.pipeline.encode.packing import Packer, PackSpec
from docbeam.pipeline.encode.runtime import EncoderSettings, Serving
from tests.encode.test_encoder_runtime import _batches

SPEC = PackSpec(rows=4, seq_len=128)
SETTINGS = EncoderSettings(None, None, "auto", "float32", SPEC)


def test_nagle_is_off_on_both_ends_of_a_multiprocessing_connection():
    """The stdlib internals nodelay patches (SocketClient, SocketListener.accept) still exist and
    its connections come out with TCP_NODELAY, and still blocking, also where a library set a
    default socket timeout (which a socket object made on the fd would apply to it)."""
    nodelay.install()
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(5)
    try:
        with mpc.Listener(("127.0.0.1", 0)) as listener:  # no authkey: no handshake before accept()
            client = mpc.Client(listener.address)
            server = listener.accept()
            for conn in (client, server):
                assert os.get_blocking(conn.fileno())
                s = socket.socket(fileno=os.dup(conn.fileno()))
                try:
                    assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
                finally:
                    s.close()
                os.set_blocking(conn.fileno(), True)  # what the probe's socket object changed
            client.close()
            server.close()
    finally:
        socket.setdefaulttimeout(previous)


def _host(tag: str, batches, queue) -> None:
    """One host process: reach the model process, send the batches, report what came back."""
    import jax._src.xla_bridge as xb

    model = model_process.handle(Serving(tag, spawn=True), "encode", model_process_factory()).acquire()
    out = [model.run(model_process.strip(b)) for b in batches]
    queue.put(([r.vectors for r in out], model.pid(), xb.backends_are_initialized()))


def model_process_factory():
    import functools

    return functools.partial(model_process.load_runtime, SETTINGS)


@pytest.mark.slow
def test_host_processes_share_one_model_process_whose_vectors_equal_the_in_process_encoders():
    batches = _batches(SPEC, n=12)
    tag = f"docbeam-test-{uuid.uuid4().hex[:8]}"
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    hosts = [ctx.Process(target=_host, args=(tag, batches, queue)) for _ in range(2)]
    for p in hosts:
        p.start()
    answers = [queue.get(timeout=300) for _ in hosts]
    for p in hosts:
        p.join(timeout=60)
    pids = {pid for _, pid, _ in answers}
    assert len(pids) == 1 and not pids & {p.pid for p in hosts}  # one model process, not a host's
    assert not any(started for _, _, started in answers)  # no host process started a JAX backend
    runtime = model_process.load_runtime(SETTINGS)
    expected, _, _ = runtime.encode([model_process.strip(b) for b in batches])
    for vectors, _, _ in answers:
        for got, want in zip(vectors, expected, strict=True):
            np.testing.assert_array_equal(got, want)  # float32, the same batches: bit for bit


def test_a_batch_crosses_without_its_segments():
    packer = Packer(SPEC)
    (batch,) = [b for b in _batches(SPEC, n=3)][:1] or [packer.flush()]
    stripped = model_process.strip(batch)
    assert stripped.slots == [] and batch.slots
    for name in ("tokens", "segment_ids", "positions", "pool_mask"):
        assert getattr(stripped, name) is getattr(batch, name)
    assert stripped.max_segments == batch.max_segments
