"""Arrow tables from rows, for every vector type --vector-dtype stores, without pandas: docbeam
does not depend on it (`make run` installs none), so a writer that needs it fails only there."""

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from docbeam.pipeline.graph.table_writers import VECTOR_NUMPY, to_table

KINDS = list(VECTOR_NUMPY)


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_vectors_keep_their_type_and_values(kind):
    schema = pa.schema([("doc_id", pa.string()), ("embedding", pa.list_(kind, 3))])
    rows = [{"doc_id": "a", "embedding": [1, 2, 3]}, {"doc_id": "b", "embedding": np.array([4, 5, 6])}]
    table = to_table(rows, schema)
    assert table.schema == schema
    assert table.column("embedding").to_pylist() == [[1, 2, 3], [4, 5, 6]]


def test_no_pandas_needed():
    code = (
        "import sys\n"
        "class NoPandas:\n"  # as on a machine without it: importing pandas raises ImportError
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'pandas': raise ImportError('no pandas here')\n"
        "sys.meta_path.insert(0, NoPandas())\n"
        "import pyarrow as pa\n"
        "from docbeam.pipeline.graph.table_writers import to_table\n"
        "for k in (pa.float32(), pa.float16(), pa.int8(), pa.uint8()):\n"
        "    to_table([{'e': [1, 2]}], pa.schema([('e', pa.list_(k, 2))]))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
