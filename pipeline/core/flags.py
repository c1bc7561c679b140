"""Every flag of a docbeam job, defined once with plain argparse (no Beam, no JAX here).

`launch.options.DocbeamOptions` hands them to Beam, so the same flags work for `docbeam run`,
`python -m pipeline.run` (Airflow, Dataflow) and reach the workers; the command line checks
them here before Beam and JAX load.

Each flag is registered as `--max-seq-len` and `--max_seq_len`: people type dashes, while
Beam re-serialises options to workers by their underscore dest names.
"""

import argparse

import kernels.catalog

ATTENTION_CHOICES = ["auto", *kernels.catalog.names()]
# The extractors' names; pipeline.extractors.REGISTRY is keyed by exactly these (tested).
EXTRACTORS = ["keyphrases", "summary", "labels", "entities"]
DTYPES = ["float32", "bfloat16"]
# Cosine below which a document gets no label: chosen for the built-in labels and model on the
# labelled set in tests/extractors/data/ (python -m tests.benchmarks.extraction_quality).
LABEL_MIN_SCORE = 0.16


class UsageError(ValueError):
    """Bad command line or inputs: reported in one line, before the job starts."""


def _flag(parser: argparse.ArgumentParser, name: str, **kwargs) -> None:
    names = [f"--{name}"] + ([f"--{name.replace('-', '_')}"] if "-" in name else [])
    parser.add_argument(*names, dest=name.replace("-", "_"), **kwargs)


def extract_list(value: str) -> list[str]:
    kinds = [k.strip() for k in value.split(",") if k.strip()] if value else []
    unknown = [k for k in kinds if k not in EXTRACTORS]
    if unknown:
        raise ValueError(f"unknown extractor(s) {unknown}; choose from {','.join(EXTRACTORS)}")
    return kinds


def non_negative_int(value: str) -> int:
    n = int(value)
    if n < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return n


def positive_int(value: str) -> int:
    n = int(value)
    if n <= 0:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return n


def add_job_flags(parser: argparse.ArgumentParser) -> None:
    """Add every docbeam job flag to `parser`."""
    _flag(
        parser,
        "input",
        nargs="+",
        action="extend",
        metavar="GLOB",
        help="input files: one or more globs, local or gs:// (.jsonl[.gz], .parquet, .txt, .md, .html)",
    )
    _flag(parser, "output", metavar="DIR", help="output folder or gs:// prefix")
    _flag(
        parser,
        "attention",
        default="auto",
        choices=ATTENTION_CHOICES,
        help="attention kernel; auto picks per platform and records why (see `docbeam kernels`)",
    )
    _flag(parser, "extract", default="", type=str, help=f"comma-separated extractors: {','.join(EXTRACTORS)}")
    _flag(
        parser,
        "keyphrase-ngrams",
        default="1,2",
        metavar="MIN,MAX",
        help="n-gram range of keyphrase candidates (default 1,2)",
    )
    _flag(
        parser,
        "keyphrase-reference",
        default="document",
        choices=["document", "first-window"],
        help="rank keyphrases against the whole document (default) or its first window, as KeyBERT does",
    )
    _flag(parser, "keyphrase-top-n", type=positive_int, default=5, help="keyphrases per document (default 5)")
    _flag(parser, "summary-sentences", type=positive_int, default=3, help="sentences per summary (default 3)")
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
        help="labels per document at most, best first (default 1)",
    )
    _flag(
        parser,
        "label-min-score",
        type=float,
        default=LABEL_MIN_SCORE,
        metavar="COSINE",
        help=f"documents whose best label scores below this get no label (default {LABEL_MIN_SCORE}, "
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
    _flag(parser, "stride", type=int, default=32, help="tokens shared by consecutive windows of a long document")
    _flag(
        parser,
        "model",
        metavar="PATH",
        help="checkpoint dir or gs:// prefix (config.json, model.safetensors, tokenizer.json); "
        "default all-MiniLM-L6-v2",
    )
    _flag(parser, "model-sha256", metavar="HEX", help="refuse to load weights whose sha256 differs")
    _flag(parser, "dtype", default="float32", choices=DTYPES, help="encoder compute dtype")
    _flag(parser, "batch-rows", type=positive_int, default=32, help="rows per packed encoder batch")
    _flag(
        parser,
        "language",
        default="en",
        metavar="CODE",
        help="language whose sentence rules chunking, summaries and keyphrases use (sentencex, ~300 languages; "
        "default en, which also splits CJK punctuation)",
    )
    _flag(parser, "id-field", default="id", help="JSONL/Parquet field holding the document id")
    _flag(parser, "text-field", default="text", help="JSONL/Parquet field holding the text")
    _flag(
        parser,
        "max-doc-bytes",
        type=positive_int,
        default=64 << 20,
        help="reject documents larger than this (default 64 MiB)",
    )
    _flag(
        parser,
        "max-decompressed-bytes",
        type=positive_int,
        default=4 << 30,
        help="stop reading a compressed file past this many bytes (gzip bombs; default 4 GiB)",
    )
    _flag(parser, "pricing", metavar="FILE", help="price table YAML (default infra/pricing/prices.yaml)")
    _flag(
        parser,
        "hardware",
        default=None,
        help="hardware the run is billed as (cpu, tpu-v5e, l4, ...); default: what the workers have",
    )
    _flag(
        parser,
        "leak-threshold-mb",
        type=positive_int,
        default=256,
        help="warn when encoder memory grows this much after warm-up (default 256)",
    )
    _flag(parser, "profile", metavar="DIR", help="capture a JAX profiler trace of a few encoder batches here")
    _flag(parser, "resume", action="store_true", help="skip input shards already committed to --output")
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
    _flag(parser, "budget-usd", type=float, help="refuse to start when the projected cost exceeds this")


def job_parser(prog: str, description: str = "") -> argparse.ArgumentParser:
    """An argparse parser of the job flags alone (help text; checking a command line)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_job_flags(parser)
    return parser
