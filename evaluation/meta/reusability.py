"""Leave-one-team-out (LOO) reusability of a pooled collection (docs/metrics.md#leave-one-out-reusability; Zobel 1998; Sakai 2013).

Per topic ``q`` with pool depth ``d_q``: ``C_k(q)`` = union of the top ``d_q`` documents of every
pool-feeding run of team ``k``; ``U_k(q) = C_k(q)`` minus every other team's contribution. The LOO_k
qrels delete every qrels line of ``U_k(q)`` (those documents become unjudged). All runs under
study are evaluated with the full and with each LOO_k qrels; for team ``k``'s best run ``b_k``
(by the official measure under the full qrels) we report the signed difference, the absolute
error ``|M_LOO - M*|`` and the relative error ``|r_LOO - r*|`` of its rank among all runs
(competition ranking, 1 = best), for raw lists and for condensed lists (``M'``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evaluation.collection import Collection
from evaluation.exceptions import EvaluationError, FormatError
from evaluation.io._lines import expect_columns, numbered_fields, parse_int
from evaluation.io.scores import MEAN_TOPIC
from evaluation.wording import have, named

DEFAULT_DEPTH = 20
COLUMNS = ["team", "run", "measure", "list", "full", "loo", "diff", "abs_error", "rank_full", "rank_loo", "rel_error"]


def read_teams(path: str | Path) -> dict[str, str]:
    """Teams file: one ``run team`` per line (whitespace separated, ``#`` comments)."""
    teams: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, fields in numbered_fields(path):
        expect_columns(path, number, fields, (2,), "run team")
        run, team = fields
        if run in teams:
            raise FormatError(path, number, f"run {run} listed twice (first on line {lines[run]})")
        teams[run], lines[run] = team, number
    return teams


def read_pool_depths(path: str | Path) -> dict[str, int]:
    """Per-topic pool depths: one ``topic depth`` per line."""
    depths: dict[str, int] = {}
    for number, fields in numbered_fields(path):
        expect_columns(path, number, fields, (2,), "topic depth")
        topic, raw = fields
        depth = parse_int(path, number, raw, "pool depth")
        if depth < 1:
            raise FormatError(path, number, f"pool depth must be >= 1, got {depth}")
        if topic in depths:
            raise FormatError(path, number, f"topic {topic} listed twice")
        depths[topic] = depth
    return depths


def condensed_name(measure: str) -> str:
    """The condensed-list variant of a measure name: ``D#-nDCG@10`` -> ``D#-nDCG'@10``."""
    if "'" in measure:
        return measure
    head, at, cutoff = measure.rpartition("@")
    return f"{head}'@{cutoff}" if at else f"{measure}'"


def unique_contributions(
    pool_runs: Sequence, teams: Mapping[str, str], depth: int | Mapping[str, int] = DEFAULT_DEPTH, topics: Sequence[str] | None = None
) -> dict[str, dict[str, set[str]]]:
    """``U_k(q)`` for every team ``k`` and topic ``q``: team -> topic -> documents.

    Parameters
    ----------
    pool_runs : every run that fed the pool (``Run`` objects).
    teams : run name -> team.
    depth : pool depth, global or per topic (topics absent from the mapping use 20).
    topics : topics to pool (default: every topic of any run).
    """
    missing = sorted(r.name for r in pool_runs if r.name not in teams)
    if missing:
        raise EvaluationError(f"{named('run', missing)} {have(len(missing))} no team in the teams file")
    topics = list(topics) if topics is not None else sorted({t for r in pool_runs for t in r.lists})
    contributions: dict[str, dict[str, set[str]]] = {}
    for run in pool_runs:
        team = contributions.setdefault(teams[run.name], {})
        for q in topics:
            d = depth.get(q, DEFAULT_DEPTH) if isinstance(depth, Mapping) else depth
            if d < 1:
                raise ValueError(f"pool depth must be >= 1, got {d} for topic {q}")
            team.setdefault(q, set()).update(run.lists.get(q, ())[:d])
    unique: dict[str, dict[str, set[str]]] = {}
    for team, by_topic in contributions.items():
        unique[team] = {}
        for q, docs in by_topic.items():
            others: set[str] = set()
            for other, other_topics in contributions.items():
                if other != team:
                    others |= other_topics.get(q, set())
            unique[team][q] = docs - others
    return unique


def competition_ranks(values: pd.Series) -> pd.Series:
    """Rank 1 = best (largest); ties get the minimum rank (docs/metrics.md#leave-one-out-reusability)."""
    return values.rank(ascending=False, method="min").astype(np.int64)


def leave_one_out(
    collection: Collection,
    runs: Sequence,
    teams: Mapping[str, str],
    measures: Sequence[str],
    *,
    official: str | None = None,
    pool_runs: Sequence = (),
    depth: int | Mapping[str, int] = DEFAULT_DEPTH,
) -> pd.DataFrame:
    """Leave-one-team-out test of ``measures`` (raw and condensed) for every team with a run under study.

    Parameters
    ----------
    collection : the full collection.
    runs : runs under study (all are evaluated and ranked); they feed the pool too.
    teams : run name -> team, for every run under study and every pool run.
    measures : raw measure names; the condensed variant of each is added.
    official : measure choosing each team's best run under the full qrels (default: first measure).
    pool_runs : extra runs that fed the pool but are not under study.
    depth : pool depth (global or per topic).

    Returns
    -------
    DataFrame ``team run measure list full loo diff abs_error rank_full rank_loo rel_error``; the
    rows with team ``all`` hold the mean errors over teams for each measure and list.
    """
    from evaluation.engine import evaluate

    if not runs:
        raise EvaluationError("LOO needs at least one run under study")
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise EvaluationError("run names must be unique")
    official = official or measures[0]
    raw = list(dict.fromkeys(m for m in measures if "'" not in m))
    if official not in raw:
        raw.insert(0, official)
    variants = {m: condensed_name(m) for m in raw}
    everything = raw + list(variants.values())
    pool = list(runs) + [r for r in pool_runs if r.name not in set(names)]
    unique = unique_contributions(pool, teams, depth, collection.topic_ids)
    full = _means(evaluate(collection, runs, everything))
    rows = []
    for team in sorted({teams[n] for n in names}):
        team_runs = [n for n in names if teams[n] == team]
        best = sorted(team_runs, key=lambda n: (-full.loc[n, official], n))[0]
        loo = _means(evaluate(collection.drop_documents(unique.get(team, {})), runs, everything))
        for measure in raw:
            for kind, name in (("raw", measure), ("condensed", variants[measure])):
                f, l = full[name], loo[name]
                rank_f, rank_l = competition_ranks(f)[best], competition_ranks(l)[best]
                rows.append(
                    (
                        team,
                        best,
                        measure,
                        kind,
                        f[best],
                        l[best],
                        l[best] - f[best],
                        abs(l[best] - f[best]),
                        int(rank_f),
                        int(rank_l),
                        abs(int(rank_l) - int(rank_f)),
                    )
                )
    table = pd.DataFrame.from_records(rows, columns=COLUMNS)
    table = table.astype({"rank_full": "Int64", "rank_loo": "Int64", "rel_error": "float64"})
    means = table.groupby(["measure", "list"], sort=False)[["abs_error", "rel_error"]].mean().reset_index()
    summary = pd.DataFrame(
        {
            "team": MEAN_TOPIC,
            "run": "",
            "measure": means["measure"],
            "list": means["list"],
            "abs_error": means["abs_error"],
            "rel_error": means["rel_error"],
        },
        columns=COLUMNS,
    )
    return pd.concat([table, summary.astype({"rank_full": "Int64", "rank_loo": "Int64"})], ignore_index=True)


def _means(frame: pd.DataFrame) -> pd.DataFrame:
    """Run means (rows: run, columns: measure) from an :func:`evaluate` frame."""
    means = frame[frame["topic"] == MEAN_TOPIC]
    return means.pivot(index="run", columns="measure", values="value")
