"""``manage.py import_documents``: display data of a real collection's ranked documents from ClueWeb-style
WARC files, HTML folders and JSON Lines, and the query-biased snippets item pages draw from it."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tempfile
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import TestCase

from studyapp.models import Document, RankedItem
from studyapp.services.collections.document_sources import from_html
from studyapp.services.collections.importing import import_collection
from studyapp.services.collections.snippets import snippet, terms, to_html
from studyapp.services.participation.item_page import results
from tests.studyapp.test_trec2014 import RUNS, TREC

TOPICS = {"251": "identity theft protection", "252": "history of orcas island"}


def warc_record(docid: str, url: str, html: str) -> bytes:
    """One WARC/1.0 response record as ClueWeb12 ships them (HTTP response with headers in the payload)."""
    body = html.encode()
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    head = (
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Date: 2012-02-10T21:50:33Z\r\n"
        f"WARC-TREC-ID: {docid}\r\nWARC-Target-URI: {url}\r\nWARC-Record-ID: <urn:uuid:{abs(hash(docid)):032x}>\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n"
    )
    return head.encode() + http + b"\r\n\r\n"


def page(docid: str, topic: str) -> str:
    query = TOPICS.get(topic, "something else")
    return (
        f"<html><head><title>{docid} about {query}</title><script>alert('x')</script></head><body>"
        "<nav><a href='/'>Home</a> <a href='/about'>About us</a></nav><main>"
        "<p>This page opens with a paragraph on an unrelated matter, written to fill the start of the article at length.</p>"
        f"<p>Readers asking about {query} will find the essentials in this paragraph, with practical advice.</p>"
        "<p>The closing paragraph talks about the weather and <b>&lt;b&gt;markup&lt;/b&gt;</b> that must stay text.</p>"
        "</main><footer>Copyright</footer></body></html>"
    )


class ImportDocumentsTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp(prefix="import-documents-"))
        topics = cls.tmp / "topics.xml"
        topics.write_text(
            "<topics>"
            + "".join(f'<topic number="{n}"><query>{q}</query><subtopic number="1">{q} facts</subtopic></topic>' for n, q in TOPICS.items())
            + "</topics>"
        )
        import_collection("trec2014", qrels=TREC / "qrels.diversity.tsv", intents=TREC / "intent_probs.tsv", topics=topics, runs=RUNS)
        ranked = RankedItem.objects.filter(topic__topic_id__in=TOPICS, rank__lte=10).values_list("document__docid", "topic__topic_id")
        cls.docs = dict(ranked)
        records = b"".join(warc_record(d, f"http://www.example.org/{d}.html", page(d, t)) for d, t in sorted(cls.docs.items()))
        records += warc_record("clueweb12-not-ranked-00000", "http://x.example/", "<title>never wanted</title>")
        cls.warc = cls.tmp / "00.warc.gz"
        cls.warc.write_bytes(gzip.compress(records))

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, True)
        super().tearDownClass()

    def run_command(self, *args: str) -> str:
        out = io.StringIO()
        call_command("import_documents", "trec2014", *args, "--no-progress", stdout=out)
        return out.getvalue()

    def test_warc_fills_titles_urls_and_text_and_reports_coverage(self) -> None:
        out = self.run_command(str(self.warc), "--depth", "10")
        wanted = RankedItem.objects.filter(run__collection__name="trec2014", rank__lte=10).values("document").distinct().count()
        self.assertIn(f"{len(self.docs)} of the {wanted} ranked documents of 'trec2014' got display data", out)
        self.assertIn(f"{wanted - len(self.docs)} ranked documents still show their bare id", out)
        docid, topic = sorted(self.docs.items())[0]
        doc = Document.objects.get(collection__name="trec2014", docid=docid)
        self.assertEqual(doc.title, f"{docid} about {TOPICS[topic]}")
        self.assertEqual(doc.url, f"http://www.example.org/{docid}.html")
        self.assertIn(f"Readers asking about {TOPICS[topic]}", doc.text)
        self.assertNotIn("alert", doc.text)  # scripts are not content
        self.assertFalse(Document.objects.filter(docid="clueweb12-not-ranked-00000").exists())

    def test_item_page_results_show_a_query_biased_snippet_with_marked_terms(self) -> None:
        self.run_command(str(self.warc))
        docid, topic = next((d, t) for d, t in sorted(self.docs.items()) if t == "251")
        doc = Document.objects.get(collection__name="trec2014", docid=docid)
        (line,) = results([doc], TOPICS[topic])
        html = str(line.snippet)
        self.assertIn("<mark>identity</mark> <mark>theft</mark> <mark>protection</mark>", html)
        self.assertTrue(html.startswith("Readers asking"), html)  # the matching passage, not the opening one
        self.assertEqual(line.url, doc.url)
        self.assertEqual(line.title, doc.title)

    def test_documents_markup_is_never_markup_on_the_page(self) -> None:
        segments = snippet("A <script>alert(1)</script> on identity theft.", "identity theft")
        html = str(to_html(segments))
        self.assertNotIn("<script>", html)
        self.assertIn("&lt;script&gt;", html)
        self.assertIn("<mark>identity</mark>", html)

    def test_snippets_are_bounded_and_prefer_matching_sentences(self) -> None:
        text = " ".join(f"Sentence {i} says nothing in particular about anything at all." for i in range(200))
        text += " Orcas island history is long. " + text
        got = "".join(s for s, _ in snippet(text, "history of orcas island"))
        self.assertLessEqual(len(got), 280)
        self.assertIn("Orcas island history is long.", got)
        self.assertEqual(terms("The history of Orcas Island"), ["history", "orcas", "island"])
        self.assertEqual(snippet("", "q"), ())

    def test_the_subtopic_need_biases_the_snippet_at_subtopic_level(self) -> None:
        text = "Jaguars are big cats of the Americas. The Jaguar XF is a car with a V6 engine. Weather today."
        self.assertTrue("".join(s for s, _ in snippet(text, "jaguar", "jaguar car engine")).startswith("The Jaguar XF is a car"))
        self.assertTrue("".join(s for s, _ in snippet(text, "jaguar", "big cats habitat")).startswith("Jaguars are big cats"))

    def test_snippets_never_repeat_the_title_and_headings_are_not_sentences(self) -> None:
        """A real-looking page: the <h1> equals the <title>, section headings hold the query terms."""
        html = (
            "<html><head><title>This python tutorial teaches the basics</title></head><body>"
            "<nav><a href='/'>Home</a> <a href='/docs'>Docs</a></nav><main>"
            "<h1>This python tutorial teaches the basics</h1>"
            "<p>Learn to write small programs step by step, with exercises after every chapter.</p>"
            "<h2>Python tutorial for beginners</h2>"
            "<p>The first chapter installs Python and runs a script that prints a greeting.</p>"
            "<h2>Python loops</h2><p>Loops repeat a block; the tutorial shows for and while with examples.</p>"
            "</main><footer>Copyright 2026</footer></body></html>"
        )
        doc = from_html("d1", "", html)
        self.assertIn("This python tutorial teaches the basics", doc.text)  # the stored text keeps the heading
        for query in ("python tutorial", "python tutorial basics", "learn python"):
            got = "".join(s for s, _ in snippet(doc.text, query, title=doc.title))
            self.assertNotIn("teaches the basics", got, query)
            self.assertNotIn("Python tutorial for beginners", got, query)  # a heading, not a sentence
            self.assertTrue(got.endswith("."), got)
        got = "".join(s for s, _ in snippet(doc.text, "python tutorial", title=doc.title))
        self.assertIn("The first chapter installs Python", got)
        self.assertIn("the tutorial shows for and while", got)
        # without a title every line counts; headings only when nothing else is there
        self.assertEqual("".join(s for s, _ in snippet("A heading\nThe last line is text", "heading")), "The last line is text")
        self.assertEqual("".join(s for s, _ in snippet("Heading one\nHeading two\n", "heading", title="Heading two")), "Heading one")
        self.assertEqual(snippet("Same as the title", "title", title="Same  as the TITLE!"), ())

    def test_html_folder_and_jsonl_sources(self) -> None:
        docid_a, docid_b = sorted(self.docs)[:2]
        folder = self.tmp / "html"
        folder.mkdir(exist_ok=True)
        (folder / f"{docid_a}.html").write_text(page(docid_a, self.docs[docid_a]))
        jsonl = self.tmp / "docs.jsonl"
        jsonl.write_text(json.dumps({"docid": docid_b, "url": "https://b.example/", "title": "B title", "text": "B text on orcas."}) + "\n")
        out = self.run_command(str(folder), str(jsonl))
        self.assertIn("2 of the", out)
        self.assertEqual(Document.objects.get(docid=docid_a).title, f"{docid_a} about {TOPICS[self.docs[docid_a]]}")
        b = Document.objects.get(docid=docid_b)
        self.assertEqual((b.title, b.url, b.text), ("B title", "https://b.example/", "B text on orcas."))

    def test_bad_sources_fail_with_file_and_line_and_write_nothing(self) -> None:
        before = list(Document.objects.values_list("title", "url", "text").order_by("pk"))
        bad = self.tmp / "bad.jsonl"
        bad.write_text(json.dumps({"docid": sorted(self.docs)[0], "title": "x"}) + "\n" + '{"docid": "d", "body": "?"}\n')
        for args, message in [
            ((str(self.warc), str(bad)), f"{bad}:2: unknown key body"),
            ((str(self.tmp / "missing.warc.gz"),), "no such file"),
            ((str(TREC / "qrels.diversity.tsv"),), "not a WARC file"),
            ((str(self.warc), "--depth", "0"), "--depth must be at least 1"),
        ]:
            with self.subTest(args=args), self.assertRaisesMessage(CommandError, message):
                self.run_command(*args)
        self.assertEqual(list(Document.objects.values_list("title", "url", "text").order_by("pk")), before)
        with self.assertRaisesMessage(CommandError, "no collection named 'nope'"):
            call_command("import_documents", "nope", str(self.warc), "--no-progress", stdout=io.StringIO())

    def test_item_pages_show_titles_urls_and_snippets_with_query_terms(self) -> None:
        from studyapp.services.collections.display_cache import clear_all
        from studyapp.services.design.study_config import parse_config
        from studyapp.services.design.study_design import create_study
        from studyapp.services.participation import allocation
        from studyapp.services.participation.item_page import item_page

        self.run_command(str(self.warc))
        clear_all()
        config = {
            "runs": ["pub-greedyrr", "pub-random"],
            "topics": list(TOPICS),
            "depth": 10,
            "levels": ["topic"],
            "items_per_annotator": 2,
        }
        study = create_study("trec2014", "Docs study", parse_config(config)).study
        annotator = allocation.register(study, external_id="w1")
        assignments = allocation.admit(annotator)
        self.assertEqual(len(assignments), 2)
        for number, assignment in enumerate(assignments, start=1):
            page = item_page(assignment, study, number, len(assignments))
            self.assertIn(page.query, TOPICS.values())
            html = page.left.html + page.right.html
            for line in list(page.left) + list(page.right):
                self.assertNotEqual(line.title, "")
                self.assertFalse(line.title.startswith("clueweb12-") and line.title == line.title.split()[0], line.title)
                self.assertTrue(line.url.startswith("http://www.example.org/"), line.url)
            for term in page.query.split():
                if term not in ("of",):
                    self.assertIn(f"<mark>{term}</mark>", html.lower())
            self.assertIn('class="snippet"', html)
