"""Everything the graph needs, resolved by the launcher before the job starts."""

from dataclasses import dataclass, field

from model.config import EncoderConfig
from pipeline.encode.packing import PackSpec
from pipeline.encode.runtime import EncoderSettings
from pipeline.extractors import Extractor
from pipeline.ingest.chunking import Windowing
from pipeline.ingest.parse import ParseConfig


@dataclass(frozen=True)
class JobPlan:
    """Everything the graph needs, resolved by the launcher before the job starts."""

    globs: list[str]
    output: str
    parse: ParseConfig
    windowing: Windowing
    encoder: EncoderSettings
    model_name: str
    weights_sha256: str
    config: EncoderConfig  # the checkpoint's, read once by the launcher
    model_path: str | None  # --model as given (None: default; gs:// resolved on each worker)
    extractors: list[Extractor] = field(default_factory=list)
    no_store_text: bool = False  # leave the text out of documents/ and chunks/
    files: list[tuple[str, int]] | None = None  # exact (path, size) to read instead of matching globs
    file_prefix: str = "part"  # output files are <table>/<file_prefix>-NNNNN-of-NNNNN.<ext>
    committed_documents: list[str] = field(default_factory=list)  # earlier waves' documents/ files
    # The checkpoint prompt documents get (--prompt-name, else the checkpoint's document prompt).
    # Resolved and recorded here; chunking puts its tokens in front of every window (issue 13).
    prompt_name: str | None = None

    @property
    def pack(self) -> PackSpec:
        return self.encoder.pack
