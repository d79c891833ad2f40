"""Cache backends with counters that are atomic across worker processes and machines.

Django's ``DatabaseCache`` inherits ``incr`` from ``BaseCache``: a read, then a write that resets
the entry's expiry to the default timeout (300 s). Two workers counting at once could both read 4
and write 5, and a 900 s sign-in lockout would lift after 300 s. :class:`DatabaseCache` counts in
one transaction holding the row (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's write lock) and
keeps the expiry. Django's ``RedisCache`` needs no help: Redis ``INCRBY`` is atomic and keeps the
key's time to live.
"""

from __future__ import annotations

import base64
import pickle

from django.core.cache.backends.db import DatabaseCache as DjangoDatabaseCache
from django.db import connections, models, router, transaction
from django.utils.timezone import now as tz_now


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

    @staticmethod
    def _expired(expires, connection) -> bool:
        expression = models.Expression(output_field=models.DateTimeField())
        for converter in connection.ops.get_db_converters(expression) + expression.get_db_converters(connection):
            expires = converter(expires, expression, connection)
        return expires < tz_now()
