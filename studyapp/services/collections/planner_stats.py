"""Fresh planner statistics after a bulk write.

PostgreSQL chooses join strategies from the row counts its statistics record (``pg_class.reltuples``).
Right after an import or a new study those statistics still describe the tables as they were (often
empty) until autovacuum's next analyse, which may come minutes later; meanwhile the planner can pick
nested loops over thousands of rows, and the admission room check, run on every arrival, then takes
seconds instead of milliseconds. ``ANALYZE`` of the written tables right away avoids that window.
Other databases keep no such statistics that matter here: nothing is done there.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import Model


def refresh_statistics(*models: type[Model]) -> None:
    """``ANALYZE`` the tables of ``models`` on PostgreSQL (one statement each); a no-op elsewhere."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in models:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
