"""The `docbeam` command.

Every command checks its command line before Beam and JAX load, so a mistake answers at
once, in one line, with exit status 2; no user mistake ends in a traceback.

Exit statuses: core.exit_status.ExitStatus.
"""

import difflib
import json
import os
import sys
from importlib import metadata

from docbeam.pipeline import run
from docbeam.pipeline.core import interrupt
from docbeam.pipeline.core.command_line import Parser, check_job_args, without_own_flags
from docbeam.pipeline.core.exit_status import ExitStatus
from docbeam.pipeline.core.flags import DTYPES, INDEX_FROM_ROWS, UsageError, positive_int
from docbeam.pipeline.core.sink_uri import redacted_output

USAGE = """usage: docbeam <command> [options]

commands:
  run       run the job (DirectRunner by default) on --input, write the output contract to --output
  submit    the same job on Dataflow with TPU or GPU workers (--dry-run prints the options)
  estimate  run a sample here, project time and cost for the whole input on some hardware
  compile   compile the run's encoder for a TPU worker here: kernels, HBM fit, roofline (needs no TPU)
  report    print / re-render the cost report of a finished run
  embed     vectors for texts (queries), exactly as the pipeline computes them
  search    the chunks of a finished run closest to a question
  index     an approximate index of a finished run's chunk vectors, for search at scale
  kernels   which attention kernels this machine can run, and why not
  models    the architectures, pooling modes and model families docbeam reads

`docbeam <command> --help` explains each one; `docbeam --version` prints the version."""


def cmd_run(argv: list[str]) -> int:
    return run.main(argv, prog="docbeam run")


def cmd_submit(argv: list[str]) -> int:
    from docbeam.pipeline.launch.commands import submit

    ns = check_job_args(argv, "docbeam submit", more=submit.add_submit_args)
    opts = submit.dataflow_options(ns)
    hardware = submit.hardware_spec(ns)
    job = without_own_flags(argv, submit.add_submit_args)
    job_argv = [*job, *submit.dataflow_argv(ns), f"--hardware={hardware}"]
    if not ns.dry_run and hardware.startswith("tpu-") and not ns.skip_compile_check:
        from apache_beam.options.pipeline_options import PipelineOptions

        if not _compile_ok(PipelineOptions(job), hardware, ns.pricing):
            raise UsageError(f"the encoder does not compile or fit on {hardware} (above); nothing was submitted")
    if ns.dry_run:
        resolved = {
            "pipeline_options": opts,
            "hardware": hardware,
            "job_flags": job,
            "missing": submit.missing_required(ns),
            "argv": job_argv,
        }
        print(json.dumps(resolved, indent=2))
        return ExitStatus.OK
    return run.main(job_argv, prog="docbeam submit")


def _estimate_flags(parser) -> None:
    parser.add_argument(
        "--sample",
        type=positive_int,
        default=200,
        help="documents to run here, drawn across files and formats in proportion to their bytes, seeded: a rerun "
        "draws the same (default %(default)s)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the estimate as JSON")
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also project the input on this machine's CPU and each accelerator Dataflow offers (its smallest "
        "worker): time, dollars, dollars per 1M tokens, what binds, and from what input size each costs less "
        "than the CPU",
    )


def cmd_estimate(argv: list[str]) -> int:
    ns = check_job_args(argv, "docbeam estimate", required=("input",), more=_estimate_flags)
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.encode import cpu_devices
    from docbeam.pipeline.launch.commands.estimate import estimate, render
    from docbeam.pipeline.launch.display.console import configure_logging
    from docbeam.pipeline.launch.planning.planner import make_plan

    cpu_devices.split()  # the sample runs on the devices `docbeam run` would use
    configure_logging()
    options = PipelineOptions(without_own_flags(argv, _estimate_flags))
    plan = make_plan(options, needs_output=False)
    est = estimate(
        plan, options, sample_size=ns.sample, hardware=ns.hardware or "cpu", pricing=ns.pricing, compare=ns.compare
    )
    assert est is not None  # None only for a --budget-usd sample that is the whole input
    print(render(est))
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(est, f, indent=2)
    return ExitStatus.OK


def _compile_ok(options, hardware: str, pricing: str | None, top: int = 0) -> bool:
    from docbeam.kernels import api as kernels
    from docbeam.pipeline.encode.aot import CompileUnavailable
    from docbeam.pipeline.launch.commands.compile_check import check
    from docbeam.pipeline.launch.display.console import configure_logging

    configure_logging()
    try:
        return check(options, hardware, pricing=pricing, top=top)
    except CompileUnavailable as exc:
        raise UsageError(str(exc)) from None
    except kernels.KernelUnavailable as exc:  # --attention names a kernel the TPU cannot run
        raise UsageError(f"--attention: {exc}") from None


def _compile_flags(parser) -> None:
    parser.epilog = (
        "Compiles with libtpu on this machine (pip install 'docbeam[tpu]'): the same encoder set-up, kernel per "
        "layer and batch shapes as a worker of `--hardware tpu-TYPE:CHIPS`, sharded over its chips. Exit 2 when a "
        "shape does not compile or does not fit in HBM. The figures are compiled bounds, not measurements."
    )
    parser.add_argument(
        "--bytes",
        type=int,
        default=0,
        metavar="N",
        help="after each encoder's table, the N ops (HLO instructions grouped by the JAX op that made them) that "
        "move the most bytes per token in its largest batch, with their share of all the bytes",
    )


def cmd_compile(argv: list[str]) -> int:
    ns = check_job_args(
        argv,
        "docbeam compile",
        required=(),
        more=_compile_flags,
        description="Compile every executable a TPU worker of this run would build, here, before paying for one.",
    )
    if not ns.hardware:
        raise UsageError("--hardware tpu-TYPE[:CHIPS] is required (e.g. tpu-v5e:4): compile targets a TPU worker")
    if not ns.hardware.startswith("tpu-"):
        raise UsageError(f"--hardware {ns.hardware} is not a TPU: compile targets a TPU worker (e.g. tpu-v5e:4)")
    from apache_beam.options.pipeline_options import PipelineOptions

    ok = _compile_ok(PipelineOptions(without_own_flags(argv, _compile_flags)), ns.hardware, ns.pricing, ns.bytes)
    return ExitStatus.OK if ok else ExitStatus.USAGE


def cmd_report(argv: list[str]) -> int:
    parser = Parser(
        prog="docbeam report",
        description="Print the cost report of a finished run and re-render _cost/report.md and stages.png "
        "from _cost/report.json.",
    )
    parser.add_argument("dir", help="the run's --output folder or gs:// prefix")
    parser.add_argument("--json", action="store_true", help="print the JSON instead of the Markdown")
    ns = parser.parse_args(argv)
    from docbeam.pipeline.core import tables
    from docbeam.pipeline.cost import report
    from docbeam.pipeline.io import storage

    path = tables.join(ns.dir, tables.COST, "report.json")
    if not storage.exists(path):
        raise UsageError(f"{path} not found (is {ns.dir} a finished docbeam run?)")
    data = json.loads(storage.read_text(path))
    report.write(data, ns.dir)
    print(json.dumps(data, indent=2) if ns.json else report.render_markdown(data))
    return ExitStatus.OK


def cmd_embed(argv: list[str]) -> int:
    parser = Parser(
        prog="docbeam embed",
        description="Vectors for texts (queries), computed exactly as `docbeam run` computes them: the same "
        "checkpoint, tokenizer, chunking, encoder, pooling and normalisation. A text that fits one window gets "
        "the vector the pipeline stores for a chunk of that text. Prints a JSON list of vectors.",
    )
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="texts to embed")
    parser.add_argument("--input", metavar="FILE", help="also embed every line of FILE ('-' for standard input)")
    parser.add_argument("--out", metavar="FILE.npy", help="write the vectors as a .npy array instead of JSON")
    parser.add_argument("--model", metavar="PATH", help="the checkpoint `docbeam run` used (default all-MiniLM-L6-v2)")
    parser.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", *DTYPES],
        help="as `docbeam run --dtype` (auto: bfloat16 on TPU and GPU, float32 on CPU); give the run's to match it",
    )
    parser.add_argument("--attention", default="auto")
    parser.add_argument(
        "--prompt-name",
        metavar="NAME",
        help="the checkpoint prompt to put in front (default: its query prompt, if it has one; give the one "
        "documents got to reproduce a stored chunk vector)",
    )
    parser.add_argument(
        "--dims",
        type=positive_int,
        metavar="N",
        help="keep the first N dimensions, L2-normalised again (as `docbeam run --dims`)",
    )
    parser.add_argument(
        "--like",
        metavar="RUN",
        help="shape the vectors as RUN stores them: its --dims and --vector-dtype (int8 with its ranges, binary "
        "as packed bytes)",
    )
    ns = parser.parse_args(argv)
    if ns.dims and ns.like:
        raise UsageError("--dims and --like: give one (a run's vectors have its own --dims)")
    texts = list(ns.texts)
    if ns.input:
        try:
            lines = sys.stdin.read() if ns.input == "-" else open(ns.input, encoding="utf-8").read()
        except OSError as exc:
            raise UsageError(f"--input {ns.input}: {exc.strerror}") from None
        texts += [line for line in lines.splitlines() if line.strip()]
    if not texts:
        raise UsageError("no text to embed (give TEXT arguments or --input FILE)")
    import numpy as np

    from docbeam.kernels import api as kernels
    from docbeam.model.config import CheckpointError
    from docbeam.pipeline.core.cpu_features import this_cpu
    from docbeam.pipeline.encode import cpu_devices
    from docbeam.pipeline.encode.embed import Embedder
    from docbeam.pipeline.launch.planning.planner import resolve_dtype

    cpu_devices.split()  # as `docbeam run` encodes
    dtype, _ = resolve_dtype(ns.dtype, kernels.platform_of_backend(), this_cpu())
    try:
        vectors = Embedder(ns.model, dtype=dtype, attention=ns.attention, prompt_name=ns.prompt_name)(texts)
    except (CheckpointError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    vectors = _shaped(vectors, ns)
    if ns.out:
        np.save(ns.out, vectors)
        print(f"{len(texts)} vectors of {vectors.shape[1]} {vectors.dtype} values -> {ns.out}", file=sys.stderr)
    else:
        json.dump(vectors.tolist(), sys.stdout)
        print()
    return ExitStatus.OK


def _shaped(vectors, ns):
    """`docbeam embed --dims N` or `--like RUN`: the vectors as that format stores them."""
    from docbeam.pipeline.core.vector_format import VectorFormat, truncate

    if ns.dims:
        if ns.dims > vectors.shape[1]:
            raise UsageError(f"--dims {ns.dims}: the model's vectors have {vectors.shape[1]} dimensions")
        return truncate(vectors, ns.dims)
    if not ns.like:
        return vectors
    from docbeam.pipeline.search.run_chunks import RunError, open_run

    try:
        chunks = open_run(ns.like)
    except RunError as exc:
        raise UsageError(str(exc)) from None
    if chunks.manifest["model"].get("dim") != vectors.shape[1]:
        raise UsageError(f"--like {ns.like}: its model's vectors have {chunks.manifest['model'].get('dim')} dimensions")
    fmt: VectorFormat = chunks.vector_format
    return fmt.shape(vectors, chunks.ranges)


def cmd_search(argv: list[str]) -> int:
    parser = Parser(
        prog="docbeam search",
        description="The chunks of a finished run closest to a query: the query embedded as `docbeam embed` "
        "embeds it, with the checkpoint the run's manifest records (refused when its files here differ), and "
        f"every chunk vector scored by cosine, read in blocks; from {INDEX_FROM_ROWS:,} chunks on, the run's index "
        "(`docbeam index`) when it has a fresh one.",
    )
    parser.add_argument("run", metavar="RUN", help="the run's --output folder or gs:// prefix")
    parser.add_argument("query", metavar="QUERY", nargs="?", help="the question or text to search for")
    parser.add_argument(
        "--queries",
        metavar="FILE",
        help="answer every line of FILE ('-': standard input) in this one process, the model loaded once: a JSON "
        'object {"query": ..., "id": ...}, a JSON string or plain text per line; prints JSON Lines, one per query '
        "(query, id, method, ms, hits)",
    )
    parser.add_argument(
        "--where",
        metavar="FIELD=VALUE",
        action="append",
        default=[],
        help="only chunks whose document or chunk matches (repeatable; the same field twice: either value): "
        "language=CODE, doc_id=PREFIX, section=HEADING, or a field of the document's metadata (NAME=VALUE)",
    )
    parser.add_argument(
        "--per-document", action="store_true", help="the best chunk of each document: no document listed twice"
    )
    parser.add_argument("--top-k", type=positive_int, default=10, help="how many chunks to list (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (run, query, model, method, hits)")
    parser.add_argument(
        "--model", metavar="PATH", help="a copy of the run's checkpoint (its files must match the run's manifest)"
    )
    parser.add_argument("--exact", action="store_true", help="score every chunk even when the run has an index")
    parser.add_argument(
        "--sink",
        metavar="URI",
        help="ask the vector store the run wrote to (--sink of `docbeam run`) instead of the run's Parquet; "
        "the query is embedded the same way",
    )
    ns = parser.parse_args(argv)
    if (ns.query is None) == (ns.queries is None):
        raise UsageError("give a QUERY or --queries FILE (one of them)")
    if ns.sink and (ns.where or ns.per_document or ns.queries):
        raise UsageError(
            "--sink asks the store one query as it is: --queries, --where and --per-document search the run"
        )
    from docbeam.pipeline.search import filters, format, hits
    from docbeam.pipeline.search.query import ModelError
    from docbeam.pipeline.search.run_chunks import RunError, open_run

    try:
        wheres = [filters.parse(w) for w in ns.where]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if ns.queries is not None:
        return _search_many(ns, wheres)
    if not ns.query.strip():
        raise UsageError("QUERY is empty")
    _check_utf8(ns.query)
    try:  # a run folder may come from anyone: a file in it that is not docbeam's is one line, exit 2
        chunks = open_run(ns.run)
        vectors = hits.query_vectors(chunks, [ns.query], ns.model)
        if wheres or ns.per_document:
            found, method = _filtered_hits(chunks, vectors, ns, filters.row_mask(chunks, wheres))
        else:
            found, method = _search_hits(chunks, vectors, ns)
    except (RunError, ModelError) as exc:
        raise UsageError(str(exc)) from None
    model = chunks.manifest["model"].get("name", "")
    if ns.json:
        print(format.render_json(ns.run, ns.query, model, method, found))
    else:
        head = f"{len(found)} of {chunks.n_rows:,} chunks of {ns.run} (model {model}, {method}):"
        print(format.render_text(found, head, "no chunk matches --where" if wheres else "the run has no chunks"))
    return ExitStatus.OK


def _filtered_hits(chunks, vectors, ns, keep) -> tuple[list[dict], str]:
    """One query's hits under --where and --per-document (always exact)."""
    from docbeam.pipeline.search import batch

    query = batch.Query(ns.query)
    answer = next(batch.answers(chunks, [query], ns.top_k, model=ns.model, keep=keep, per_document=ns.per_document))
    return answer["hits"], answer["method"]


def _search_many(ns, wheres) -> int:
    """--queries FILE: JSON Lines, one per query, as each batch is answered."""
    from docbeam.pipeline.search import batch, filters
    from docbeam.pipeline.search.query import ModelError
    from docbeam.pipeline.search.run_chunks import RunError, open_run

    try:
        lines = sys.stdin.read() if ns.queries == "-" else open(ns.queries, encoding="utf-8").read()
        queries = batch.parse_lines(lines.splitlines(), "standard input" if ns.queries == "-" else ns.queries)
        chunks = open_run(ns.run)
        keep = filters.row_mask(chunks, wheres)
        use_index = False if ns.exact else None
        model = chunks.manifest["model"].get("name", "")
        for answer in batch.answers(
            chunks, queries, ns.top_k, model=ns.model, keep=keep, per_document=ns.per_document, use_index=use_index
        ):
            print(json.dumps({"run": ns.run, "model": model, **answer}, ensure_ascii=False), flush=True)
    except OSError as exc:
        raise UsageError(f"--queries {ns.queries}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"--queries {ns.queries}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except (ValueError, RunError, ModelError) as exc:
        raise UsageError(str(exc)) from None
    return ExitStatus.OK


def _check_utf8(query: str) -> None:
    """Refuse a QUERY holding bytes that are not UTF-8: Python hands them over as lone surrogates
    (PEP 383), which neither the tokenizer nor the printed answer can encode."""
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = ord(query[exc.start])
        what = f"byte {bad - 0xDC00:#04x}" if 0xDC80 <= bad <= 0xDCFF else f"U+{bad:04X}"
        raise UsageError(f"QUERY: not UTF-8 ({what} at character {exc.start})") from None


def _search_hits(chunks, vectors, ns) -> tuple[list[dict], str]:
    """(hits, method) from the store --sink names, else from the run's index or every chunk."""
    from docbeam.pipeline.search import hits

    if ns.sink:
        from docbeam.pipeline.core.sink_uri import redact

        found = _store_hits(ns.sink, vectors[0], ns.top_k, chunks.vector_format, chunks.ranges)
        return found, f"store {redact(ns.sink)}"
    ranking = hits.rank(chunks, vectors, ns.top_k, use_index=False if ns.exact else None)
    if ranking.note:
        print(f"docbeam search: {ranking.note}; searching exactly", file=sys.stderr)
    return hits.hits_of(chunks, ranking.scores[0], ranking.rows[0]), ranking.method


def _store_hits(uri: str, vector, top_k: int, fmt=None, ranges=None) -> list[dict]:
    """The store's top chunks as `docbeam search` hits (a store keeps no character offsets)."""
    from docbeam.pipeline.core.sink_uri import parse, redact, redact_text
    from docbeam.pipeline.stores import StoreError, client_errors, query_store, unreachable

    try:
        sink = parse(uri)
        if sink.path and not os.path.exists(sink.path):  # a client would create an empty store there
            raise ValueError(f"{sink.redacted}: no store at {sink.path}")
        found = query_store(uri, vector, top_k, fmt, ranges)
    except (ValueError, StoreError) as exc:
        raise UsageError(f"--sink: {redact_text(str(exc), [uri])}") from None
    except client_errors() as exc:  # a server store that is down, refuses the login, lacks the collection
        said = (redact_text(str(exc), [uri]).strip().splitlines() or [type(exc).__name__])[0][:300]
        if unreachable(exc):
            raise UsageError(f"--sink: cannot reach {redact(uri)}: {said}") from None
        raise UsageError(f"--sink {redact(uri)}: the store refused the search: {said}") from None
    return [
        {
            "rank": rank,
            "score": h["score"],
            "doc_id": h["doc_id"],
            "chunk_index": h["chunk_index"],
            "page_start": h["page"],
            "page_end": None,
            "section": h["section"],
            "start_char": None,
            "end_char": None,
            "text": h["text"],
        }
        for rank, h in enumerate(found, start=1)
    ]


def cmd_index(argv: list[str]) -> int:
    parser = Parser(
        prog="docbeam index",
        description="Build an approximate index (FAISS IVF-Flat) of a finished run's chunk vectors into "
        f"RUN/_index/; `docbeam search` uses it from {INDEX_FROM_ROWS:,} chunks on while it matches the run's chunks.",
    )
    parser.add_argument("run", metavar="RUN", help="the run's --output folder or gs:// prefix")
    ns = parser.parse_args(argv)
    from docbeam.pipeline.search import index_files
    from docbeam.pipeline.search.run_chunks import RunError, open_run

    try:
        record = index_files.build(open_run(ns.run))
    except RunError as exc:
        raise UsageError(str(exc)) from None
    print(
        f"index of {record['rows']:,} chunks (faiss IVF-Flat, {record['lists']} lists, {record['nprobe']} probed "
        f"per query) -> {index_files.paths(ns.run)[0]} in {record['build_seconds']:.1f}s"
    )

    if record["rows"] < INDEX_FROM_ROWS:
        # said, so a small run's user does not wonder why search reports `exact`
        print(f"note: `docbeam search` uses it from {INDEX_FROM_ROWS:,} chunks on; below that, exact search is as fast")
    return ExitStatus.OK


def cmd_kernels(argv: list[str]) -> int:
    parser = Parser(
        prog="docbeam kernels", description="List every attention implementation, whether it runs here and why not."
    )
    parser.add_argument(
        "--seq-len", type=positive_int, default=256, help="sequence length to check (default %(default)s)"
    )
    parser.add_argument("--dtype", default="float32", choices=DTYPES)
    parser.add_argument(
        "--window", type=positive_int, default=None, help="a local window (tokens either side), e.g. 64"
    )
    parser.add_argument(
        "--hardware",
        metavar="tpu-TYPE[:CHIPS]",
        help="compile every kernel for this TPU worker here (libtpu, no TPU needed) and say which compile",
    )
    args = parser.parse_args(argv)
    from docbeam.kernels import api as kernels

    if args.hardware:
        return _kernels_for_tpu(args)
    platform = kernels.platform_of_backend()
    shape = (max(1, min(32, 8192 // args.seq_len)), args.seq_len, 12, 32)
    window = "" if args.window is None else f", local window {args.window}"
    print(f"platform: {platform}; shape [batch, seq, heads, head_dim] = {list(shape)}, {args.dtype}{window}\n")
    for r in kernels.report(platform, shape, args.dtype, args.window):
        mark = "yes" if r["available"] else "no "
        print(f"  {r['name']:<10} {mark}  {r['summary'] or r['note']}")
        if r["note"] and r["summary"]:  # no summary: the note (why, how to install) took its place
            print(f"  {'':<10}      {r['note']}")
    auto = kernels.get("auto", platform=platform, shape=shape, dtype=args.dtype, window=args.window)
    print(f"\nauto -> {auto.reason}")
    return ExitStatus.OK


def _kernels_for_tpu(args) -> int:
    from docbeam.kernels import api as kernels
    from docbeam.pipeline.core.hardware import HardwareError, parse_spec
    from docbeam.pipeline.encode import aot

    try:
        t = aot.target(*parse_spec(args.hardware))
        aot.devices_for(t)
    except (HardwareError, aot.CompileUnavailable) as exc:
        raise UsageError(f"--hardware {args.hardware}: {exc}") from None
    chips = t.worker.chips
    rows = -(-max(1, min(32, 8192 // args.seq_len)) // chips) * chips
    shape = (rows, args.seq_len, 12, 64)
    window = "" if args.window is None else f", local window {args.window}"
    where = f"{args.hardware} ({t.topology}); shape {list(shape)} over {chips} chip(s)"
    print(f"compiling for {where}, {args.dtype}{window}\n")
    failed = 0
    for name in kernels.names():
        why = aot.kernel_compiles(name, t, shape, args.dtype, args.window)
        failed += why.startswith("does not compile")
        print(f"  {name:<10} {'compiles' if not why else 'no':<9} {why}")
    auto = kernels.get("auto", platform="tpu", shape=shape, dtype=args.dtype, window=args.window)
    print(f"\nauto -> {auto.reason}")
    return ExitStatus.OK if not failed else ExitStatus.USAGE


FAMILIES = [
    # (family, architecture, pooling, example --model): see docs/models.md
    ("all-MiniLM / all-mpnet-style BERT", "bert", "mean + Normalize", "sentence-transformers/all-MiniLM-L6-v2"),
    ("bge (English)", "bert", "cls + Normalize", "BAAI/bge-small-en-v1.5"),
    ("e5 (query:/passage: prompts)", "bert", "mean + Normalize", "intfloat/e5-small-v2"),
    ("multilingual-e5", "xlm-roberta", "mean + Normalize", "intfloat/multilingual-e5-small"),
    ("paraphrase-multilingual", "xlm-roberta", "mean", "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"),
    ("bge-m3 (8,192 positions)", "xlm-roberta", "cls + Normalize", "BAAI/bge-m3"),
    ("ModernBERT embeddings (8,192)", "modernbert", "mean", "nomic-ai/modernbert-embed-base"),
]


def cmd_models(argv: list[str]) -> int:
    Parser(
        prog="docbeam models", description="The architectures, pooling modes and model families docbeam reads."
    ).parse_args(argv)
    from docbeam.model import ARCHITECTURES, POOLING_MODES

    print("architectures (config.json model_type):")
    for module in dict.fromkeys(ARCHITECTURES.values()):  # one line per module, all its model_types
        print(f"  {', '.join(module.MODEL_TYPES):<21} {module.SUMMARY}")
    print(f"\npooling modes (sentence-transformers Pooling; several concatenate): {', '.join(POOLING_MODES)}")
    print("then any Dense layers (tanh, identity, relu, gelu, sigmoid) and Normalize, as modules.json lists them;")
    print("prompts from config_sentence_transformers.json (documents: document/passage/corpus; --prompt-name)")
    print("\n--model: a directory, a gs:// prefix, or a Hugging Face hub id ORG/NAME[@REVISION] (safetensors only)")
    print("\nfamilies that work (one line each):")
    width = max(len(f) for f, *_ in FAMILIES)
    for family, arch, pooling, repo in FAMILIES:
        print(f"  {family:<{width}} {arch:<12} {pooling:<18} docbeam run --input 'docs/*' --output out --model {repo}")
    return ExitStatus.OK


COMMANDS = {
    "run": cmd_run,
    "submit": cmd_submit,
    "estimate": cmd_estimate,
    "compile": cmd_compile,
    "report": cmd_report,
    "embed": cmd_embed,
    "search": cmd_search,
    "index": cmd_index,
    "kernels": cmd_kernels,
    "models": cmd_models,
}


def main(argv: list[str] | None = None) -> int:
    interrupt.install()  # before anything slow loads: a Ctrl-C there is remembered, never lost
    # On a machine without a TPU, libtpu (the tpu extra) is noisy at JAX start-up.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(USAGE, file=sys.stderr)
        return ExitStatus.USAGE
    if argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return ExitStatus.OK
    if argv[0] == "--version":
        print(f"docbeam {metadata.version('docbeam')}")
        return ExitStatus.OK
    command = argv[0]
    if command not in COMMANDS:
        close = difflib.get_close_matches(command, COMMANDS, n=1)
        hint = f" (did you mean {close[0]}?)" if close else f"; commands: {', '.join(COMMANDS)}"
        print(f"docbeam: unknown command {command!r}{hint}", file=sys.stderr)
        return ExitStatus.USAGE
    try:
        with redacted_output(argv):
            return COMMANDS[command](argv[1:])
    except UsageError as exc:
        print(f"docbeam {command}: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    except KeyboardInterrupt:
        print(f"docbeam {command}: interrupted", file=sys.stderr)
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:  # `docbeam embed ... | head`: the reader left; nothing to report
        sys.stderr.close()
        return ExitStatus.OK


# Commands that end by leaving the process at once: after `search` printed its answer, a native
# thread pool (seen in a fresh install, ~4 runs in 10) could abort the interpreter's shutdown
# with "terminate called without an active exception" (exit 134), turning a good answer into a
# failure for scripts. They hold nothing to clean up once their output is flushed.
EXIT_AT_ONCE = ("search", "index")


def script() -> None:
    """The `docbeam` console command: `main`, and its exit status."""
    status = main()
    if sys.argv[1:2] and sys.argv[1] in EXIT_AT_ONCE:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":
    script()
