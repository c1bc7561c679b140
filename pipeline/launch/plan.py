"""Flags -> the job's plan, resolved before anything starts: inputs that match nothing, a
model that cannot be read, a kernel that cannot run here or a bad extractor setting fail
here, in one line, not inside a worker."""

import os

from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import GoogleCloudOptions, PipelineOptions

import kernels
from model.checkpoint import describe_checkpoint
from model.config import CheckpointError
from pipeline import extractors
from pipeline.core.flags import UsageError, extract_list
from pipeline.encode.packing import PackSpec
from pipeline.encode.runtime import EncoderSettings
from pipeline.graph.plan import JobPlan
from pipeline.ingest.chunking import Windowing
from pipeline.ingest.parse import FORMATS, ParseConfig, format_of
from pipeline.ingest.sources import InputGlob, for_folder, for_glob, has_wildcard, name_of
from pipeline.io.checkpoints import checkpoint_dir
from pipeline.launch.options import DocbeamOptions


def absolute(glob: str) -> str:
    # Local paths become absolute so the sources recorded do not depend on the cwd.
    return glob if "://" in glob else os.path.abspath(glob)


def _is_folder(path: str) -> bool:
    if has_wildcard(path):
        return False
    if "://" not in path:
        return os.path.isdir(path)
    # gs://bucket/prefix: a folder when it is no object but objects lie under it
    return not FileSystems.match([path], limits=[1])[0].metadata_list and bool(
        FileSystems.match([path.rstrip("/") + "/**"], limits=[1])[0].metadata_list
    )


def resolve_inputs(args: list[str]) -> tuple[InputGlob, ...]:
    """--input arguments -> inputs: a folder means the files under it (recursively, formats
    docbeam reads); anything else is a glob. Fails on what matches nothing."""
    if not args:
        raise UsageError("--input is required (one or more globs or folders, local or gs://)")
    inputs = tuple(for_folder(a) if _is_folder(a) else for_glob(a) for a in map(absolute, args))
    empty = [i.pattern for i, r in zip(inputs, FileSystems.match([i.pattern for i in inputs])) if not r.metadata_list]
    if empty:
        raise UsageError(f"--input matches no files: {', '.join(empty)}")
    return inputs


def list_files(inputs: tuple[InputGlob, ...]) -> dict[str, tuple[int, str]]:
    """path -> (size, name) of every file the inputs name. Two inputs that would give the same
    document ids (the same file twice, or two files of the same name under their roots) are
    an error here, before the job: the ids would collide."""
    listing: dict[str, tuple[int, str]] = {}
    owner: dict[str, str] = {}
    by_name: dict[str, str] = {}
    for item, result in zip(inputs, FileSystems.match([i.pattern for i in inputs])):
        found = result.metadata_list
        if item.folder:
            kept = [m for m in found if format_of(m.path)]
            if not kept:
                kinds = sorted({os.path.splitext(m.path)[1] or "(no extension)" for m in found})
                raise UsageError(
                    f"--input {item.root}: a folder with no files docbeam reads (found {', '.join(kinds)}); "
                    f"it reads {', '.join(sorted(FORMATS))}"
                )
            found = kept
        for m in found:
            name = name_of(m.path, item.root)
            if m.path in owner and owner[m.path] != item.pattern:
                raise UsageError(f"{m.path} is matched by two inputs ({owner[m.path]}, {item.pattern}): give it once")
            if by_name.get(name, m.path) != m.path:
                raise UsageError(
                    f"{by_name[name]} and {m.path} would give the same document ids ({name}#...): "
                    "give one glob whose root holds both, or move one"
                )
            owner[m.path], by_name[name] = item.pattern, m.path
            listing[m.path] = (m.size_in_bytes, name)
    return listing


def make_plan(options: PipelineOptions, *, needs_output: bool = True) -> JobPlan:
    d = options.view_as(DocbeamOptions)
    if needs_output and not d.output:
        raise UsageError("--output is required (a folder or gs:// prefix)")
    inputs = resolve_inputs(d.input or [])
    list_files(inputs)  # id collisions fail here, before the job
    try:
        ckpt = describe_checkpoint(checkpoint_dir(d.model, d.model_sha256))
    except CheckpointError as exc:
        raise UsageError(f"--model: {exc}") from exc
    if d.model_sha256 and d.model_sha256 != ckpt.weights_sha256:
        raise UsageError(
            f"{ckpt.path}/model.safetensors sha256 {ckpt.weights_sha256} != --model-sha256 {d.model_sha256}"
        )
    max_seq_len = d.max_seq_len or ckpt.config.max_seq_len  # the window the model was trained on
    if max_seq_len > ckpt.config.max_positions:
        raise UsageError(f"--max-seq-len {max_seq_len} exceeds the model's {ckpt.config.max_positions} positions")
    try:
        windowing = Windowing(max_seq_len, d.stride, specials=ckpt.special.count, language=d.language)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    try:
        kinds = extract_list(d.extract)
    except ValueError as exc:
        raise UsageError(f"--extract: {exc}") from exc
    beam_labels = options.view_as(GoogleCloudOptions).labels or []
    if "labels" in kinds and any(lb.endswith((".json", ".yaml", ".yml")) for lb in beam_labels):
        raise UsageError("--labels is Beam's Dataflow job-label flag; give the label file as --label-file FILE")
    try:
        lo, hi = (int(x) for x in d.keyphrase_ngrams.split(","))
    except ValueError:
        if "keyphrases" in kinds:
            raise UsageError(f"--keyphrase-ngrams {d.keyphrase_ngrams!r}: expected MIN,MAX, e.g. 1,2") from None
        lo, hi = 1, 2
    settings = {
        "labels": {"labels_file": d.label_file},
        "keyphrases": {"ngrams": (lo, hi), "reference": d.keyphrase_reference},
        "summary": {"top_k": d.summary_sentences},
    }
    try:
        exs = extractors.build(kinds, settings)
    except (extractors.ExtractorError, ValueError) as exc:
        raise UsageError(f"--extract {d.extract}: {exc}") from exc
    pack = PackSpec(rows=d.batch_rows, seq_len=max_seq_len)
    return JobPlan(
        inputs=inputs,
        output=d.output or "",
        parse=ParseConfig(
            id_field=d.id_field,
            text_field=d.text_field,
            max_doc_bytes=d.max_doc_bytes,
            max_decompressed_bytes=d.max_decompressed_bytes,
            html_text=d.html_text,
            max_pdf_pages=d.max_pdf_pages,
            parse_timeout_s=d.parse_timeout,
            parse_memory_mb=d.parse_memory_mb,
        ),
        windowing=windowing,
        encoder=EncoderSettings(d.model, d.model_sha256, d.attention, d.dtype, pack, d.profile, d.leak_threshold_mb),
        model_name=d.model or ckpt.name,
        weights_sha256=ckpt.weights_sha256,
        config=ckpt.config,
        model_path=d.model,
        extractors=exs,
        no_store_text=d.no_store_text,
    )


def resolve_attention(plan: JobPlan, platform: str | None = None) -> dict:
    """The choice the workers will make, made here first so a bad request fails before the job."""
    shape = (plan.pack.rows, plan.pack.seq_len, plan.config.heads, plan.config.head_dim)
    platform = platform or kernels.platform_of_backend()
    try:
        choice = kernels.get(plan.encoder.attention, platform=platform, shape=shape, dtype=plan.encoder.dtype)
    except kernels.KernelUnavailable as exc:
        raise UsageError(str(exc)) from exc
    return choice.record(platform)


def remote_attention(requested: str) -> dict:
    """The kernel record of a job whose workers choose for their own platform (Dataflow)."""
    return {
        "requested": requested,
        "used": "(decided on the workers)",
        "platform": "remote",
        "reason": "remote runner: each worker decides for its own platform; see used_by_workers",
    }
