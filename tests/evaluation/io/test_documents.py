"""Document display data reader (``evaluation.io.documents``): JSONL and TSV, validated with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.exceptions import FormatError
from evaluation.io.documents import DocumentInfo, read_documents

# FIXTURES ===========================================================================================


@pytest.fixture
def write(tmp_path: Path):
    def make(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return make


# TESTS ==============================================================================================


def test_jsonl_with_all_fields_and_optional_ones(write) -> None:
    path = write(
        "docs.jsonl",
        '# display data\n{"docid": "d1", "title": "Jaguar", "url": "https://a.example/j", "snippet": "Big cat."}\n\n'
        '{"docid": "d2"}\n{"docid": 7, "title": null}\n',
    )
    docs = read_documents(path)
    assert list(docs) == ["d1", "d2", "7"]
    assert docs["d1"] == DocumentInfo("d1", "Jaguar", "https://a.example/j", "Big cat.")
    assert docs["d2"] == DocumentInfo("d2")
    assert docs["7"].title == ""


def test_tsv_with_header_in_any_order(write) -> None:
    path = write("docs.tsv", "url\tdocid\ttitle\nhttp://x.example/1\td1\tFirst\n\td2\tSecond\n")
    docs = read_documents(path)
    assert docs["d1"] == DocumentInfo("d1", "First", "http://x.example/1", "")
    assert docs["d2"].title == "Second" and docs["d2"].url == ""


def test_tsv_without_header_is_positional(write) -> None:
    path = write("docs.tsv", "d1\tTitle one\thttps://x.example/1\tSnippet one\nd2\tTitle two\n")
    docs = read_documents(path)
    assert docs["d1"].snippet == "Snippet one"
    assert docs["d2"] == DocumentInfo("d2", "Title two")


def test_format_is_sniffed_without_a_known_extension(write) -> None:
    assert read_documents(write("docs.data", '{"docid": "a"}\n'))["a"] == DocumentInfo("a")
    assert read_documents(write("docs2.data", "a\tTitle\n"))["a"].title == "Title"


@pytest.mark.parametrize(
    ("name", "text", "line", "reason"),
    [
        ("d.jsonl", '{"docid": "a"}\n{"docid": "b", \n', 2, "invalid JSON"),
        ("d.jsonl", '["a", "b"]\n', 1, "expected a JSON object"),
        ("d.jsonl", '{"title": "no id"}\n', 1, "docid is missing"),
        ("d.jsonl", '{"docid": ""}\n', 1, "docid is missing"),
        ("d.jsonl", '{"docid": "a b"}\n', 1, "whitespace"),
        ("d.jsonl", '{"docid": "a", "titel": "typo"}\n', 1, "unknown key titel"),
        ("d.jsonl", '{"docid": "a", "title": 5}\n', 1, "title must be a string"),
        ("d.jsonl", '{"docid": "a", "url": "javascript:alert(1)"}\n', 1, "url must start with http"),
        ("d.jsonl", '{"docid": "a"}\n# c\n{"docid": "a"}\n', 3, "listed twice (first on line 1)"),
        ("d.tsv", "docid\ttitle\tcolour\na\tb\tc\n", 1, "unknown column colour"),
        ("d.tsv", "docid\ttitle\ttitle\n", 1, "named twice"),
        ("d.tsv", "docid\ttitle\na\tb\tc\n", 2, "at most 2"),
        ("d.tsv", "a\tb\thttp://x\td\te\n", 1, "at most 4"),
        ("d.tsv", "\tno id\n", 1, "docid is missing"),
        ("d.tsv", "a\tt\tftp://x.example/\n", 1, "url must start with http"),
    ],
)
def test_bad_lines_name_file_line_and_reason(write, name: str, text: str, line: int, reason: str) -> None:
    path = write(name, text)
    with pytest.raises(FormatError) as info:
        read_documents(path)
    assert info.value.line == line
    assert reason in info.value.reason
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_empty_and_missing_files_are_errors(write, tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="file is empty"):
        read_documents(write("d.jsonl", "# nothing\n\n"))
    with pytest.raises(FormatError, match="no such file"):
        read_documents(tmp_path / "missing.jsonl")
