"""The closed sets of names that flags accept and the code beneath them dispatches on, each
defined once. No Beam, no JAX: the command line checks flags against these before either loads.
"""

# The extractors' names, in the order they run; each is a class in pipeline/extractors/ (its
# REGISTRY maps the names to the classes: tests/extractors/test_extractors.py keeps the two the same).
EXTRACTORS = ("keyphrases", "summary", "labels", "entities")
# How --ner-model tokens become entities (the transformers token-classification pipeline's
# aggregation_strategy); the first is the default.
NER_AGGREGATIONS = ("first", "simple", "average", "max")
# --html-text: the main content (trafilatura) or every visible text; the first is the default.
HTML_TEXT = ("main", "all")
# --keyphrase-reference: rank against the whole document, or its first window as KeyBERT does.
KEYPHRASE_REFERENCES = ("document", "first-window")
DTYPES = ("float32", "bfloat16")


def parse_ngrams(value: str) -> tuple[int, int]:
    """--keyphrase-ngrams 'MIN,MAX' -> (MIN, MAX), 1 <= MIN <= MAX; ValueError names the fix."""
    parts = value.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts) or not 1 <= int(parts[0]) <= int(parts[1]):
        raise ValueError(f"{value!r}: expected MIN,MAX with 1 <= MIN <= MAX, e.g. 1,2")
    return int(parts[0]), int(parts[1])
