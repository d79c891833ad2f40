"""Fill the display data (title, URL, main text) of a collection's ranked documents from their sources.

Only the documents a study can show are looked for: those some run ranks within ``depth`` (every
ranked document when no depth is given). Sources are streamed (:mod:`.document_sources`); what is
found is written in one transaction at the end, so an error in any source leaves the collection
as it was. Only display data is written, never qrels or runs, so collections that already have
studies can get it too. A title or URL already stored is kept unless the source has one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from tqdm import tqdm

from evaluation.io.documents import url_problem
from studyapp.exceptions import ImportFailed
from studyapp.models import Collection, Document, RankedItem
from studyapp.services.collections.bounded_input import Limits, ReadNotes
from studyapp.services.collections.display_cache import clear_all
from studyapp.services.collections.document_sources import DocumentText, ReadContext, reader_for
from studyapp.services.wording import count


@dataclass
class DocumentsImport:
    """What an import found: how many of the wanted documents got display data, and from where."""

    collection: str
    wanted: int
    found: int = 0
    read: int = 0  # records, files or lines read
    bad_urls: list[str] = field(default_factory=list)
    notes: ReadNotes = field(default_factory=ReadNotes)  # skipped, truncated, re-encoded

    @property
    def coverage(self) -> float:
        return self.found / self.wanted if self.wanted else 1.0

    def lines(self) -> list[str]:
        out = [
            f"Read {self.read} records/files/lines; {self.found} of the {self.wanted} ranked documents "
            f"of {self.collection!r} got display data ({self.coverage:.1%})."
        ]
        out += self.notes.lines()
        if self.bad_urls:
            n = len(self.bad_urls)
            verb = "was not an http(s) address and is" if n == 1 else "were not http(s) addresses and are"
            out.append(f"{count(n, 'URL')} {verb} shown unlinked, e.g. {self.bad_urls[0]!r}.")
        if self.found < self.wanted:
            out.append(f"{self.wanted - self.found} ranked documents still show their bare id; add the sources that hold them.")
        return out


def wanted_documents(collection: Collection, depth: int | None) -> dict[str, int]:
    """docid -> Document pk of every document some run ranks within ``depth`` (all ranked ones when None)."""
    items = RankedItem.objects.filter(run__collection=collection)
    if depth is not None:
        items = items.filter(rank__lte=depth)
    return dict(items.values_list("document__docid", "document_id").distinct().order_by())


def import_documents(
    name: str, sources: Sequence[str | Path], *, depth: int | None = None, progress: bool = False, limits: Limits | None = None
) -> DocumentsImport:
    """Read ``sources`` (WARC files, HTML folders, JSON Lines) and store the display data of the
    collection ``name``'s ranked documents found there; the last source wins for a docid. ``limits``
    bound the decompressed bytes per record and per file (:class:`.bounded_input.Limits`)."""
    collection = Collection.objects.filter(name=name).first()
    if collection is None:
        raise ImportFailed(f"no collection named {name!r} (import it first with import_collection)")
    if depth is not None and depth < 1:
        raise ImportFailed(f"--depth must be at least 1, got {depth}")
    paths = [Path(s) for s in sources]
    readers = [(path, reader_for(path)) for path in paths]  # every source's kind checked before reading any
    wanted = wanted_documents(collection, depth)
    result = DocumentsImport(name, len(wanted), notes=ReadNotes(limits or Limits()))
    found: dict[str, DocumentText] = {}
    with tqdm(desc="documents", unit=" records", disable=not progress, mininterval=0.5) as bar:

        def tick(n: int) -> None:
            result.read += n
            bar.update(n)

        context = ReadContext(wanted.__contains__, tick, result.notes)
        for path, read in readers:
            for doc in read(path, context):
                found[doc.docid] = doc
                bar.set_postfix(found=len(found), refresh=False)
    result.found = len(found)
    _store(wanted, found, result)
    return result


def _store(wanted: dict[str, int], found: dict[str, DocumentText], result: DocumentsImport) -> None:
    rows = Document.objects.in_bulk([wanted[d] for d in found])
    for docid, doc in found.items():
        row = rows[wanted[docid]]
        url = doc.url
        if url and url_problem(url):
            result.bad_urls.append(url)
        row.title = doc.title or row.title
        row.url = url or row.url
        row.text = doc.text
    with transaction.atomic():
        Document.objects.bulk_update(rows.values(), ["title", "url", "text"], batch_size=500)
    clear_all()


def bare_documents(study_documents: dict[str, int]) -> int:
    """How many of these documents (docid -> pk) have neither a title nor text: they show a bare id."""
    return Document.objects.filter(pk__in=study_documents.values(), title="", text="", snippet="").count()
