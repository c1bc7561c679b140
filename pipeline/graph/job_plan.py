"""Everything the graph needs, resolved by the launcher before the job starts."""

from dataclasses import dataclass, field

from docbeam.model.config import EncoderConfig
from docbeam.pipeline.core import fingerprint
from docbeam.pipeline.core.vector_format import VectorFormat
from docbeam.pipeline.encode.packing import PackSpec
from docbeam.pipeline.encode.runtime import EncoderSettings
from docbeam.pipeline.extractors import Extractor
from docbeam.pipeline.ingest.chunking import Frame, Windowing
from docbeam.pipeline.ingest.parse import ParseConfig
from docbeam.pipeline.ingest.sources import InputGlob


@dataclass(frozen=True)
class Reuse:
    """A previous run's tables, listed at launch (`--reuse`)."""

    output: str
    documents: list[str]
    chunks: list[str]
    extractions: list[str]
    same_settings: bool  # every setting equal: documents, chunks and extractions are copied
    budget_sample: bool = False  # the --budget-usd sample of this very run, not an earlier run
    # Only the extractors differ (README, "Incremental runs"): the vectors are copied, the previous
    # documents matched by `previous_hash` (their fingerprints' settings).
    previous_hash: str | None = None
    copy_kinds: tuple[str, ...] | None = None  # extractors whose previous rows are copied (None: all)
    # extractors run on the reused documents: text-only ones on the text, the others on the copied
    # vectors with their own candidates encoded (graph.reuse_extract)
    run_kinds: tuple[str, ...] = ()
    # Only --dims/--vector-dtype differ from a run that kept the full float32 vectors: they are
    # copied and converted (graph.vector_output), not encoded again.
    convert_vectors: bool = False

    @property
    def reuses_vectors(self) -> bool:
        return self.same_settings or self.previous_hash is not None


@dataclass(frozen=True)
class NerPlan:
    """--ner-model, resolved at launch: a token classifier run over its own windows (the chunks'
    character spans in its tokens) by a second encoder pass."""

    encoder: EncoderSettings  # task token_classification, its own pack spec
    windowing: Windowing  # the classifier's window (a chunk's span longer than it is split again)
    config: EncoderConfig  # the classifier's encoder, read once by the launcher
    labels: tuple[str, ...]  # config.json id2label, by label id
    aggregation: str  # one of core.choices.NER_AGGREGATIONS
    model_name: str
    weights_sha256: str


@dataclass(frozen=True)
class JobPlan:
    """Everything the graph needs, resolved by the launcher before the job starts."""

    inputs: tuple[InputGlob, ...]
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
    settings: dict = field(default_factory=dict)  # everything the outputs depend on but the text
    reuse: Reuse | None = None  # --reuse: the previous run whose unchanged documents are copied
    input_files: int = 0  # what the inputs held when the run was planned (progress, cost)
    input_bytes: int = 0
    files: list[tuple[str, int, str]] | None = None  # exact (path, size, name) to read instead of matching
    file_prefix: str = "part"  # output files are <table>/<file_prefix>-NNNNN-of-NNNNN.<ext>
    committed_documents: list[str] = field(default_factory=list)  # earlier waves' documents/ files
    # The checkpoint prompt documents get (--prompt-name, else the checkpoint's document prompt).
    # Resolved and recorded here; chunking puts its tokens in front of every window.
    dtype_reason: str = ""  # why the encoder runs in its dtype (--dtype auto decides per platform)
    prompt_name: str | None = None
    frame: Frame | None = None  # special tokens and prompt around every window (None: the checkpoint's specials)
    # Processes for the host work (parse, chunk) beside the encoder's, per worker: graph.host_pool;
    # 0: the worker's cores but the encoding process's one (accelerator workers).
    host_processes: int = 1
    ner: NerPlan | None = None  # --ner-model: entities from a token classifier (with --extract entities)
    # What the model is, for the manifest: the installed default's package, version and file
    # hashes; a hub model's id and commit; empty for a folder or gs:// prefix (its path says).
    model_source: dict = field(default_factory=dict)
    # The languages the model's card declares ({"languages": [...] | None, "from": ...}), for
    # the manifest and the English-only warning (launch/model_languages.py).
    model_languages: dict = field(default_factory=dict)
    # --dims / --vector-dtype (None: the model's full float32 vectors), and for int8 the
    # calibration ranges fixed before the job (an earlier wave's, the reused run's; None: the job
    # calibrates on its own vectors), per table: [2, dim] as lists.
    vectors: VectorFormat | None = None
    vector_ranges: dict | None = None

    @property
    def pack(self) -> PackSpec:
        return self.encoder.pack

    @property
    def globs(self) -> list[str]:
        return [i.pattern for i in self.inputs]

    @property
    def vector_format(self) -> VectorFormat:
        return self.vectors or VectorFormat(self.config.embedding_dim)

    @property
    def settings_hash(self) -> str:
        return fingerprint.settings_hash(self.settings)
