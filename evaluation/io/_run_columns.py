"""The columns of a plain TREC run file (six fields on every line, no comment line) from a C reader.

pyarrow's CSV reader (installed with the ``[parquet]`` extra) reads files whose fields are separated
by one space or one tab, the usual layout, two to three times faster than pandas' C reader; pandas'
reader takes any run of spaces and tabs and serves when pyarrow is missing or declines a file. Both
give the same Python strings and numbers. A file neither reads cleanly (a comment, a short line, a
score that is not a finite number, a seventh field such as a docid with a blank, ...) is left to the line reader of :func:`read_run`, which names
the file and line of a problem.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

RUN_COLUMNS = ["topic", "q0", "docid", "rank", "score", "tag"]
TEXT_COLUMNS = ("topic", "q0", "docid", "tag")
RUN_DTYPES = {
    "topic": object,
    "q0": object,
    "docid": object,
    "rank": np.int64,
    "score": np.float64,
    "tag": object,
}  # object: Python strings straight from the parser

# (topics, docids, ranks, scores, the first line's tag)
Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]


def plain_columns(path: str | Path) -> Columns | None:
    """The columns of a plain run file, by pyarrow's reader if it is installed and takes the file,
    else by pandas'; None when neither reads the file cleanly."""
    for reader in (arrow_columns, pandas_columns):
        columns = reader(path)
        if columns is not None:
            return columns
    return None


def arrow_columns(path: str | Path) -> Columns | None:
    """pyarrow's CSV reader, one space or one tab (as on the first line) between fields; None when
    pyarrow is missing or the file is not plain in that layout (any other spacing has a line with
    more or fewer than six fields, or an empty field)."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyarrow import csv as arrow_csv
    except ImportError:
        return None
    text, number = pa.string(), {"rank": pa.int64(), "score": pa.float64()}
    try:
        with open(path, "rb") as handle:
            delimiter = "\t" if b"\t" in handle.readline() else " "
        table = arrow_csv.read_csv(
            path,
            read_options=arrow_csv.ReadOptions(column_names=RUN_COLUMNS, use_threads=False),  # one file of many: no thread pool
            parse_options=arrow_csv.ParseOptions(delimiter=delimiter, quote_char=False),
            convert_options=arrow_csv.ConvertOptions(
                column_types={**dict.fromkeys(TEXT_COLUMNS, text), **number}, null_values=[], strings_can_be_null=False
            ),
        )
    except (OSError, pa.ArrowInvalid):
        return None
    score = table.column("score").to_numpy()
    if (
        not table.num_rows
        or any(pc.min(pc.utf8_length(table.column(c))).as_py() == 0 for c in TEXT_COLUMNS)
        or pc.any(pc.starts_with(table.column("topic"), "#")).as_py()
        or not np.isfinite(score).all()
        or not pc.all(pc.equal(table.column("tag"), table.column("tag")[0])).as_py()
    ):
        return None  # an empty field, a comment line, a score or several tags the line reader has to judge
    # a few distinct topics per file: one Python string each, rather than one per line
    topic = [
        chunk.dictionary.to_numpy(zero_copy_only=False)[chunk.indices.to_numpy()]
        for chunk in pc.dictionary_encode(table.column("topic")).chunks
    ]
    docid = table.column("docid").to_numpy(zero_copy_only=False)
    return np.concatenate(topic), docid, table.column("rank").to_numpy(), score, table.column("tag")[0].as_py()


def pandas_columns(path: str | Path) -> Columns | None:
    """pandas' C reader, fields separated by any run of spaces and tabs; None unless the file is plain."""
    try:
        frame = pd.read_csv(path, sep=r"\s+", header=None, names=RUN_COLUMNS, dtype=RUN_DTYPES, na_filter=False,
                            encoding="utf-8-sig", engine="c", quoting=csv.QUOTE_NONE)  # fmt: skip
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return None
    topic = frame["topic"].to_numpy(dtype=object)
    score = frame["score"].to_numpy(dtype=np.float64)
    if (
        not len(frame)
        or not isinstance(frame.index, pd.RangeIndex)  # every line had a seventh field: pandas made the first its index
        or (frame["tag"] == "").any()
        or any(t.startswith("#") for t in pd.unique(topic))  # the distinct topics: a few per file
        or not np.isfinite(score).all()
        or (frame["tag"].to_numpy(dtype=object) != frame["tag"].iat[0]).any()
    ):
        return None  # a short or long line, a comment line, a score or several tags the line reader has to judge
    return topic, frame["docid"].to_numpy(dtype=object), frame["rank"].to_numpy(dtype=np.int64), score, str(frame["tag"].iat[0])
