"""The toy topic of docs/metrics.md#the-toy-topic, shared by the toy-topic, CLI and bad-input tests.

One topic ``T1``, intents 1 (nav, w 0.5), 2 (inf, w 0.3), 3 (inf, w 0.2); d6 judged nonrelevant
(intent 0, L0), dX unjudged. The run is already ordered: d3, d6, d1, dX, d2, d7, d5.
"""

from __future__ import annotations

from pathlib import Path

from evaluation import Collection, Intent, Run, build_collection, evaluate, load_collection

DATA = Path(__file__).resolve().parent / "data"
TOY_QRELS = DATA / "toy.qrels"
TOY_IPROB = DATA / "toy.Iprob"
TOY_LIST = ("d3", "d6", "d1", "dX", "d2", "d7", "d5")


def toy_run(name: str = "toy") -> Run:
    return Run(name, {"T1": list(TOY_LIST)})


def toy_collection() -> Collection:
    """The toy topic with its Iprob weights (0.5, 0.3, 0.2) and types."""
    return load_collection(TOY_QRELS, TOY_IPROB)


def toy_uniform() -> Collection:
    """The toy topic without the Iprob file: uniform weights (the ndeval-family rows of docs/metrics.md#the-toy-topic)."""
    return load_collection(TOY_QRELS)


def one_hot(collection: Collection, topic: str, intent: str, kind: str | None = None) -> Collection:
    """``collection`` with weight 1 on ``intent`` and 0 elsewhere: an IA sum then equals that
    intent's own metric value (``kind`` overrides every intent's type)."""
    intents = {
        tid: [Intent(i.id, 1.0 if (tid == topic and i.id == intent) else 0.0, kind or i.type, i.text) for i in t.intents]
        for tid, t in collection.topics.items()
    }
    return build_collection(collection.judgments, intents)


def toy_write_run(path: Path, docs: tuple[str, ...] | list[str] = TOY_LIST, tag: str = "toy") -> Path:
    """Write ``docs`` as a TREC run for T1 whose default ``score`` order is the given order."""
    lines = [f"T1 Q0 {d} {n} {len(docs) - n} {tag}" for n, d in enumerate(docs, start=1)]
    path.write_text("\n".join(lines) + "\n")
    return path


def score(collection: Collection, run: Run, measure: str, topic: str = "T1") -> float:
    """One per-topic value through the public API."""
    frame = evaluate(collection, [run], [measure], per_topic=True)
    row = frame[(frame.topic == topic) & (frame.measure == measure)]
    assert len(row) == 1, frame
    return float(row.value.iloc[0])
