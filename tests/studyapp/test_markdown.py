"""Researchers' consent and instructions as Markdown: formatting kept, every hostile input made harmless."""

from __future__ import annotations

from html.parser import HTMLParser

from django.test import SimpleTestCase

from studyapp.models import Study
from studyapp.services.participation.markdown import TAGS, render_markdown, sanitise
from tests.studyapp.annotator_base import AnnotatorTestCase

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](vbscript:msgbox(1))",
    '<a href="https://x.example" onclick="alert(1)">x</a>',
    "<iframe src=https://evil.example></iframe>",
    '<svg onload="alert(1)"></svg>',
    "<style>body{display:none}</style>",
    '<form action="https://evil.example"><input name=pw></form>',
    "![tracker](https://evil.example/pixel.png)",
    '<div style="position:fixed">x</div>',
    "<<script>script>alert(1)<</script>/script>",
    '[x](https://ok.example "a" onmouseover="alert(1)")',
    "<!-- <script>alert(1)</script> -->",
    "<meta http-equiv=refresh content='0;url=https://evil.example'>",
]


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str]]]] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.found.append((tag, attrs))


class MarkdownTestCase(SimpleTestCase):
    def test_formatting_links_and_line_breaks(self) -> None:
        html = render_markdown("**Bold** and *emphasis*\nsecond line\n\n- one\n- two\n\n[Our lab](https://lab.example/about)")
        self.assertIn("<strong>Bold</strong> and <em>emphasis</em><br>", html)
        self.assertIn("<ul>\n<li>one</li>\n<li>two</li>\n</ul>", html)
        self.assertIn('<a href="https://lab.example/about" target="_blank" rel="noopener noreferrer">Our lab</a>', html)
        self.assertIn('href="mailto:ethics@lab.example"', render_markdown("[write to us](mailto:ethics@lab.example)"))

    def test_hostile_input_is_harmless(self) -> None:
        """Parsed as a browser would: only allowed elements, no event or style attribute, links only to http(s) and mailto.

        Both layers on their own: the Markdown (raw HTML off) and the sanitiser given the raw HTML (as if the parser let it through).
        """
        for text, html in [(t, render_markdown(t)) for t in HOSTILE] + [(t, sanitise(t)) for t in HOSTILE]:
            with self.subTest(text=text, html=html):
                elements = _Elements()
                elements.feed(html)
                for tag, attrs in elements.found:
                    self.assertIn(tag, TAGS)
                    for name, value in attrs:
                        self.assertFalse(name.startswith("on") or name == "style", (tag, name))
                        if name == "href":
                            self.assertRegex(value, r"^(https?:|mailto:)")
                    if tag == "a":
                        self.assertEqual((dict(attrs)["rel"], dict(attrs)["target"]), ("noopener noreferrer", "_blank"))
        self.assertIn("&lt;script&gt;", render_markdown(HOSTILE[0]))  # shown as text, never run
        self.assertEqual(sanitise('<a href="https://x.example" onclick="alert(1)">x</a>'),
                         '<a href="https://x.example" target="_blank" rel="noopener noreferrer">x</a>')  # fmt: skip
        self.assertEqual(sanitise("<p>ok<script>alert(1)</script></p>"), "<p>ok</p>")

    def test_plain_text_of_older_studies_reads_as_before(self) -> None:
        html = render_markdown("Line one\nLine two\n\nA new paragraph with 5 < 6 & 'quotes'.")
        self.assertEqual(html, "<p>Line one<br>\nLine two</p>\n<p>A new paragraph with 5 &lt; 6 &amp; 'quotes'.</p>\n")


class MarkdownPagesTestCase(AnnotatorTestCase):
    def test_consent_and_instructions_pages_render_the_markdown_sanitised(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(
            consent_text="## Who we are\n\nRead our [privacy notice](https://lab.example/privacy). <script>alert(1)</script>",
            instructions="Compare **both** lists. <img src=x onerror=alert(1)>",
        )
        client = self.fresh_client()
        client.get(self.entry(PROLIFIC_PID="md", STUDY_ID="s", SESSION_ID="m1"))
        consent = client.get(self.url("study_consent")).content.decode()
        self.assertIn("<h2>Who we are</h2>", consent)
        self.assertIn('<a href="https://lab.example/privacy" target="_blank" rel="noopener noreferrer">privacy notice</a>', consent)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", consent)
        self.assertNotIn("<script>alert", consent)
        client.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        response = client.get(self.url("study_instructions"))
        self.assertContains(response, "Compare <strong>both</strong> lists.")
        self.assertNotContains(response, "<img src=x")
        self.assertIn("script-src 'self'", response["Content-Security-Policy"])
