"""Build the demo collection files from ``content.txt``, deterministically.

Run ``python studyapp/demo/build_demo.py`` (optionally ``--out DIR``) to regenerate
``topics.xml``, ``intents.tsv``, ``qrels.txt``, ``docs.jsonl`` and ``runs/*.run`` next to this
file; running it twice gives identical files (a test checks the committed ones).

The five runs rank the same pooled documents in recognisably different ways:

* ``demo-relevance``: expected relevance first (sum of weight x grade over the subtopics), so
  the dominant interpretations crowd the top and minor ones come late;
* ``demo-diversity``: greedy coverage of the weighted subtopics (each further document for an
  already covered subtopic counts half as much, as in alpha-nDCG with alpha = 0.5);
* ``demo-mixed``: relevance and diversity lists interleaved;
* ``demo-weak``: nonrelevant and marginal documents first;
* ``demo-random``: a seeded shuffle.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit
from xml.sax.saxutils import escape, quoteattr

HERE = Path(__file__).resolve().parent
SEED = 20261122
DEPTH = 20
RUNS = ("demo-relevance", "demo-diversity", "demo-mixed", "demo-weak", "demo-random")
# The invented pages link to reserved domains only (RFC 2606, section 2 and 3): nothing real is ever opened.
RESERVED_TLDS = (".example", ".test", ".invalid")
RESERVED_DOMAINS = ("example.com", "example.net", "example.org")


def reserved_url(url: str) -> bool:
    """Whether ``url``'s host is a reserved example domain (``*.example``, ``example.com``, ...) per RFC 2606."""
    host = (urlsplit(url).hostname or "").lower()
    return host.endswith(RESERVED_TLDS) or any(host == d or host.endswith("." + d) for d in RESERVED_DOMAINS)


@dataclass
class Doc:
    docid: str
    title: str
    url: str
    snippet: str
    grades: dict[int, int] = field(default_factory=dict)  # subtopic number -> grade (>= 1 only)

    def best(self) -> int:
        return max(self.grades.values(), default=0)


@dataclass
class Subtopic:
    number: int
    type: str
    weight: float
    text: str


@dataclass
class Query:
    id: str
    query: str
    description: str
    subtopics: list[Subtopic] = field(default_factory=list)
    docs: list[Doc] = field(default_factory=list)


def parse(path: Path) -> list[Query]:
    """Read the little line format described at the top of ``content.txt``."""
    queries: list[Query] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        tag, rest = line.split(" ", 1)
        parts = [p.strip() for p in rest.removeprefix("| ").split(" | ")]  # "N | title | ..." has no leading field
        try:
            if tag == "T":
                queries.append(Query(*parts))
                continue
            q = queries[-1]
            docid = f"demo{q.id}-{len(q.docs) + 1:02d}"
            if tag == "S":
                kind, weight = parts[0].split()
                q.subtopics.append(Subtopic(len(q.subtopics) + 1, kind, float(weight), parts[1]))
            elif tag == "D":
                q.docs.append(Doc(docid, *parts[1:], grades={q.subtopics[-1].number: int(parts[0])}))
            elif tag == "M":
                grades = [int(g) for g in parts[0].split(",")]
                if len(grades) != len(q.subtopics):
                    raise ValueError(f"{len(grades)} grades for {len(q.subtopics)} subtopics")
                q.docs.append(Doc(docid, *parts[1:], grades={n + 1: g for n, g in enumerate(grades) if g > 0}))
            elif tag == "N":
                q.docs.append(Doc(docid, *parts))
            else:
                raise ValueError(f"unknown line tag {tag!r}")
            if tag != "S" and q.docs[-1].url and not reserved_url(q.docs[-1].url):
                raise ValueError(f"{q.docs[-1].url!r} is not a reserved example domain (RFC 2606: *.example, example.com)")
        except (ValueError, TypeError, IndexError) as exc:
            raise SystemExit(f"{path}:{number}: {exc}") from None
    return queries


def _weights(q: Query) -> dict[int, float]:
    return {s.number: s.weight for s in q.subtopics}


def rank_relevance(q: Query, rng: random.Random) -> list[Doc]:
    w = _weights(q)
    return sorted(q.docs, key=lambda d: (-sum(w[s] * g for s, g in d.grades.items()), -d.best(), d.docid))


def rank_diversity(q: Query, rng: random.Random) -> list[Doc]:
    w = _weights(q)
    covered = {s: 0 for s in w}
    left, out = list(q.docs), []
    while left:
        best = max(left, key=lambda d: (sum(w[s] * g / 4 * 0.5 ** covered[s] for s, g in d.grades.items()), d.docid))
        out.append(best)
        left.remove(best)
        for s in best.grades:
            covered[s] += 1
    return out


def rank_mixed(q: Query, rng: random.Random) -> list[Doc]:
    out: list[Doc] = []
    for a, b in zip(rank_relevance(q, rng), rank_diversity(q, rng)):
        for d in (a, b):
            if d not in out:
                out.append(d)
    return out


def rank_weak(q: Query, rng: random.Random) -> list[Doc]:
    keyed = [(d.best(), rng.random(), d) for d in q.docs]
    return [d for _, _, d in sorted(keyed, key=lambda t: (t[0], t[1]))]


def rank_random(q: Query, rng: random.Random) -> list[Doc]:
    docs = list(q.docs)
    rng.shuffle(docs)
    return docs


RANKERS = dict(zip(RUNS, (rank_relevance, rank_diversity, rank_mixed, rank_weak, rank_random)))


def build(out: Path, content: Path = HERE / "content.txt") -> dict[str, int]:
    """Write every demo file under ``out``; returns a few counts."""
    queries = parse(content)
    out.mkdir(parents=True, exist_ok=True)
    (out / "runs").mkdir(exist_ok=True)
    topics = ['<?xml version="1.0" encoding="UTF-8"?>', "<topics>"]
    for q in queries:
        topics.append(f'<topic number={quoteattr(q.id)} type="faceted">')
        topics.append(f"  <query>{escape(q.query)}</query>")
        topics.append(f"  <description>{escape(q.description)}</description>")
        topics += [f'  <subtopic number="{s.number}" type="{s.type}">{escape(s.text)}</subtopic>' for s in q.subtopics]
        topics.append("</topic>")
    topics.append("</topics>")
    (out / "topics.xml").write_text("\n".join(topics) + "\n", encoding="utf-8")
    intents = ["# topic\tsubtopic\tweight\ttype (demo data)"]
    intents += [f"{q.id}\t{s.number}\t{s.weight}\t{s.type}" for q in queries for s in q.subtopics]
    (out / "intents.tsv").write_text("\n".join(intents) + "\n", encoding="utf-8")
    # Dense qrels as in TREC 2014: every pooled document is judged for every subtopic.
    qrels = [f"{q.id} {s.number} {d.docid} {d.grades.get(s.number, 0)}" for q in queries for s in q.subtopics for d in q.docs]
    (out / "qrels.txt").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    docs = [
        json.dumps({"docid": d.docid, "title": d.title, "url": d.url, "snippet": d.snippet}, ensure_ascii=False)
        for q in queries
        for d in q.docs
    ]
    (out / "docs.jsonl").write_text("\n".join(docs) + "\n", encoding="utf-8")
    for name, ranker in RANKERS.items():
        lines = []
        for q in queries:
            ranked = ranker(q, random.Random(f"{SEED}-{name}-{q.id}"))[:DEPTH]
            lines += [f"{q.id} Q0 {d.docid} {r} {100 - r:.4f} {name}" for r, d in enumerate(ranked, start=1)]
        (out / "runs" / f"{name}.run").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"topics": len(queries), "documents": len(docs), "qrels": len(qrels), "runs": len(RANKERS)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: next to this script)")
    counts = build(parser.parse_args(argv).out)
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
