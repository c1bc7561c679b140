"""Real input files, made in the test setup by the libraries that make them in the wild:
PDFs by fpdf2 (encrypted by pypdf), Word documents by python-docx, web archives by warcio.
Each maker returns bytes; `write_corpus` lays them all out in one folder."""

import csv
import io
import zlib
from dataclasses import dataclass
from pathlib import Path

import docx
import matplotlib
from fpdf import FPDF
from PIL import Image
from pypdf import PdfReader, PdfWriter
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

DATA = Path(__file__).parent / "data"  # real files, where they came from in data/README.md

FONT = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"  # Greek and Cyrillic glyphs

# One sentence per page that appears nowhere else, and filler that differs per page.
PAGE_SENTENCES = [
    "The lighthouse keeper counted forty ships before dawn.",
    "A shortage of copper delayed the railway by two years.",
    "Sourdough needs a starter that is fed every morning.",
    "The committee approved the new harbour budget on Tuesday.",
    "Glaciers in the valley have retreated three kilometres since 1900.",
]
TOPICS = ["navigation", "railways", "baking", "harbours", "glaciers"]
GREEK = "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο."
CYRILLIC = "Съешь же ещё этих мягких французских булок, да выпей чаю."
LEFT_COLUMN = "Rivers carry silt from the mountains to the sea. " * 6
RIGHT_COLUMN = "Owls hunt at night and sleep through the day. " * 6


def _pdf() -> FPDF:
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    return pdf


def multipage_pdf() -> bytes:
    """Five pages, each with its own sentence, a bookmark per chapter, enough text per page
    that chunks of 256 tokens start on different pages."""
    pdf = _pdf()
    for i, (sentence, topic) in enumerate(zip(PAGE_SENTENCES, TOPICS), 1):
        pdf.add_page()
        pdf.start_section(f"Chapter {i}: {topic}")
        pdf.multi_cell(0, 6, f"Chapter {i}: {topic}\n")
        filler = " ".join(f"Note {n} on {topic} records what the survey of page {i} found." for n in range(12))
        pdf.multi_cell(0, 6, f"{filler} {sentence} {filler}")
    return bytes(pdf.output())


def two_column_pdf() -> bytes:
    pdf = _pdf()
    pdf.add_page()
    top = pdf.get_y()
    pdf.set_xy(10, top)
    pdf.multi_cell(90, 5, LEFT_COLUMN.strip())
    pdf.set_xy(110, top)
    pdf.multi_cell(90, 5, RIGHT_COLUMN.strip())
    return bytes(pdf.output())


TABLE = [("City", "Population", "Country"), ("Lisbon", "545000", "Portugal"), ("Oslo", "709000", "Norway")]


def table_pdf() -> bytes:
    pdf = _pdf()
    pdf.add_page()
    pdf.multi_cell(0, 6, "Population of two European capitals, by the latest census.")
    with pdf.table() as table:
        for row in TABLE:
            cells = table.row()
            for value in row:
                cells.cell(value)
    return bytes(pdf.output())


def non_latin_pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("dejavu", "", str(FONT))
    pdf.set_font("dejavu", size=12)
    pdf.multi_cell(0, 7, f"{GREEK}\n{CYRILLIC}")
    return bytes(pdf.output())


def encrypted_pdf() -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(multipage_pdf())))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def truncated_pdf() -> bytes:
    data = multipage_pdf()
    return data[: len(data) // 2]


def image_only_pdf() -> bytes:
    """A 'scan': one page holding a picture and no text layer."""
    picture = io.BytesIO()
    Image.new("RGB", (300, 400), (235, 230, 220)).save(picture, "PNG")
    pdf = _pdf()
    pdf.add_page()
    pdf.image(io.BytesIO(picture.getvalue()), x=10, y=10, w=150)
    return bytes(pdf.output())


def raw_pdf(content: bytes, pages: int = 1) -> bytes:
    """A minimal hand-written PDF whose pages all draw one Flate-compressed content stream."""
    stream = zlib.compress(content, 6)
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ] + [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 4 0 R >>"
    ] * pages
    out, offsets = bytearray(b"%PDF-1.7\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _draw(megabytes: float) -> bytes:
    line = b"BT /F1 1 Tf 10 10 Td (" + b"x" * 200 + b") Tj ET\n"
    return line * int(megabytes * (1 << 20) / len(line))


def slow_pdf(pages: int = 600) -> bytes:
    """~12 KB whose every page draws the same 1 MiB content stream: PDFium takes about a
    tenth of a second per page here (a minute in all, against the tests' 4 s limit: a margin
    for machines ten times faster), in flat memory (a parser that 'hangs')."""
    return raw_pdf(_draw(1), pages)


def memory_bomb_pdf() -> bytes:
    """~100 KB holding one page of 24 MiB of drawing operators: PDFium needs ~13x that in
    memory to lay the page's text out."""
    return raw_pdf(_draw(24))


DOCX_SECTIONS = {
    "Revenue": "Revenue grew by twelve percent in the third quarter, led by exports to Asia.",
    "Costs": "Energy costs fell after the new heat pumps were installed in both plants.",
    "Outlook": "The board expects steady demand and plans to hire forty engineers next year.",
}


def report_docx(paragraphs_per_section: int = 8) -> bytes:
    """A title, three headed sections long enough to span chunks, and a table between them."""
    document = docx.Document()
    document.add_heading("Annual report 2025", level=0)
    document.add_paragraph("This report summarises the year for shareholders and staff.")
    for n, (heading, sentence) in enumerate(DOCX_SECTIONS.items()):
        document.add_heading(heading, level=1)
        for i in range(paragraphs_per_section):
            document.add_paragraph(f"{sentence} Paragraph {i} of the {heading.lower()} section adds detail.")
        if n == 0:
            table = document.add_table(rows=2, cols=2)
            for (r, c), value in zip([(0, 0), (0, 1), (1, 0), (1, 1)], ["Region", "Sales", "North", "1200"]):
                table.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


ARTICLE = [
    "After decades of absence, river otters have been seen again along the upper Thames, "
    "according to a survey published on Monday by a coalition of wildlife groups.",
    "Volunteers recorded otter tracks at eleven sites between Oxford and Reading.",
    "The groups credit two decades of work on water quality and the removal of old weirs.",
    "An adult otter eats about a kilogram of fish and crayfish a day, which makes it a good sign of a healthy river.",
]
BOILERPLATE = [
    "We use cookies to improve your experience",
    "Accept all cookies",
    "Subscribe to our newsletter",
    "Copyright 2024 Example News Ltd",
    "Privacy policy",
    "Most read",
]


def news_page(title: str = "River otters return to the Thames", paragraphs: int = 1) -> str:
    """A news article as sites serve it: cookie banner, navigation, sidebar, footer."""
    body = "".join(f"<p>{' '.join(ARTICLE)} (part {i + 1})</p>" for i in range(paragraphs))
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title} | Example News</title>
<script>window.dataLayer = [];</script><style>.banner{{position:fixed}}</style></head><body>
<div class="banner" id="cookie-consent"><p>{BOILERPLATE[0]}. <button>{BOILERPLATE[1]}</button>
<button>Manage preferences</button></p></div>
<header><a href="/">Example News</a><nav><ul><li><a href="/uk">UK</a></li><li><a href="/world">World</a></li>
<li><a href="/business">Business</a></li><li><a href="/science">Science</a></li><li><a href="/sport">Sport</a></li>
</ul></nav><form><input placeholder="Search"></form></header>
<main><article><h1>{title}</h1><p class="byline">By Jane Doe, Science reporter</p>
{body}<h2>A cleaner river</h2><p>{ARTICLE[2]} {ARTICLE[1]}</p><p>{ARTICLE[3]}</p></article></main>
<aside><h3>{BOILERPLATE[5]}</h3><ul><li><a href="/a">Ten recipes for a summer evening</a></li>
<li><a href="/b">Weekend traffic: what to expect on the roads</a></li></ul>
<div class="newsletter">{BOILERPLATE[2]}: <input placeholder="Email"><button>Sign up</button></div></aside>
<footer><p>{BOILERPLATE[3]}. All rights reserved.</p><ul><li><a href="/privacy">{BOILERPLATE[4]}</a></li>
<li><a href="/terms">Terms of use</a></li><li><a href="/contact">Contact us</a></li></ul></footer></body></html>"""


WARC_DATE = "2024-05-01T12:30:00Z"
FRENCH = "Le café est très bon ici, dit la serveuse en souriant. "


def crawl_warc(gzip: bool = True) -> bytes:
    """A small crawl as warcio writes one: warcinfo, then request/response pairs for an HTML
    article, a Latin-1 page, an image and a redirect."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gzip)
    writer.write_record(writer.create_warcinfo_record("crawl.warc.gz", {"software": "docbeam tests"}))

    def fetch(uri: str, status: str, content_type: str, body: bytes) -> None:
        request = b"GET / HTTP/1.1\r\nHost: news.example\r\n\r\n"
        headers = {"WARC-Date": WARC_DATE}
        writer.write_record(
            writer.create_warc_record(uri, "request", payload=io.BytesIO(request), warc_headers_dict=headers)
        )
        http = StatusAndHeaders(status, [("Content-Type", content_type)], protocol="HTTP/1.1")
        record = writer.create_warc_record(
            uri, "response", payload=io.BytesIO(body), http_headers=http, warc_headers_dict=headers
        )
        writer.write_record(record)

    fetch("https://news.example/otters", "200 OK", "text/html; charset=utf-8", news_page().encode())
    fetch("https://news.example/logo.png", "200 OK", "image/png", png())
    fetch("https://news.example/old-otters", "301 Moved Permanently", "text/html", b"<html><body>Moved</body></html>")
    latin1 = f"<html><head><title>Caf\xe9</title></head><body><article><p>{FRENCH * 6}</p></article></body></html>"
    fetch("https://news.example/cafe", "200 OK", "text/html; charset=ISO-8859-1", latin1.encode("latin-1"))
    return out.getvalue()


def png() -> bytes:
    """A small real PNG image."""
    picture = io.BytesIO()
    Image.new("RGB", (8, 8), (0, 90, 200)).save(picture, "PNG")
    return picture.getvalue()


CSV_ROWS = [
    {"id": "faq-1", "text": "How do I reset my password? Use the link on the sign-in page.", "lang": "en"},
    {"id": "faq-2", "text": "Wie ändere ich meine Adresse?\nIm Konto unter Einstellungen.", "lang": "de"},
    {"id": "faq-3", "text": "Can I pay by invoice? Yes, for orders over 500 euros.", "lang": "en"},
]


def faq_csv(delimiter: str = ",") -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["id", "text", "lang"], delimiter=delimiter)
    writer.writeheader()
    writer.writerows(CSV_ROWS)
    return out.getvalue().encode()


# ---- A report whose true text is known: running header and footer, contents with dot
# leaders, words hyphenated at line ends (tests and tests/benchmarks/pdf_text_quality.py) ----

REPORT_HEADER = "Port Authority of Eastmouth - Annual Harbour Survey"
REPORT_TOPICS = ["Navigation", "Dredging", "Fisheries", "Shipbuilding", "Conservation"]
REPORT_PROSE = [
    "The navigational channel was resurveyed after the winter storms moved considerable quantities of sand.",
    "Dredging contractors removed approximately forty thousand cubic metres of sediment from the inner basin.",
    "Commercial fishermen reported that the herring population recovered substantially during the autumn.",
    "The shipbuilding yard completed two refrigerated vessels and negotiated a maintenance agreement.",
    "Conservation volunteers documented breeding colonies of terns on the northern breakwater.",
    "Environmental monitoring confirmed that dissolved oxygen concentrations remained satisfactory.",
    "The harbourmaster recommended extending the pilotage requirements to vessels above ninety metres.",
    "Infrastructure investments concentrated on strengthening the quay walls against corrosion.",
    "Meteorological observations were transmitted automatically to the coordination centre every hour.",
    "Occasional disagreements between recreational sailors and commercial operators were resolved amicably.",
]


ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]


@dataclass(frozen=True)
class KnownPdf:
    data: bytes
    pages: list[list[str]]  # the content each page holds, as written (paragraphs, unhyphenated)
    layout: list[str]  # every layout line drawn (header, footers, contents leaders), as drawn

    @property
    def text(self) -> str:
        """The text a reader keeps: every page's content, layout left out."""
        return "\n\n".join("\n".join(page) for page in self.pages if page)


def soft_hyphenated(sentence: str) -> str:
    """Long words get a soft hyphen in their middle: fpdf2 breaks lines there and draws a '-'."""
    return " ".join(w[: len(w) // 2] + "\u00ad" + w[len(w) // 2 :] if len(w) >= 9 else w for w in sentence.split())


def report_pdf(paragraphs: int = 5) -> KnownPdf:
    """A title page, a contents page with dot leaders, then one page per chapter (a bookmark
    each) of prose whose long words break at line ends; every page carries the running header
    and a 'Page N of M' footer."""

    class Report(FPDF):
        def header(self):
            self.set_font("helvetica", size=9)
            self.cell(0, 8, REPORT_HEADER, new_x="LMARGIN", new_y="NEXT")
            self.set_font("helvetica", size=11)

        def footer(self):
            self.set_y(-15)
            self.set_font("helvetica", size=9)
            self.cell(0, 8, f"Page {self.page_no()} of {{nb}}", align="C")

    pdf = Report()
    pdf.set_font("helvetica", size=11)
    pages: list[list[str]] = []
    n = 2 + len(REPORT_TOPICS)
    layout = [REPORT_HEADER] * n + [f"Page {i} of {n}" for i in range(1, n + 1)]

    def write(text: str) -> None:
        pdf.multi_cell(0, 6, soft_hyphenated(text), new_x="LMARGIN", new_y="NEXT")
        pages[-1].append(text)

    pdf.add_page()
    pages.append([])
    write("Annual Harbour Survey")
    write(" ".join(REPORT_PROSE[:3]))
    pdf.add_page()
    pages.append([])
    write("Contents")
    for k, topic in enumerate(REPORT_TOPICS, 1):
        entry = f"{k}. {topic} " + ". " * (40 - len(topic)) + str(k + 2)
        pdf.cell(0, 6, entry, new_x="LMARGIN", new_y="NEXT")
        layout.append(entry)
    for k, topic in enumerate(REPORT_TOPICS, 1):
        pdf.add_page()
        pages.append([])
        pdf.start_section(f"{k}. {topic}")
        write(f"{k}. {topic}")
        for i in range(paragraphs):
            lead = f"The {ORDINALS[i]} {topic.lower()} finding."  # no paragraph is written twice
            write(" ".join([lead] + [REPORT_PROSE[(k + i + j) % len(REPORT_PROSE)] for j in range(3)]))
    return KnownPdf(bytes(pdf.output()), pages, layout)
