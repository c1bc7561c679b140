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
from pipeline.ingest.parse import ParseConfig
from pipeline.io.checkpoints import checkpoint_dir
from pipeline.launch.options import DocbeamOptions


def absolute(glob: str) -> str:
    # Local paths become absolute so sources and derived doc_ids do not depend on the cwd.
    return glob if "://" in glob else os.path.abspath(glob)


def check_inputs(globs: list[str]) -> None:
    if not globs:
        raise UsageError("--input is required (one or more globs, local or gs://)")
    results = FileSystems.match(globs, limits=[1] * len(globs))
    empty = [g for g, r in zip(globs, results) if not r.metadata_list]
    if empty:
        raise UsageError(f"--input matches no files: {', '.join(empty)}")


def list_files(globs: list[str]) -> dict[str, int]:
    """path -> size of every file the globs match."""
    return {m.path: m.size_in_bytes for r in FileSystems.match(globs) for m in r.metadata_list}


def make_plan(options: PipelineOptions, *, needs_output: bool = True) -> JobPlan:
    d = options.view_as(DocbeamOptions)
    if needs_output and not d.output:
        raise UsageError("--output is required (a folder or gs:// prefix)")
    globs = [absolute(g) for g in d.input or []]
    check_inputs(globs)
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
        windowing = Windowing(max_seq_len, d.stride)
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
        "labels": {"labels_file": d.label_file, "top_k": d.label_top_k, "min_score": d.label_min_score},
        "keyphrases": {
            "ngrams": (lo, hi),
            "reference": d.keyphrase_reference,
            "top_n": d.keyphrase_top_n,
            "language": d.language,
        },
        "summary": {"top_k": d.summary_sentences, "language": d.language},
    }
    try:
        exs = extractors.build(kinds, settings)
    except (extractors.ExtractorError, ValueError) as exc:
        raise UsageError(f"--extract {d.extract}: {exc}") from exc
    pack = PackSpec(rows=d.batch_rows, seq_len=max_seq_len)
    return JobPlan(
        globs=globs,
        output=d.output or "",
        parse=ParseConfig(d.id_field, d.text_field, d.max_doc_bytes, d.max_decompressed_bytes),
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
