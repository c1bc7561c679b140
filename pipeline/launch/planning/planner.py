"""Flags -> the job's plan, resolved before anything starts: inputs that match nothing, a
model that cannot be read, a kernel that cannot run here or a bad extractor setting fail
here, in one line, not inside a worker."""

import dataclasses
import hashlib
import json
import logging
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import jax
from apache_beam.io.filesystem import FileMetadata
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import GoogleCloudOptions, PipelineOptions

from docbeam.kernels import api as kernels
from docbeam.model.checkpoint import Checkpoint, describe_checkpoint, sha256_of
from docbeam.model.config import CheckpointError
from docbeam.model.token_classification import load_classifier, read_labels
from docbeam.pipeline import extractors
from docbeam.pipeline.core import cpu_features, fingerprint, languages, tables
from docbeam.pipeline.core.choices import parse_ngrams
from docbeam.pipeline.core.flags import UsageError, extract_list
from docbeam.pipeline.core.hardware import catalogue, parse_spec
from docbeam.pipeline.encode.packing import PackSpec, spec_for
from docbeam.pipeline.encode.runtime import TOKEN_CLASSIFICATION, EncoderSettings
from docbeam.pipeline.extractors.base import text_only
from docbeam.pipeline.extractors.labels import DEFAULT_LABELS
from docbeam.pipeline.graph import runners
from docbeam.pipeline.graph.job_plan import JobPlan, NerPlan, Reuse
from docbeam.pipeline.ingest import language_id
from docbeam.pipeline.ingest.chunking import CHUNKING_VERSION, Frame, Windowing
from docbeam.pipeline.ingest.parse import FORMATS, ParseConfig, format_of
from docbeam.pipeline.ingest.sources import (
    InputGlob,
    folder_links_outside,
    for_folder,
    for_glob,
    has_wildcard,
    in_a_run,
    name_of,
)
from docbeam.pipeline.io import hub, outputs, storage
from docbeam.pipeline.io.checkpoints import (
    checkpoint_dir,
    checkpoint_files_sha256,
    installed_default_record,
    stage_checkpoint,
)
from docbeam.pipeline.launch.planning import model_languages, vector_plan
from docbeam.pipeline.launch.running.options import DocbeamOptions

log = logging.getLogger("docbeam")


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


def list_files(inputs: tuple[InputGlob, ...], say_left_out: bool = False) -> dict[str, tuple[int, str]]:
    """path -> (size, name) of every file the inputs name. Two inputs that would give the same
    document ids (the same file twice, or two files of the same name under their roots) are
    an error here, before the job: the ids would collide. `say_left_out`: log the files a folder
    leaves out for want of an extension docbeam reads. Links to folders outside an input are
    listed too (size 0), to be skipped and counted as the job reads (sources.left_out)."""
    listing: dict[str, tuple[int, str]] = {}
    owner: dict[str, str] = {}
    by_name: dict[str, str] = {}
    for item, result in zip(inputs, FileSystems.match([i.pattern for i in inputs])):
        found = result.metadata_list
        if item.folder:
            kept = [m for m in found if format_of(m.path) and not in_a_run(m.path, item.root)]
            unnamed = sorted(
                os.path.basename(m.path) for m in found if not format_of(m.path) and not in_a_run(m.path, item.root)
            )
            # Said once, at planning: a folder of licences or man pages holds files without extensions.
            if say_left_out and kept and unnamed:
                shown = ", ".join(unnamed[:3]) + (", ..." if len(unnamed) > 3 else "")
                log.warning(
                    "--input %s: %d file(s) without an extension docbeam reads left out (%s); "
                    "name a file itself to have its content detected",
                    item.root,
                    len(unnamed),
                    shown,
                )
            if not kept:
                kinds = sorted({os.path.splitext(m.path)[1] or "(no extension)" for m in found})
                raise UsageError(
                    f"--input {item.root}: a folder with no files docbeam reads (found {', '.join(kinds)}); "
                    f"it reads {', '.join(sorted(FORMATS))}"
                )
            found = kept
        found = [*found, *(FileMetadata(path, 0) for path in folder_links_outside(item))]
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


# Files of a checkpoint docbeam reads besides the weights: they change its vectors or tokens.
CHECKPOINT_TEXT_FILES = ("*.json", "*/*.json")


def checkpoint_hash(path, weights_sha256: str) -> str:
    """The weights' sha256 and every configuration file docbeam reads (tokenizer, pooling,
    Dense, prompts), hashed together."""
    h = hashlib.sha256(weights_sha256.encode())
    root = Path(path)
    for f in sorted({p for pattern in CHECKPOINT_TEXT_FILES for p in root.glob(pattern)}):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    for f in sorted(root.glob("*/model.safetensors")):  # Dense layers' weights
        h.update(str(f.relative_to(root)).encode() + b"\0" + sha256_of(f).encode())
    return h.hexdigest()[:32]


def _by_content(settings: dict) -> dict:
    """An extractor's settings, a label file by its content (the default one included)."""
    out = dict(settings)
    if "labels_file" in out:
        out["labels_file"] = hashlib.sha256(Path(out["labels_file"] or DEFAULT_LABELS).read_bytes()).hexdigest()[:32]
    return out


def _extractor_fingerprint(ex: extractors.Extractor, settings: dict) -> dict:
    """What an extractor's rows depend on besides the text: its settings, its version and the
    versions of the packages whose data it reads."""
    data = {p: metadata.version(p) for p in ex.data_packages}
    return {**_by_content(settings), "version": ex.version, **({"data": data} if data else {})}


def _previous_run(previous: str, output: str | None, settings: dict, exs: list) -> Reuse:
    """The run `--reuse` names, its tables listed, and what of it this run can copy: everything
    (the same settings), the vectors alone (only extractors differ: those added or changed run
    on the copied vectors, with only their own candidates encoded) or nothing."""
    if output and previous.rstrip("/") == output.rstrip("/"):
        raise UsageError("--reuse and --output name the same folder; write the new run somewhere else")
    path = tables.join(previous, tables.MANIFEST)
    if not storage.exists(path):
        raise UsageError(f"--reuse {previous}: no {tables.MANIFEST} there (not a finished docbeam run)")
    before = json.loads(storage.read_text(path)).get("settings", {})
    values = before.get("values", {})
    vectors, extractions = fingerprint.changed_parts(values, settings)
    convert = vector_plan.convertible(values, settings)  # only --dims/--vector-dtype: convert, not encode
    vectors = [] if convert else vectors

    def files(table: str) -> list[str]:
        return outputs.files(previous, table, tables.SUFFIX[table])

    found = (previous, files(tables.DOCUMENTS), files(tables.CHUNKS), files(tables.EXTRACTIONS))
    if not vectors and not extractions and not convert:
        return Reuse(*found, True)
    rerun = fingerprint.extractor_kinds_changed(values, settings)
    # The token classifier's pass runs over the chunks' text in its own windows: a change of it
    # encodes again (the extractors' candidates do not need the chunks encoded again).
    ner_changed = ["--ner-model"] if any(c.startswith("ner") for c in extractions) else []
    kept_format = values.get(vector_plan.SETTING)  # None: that run kept the full float32 vectors
    if vectors or ner_changed:
        why = f"; {', '.join(ner_changed)} needs the encoder" if not vectors else ""
        if kept_format is not None and any(v.startswith(vector_plan.SETTING) for v in vectors):
            why = (
                f"; that run kept {kept_format.get('dims')}-dimension {kept_format.get('dtype')} vectors, "
                "not the full float32 ones a conversion starts from (--reuse a float32 run to convert without encoding)"
            )
        log.warning(
            "--reuse %s: settings changed (%s)%s: every document is encoded again",
            previous,
            "; ".join(vectors or extractions),
            why,
        )
        return Reuse(*found, False)
    encoded = {ex.name for ex in exs if ex.name in rerun and not text_only(ex)}
    if encoded and kept_format is not None:
        # Extractors score their candidates against the full float32 vectors, which a run that
        # stored truncated or quantised ones no longer has.
        log.warning(
            "--reuse %s: %s need(s) the full float32 vectors; that run kept %s: every document is encoded again",
            previous,
            ", ".join(sorted(encoded)),
            kept_format,
        )
        return Reuse(*found, False)
    if extractions:
        log.info(
            "--reuse %s: extractor settings changed (%s): vectors reused; extractors run on reused documents: %s",
            previous,
            "; ".join(extractions),
            ", ".join(f"{k} (its candidates encoded)" if k in encoded else k for k in rerun) or "none",
        )
    if convert:
        log.info("--reuse %s: %s", previous, vector_plan.converting(values, settings))
    kept = tuple(k for k in (settings.get("extractors") or {}) if k not in rerun)
    previous_hash = before.get("hash") or fingerprint.settings_hash(values)
    return Reuse(
        *found, False, previous_hash=previous_hash, copy_kinds=kept, run_kinds=tuple(rerun), convert_vectors=convert
    )


def encoder_platform(options: PipelineOptions, hardware: str | None) -> str:
    """Where the encoder will run: this machine's platform for a local runner, else the kind
    of accelerator the job is billed for (the workers' hardware)."""
    if runners.is_local(options):
        return kernels.platform_of_backend()
    if hardware and parse_spec(hardware)[0] != "cpu":
        return catalogue().get(parse_spec(hardware)[0]).kind
    return "cpu"


def host_processes(requested: int, platform: str) -> int:
    """--host-processes as the plan carries it: as asked, else (0, auto) one on a CPU, where the
    encoder binds and its threads use every core, and 0 on an accelerator: the worker's cores but
    the encoding process's one, counted there (graph.host_pool; README, Feeding the chip)."""
    if requested:
        return requested
    return 1 if platform == "cpu" else 0


def jax_local_chips(platform: str) -> int:
    """The devices this process drives that size a batch: TPU chips (a budget each), CPU
    devices (a row each at least; encode.cpu_devices); 1 on a GPU (a budget per batch)."""
    return jax.local_device_count() if platform in ("tpu", "cpu") else 1


def pack_spec(batch_rows: int | None, seq_len: int, platform: str, chips: int) -> PackSpec:
    """Rows per batch: --batch-rows, else the platform's token budget per batch at every row
    length (packing.default_rows: fewer, longer rows at long windows), per chip on a TPU
    worker. Compiled for v5e:4 (`docbeam compile`, README), the default model's bound rose
    from 1.50M tokens/s per chip at 2,048 tokens per chip to 1.85M at 8,192 (weights read once
    per more tokens), using 114 MB of 16 GiB; 32,768 per chip gave no more (1.75M). A CPU
    batch is 1,024 tokens (packing.CPU_TOKENS_PER_BATCH: activations that stay in cache)."""
    return spec_for(seq_len, platform, chips, batch_rows)


def resolve_dtype(requested: str, platform: str, cpu_flags: frozenset[str] | None = None) -> tuple[str, str]:
    """`--dtype auto`: bfloat16 where the chips are built for it; on a CPU, bfloat16 (float32
    accumulation) where it has bfloat16 matrix instructions (`cpu_flags`: this machine's; None
    for CPU workers elsewhere, whose CPU is not known at launch), float32 otherwise."""
    if requested != "auto":
        return requested, f"{requested}: requested"
    if platform in ("tpu", "gpu"):
        return "bfloat16", f"bfloat16: {platform.upper()}, whose matrix units run 16-bit at full rate"
    if cpu_flags is None:
        return "float32", "float32: CPU workers (auto): their CPU's features are not known at launch"
    unit = cpu_features.bf16_unit(cpu_flags)
    if unit:
        return "bfloat16", f"bfloat16: CPU with {unit} (auto): bfloat16 inputs, float32 accumulation"
    return "float32", (
        f"float32: CPU without AVX-512 BF16 or AMX (auto; has {cpu_features.describe(cpu_flags)}): "
        "bfloat16 would be widened to float32 for every product"
    )


def platform_dtype(requested: str, options: PipelineOptions, hardware: str | None) -> tuple[str, str]:
    """resolve_dtype for where this run's encoder runs: this machine's CPU flags for a local run."""
    platform = encoder_platform(options, hardware)
    local_cpu = platform == "cpu" and runners.is_local(options)
    dtype, reason = resolve_dtype(requested, platform, cpu_features.this_cpu() if local_cpu else None)
    if local_cpu and requested == "auto" and cpu_features.pinned():
        reason += f" (flags from ${cpu_features.OVERRIDE}, not this CPU's)"
    return dtype, reason


def _ner_error(exc: Exception) -> UsageError:
    text = str(exc)
    return UsageError(text if text.startswith("--ner-model") else f"--ner-model: {text}")


def ner_plan(
    d: DocbeamOptions,
    kinds: list[str],
    dtype: str,
    platform: str = "cpu",
    chips: int = 1,
) -> NerPlan | None:
    """--ner-model resolved like --model (a hub id once, here) and checked before the job: a
    BERT / XLM-R token classifier with BIO labels and its classifier weights."""
    if not d.ner_model:
        return None
    if "entities" not in kinds:
        raise UsageError("--ner-model adds to the entities extractor: add --extract entities")
    path, hub_ckpt = d.ner_model, None
    try:
        if hub.is_hub_id(path):
            hub_ckpt = hub.resolve(path, flag="--ner-model")
            path = str(hub_ckpt.path)
        ckpt = describe_checkpoint(checkpoint_dir(path))
        labels = read_labels(ckpt.path)
        load_classifier(ckpt.path, len(labels), ckpt.config.hidden)
        seq = ckpt.config.max_seq_len
        windowing = Windowing.of(seq, d.stride, specials=ckpt.special.count)
    except (CheckpointError, ValueError) as exc:
        raise _ner_error(exc) from exc
    pack = pack_spec(None, seq, platform, chips)  # --batch-rows sizes the embedding model's batches only
    encoder = EncoderSettings(
        path,
        ckpt.weights_sha256,  # workers refuse other weights than the ones planned with
        d.attention,
        dtype,
        pack,
        leak_threshold_mb=d.leak_threshold_mb,
        task=TOKEN_CLASSIFICATION,
        files_sha256=checkpoint_files_sha256(ckpt.path, ckpt.weights_sha256),
    )
    name = hub_ckpt.name if hub_ckpt else d.ner_model
    return NerPlan(encoder, windowing, ckpt.config, labels, d.ner_aggregation, name, ckpt.weights_sha256)


@dataclass(frozen=True)
class ResolvedModel:
    path: str | None  # what workers load: a folder, a gs:// prefix or a hub snapshot (None: the default)
    name: str  # as the manifest and the tables name it (the hub id for a hub model)
    checkpoint: Checkpoint
    source: dict  # JobPlan.model_source
    files_sha256: dict[str, str]  # every checkpoint file's sha256, as read here: workers check theirs


def resolve_model(d: DocbeamOptions) -> ResolvedModel:
    """--model (a hub id resolved once, here: workers get this snapshot or its staged copy,
    never the hub) checked against --model-sha256."""
    path, hub_ckpt = d.model, None
    if path and hub.is_installed_default(path):
        path = None  # the installed default package answers to its hub id: no hub, no commit
    try:
        if path and hub.is_hub_id(path):
            hub_ckpt = hub.resolve(path)
            path = str(hub_ckpt.path)
        ckpt = describe_checkpoint(checkpoint_dir(path, d.model_sha256))
    except CheckpointError as exc:  # hub errors name the flag already
        text = str(exc)
        raise UsageError(text if text.startswith("--model") else f"--model: {text}") from exc
    if d.model_sha256 and d.model_sha256 != ckpt.weights_sha256:
        raise UsageError(
            f"{ckpt.path}/model.safetensors sha256 {ckpt.weights_sha256} != --model-sha256 {d.model_sha256}"
        )
    if hub_ckpt:
        source = {"hub": hub_ckpt.repo_id, "revision": hub_ckpt.revision}
    else:
        source = installed_default_record(ckpt.weights_sha256) if path is None else {}
    files = checkpoint_files_sha256(ckpt.path, ckpt.weights_sha256)
    return ResolvedModel(path, hub_ckpt.name if hub_ckpt else (d.model or ckpt.name), ckpt, source, files)


def resolve_windowing(d: DocbeamOptions, ckpt: Checkpoint) -> tuple[Frame, Windowing]:
    """The window (the checkpoint's own unless --max-seq-len), its prompt and stride."""
    max_seq_len = d.max_seq_len or ckpt.config.max_seq_len  # the window the model was trained on
    if max_seq_len > ckpt.config.max_positions:
        raise UsageError(f"--max-seq-len {max_seq_len} exceeds the model's {ckpt.config.max_positions} positions")
    try:
        frame = Frame.of(ckpt, d.prompt_name)
        return frame, Windowing.of(max_seq_len, d.stride, specials=frame.count)
    except (ValueError, CheckpointError) as exc:
        raise UsageError(str(exc)) from exc


def extractor_settings(d: DocbeamOptions) -> dict[str, dict]:
    """Each extractor's keyword arguments, from its flags (stored in the fingerprint as JSON)."""
    return {
        "labels": {"labels_file": d.label_file, "top_k": d.label_top_k, "min_score": d.label_min_score},
        "keyphrases": {
            "ngrams": list(parse_ngrams(d.keyphrase_ngrams)),  # checked on the command line
            "reference": d.keyphrase_reference,
            "top_n": d.keyphrase_top_n,
        },
        # No language: each extractor follows the document's own (Document.language).
        "summary": {"top_k": d.summary_sentences},
    }


def resolve_extractors(options: PipelineOptions) -> tuple[list[str], dict[str, dict], list]:
    """(--extract kinds, their settings, the extractors built: a bad label file fails here)."""
    d = options.view_as(DocbeamOptions)
    try:
        kinds = extract_list(d.extract)
    except ValueError as exc:
        raise UsageError(f"--extract: {exc}") from exc
    beam_labels = options.view_as(GoogleCloudOptions).labels or []
    if "labels" in kinds and any(lb.endswith((".json", ".yaml", ".yml")) for lb in beam_labels):
        raise UsageError("--labels is Beam's Dataflow job-label flag; give the label file as --label-file FILE")
    settings = extractor_settings(d)
    try:
        return kinds, settings, extractors.build(kinds, settings)
    except (extractors.ExtractorError, ValueError) as exc:
        raise UsageError(f"--extract {d.extract}: {exc}") from exc


def parse_config(d: DocbeamOptions) -> ParseConfig:
    # Each field is the flag of the same name (parse_timeout_s: --parse-timeout, in seconds).
    return ParseConfig(**{f.name: getattr(d, f.name.removesuffix("_s")) for f in dataclasses.fields(ParseConfig)})


def make_plan(options: PipelineOptions, *, needs_output: bool = True, needs_input: bool = True) -> JobPlan:
    """Every flag resolved and checked, in the order a reader would check them by hand.
    (`docbeam compile` plans the encoder alone: no input, no output.)"""
    d = options.view_as(DocbeamOptions)
    if needs_output and not d.output:
        raise UsageError("--output is required (a folder or gs:// prefix)")
    inputs = resolve_inputs(d.input or []) if needs_input or d.input else ()
    listing = list_files(inputs, say_left_out=True) if inputs else {}  # id collisions fail here, before the job
    model = resolve_model(d)
    ckpt = model.checkpoint
    dtype, dtype_reason = platform_dtype(d.dtype, options, d.hardware)
    frame, windowing = resolve_windowing(d, ckpt)
    kinds, settings, exs = resolve_extractors(options)
    prompt = frame.prompt.name if frame.prompt else None
    platform = encoder_platform(options, d.hardware)
    chips = parse_spec(d.hardware)[1] if d.hardware and not runners.is_local(options) else jax_local_chips(platform)
    ner = ner_plan(d, kinds, dtype, platform, chips)
    pack = pack_spec(d.batch_rows, windowing.max_seq_len, platform, chips)
    outputs_depend_on = {
        "checkpoint": checkpoint_hash(ckpt.path, ckpt.weights_sha256),
        "dtype": dtype,
        "max_seq_len": windowing.max_seq_len,
        "stride": windowing.stride,
        "language": d.language,
        "chunking": CHUNKING_VERSION,
        "extractors": {ex.name: _extractor_fingerprint(ex, settings.get(ex.name, {})) for ex in exs},
        # sentencex's rules cut every chunk and candidate: a new release may cut them elsewhere
        "sentence_rules": f"sentencex {metadata.version('sentencex')}",
        "prompt": prompt,
    }
    if d.language == languages.AUTO:  # the detector decides each document's rules: a new one may differ
        outputs_depend_on["language_detector"] = language_id.identity()
    vectors = vector_plan.vector_format(d, ckpt)
    if not vectors.default:  # only with --dims/--vector-dtype: runs without them keep their fingerprints
        outputs_depend_on[vector_plan.SETTING] = vector_plan.setting(vectors)
    if ner:  # only with --ner-model: runs without it keep their fingerprints
        outputs_depend_on["ner"] = {
            "checkpoint": checkpoint_hash(checkpoint_dir(ner.encoder.model), ner.weights_sha256),
            "aggregation": ner.aggregation,
        }
    reuse = _previous_run(d.reuse, d.output, outputs_depend_on, exs) if d.reuse else None
    return JobPlan(
        vectors=None if vectors.default else vectors,
        vector_ranges=vector_plan.fixed_ranges(vectors, reuse),
        inputs=inputs,
        output=d.output or "",
        parse=parse_config(d),
        windowing=windowing,
        encoder=EncoderSettings(
            model.path,
            d.model_sha256,
            d.attention,
            dtype,
            pack,
            d.profile,
            d.leak_threshold_mb,
            files_sha256=model.files_sha256,
        ),
        dtype_reason=dtype_reason,
        model_name=model.name,
        model_source=model.source,
        model_languages=model_languages.of_model(ckpt.path, model.name).record(),
        weights_sha256=ckpt.weights_sha256,
        config=ckpt.config,
        model_path=model.path,
        extractors=exs,
        no_store_text=d.no_store_text,
        settings=outputs_depend_on,
        reuse=reuse,
        input_files=len(listing),
        input_bytes=sum(size for size, _ in listing.values()),
        prompt_name=prompt,
        frame=frame,
        ner=ner,
        host_processes=host_processes(d.host_processes, platform),
    )


def _staged(path: str | None, files_sha256: dict[str, str] | None, flag: str, options: PipelineOptions) -> str | None:
    """A local checkpoint's copy at <temp_location>/docbeam-models/<key> (None: nothing to stage)."""
    if not path or "://" in path:
        return None
    temp = options.view_as(GoogleCloudOptions).temp_location
    if not temp or "://" not in temp:
        raise UsageError(f"{flag} is local: a remote runner needs --temp_location gs://... to stage it for workers")
    return stage_checkpoint(Path(path), temp, files_sha256 or checkpoint_files_sha256(Path(path)))


def stage_for_workers(plan: JobPlan, options: PipelineOptions) -> JobPlan:
    """A remote runner's workers cannot read a local --model or --ner-model (a hub snapshot
    included): copy it to <temp_location>/docbeam-models/<key> once, and pin the workers to
    that copy and its hashes."""
    staged = _staged(plan.model_path, plan.encoder.files_sha256, "--model", options)
    if staged:
        encoder = dataclasses.replace(plan.encoder, model=staged, model_sha256=plan.weights_sha256)
        plan = dataclasses.replace(plan, model_path=staged, encoder=encoder)
    ner = plan.ner
    staged = _staged(ner.encoder.model, ner.encoder.files_sha256, "--ner-model", options) if ner else None
    if ner and staged:
        encoder = dataclasses.replace(ner.encoder, model=staged, model_sha256=ner.weights_sha256)
        plan = dataclasses.replace(plan, ner=dataclasses.replace(ner, encoder=encoder))
    return plan


def _kernel_choices(encoder: EncoderSettings, cfg, platform: str) -> tuple[list[dict], dict]:
    """(one record per row length and attention window, the longest rows' global choice)."""
    by_length, top = [], {}
    for n in encoder.pack.lengths:
        shape = (encoder.pack.rows_for(n), n, cfg.heads, cfg.head_dim)
        layers = kernels.for_layers(
            encoder.attention, windows=cfg.windows, platform=platform, shape=shape, dtype=encoder.dtype
        )
        by_length += [{"seq_len": n, **r} for r in layers.records(platform)]
        if n == encoder.pack.seq_len:
            top = {**layers.choices[None].record(platform), "used": layers.name}
    return by_length, top


def resolve_attention(plan: JobPlan, platform: str | None = None) -> dict:
    """The choices the workers will make, made here first so a bad request fails before the job:
    one per row length and attention window (`by_length`); the top level states the longest rows'.
    With --ner-model, its encoder's choices too (`ner_by_length`)."""
    platform = platform or kernels.platform_of_backend()
    try:
        by_length, top = _kernel_choices(plan.encoder, plan.config, platform)
        ner = _kernel_choices(plan.ner.encoder, plan.ner.config, platform)[0] if plan.ner else None
    except kernels.KernelUnavailable as exc:
        raise UsageError(str(exc)) from exc
    return {**top, "by_length": by_length, **({"ner_by_length": ner} if ner is not None else {})}


def remote_attention(requested: str) -> dict:
    """The kernel record of a job whose workers choose for their own platform (Dataflow)."""
    return {
        "requested": requested,
        "used": "(decided on the workers)",
        "platform": "remote",
        "reason": "remote runner: each worker decides for its own platform; see used_by_workers",
    }
