"""--sink write time on the local engines: `python -m tests.benchmarks.sink_write --docs 2000`.

A run's output folder of synthetic documents (5 chunks each, random 384-dim unit vectors) is
written to Milvus Lite and to Qdrant's local mode by `launch.sink_sync.write_all` (the write job
through ml.rag's writer, the read-back and the reconciliation), twice: a first write and a
rerun, which upserts every chunk again. Synthetic vectors: the write time does not depend on
what they mean.
"""

import argparse
import shutil
import tempfile
from pathlib import Path

from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.pipeline.launch.after_run import sink_sync
from tests.stores import test_stores as fixtures

DIM = 384


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=2000)
    args = parser.parse_args()
    fixtures.DIM = DIM
    root = Path(tempfile.mkdtemp(prefix="sink-write-"))
    try:
        rows = fixtures.write_output(root / "out", {f"doc-{i:06d}": 5 for i in range(args.docs)})
        for uri in (f"milvus://{root}/store.db", f"qdrant://{root}/qdrant"):
            sink_sync.check([uri], DIM)
            for label in ("first write", "rerun"):
                (rec,), _ = sink_sync.write_all([uri], str(root / "out"), DIM, PipelineOptions([]), True, [])
                rate = len(rows) / rec["seconds"]
                print(
                    f"{uri.split(':')[0]:<7} {label:<12} {len(rows):,} chunks "
                    f"{rec['seconds']:.1f} s {rate:,.0f} chunks/s"
                )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
