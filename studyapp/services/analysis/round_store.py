"""Writing one adaptive recomputation (:func:`studyapp.services.analysis.adaptive.recompute`): its groups and its round,
safe against another recomputation of the same study at the same time (``allocation_priorities --every`` beside a
manual run, two ``--every`` processes)."""

from __future__ import annotations

from django.db import connection, transaction

from studyapp.models import AllocationGroup, AllocationRound, Study

WRITTEN = ("priority", "disputed_by", "probability", "drawn_round", "full", "full_probability")


def update_groups(rows: list[AllocationGroup]) -> None:
    """Write :data:`WRITTEN` of ``rows``: one plain ``UPDATE ... WHERE id`` per row, sent with ``executemany``.

    ``bulk_update`` builds a ``CASE WHEN id = .. THEN ..`` per row and field: a round's draw changes every group not drawn yet (its
    probability), and those 6 x 1,300 expressions took 2.5-3 s of CPU per draw on a TREC-sized study, plus the database's work on one
    huge statement, on the machine that serves the participants."""
    if not rows:
        return
    meta, quote = AllocationGroup._meta, connection.ops.quote_name
    columns = ", ".join(f"{quote(meta.get_field(f).column)} = %s" for f in WRITTEN)
    sql = f"UPDATE {quote(meta.db_table)} SET {columns} WHERE {quote(meta.pk.column)} = %s"
    with connection.cursor() as cursor:
        cursor.executemany(sql, [(*(getattr(g, f) for f in WRITTEN), g.pk) for g in rows])


def store(study: Study, seen: int, rows: list[AllocationGroup], new_round: AllocationRound | None) -> bool:
    """Write ``rows`` (:func:`update_groups`) and ``new_round`` in one transaction, one recomputation of ``study`` at a
    time (PostgreSQL: the study's row locked; SQLite: its transactions are IMMEDIATE), unless the study's rounds are no
    longer the ``seen`` it counted before reading the groups: then another recomputation drew a round since, this one's
    view of the draws is stale (written, it would undo that round's draws: their groups back to not drawn or into its
    own round) and nothing is written (False: compute again)."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        if study.allocation_rounds.count() != seen:
            return False
        update_groups(rows)
        if new_round is not None:
            new_round.save(force_insert=True)
    return True
