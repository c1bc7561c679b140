"""Regenerates samples/docs (committed): `python samples/make_samples.py`.

A small mixed corpus exercising every input format, with two deliberately bad JSONL lines
so a first run shows what errors/ looks like.
"""

import gzip
import json
import pathlib
import sys

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tests.corpus import build_corpus  # noqa: E402

OUT = pathlib.Path(__file__).parent / "docs"

HANDWRITTEN = [
    (
        "invoice-1042",
        "Invoice #1042 from Northwind Traders. Amount due: $1,250.00 by 2026-01-15. "
        "Questions? Write to billing@northwind.example or call +1 (415) 555-0134. Pay online at "
        "https://pay.northwind.example/i/1042. Thank you for your business.",
    ),
    (
        "meeting-notes",
        "Meeting notes, March 3, 2026. Attendees: Priya, Tom and Lena. We agreed to move the "
        "data pipeline to Apache Beam on Dataflow and to benchmark TPU v5e workers against L4 GPUs. "
        "Budget for the pilot is EUR 4,000. Tom will send the cost estimate to lena@example.org by Friday.",
    ),
    (
        "support-ticket",
        "Hi, my order 88123 arrived damaged: the screen of the tablet is cracked. I would like "
        "a replacement or a refund of $349.99. You can reach me at 020 7946 0958 or jamie.r@example.net. "
        "I ordered it on 12/11/2025. Thanks, Jamie",
    ),
    (
        "recipe",
        "Lemon pasta for two. Boil 200 g of spaghetti in salted water. Meanwhile warm olive oil "
        "with garlic and the zest of one lemon. Toss the pasta with the oil, a splash of cooking water, "
        "lemon juice and grated parmesan. Season with black pepper and serve at once.",
    ),
    (
        "release-notes",
        "docbeam 0.1.0 release notes. New: packed batches with segment ids, a Pallas flash "
        "attention kernel checked against a float64 reference, and a cost report per stage. Fixed: long "
        "documents are now split into overlapping windows instead of being truncated at 128 tokens. "
        "See https://example.com/docbeam/changelog for details.",
    ),
    (
        "news-brief",
        "Geneva, 14 October 2025 - Researchers announced a battery chemistry that charges to 80 "
        "percent in six minutes. The team, funded with 12 million francs, expects pilot production in 2027. "
        "Industry analysts called the result promising but cautioned that cycle life remains unproven.",
    ),
]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    docs = build_corpus(60, seed=7, min_words=20, max_words=700)
    lines = [json.dumps({"id": d["id"], "text": d["text"], "collection": "python-docs"}) for d in docs[:40]]
    lines.insert(5, '{"id": "broken-1", "text": "this line is not valid JSON')  # rejected: invalid_json
    lines.insert(12, json.dumps({"id": "no-text-1", "body": "text is under the wrong field"}))  # missing_text
    (OUT / "articles.jsonl").write_text("\n".join(lines) + "\n")
    with gzip.open(OUT / "more-articles.jsonl.gz", "wt") as f:
        for d in docs[40:]:
            f.write(json.dumps({"id": d["id"], "text": d["text"]}) + "\n")
    pq.write_table(
        pa.table(
            {"id": [h[0] for h in HANDWRITTEN], "text": [h[1] for h in HANDWRITTEN], "lang": ["en"] * len(HANDWRITTEN)}
        ),
        OUT / "business.parquet",
    )
    (OUT / "notes.txt").write_text(
        "Field notes from the pilot. The first run embedded every sample document on two CPU cores.\n"
        "Next week we try the same job on a TPU v5e worker and compare the cost per million tokens.\n"
    )
    (OUT / "guide.md").write_text(
        "# Getting started\n\nRun `make run` to embed the sample documents. The output folder holds one\n"
        "Parquet table per kind of result and a cost report. Point `--input` at your own files next.\n"
    )
    # A blog post as sites serve it (cookie banner, navigation, sidebar, footer): the default
    # --html-text main keeps the title and the article only.
    (OUT / "page.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Batch embeddings at scale | docbea'
        "m blog</title><style>body{color:#222}</style><script>var tracking = 'not visible text';</script></he"
        'ad><body><div id="cookie-banner"><p>This site uses cookies to measure traffic. <button>Accept all</b'
        'utton> <button>Reject</button></p></div><header><a href="/">docbeam</a><nav><ul><li><a href="/docs">'
        'Docs</a></li><li><a href="/blog">Blog</a></li><li><a href="/pricing">Pricing</a></li><li><a href="/l'
        'ogin">Sign in</a></li></ul></nav></header><main><article><h1>Batch embeddings at scale</h1><p class='
        '"meta">Posted by the docbeam team</p><p>Embedding millions of documents is a <b>batch</b> problem: r'
        "ead, tokenize, pack, encode, write. Each step has its own bottleneck, and the encoder is only one of"
        " them.</p><h2>Packing</h2><p>Packing several short documents into one row removes most of the paddin"
        "g a naive batcher feeds the model.</p><h2>Static shapes</h2><p>Static shapes avoid recompiles: every"
        " batch has the same number of rows and tokens, whatever the documents look like.</p></article></main"
        '><aside><h3>Related posts</h3><ul><li><a href="/blog/kernels">Swappable attention kernels</a></li><l'
        'i><a href="/blog/cost">What a million tokens cost</a></li></ul></aside><footer><p>Copyright 2026 doc'
        'beam contributors. <a href="/privacy">Privacy</a> <a href="/imprint">Imprint</a></p></footer></body>'
        "</html>"
    )


if __name__ == "__main__":
    main()
