"""Parser throughput per input format, against the encoder's rate; and main-content HTML
extraction against visible text on real pages.

    python -m tests.benchmarks.parsers [--pages-dir DIR] [--json FILE]

Each format's corpus is parsed by parse_file exactly as the ParseFile stage does (PDF, Word
and main-content HTML in a sandbox process), first by one worker, then by two workers side
by side (two processes, each with its own sandbox: what two cores do). Timing starts after
a warm-up file, so sandbox start-up is not counted. Tokens are the default model's tokens
of the text parsed, so "tokens/s" compares with the encoder's end-to-end rate directly.

--pages-dir: a folder of real web pages, `*.html` or `*.html.gz` (for instance the `html/`
folder of scrapinghub/article-extraction-benchmark); with a `ground-truth.json` beside them
(that benchmark's: {page id: {"articleBody": ...}}), also the precision/recall/F1 of the
text each --html-text mode keeps against the hand-marked article body (that benchmark's
4-gram shingle metric). Without it, the web formats use generated news pages.
"""

import argparse
import concurrent.futures as cf
import gzip
import io
import json
import multiprocessing
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ENCODER_TOKENS_PER_S = (4_000, 7_000)  # docbeam end to end on this 2-core machine (README, "Measured")


def corpus_pdf(n_docs: int, pages: int) -> list[tuple[str, bytes]]:
    from fpdf import FPDF

    from tests.corpus import build_corpus

    out = []
    for i in range(n_docs):
        pdf = FPDF()
        pdf.set_font("helvetica", size=10)
        for d in build_corpus(pages, seed=i, min_words=380, max_words=420):  # a full page of prose
            pdf.add_page()
            pdf.multi_cell(0, 5, d["text"].encode("latin-1", "replace").decode("latin-1"))
        out.append((f"/bench/doc{i}.pdf", bytes(pdf.output())))
    return out


def corpus_docx(n_docs: int, paragraphs: int) -> list[tuple[str, bytes]]:
    import docx

    from tests.corpus import build_corpus

    out = []
    for i in range(n_docs):
        document = docx.Document()
        for j, d in enumerate(build_corpus(paragraphs, seed=100 + i, min_words=60, max_words=140)):
            if j % 6 == 0:
                document.add_heading(f"Section {j // 6 + 1}", level=1)
            document.add_paragraph(d["text"])
        buf = io.BytesIO()
        document.save(buf)
        out.append((f"/bench/doc{i}.docx", buf.getvalue()))
    return out


def web_pages(pages_dir: Path | None, n: int) -> dict[str, bytes]:
    """page id -> HTML bytes: real pages from --pages-dir, else generated news pages."""
    if pages_dir is None:
        from tests.ingest.files import news_page

        return {f"page{i}": news_page(f"Story number {i}", paragraphs=1 + i % 5).encode() for i in range(n)}
    pages = {}
    for path in sorted(pages_dir.glob("*.html*")):
        data = path.read_bytes()
        pages[path.name.split(".")[0]] = gzip.decompress(data) if path.suffix == ".gz" else data
    return pages


def corpus_warc(pages: dict[str, bytes]) -> list[tuple[str, bytes]]:
    """Two crawls (one per worker) as warcio writes them: per page a request and a response,
    plus an image and a redirect."""
    items = list(pages.items())
    halves = [items[: len(items) // 2], items[len(items) // 2 :]]
    return [(f"/bench/crawl-{c}.warc.gz", _warc(part)) for c, part in zip("ab", halves)]


def _warc(pages: list[tuple[str, bytes]]) -> bytes:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from tests.ingest.files import png

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    for i, (key, html) in enumerate(pages):
        uri = f"https://site{i % 17}.example/{key}"
        for kind, status, ctype, body in [
            ("request", None, None, b"GET / HTTP/1.1\r\n\r\n"),
            ("response", "200 OK", "text/html", html),
            ("response", "200 OK", "image/png", png()),
            ("response", "301 Moved Permanently", "text/html", b"<html>moved</html>"),
        ]:
            http = StatusAndHeaders(status, [("Content-Type", ctype)], protocol="HTTP/1.1") if status else None
            writer.write_record(writer.create_warc_record(uri, kind, payload=io.BytesIO(body), http_headers=http))
    return buf.getvalue()


def corpus_csv(rows: int) -> list[tuple[str, bytes]]:
    import csv

    from tests.corpus import build_corpus

    out = []
    for part in range(2):
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=["id", "text", "source"])
        writer.writeheader()
        for d in build_corpus(rows // 2, seed=200 + part, min_words=20, max_words=300):
            writer.writerow({**d, "id": f"{part}-{d['id']}", "source": "bench"})
        out.append((f"/bench/part{part}.csv", buf.getvalue().encode()))
    return out


def _parse_files(job: tuple[list[tuple[str, bytes]], dict, object]) -> dict:
    """One worker: parse `blobs` after a warm-up file (and, with several workers, once all are
    warm: `barrier`); wall-clock start/end and what came out."""
    blobs, cfg_fields, barrier = job
    from docbeam.pipeline.core.records import Document
    from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
    from docbeam.pipeline.ingest.sandbox import Sandbox

    cfg = ParseConfig(**cfg_fields)
    with Sandbox(cfg.parse_timeout_s, cfg.parse_memory_mb) as box:
        name, data = blobs[0]
        list(parse_file(name, lambda: io.BytesIO(data), cfg, sandbox=box))  # warm-up: child start, imports
        if barrier is not None:
            barrier.wait()
        start, texts, pages, other = time.time(), [], 0, Counter()
        cpu0 = time.process_time() + _cpu_seconds(box.pid)
        for name, data in blobs:
            for rec in parse_file(name, lambda data=data: io.BytesIO(data), cfg, sandbox=box):
                if isinstance(rec, Document):
                    texts.append(rec.text)
                    pages += max(1, len(rec.provenance.pages))
                else:
                    other[getattr(rec, "error", None) or getattr(rec, "reason", "?")] += 1
        end = time.time()
        cpu = time.process_time() + _cpu_seconds(box.pid) - cpu0  # this worker and its sandbox child
        return {"start": start, "end": end, "cpu_s": cpu, "texts": texts, "pages": pages, "other": dict(other)}


def _cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of a live process (Linux /proc)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(blobs: list[tuple[str, bytes]], workers: int, cfg_fields: dict) -> dict:
    shares = [blobs[i::workers] for i in range(workers)]
    if workers == 1:
        results = [_parse_files((blobs, cfg_fields, None))]
    else:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Manager() as manager, cf.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            barrier = manager.Barrier(workers)
            results = list(pool.map(_parse_files, [(s, cfg_fields, barrier) for s in shares]))
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    texts = [t for r in results for t in r["texts"]]
    other = Counter()
    for r in results:
        other.update(r["other"])
    return {
        "wall_s": wall,
        "cpu_s": sum(r["cpu_s"] for r in results),
        "docs": len(texts),
        "pages": sum(r["pages"] for r in results),
        "texts": texts,
        "other": dict(other),
        "mb": sum(len(d) for _, d in blobs) / 1e6,
    }


def shingles(text: str, n: int = 4) -> Counter:
    words = re.findall(r"\w+", text or "")
    return Counter(tuple(words[i : i + n]) for i in range(max(1, len(words) - n + 1)) if words[i : i + n])


def precision_recall(truth: str, got: str) -> tuple[float, float]:
    """The article-extraction-benchmark's metric for one page: 4-gram shingles, normalised."""
    a, b = shingles(truth), shingles(got)
    keys = a.keys() | b.keys()
    tp = sum(min(a[k], b[k]) for k in keys)
    fp = sum(max(0, b[k] - a[k]) for k in keys)
    fn = sum(max(0, a[k] - b[k]) for k in keys)
    if fp == fn == 0:
        return 1.0, 1.0
    return (tp / (tp + fp) if tp + fp else 0.0), (tp / (tp + fn) if tp + fn else 0.0)


def quality(pages: dict[str, bytes], truth: dict, mode: str) -> dict:
    from docbeam.pipeline.core.records import Document
    from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
    from docbeam.pipeline.ingest.sandbox import Sandbox

    ps, rs, missing = [], [], 0
    with Sandbox() as box:
        for key, html in pages.items():
            if key not in truth:
                continue
            (rec,) = parse_file(
                f"/bench/{key}.html", lambda html=html: io.BytesIO(html), ParseConfig(html_text=mode), sandbox=box
            )
            got = rec.text if isinstance(rec, Document) else ""
            missing += not isinstance(rec, Document)
            p, r = precision_recall(truth[key].get("articleBody", ""), got)
            ps.append(p)
            rs.append(r)
    p, r = statistics.mean(ps), statistics.mean(rs)
    return {"mode": mode, "pages": len(ps), "precision": p, "recall": r, "f1": 2 * p * r / (p + r), "no_text": missing}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--pages-dir", type=Path, help="real web pages (*.html, *.html.gz), optionally ground-truth.json beside"
    )
    ap.add_argument("--pdf-docs", type=int, default=40)
    ap.add_argument("--pdf-pages", type=int, default=10)
    ap.add_argument("--docx-docs", type=int, default=40)
    ap.add_argument("--csv-rows", type=int, default=20_000)
    ap.add_argument("--json")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)

    from docbeam.model.checkpoint import default_checkpoint_dir
    from docbeam.model.tokenizer import load_tokenizer

    tokenizer, _ = load_tokenizer(default_checkpoint_dir())
    random.seed(0)
    pages = web_pages(args.pages_dir, 120)
    html = [(f"/bench/{k}.html", v) for k, v in pages.items()]
    corpora = [
        ("pdf", "pages", corpus_pdf(args.pdf_docs, args.pdf_pages), {}),
        ("docx", "docs", corpus_docx(args.docx_docs, 36), {}),
        ("html main", "pages", html, {}),
        ("html all", "pages", html, {"html_text": "all"}),
        ("warc.gz main", "pages", corpus_warc(pages), {}),
        ("csv", "rows", corpus_csv(args.csv_rows), {}),
    ]
    rows = []
    for name, unit, blobs, cfg_fields in corpora:
        for workers in (1, 2):
            m = measure(blobs, workers, cfg_fields)
            tokens = sum(len(e.ids) for e in tokenizer.encode_batch(m["texts"], add_special_tokens=False))
            rows.append(
                {
                    "format": name,
                    "unit": unit,
                    "workers": workers,
                    "files": len(blobs),
                    "mb": m["mb"],
                    "units": m["pages"] if unit != "rows" else m["docs"],
                    "docs": m["docs"],
                    "tokens": tokens,
                    "wall_s": m["wall_s"],
                    "cpu_s": m["cpu_s"],
                    "other": m["other"],
                }
            )
            r = rows[-1]
            print(
                f"{name:<13} {workers} worker(s): {r['units'] / r['wall_s']:>9,.1f} {unit}/s "
                f"{r['mb'] / r['wall_s']:>7.2f} MB/s {tokens / r['wall_s']:>10,.0f} tokens/s "
                f"{tokens / r['cpu_s']:>10,.0f} tokens/CPU-s "
                f"({r['files']} files, {r['mb']:.1f} MB, {r['units']:,} {unit}, {tokens:,} tokens, {r['wall_s']:.1f}s"
                f"{', ' + str(r['other']) if r['other'] else ''})",
                flush=True,
            )
    lo, hi = ENCODER_TOKENS_PER_S
    head = "| format | unit | 1 worker: unit/s | MB/s | tokens/s | 2 workers: unit/s | MB/s | tokens/s |"
    print(f"\n{head} tokens per CPU-s | 2 workers vs encoder {lo:,}-{hi:,} tok/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for one, two in zip(rows[::2], rows[1::2]):
        t1, t2 = one["tokens"] / one["wall_s"], two["tokens"] / two["wall_s"]
        ratio = f"{t2 / hi:.1f}x-{t2 / lo:.1f}x the encoder"
        cells = [one["format"], one["unit"]]
        for r, t in ((one, t1), (two, t2)):
            cells += [f"{r['units'] / r['wall_s']:,.1f}", f"{r['mb'] / r['wall_s']:.2f}", f"{t:,.0f}"]
        per_cpu = f"{(one['tokens'] + two['tokens']) / (one['cpu_s'] + two['cpu_s']):,.0f}"
        print("| " + " | ".join([*cells, per_cpu, ratio]) + " |")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    results = {"throughput": rows}
    beside = (
        [args.pages_dir / "ground-truth.json", args.pages_dir.parent / "ground-truth.json"] if args.pages_dir else []
    )
    truth_file = next((f for f in beside if f.exists()), None)
    if truth_file:
        truth = json.loads(truth_file.read_text())
        results["quality"] = [quality(pages, truth, mode) for mode in ("main", "all")]
        print("\n| --html-text | pages | precision | recall | F1 | no text |\n|---|---:|---:|---:|---:|---:|")
        for q in results["quality"]:
            scores = " | ".join(f"{q[k]:.3f}" for k in ("precision", "recall", "f1"))
            print(f"| {q['mode']} | {q['pages']} | {scores} | {q['no_text']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
