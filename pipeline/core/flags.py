"""Every flag of a docbeam job, defined once with plain argparse (no Beam, no JAX here).

`launch.running.options.DocbeamOptions` hands them to Beam, so the same flags work for `docbeam run`,
`python -m docbeam.pipeline.run` (Airflow, Dataflow) and reach the workers; the command line checks
them here before Beam and JAX load.

Each flag is registered as `--max-seq-len` and `--max_seq_len`: people type dashes, while
Beam re-serialises options to workers by their underscore dest names.
"""

import argparse

from docbeam.kernels import catalog
from docbeam.pipeline.core import exit_status, languages, sink_uri
from docbeam.pipeline.core.choices import (
    DTYPES,
    EXTRACTORS,
    HTML_TEXT,
    KEYPHRASE_REFERENCES,
    NER_AGGREGATIONS,
    parse_ngrams,
)
from docbeam.pipeline.core.hardware import worker_for
from docbeam.pipeline.core.vector_format import VECTOR_DTYPES

ATTENTION_CHOICES = ["auto", *catalog.names()]
# Defaults the flags below state in their help, defined here once and used where they apply.
STRIDE_TOKENS = 32  # --stride when not given (ingest.chunking.default_stride)
TOKENS_PER_BATCH = 8192  # --batch-rows when not given, on GPUs and per TPU chip (encode.packing)
# On a CPU smaller batches run faster per token: their activations stay in cache (README: Measured).
CPU_TOKENS_PER_BATCH = 1024
MAX_DOC_BYTES = 64 << 20  # --max-doc-bytes
MAX_DECOMPRESSED_BYTES = 4 << 30  # --max-decompressed-bytes
# `docbeam search` uses a run's fresh index from this many chunks on; below it exact search is as
# fast, and exact (README, "Searching a run", has the measurements).
INDEX_FROM_ROWS = 50_000
# Cosine below which a document gets no label: chosen for the built-in labels and model on the
# dev and check sets in tests/extractors/data/ (python -m tests.benchmarks.extraction_quality).
LABEL_MIN_SCORE = 0.20


class UsageError(ValueError):
    """Bad command line or inputs: reported in one line, before the job starts."""


def _flag(parser: argparse.ArgumentParser, name: str, **kwargs) -> None:
    names = [f"--{name}"] + ([f"--{name.replace('-', '_')}"] if "-" in name else [])
    parser.add_argument(*names, dest=name.replace("-", "_"), **kwargs)


def extract_list(value: str) -> list[str]:
    kinds = [k.strip() for k in value.split(",") if k.strip()] if value else []
    unknown = [k for k in kinds if k not in EXTRACTORS]
    if unknown:
        raise ValueError(f"unknown extractor {', '.join(map(repr, unknown))} (choose from {','.join(EXTRACTORS)})")
    return kinds


# Flag value checkers: each returns the value as typed (Beam passes options on to workers as
# given) or raises ArgumentTypeError with the reason, which becomes the one-line error.
def _checked(check):
    def parse(value: str) -> str:
        try:
            check(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return value

    return parse


def _int(value: str, low: int) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if n < low:
        raise argparse.ArgumentTypeError(f"{value} is below {low}")
    return n


def non_negative_int(value: str) -> int:
    return _int(value, 0)


def positive_int(value: str) -> int:
    return _int(value, 1)


def positive_float(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not x > 0:
        raise argparse.ArgumentTypeError(f"{value} is not above 0")
    return x


def _hardware(value: str) -> None:
    worker_for(value)


def rejection_limit(value: str) -> tuple[str, float]:
    """--max-rejected: 'N' (documents), 'P%' or a fraction below 1 -> ('count', N) | ('fraction', f)."""
    text = value.strip()
    try:
        if text.endswith("%"):
            fraction = float(text[:-1]) / 100
        elif "." in text:
            fraction = float(text)
        else:
            count = int(text)
            if count < 0:
                raise ValueError
            return "count", count
    except ValueError:
        raise ValueError(f"{value!r}: expected a count (10), a percentage (5%) or a fraction (0.05)") from None
    if not 0 <= fraction <= 1:
        raise ValueError(f"{value!r}: a share of the documents lies between 0% and 100%")
    return "fraction", fraction


DEFAULT_MAX_REJECTED = "5%"
RUN_DESCRIPTION = (
    "Embed documents (and extract, with --extract) into Parquet under --output, with a cost report. "
    f"Exit status: {exit_status.described()}."
)


def add_job_flags(parser: argparse.ArgumentParser, required: tuple[str, ...] = ()) -> None:
    """Add every docbeam job flag to `parser`; `required` names flags the command line must
    have (Beam's own parser on the workers takes none as required)."""
    _flag(
        parser,
        "input",
        nargs="+",
        action="extend",
        metavar="GLOB",
        required="input" in required,
        help="input files: globs or folders, local or gs:// (.jsonl[.gz], .parquet, .csv, .tsv, .txt, .md, .html, "
        ".pdf, .docx, .warc[.gz]; content that contradicts its extension is detected; a folder: every file of a "
        "format docbeam reads, recursively)",
    )
    _flag(
        parser,
        "follow-links",
        action="store_true",
        help="read files whose links point outside their input's folder (default: skipped and counted as "
        "link_outside_input, so a link to /etc/shadow is never embedded)",
    )
    _flag(parser, "output", metavar="DIR", required="output" in required, help="output folder or gs:// prefix")
    _flag(
        parser,
        "attention",
        default="auto",
        choices=ATTENTION_CHOICES,
        help="attention kernel; auto picks per platform and records why (see `docbeam kernels`)",
    )
    _flag(
        parser,
        "extract",
        default="",
        type=_checked(extract_list),
        help=f"comma-separated extractors: {','.join(EXTRACTORS)} (entities: emails, URLs, dates, money, phones "
        "by patterns; people, organisations, places too with --ner-model)",
    )
    _flag(
        parser,
        "ner-model",
        metavar="PATH|HUB_ID",
        help="with --extract entities: a BERT or XLM-RoBERTa token-classification checkpoint (config.json with "
        "BIO id2label tags such as B-PER, model.safetensors, tokenizer.json) whose entities become "
        "entity:<TYPE> rows, e.g. a CoNLL-2003 model such as dslim/bert-base-NER; a folder, gs:// prefix or "
        "hub id ORG/NAME[@REVISION]. Without it, entities are the patterns only. A checkpoint without "
        "safetensors or tokenizer.json: save one with transformers' save_pretrained (see docs/ner.md)",
    )
    _flag(
        parser,
        "ner-aggregation",
        default=NER_AGGREGATIONS[0],
        choices=NER_AGGREGATIONS,
        help="how --ner-model tokens become entities, as the transformers token-classification pipeline's "
        "aggregation_strategy: first (default: a word takes its first token's label), simple (token by token), "
        "average, max",
    )
    _flag(
        parser,
        "keyphrase-ngrams",
        default="1,2",
        type=_checked(parse_ngrams),
        metavar="MIN,MAX",
        help="n-gram range of keyphrase candidates (default %(default)s)",
    )
    _flag(
        parser,
        "keyphrase-reference",
        default=KEYPHRASE_REFERENCES[0],
        choices=KEYPHRASE_REFERENCES,
        help="rank keyphrases against the whole document (default) or its first window, as KeyBERT does",
    )
    _flag(parser, "keyphrase-top-n", type=positive_int, default=5, help="keyphrases per document (default %(default)s)")
    _flag(parser, "summary-sentences", type=positive_int, default=3, help="sentences per summary (default %(default)s)")
    # Not --labels: Beam already owns that flag (Dataflow job labels).
    _flag(
        parser,
        "label-file",
        metavar="FILE",
        help="labels for the `labels` extractor: JSON or YAML mapping label -> description(s)",
    )
    _flag(
        parser,
        "label-top-k",
        type=positive_int,
        default=1,
        help="labels per document at most, best first (default %(default)s)",
    )
    _flag(
        parser,
        "label-min-score",
        type=float,
        default=LABEL_MIN_SCORE,
        metavar="COSINE",
        help="documents whose best label scores below this get no label (default %(default)s, "
        "chosen for the built-in labels; see docs/extractions.md)",
    )
    _flag(
        parser,
        "max-seq-len",
        type=positive_int,
        default=None,
        help="tokens per window incl. [CLS]/[SEP]; default: the checkpoint's own "
        "(sentence-transformers' max_seq_length, 256 for the default model)",
    )
    _flag(
        parser,
        "stride",
        type=int,
        default=None,
        help="about how many tokens consecutive windows of a long document share (a target: windows start "
        f"at a sentence or word boundary within it; default {STRIDE_TOKENS}, an eighth of the window for windows "
        f"under {STRIDE_TOKENS * 8})",
    )
    _flag(
        parser,
        "model",
        metavar="PATH",
        help="checkpoint dir, gs:// prefix or Hugging Face hub id ORG/NAME[@REVISION] (config.json, "
        "model.safetensors, tokenizer.json; see `docbeam models`); default all-MiniLM-L6-v2",
    )
    _flag(parser, "model-sha256", metavar="HEX", help="refuse to load weights whose sha256 differs")
    _flag(
        parser,
        "dims",
        type=positive_int,
        default=None,
        metavar="N",
        help="keep the first N dimensions of every vector, L2-normalised again (Matryoshka truncation, as "
        "sentence-transformers' truncate_dim), in documents/, chunks/, the sinks and search; default: all. A model "
        "whose card or config does not say it was trained for it gets a warning (retrieval quality drops)",
    )
    _flag(
        parser,
        "vector-dtype",
        default=VECTOR_DTYPES[0],
        choices=VECTOR_DTYPES,
        help="how the embedding columns and the sinks store vectors: float32 (default), float16, int8 "
        "(per-dimension ranges calibrated on the run's vectors, kept in the manifest and _vectors/), binary (one "
        "bit per dimension, packed: sentence-transformers' ubinary); search rescores int8 and binary candidates",
    )
    _flag(
        parser,
        "dtype",
        default="auto",
        choices=["auto", *DTYPES],
        help="encoder compute dtype; auto: bfloat16 on TPU and GPU workers and on a local CPU with AVX-512 BF16 "
        "or AMX (its /proc/cpuinfo flags, or $DOCBEAM_CPU_FLAGS), float32 on other CPUs and remote CPU workers "
        "(the manifest records which and why); bfloat16 dense layers accumulate in float32",
    )
    _flag(
        parser,
        "batch-rows",
        type=positive_int,
        default=None,
        help=f"rows of --max-seq-len tokens per encoder batch; default {CPU_TOKENS_PER_BATCH} tokens' worth on a CPU "
        f"({CPU_TOKENS_PER_BATCH // 256} rows of 256, a row per CPU device at least), {TOKENS_PER_BATCH} on a GPU "
        f"or per TPU chip ({TOKENS_PER_BATCH // 256} rows of 256, 1 row of {TOKENS_PER_BATCH}); "
        "shorter row lengths get the same token budget; a batch whose rows do not divide over the devices gets "
        "empty rows (counted as padding)",
    )
    _flag(
        parser,
        "host-processes",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="processes per worker that parse and chunk (a pool beside the process that packs, encodes and "
        "writes, the only one that drives the accelerator); 1: no pool, everything in that one process; default "
        "%(default)s, auto: a TPU or GPU worker's cores but one, 1 on a CPU, where the encoder's threads use the "
        "cores (README, Feeding the chip)",
    )
    _flag(
        parser,
        "prompt-name",
        metavar="NAME",
        help="the checkpoint's prompt (config_sentence_transformers.json) documents get; default: its "
        "document/passage prompt, if any",
    )
    _flag(
        parser,
        "language",
        default=languages.AUTO,
        metavar="CODE",
        type=_checked(languages.check),
        help="language whose rules (sentences for chunking, summaries and keyphrases; stop words; date and "
        "money patterns) apply to every document: "
        f"{', '.join(languages.supported())}; default auto: each document's own, detected at ingest "
        "(the documents/ language column; English rules where it cannot be told)",
    )
    _flag(
        parser,
        "id-field",
        default="id",
        help="JSONL/Parquet field (CSV/TSV column) holding the document id (default %(default)s)",
    )
    _flag(
        parser,
        "text-field",
        default="text",
        help="JSONL/Parquet field (CSV/TSV column) holding the text (default %(default)s)",
    )
    _flag(
        parser,
        "html-text",
        default=HTML_TEXT[0],
        choices=HTML_TEXT,
        help="HTML and WARC pages: main = the main content and title, without navigation, headers, footers "
        "and cookie banners (trafilatura; default); all = every visible text",
    )
    _flag(
        parser,
        "max-pdf-pages",
        type=positive_int,
        default=5000,
        help="reject PDFs with more pages than this (default %(default)s)",
    )
    _flag(
        parser,
        "parse-timeout",
        type=positive_float,
        default=120.0,
        metavar="SECONDS",
        help="PDF, Word and main-content HTML parse in a child process: a file (a WARC record) that takes "
        "longer is stopped and rejected as parse_timeout (default %(default)g)",
    )
    _flag(
        parser,
        "parse-memory-mb",
        type=positive_int,
        default=2048,
        help="memory cap of that child process; a file that needs more is parse_crashed (default %(default)s)",
    )
    _flag(
        parser,
        "max-doc-bytes",
        type=positive_int,
        default=MAX_DOC_BYTES,
        help=f"reject documents, and PDF, Word and HTML files, larger than this (default {size(MAX_DOC_BYTES)})",
    )
    _flag(
        parser,
        "max-decompressed-bytes",
        type=positive_int,
        default=MAX_DECOMPRESSED_BYTES,
        help="stop reading a compressed file (gzip, a .docx's zip) past this many bytes "
        f"(bombs; default {size(MAX_DECOMPRESSED_BYTES)})",
    )
    _flag(parser, "pricing", metavar="FILE", help="price table YAML (default: the one in the package)")
    _flag(
        parser,
        "hardware",
        default=None,
        type=_checked(_hardware),
        help="hardware the run is billed as (cpu, tpu-v5e:4, l4:2, ...); default cpu on a local runner, required "
        "on a remote one (docbeam submit passes it)",
    )
    _flag(
        parser,
        "leak-threshold-mb",
        type=positive_int,
        default=256,
        help="warn when encoder memory grows this much after warm-up (default %(default)s)",
    )
    _flag(parser, "profile", metavar="DIR", help="capture a JAX profiler trace of a few encoder batches here")
    _flag(parser, "resume", action="store_true", help="skip input shards already committed to --output")
    _flag(
        parser,
        "reuse",
        metavar="PREVIOUS_OUTPUT",
        help="copy the outputs of documents unchanged since this earlier run (same doc_id, same text, same "
        "settings) instead of encoding them again; the input must be the whole corpus, not a delta "
        "(documents it lacks are listed as removed)",
    )
    _flag(
        parser,
        "wave-files",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="commit outputs every N input files (one Beam job per wave), so --resume can skip "
        "finished files after a crash; 0 (default): one wave",
    )
    _flag(parser, "overwrite", action="store_true", help="delete earlier outputs under --output first")
    _flag(
        parser,
        "no-store-text",
        action="store_true",
        help="leave the text out of documents/ and chunks/ (you keep it elsewhere; offsets still refer to it)",
    )
    _flag(
        parser,
        "sink",
        action="append",
        default=None,
        metavar="URI",
        type=_checked(sink_uri.parse),
        help="also write every chunk (id, vector, text, doc_id, page, section, the document's metadata) to a "
        "vector store, upserting by chunk id and deleting the chunks of removed documents (repeatable; the "
        "Parquet output stays the record): milvus:///path/file.db (Milvus Lite), milvus://host:port/collection, "
        "qdrant:///path (local), qdrant://host:port/collection; bigquery://PROJECT.DATASET.TABLE is checked, then "
        "refused at launch (its writer needs Java; README)",
    )
    _flag(
        parser,
        "budget-usd",
        type=float,
        help="run --budget-sample documents first and refuse to go on when the whole input's projected cost "
        "exceeds this (the sample's outputs are kept, not run twice); an input no bigger than the sample is "
        "run and held to the budget as it goes",
    )
    _flag(
        parser,
        "budget-sample",
        type=positive_int,
        default=200,
        metavar="N",
        help="documents the --budget-usd projection runs (default %(default)s)",
    )
    _flag(
        parser,
        "max-rejected",
        default=DEFAULT_MAX_REJECTED,
        type=_checked(rejection_limit),
        metavar="N|P%",
        help="fail the run (exit 3, after writing everything) when more documents than this are rejected: "
        "a count, a percentage or a fraction (default %(default)s: a few malformed "
        "records are normal "
        "in real corpora; a systematic problem such as a wrong --text-field or an unreadable format rejects far "
        "more). A run where every document was rejected always fails",
    )


def size(n: int) -> str:
    """A byte count as help texts and the README show it: 64 MiB, 4 GiB."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def job_default(dest: str):
    """A job flag's default, as its definition above states it (ParseConfig's defaults, tests)."""
    return job_parser("docbeam").get_default(dest)


def job_parser(prog: str, description: str = "") -> argparse.ArgumentParser:
    """An argparse parser of the job flags alone (help text; checking a command line)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_job_flags(parser)
    return parser


def docbeam_flag_names() -> list[str]:
    """Every spelling of every docbeam job flag ('--max-seq-len', '--max_seq_len', ...)."""
    return [o for a in job_parser("docbeam")._actions for o in a.option_strings if o.startswith("--")]
