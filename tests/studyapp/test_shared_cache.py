"""Rate limits in a cache shared by every worker and machine (studyapp.cache_backends, settings.cache_settings):
the database cache and Redis count atomically and keep their windows (the 900 s sign-in lockout is still
on at 301 s), and a system check refuses a per-process cache in production with several workers."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from unittest import mock

import pytest
from django.core.cache import cache, caches
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import connections
from django.test import SimpleTestCase, TransactionTestCase, override_settings
from django.test.utils import CaptureQueriesContext

from studyapp import checks
from studyapp.services.access import throttle
from studyapp.settings import cache_settings
from tests.studyapp.test_postgresql import IN_CI
from tests.studyapp.test_settings import default_settings

DB_CACHE = {"default": cache_settings("db")}
THREADS, PER_THREAD = 4, 25


def redis_url() -> str:
    """``STUDYAPP_TEST_REDIS_URL`` of a Redis that answers: fails in CI without one, skips elsewhere."""
    url = os.environ.get("STUDYAPP_TEST_REDIS_URL", "")
    message = "STUDYAPP_TEST_REDIS_URL is not set (.ci/run starts redis-server and sets it)"
    if url:
        import redis

        try:
            redis.Redis.from_url(url, socket_connect_timeout=2).ping()
        except redis.RedisError as exc:
            message = f"Redis at STUDYAPP_TEST_REDIS_URL does not answer: {exc}"
        else:
            return url
    if IN_CI:
        pytest.fail(f"Redis is required in CI: {message}")
    pytest.skip(f"{message}; in CI (CI=true) this test fails instead of skipping")


def count_in_threads(limit: throttle.Limit, who: str) -> list[int]:
    """``THREADS`` threads count ``PER_THREAD`` attempts each at once (each with its own database connection)."""
    seen: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(THREADS)

    def work() -> None:
        start.wait()
        try:
            for _ in range(PER_THREAD):
                n = throttle.count(limit, who)
                with lock:
                    seen.append(n)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return seen


class SharedCacheChecks:
    """The same checks on each shared cache (mixed into a test case that sets ``CACHES``)."""

    def test_counts_are_atomic_across_concurrent_workers(self) -> None:
        seen = count_in_threads(throttle.Limit("t-atomic", 1000, 900), "client")
        self.assertEqual(sorted(seen), list(range(1, THREADS * PER_THREAD + 1)))  # every count once: nothing lost

    def test_the_window_is_kept_by_increments(self) -> None:
        limit = throttle.Limit("t-window", 5, 900)
        for _ in range(5):
            throttle.count(limit, "x")
        self.assertGreater(self.seconds_left(throttle._key(limit, "x")), 890)


class DatabaseCacheTest(SharedCacheChecks, TransactionTestCase):
    def setUp(self) -> None:
        patcher = override_settings(CACHES=DB_CACHE)  # here, not on the class: after the suite's locmem fixture
        patcher.enable()
        self.addCleanup(patcher.disable)
        call_command("createcachetable", verbosity=0)
        cache.clear()

    def seconds_left(self, key: str) -> float:
        db = caches["default"]
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT expires FROM studyapp_cache WHERE cache_key = %s", [db.make_key(key)])
            (expires,) = cursor.fetchone()
        return _seconds_until(expires)

    def test_the_sign_in_lockout_does_not_lift_after_301_seconds(self) -> None:
        start = time.time()
        for _ in range(5):
            self.assertEqual(throttle.login_attempt("Boss", "10.0.0.1"), 0)  # five attempts (failed) allowed
        self.assertGreater(throttle.login_attempt("boss", "10.0.0.2"), 890)
        for later, locked in ((301, True), (899, True), (901, False)):
            with (
                mock.patch("time.time", return_value=start + later),
                mock.patch("django.core.cache.backends.db.tz_now", return_value=_utc(start + later)),
                mock.patch("studyapp.cache_backends.tz_now", return_value=_utc(start + later)),
            ):
                throttle.count(throttle.Limit("other", 5, 900), "y")  # a write at that time, as a busy site has
                wait = throttle.login_attempt("boss", "10.0.0.2")
                self.assertEqual(wait > 0, locked, f"after {later} s: wait {wait}")

    def test_add_keeps_a_live_entry_and_replaces_an_expired_one(self) -> None:
        self.assertTrue(cache.add("k", 1, timeout=900))
        self.assertFalse(cache.add("k", 2, timeout=900))
        self.assertEqual(cache.get("k"), 1)
        cache.set("k", 3, timeout=900)  # set replaces a live entry
        self.assertEqual(cache.get("k"), 3)
        later = time.time() + 901
        with mock.patch("time.time", return_value=later), mock.patch("studyapp.cache_backends.tz_now", return_value=_utc(later)):
            self.assertTrue(cache.add("k", 4, timeout=900))
        self.assertEqual(self.seconds_left("k") > 1700, True)  # the new entry's window, not the old one's
        cache.set("forever", "v", timeout=None)
        self.assertEqual(cache.get("forever"), "v")

    def test_a_newcomers_arrival_writes_in_one_statement(self) -> None:
        limit = throttle.Limit("arrival-statements", 2, 600)
        with mock.patch("studyapp.cache_backends._WRITES", itertools.count(1)), CaptureQueriesContext(connections["default"]) as queries:
            self.assertEqual(throttle.count(limit, "10.0.0.9"), 1)  # the counter; its expiry is the window's end
        self.assertEqual([q["sql"].split()[0] for q in queries.captured_queries], ["INSERT"])
        self.assertEqual(throttle.count(limit, "10.0.0.9"), 2)
        self.assertEqual(throttle.count(limit, "10.0.0.9"), 3)
        self.assertIn(throttle.wait_seconds(limit, "10.0.0.9"), range(595, 601))  # read back from the row's expiry
        self.assertIsNone(cache.get(throttle._key(limit, "10.0.0.9") + ":until"))

    def test_expires_at(self) -> None:
        cache.set("live", 1, timeout=100)
        cache.set("forever", 1, timeout=None)
        self.assertAlmostEqual(cache.expires_at("live"), time.time() + 100, delta=2)
        self.assertIsNone(cache.expires_at("forever"))
        self.assertIsNone(cache.expires_at("missing"))
        later = time.time() + 101
        with mock.patch("studyapp.cache_backends.tz_now", return_value=_utc(later)):
            self.assertIsNone(cache.expires_at("live"))

    def test_the_table_is_still_culled(self) -> None:
        with override_settings(CACHES={"default": {**DB_CACHE["default"], "OPTIONS": {"MAX_ENTRIES": 10, "CULL_FREQUENCY": 2}}}):
            with mock.patch("studyapp.cache_backends.CULL_CHECK_EVERY", 5):
                for i in range(40):
                    caches["default"].set(f"e{i}", i, timeout=900)
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT COUNT(*) FROM studyapp_cache")
                (rows,) = cursor.fetchone()
        self.assertLessEqual(rows, 10 + 5)
        self.assertEqual(caches["default"].get("e39"), 39)  # the newest stays

    def test_migrate_makes_the_cache_table(self) -> None:
        with connections["default"].cursor() as cursor:
            cursor.execute("DROP TABLE studyapp_cache")
        call_command("migrate", verbosity=0)
        cache.set("probe", 1)
        self.assertEqual(cache.get("probe"), 1)


def _utc(timestamp: float):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(timestamp, tz=UTC)


def _seconds_until(expires) -> float:
    from datetime import UTC, datetime

    if isinstance(expires, str):
        expires = datetime.fromisoformat(expires)
    if expires.tzinfo is None:
        expires = expires.replace(tzinfo=UTC)
    return (expires - datetime.now(UTC)).total_seconds()


class RedisCacheTest(SharedCacheChecks, SimpleTestCase):
    def setUp(self) -> None:
        url = redis_url()
        patcher = override_settings(CACHES={"default": cache_settings(url)})
        patcher.enable()
        self.addCleanup(patcher.disable)
        cache.clear()

    def seconds_left(self, key: str) -> float:
        client = caches["default"]._cache.get_client(None, write=False)
        return client.ttl(caches["default"].make_key(key))


class SettingsTest(SimpleTestCase):
    def test_cache_urls(self) -> None:
        self.assertEqual(cache_settings("")["BACKEND"], "studyapp.cache_backends.DatabaseCache")
        self.assertEqual(cache_settings("db")["BACKEND"], "studyapp.cache_backends.DatabaseCache")
        self.assertEqual(cache_settings("redis://127.0.0.1:6379/2")["LOCATION"], "redis://127.0.0.1:6379/2")
        self.assertTrue(cache_settings("locmem")["BACKEND"].endswith("LocMemCache"))
        with self.assertRaisesMessage(ImproperlyConfigured, "STUDYAPP_CACHE_URL"):
            cache_settings("memcached://x")

    def test_the_database_is_the_default_and_the_file_cache_is_refused(self) -> None:
        folder = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, folder, True)
        env = {k: v for k, v in os.environ.items() if k not in ("STUDYAPP_CACHE_URL", "STUDYAPP_CACHE_DIR")}
        with mock.patch.dict(os.environ, env, clear=True):
            self.assertEqual(default_settings(folder / "key")["CACHES"]["default"]["BACKEND"], "studyapp.cache_backends.DatabaseCache")
            with self.assertRaisesMessage(ImproperlyConfigured, "STUDYAPP_CACHE_DIR is no longer read"):
                default_settings(folder / "key", STUDYAPP_CACHE_DIR=str(folder))

    def test_production_refuses_a_per_process_cache_with_several_workers(self) -> None:
        locmem = {"default": cache_settings("locmem")}
        with override_settings(PRODUCTION=True, STUDYAPP_WORKERS=3, CACHES=locmem):
            errors = checks.shared_cache(None)
            self.assertEqual([e.id for e in errors], ["studyapp.E001"])
            self.assertIn("WEB_CONCURRENCY=3", errors[0].msg)
        for changes in ({"STUDYAPP_WORKERS": 1, "CACHES": locmem}, {"STUDYAPP_WORKERS": 3, "CACHES": DB_CACHE}):
            with override_settings(PRODUCTION=True, **changes):
                self.assertEqual(checks.shared_cache(None), [])
        with override_settings(PRODUCTION=False, STUDYAPP_WORKERS=3, CACHES=locmem):
            self.assertEqual(checks.shared_cache(None), [])
