"""Cache backends with counters that are atomic across worker processes and machines.

Django's ``DatabaseCache`` inherits ``incr`` from ``BaseCache``: a read, then a write that resets
the entry's expiry to the default timeout (300 s). Two workers counting at once could both read 4
and write 5, and a 900 s sign-in lockout would lift after 300 s. :class:`DatabaseCache` counts in
one transaction holding the row (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's write lock) and
keeps the expiry. Django's ``RedisCache`` needs no help: Redis ``INCRBY`` is atomic and keeps the
key's time to live.

Django's ``DatabaseCache`` also counts the table's rows (``SELECT COUNT(*)``, a scan of up to
``MAX_ENTRIES`` rows) and then reads the key before every write, in a transaction: three statements
per write. On PostgreSQL and SQLite :meth:`DatabaseCache.set` and ``add`` are one ``INSERT ... ON
CONFLICT`` each (``add`` replaces only an expired entry), and the rows are counted for culling on every
:data:`CULL_CHECK_EVERY`-th write of a process: the table may hold that many entries per process beyond
``MAX_ENTRIES`` before the oldest go. :meth:`DatabaseCache.expires_at` reads an entry's expiry, so a
counter's window end needs no entry of its own (a newcomer's arrival: one statement).
"""

from __future__ import annotations

import base64
import itertools
import pickle
from contextlib import nullcontext
from datetime import UTC, datetime

from django.conf import settings
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.db import DatabaseCache as DjangoDatabaseCache
from django.db import DatabaseError, connections, models, router, transaction
from django.utils.timezone import now as tz_now

CULL_CHECK_EVERY = 50  # writes of a process between two counts of the table's rows (Django: every write)
_WRITES = itertools.count(1)


class DatabaseCache(DjangoDatabaseCache):
    """Django's database cache with an atomic :meth:`incr` that keeps the entry's expiry."""

    def incr(self, key, delta=1, version=None):
        key = self.make_and_validate_key(key, version=version)
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        table = connection.ops.quote_name(self._table)
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        with transaction.atomic(using=db), connection.cursor() as cursor:
            quoted_key = connection.ops.quote_name("cache_key")
            cursor.execute(f"SELECT value, expires FROM {table} WHERE {quoted_key} = %s{lock}", [key])
            row = cursor.fetchone()
            if row is None or self._expired(row[1], connection):
                raise ValueError(f"Key '{key}' not found")
            value = pickle.loads(base64.b64decode(row[0].encode())) + delta
            encoded = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
            cursor.execute(f"UPDATE {table} SET value = %s WHERE {quoted_key} = %s", [encoded, key])
        return value

    def _base_set(self, mode, key, value, timeout=DEFAULT_TIMEOUT):
        """``set`` and ``add`` in one statement each (PostgreSQL, SQLite); ``touch`` and other databases as Django does."""
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        if mode not in ("set", "add") or connection.vendor not in ("postgresql", "sqlite"):
            return super()._base_set(mode, key, value, timeout)
        timeout = self.get_backend_timeout(timeout)
        now = tz_now().replace(microsecond=0)
        tz = UTC if settings.USE_TZ else None
        expires = (datetime.max if timeout is None else datetime.fromtimestamp(timeout, tz=tz)).replace(microsecond=0)
        q = connection.ops.quote_name
        table, key_column, value_column, expires_column = q(self._table), q("cache_key"), q("value"), q("expires")
        sql = (
            f"INSERT INTO {table} ({key_column}, {value_column}, {expires_column}) VALUES (%s, %s, %s) "
            f"ON CONFLICT ({key_column}) DO UPDATE SET {value_column} = EXCLUDED.{value_column}, "
            f"{expires_column} = EXCLUDED.{expires_column}"
        )
        encoded = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
        params = [key, encoded, connection.ops.adapt_datetimefield_value(expires)]
        if mode == "add":  # an entry that is still alive stays
            sql += f" WHERE {table}.{expires_column} < %s"
            params.append(connection.ops.adapt_datetimefield_value(now))
        # inside a transaction, a failed write must not break it (a savepoint); outside, the statement is atomic itself
        try:
            with transaction.atomic(using=db) if connection.in_atomic_block else nullcontext(), connection.cursor() as cursor:
                if next(_WRITES) % CULL_CHECK_EVERY == 0:
                    cursor.execute(f"SELECT COUNT(*) FROM {table}")
                    num = cursor.fetchone()[0]
                    if num > self._max_entries:
                        self._cull(db, cursor, now, num)
                cursor.execute(sql, params)
                return mode == "set" or cursor.rowcount > 0
        except DatabaseError:  # as Django's: a write that fails (a race, a lost connection) is a cache miss
            return False

    def expires_at(self, key, version=None) -> float | None:
        """When the live entry ``key`` expires (Unix time; None: no live entry, or one that never expires)."""
        key = self.make_and_validate_key(key, version=version)
        connection = connections[router.db_for_read(self.cache_model_class)]
        table, key_column = connection.ops.quote_name(self._table), connection.ops.quote_name("cache_key")
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT expires FROM {table} WHERE {key_column} = %s", [key])
            row = cursor.fetchone()
        if row is None:
            return None
        expires = self._converted(row[0], connection)
        if expires < tz_now() or expires.year >= 9999:
            return None
        return expires.timestamp()

    @staticmethod
    def _converted(expires, connection) -> datetime:
        expression = models.Expression(output_field=models.DateTimeField())
        for converter in connection.ops.get_db_converters(expression) + expression.get_db_converters(connection):
            expires = converter(expires, expression, connection)
        return expires

    @classmethod
    def _expired(cls, expires, connection) -> bool:
        return cls._converted(expires, connection) < tz_now()
