"""A local HTTP server playing Prolific's API for review, as its API reference documents it.

It runs on 127.0.0.1 in a thread (started and stopped by the test, ``with FakeProlific(...) as api``)
and records every request (method, path, headers, body). Implemented: token auth (``Authorization:
Token <token>``, else 401), ``GET /api/v1/submissions/{id}/``, ``POST /api/v1/submissions/{id}/transition/``
(APPROVE/REJECT of a submission awaiting review; a rejection needs a known ``rejection_category`` and a
``message`` of at least 100 characters; a repeated identical transition is ignored; anything else 400),
``POST /api/v1/submissions/bonus-payments/`` (``study_id`` + ``csv_bonuses`` lines of ``<submission or
participant id>,<amount>``; ids that did not take part in the study: 400),
``POST /api/v1/bulk-bonus-payments/{id}/pay/`` (not idempotent, as documented: every call pays again; the
submission then lists the bonus in ``bonus_payments``, in cents, unless ``lists_bonuses`` is off) and
``POST /api/v1/studies/`` (a draft study, UNPUBLISHED; missing required fields: 400).
:meth:`FakeProlific.fail` makes the next matching request(s) answer an error instead (429 with
Retry-After, 503, a 500 after carrying it out, ...), answer late (``delay``) or not at all (``drop``: the
connection closes after the request was received and carried out); ``paid`` counts every bonus paid.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from studyapp.services.platforms.prolific import REJECTION_CATEGORIES

CATEGORIES = {code for code, _ in REJECTION_CATEGORIES}


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: object


@dataclass
class Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str] = field(default_factory=dict)
    carried_out: bool = False  # the request takes effect, then the error answers (a 500 after paying)
    delay: float = 0.0  # seconds to wait (after carrying it out) before answering: a slow platform
    drop: bool = False  # close the connection without an answer (after carrying it out, if carried_out)


class FakeProlific:
    """Prolific's review endpoints on ``self.url``; ``submissions``: id -> {status, study_id, participant}."""

    def __init__(self, token: str = "test-token") -> None:
        self.token = token
        self.submissions: dict[str, dict] = {}
        self.bulk: dict[str, dict] = {}
        self.studies: dict[str, dict] = {}  # draft studies created (POST /api/v1/studies/)
        self.paid: list[tuple[str, Decimal]] = []  # (submission or participant id, amount) per bonus paid
        self.lists_bonuses = True  # a submission lists its paid bonuses (False: Prolific has not processed them yet)
        self.requests: list[Recorded] = []
        self.failures: list[Failure] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> FakeProlific:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def add(self, submission_id: str, participant: str, study_id: str, status: str = "AWAITING REVIEW") -> None:
        self.submissions[submission_id] = {"id": submission_id, "participant": participant, "study_id": study_id, "status": status}

    def fail(self, method: str, path: str, status: int = 0, *, times: int = 1, retry_after: float | None = None,
             carried_out: bool = False, delay: float = 0.0, drop: bool = False) -> None:  # fmt: skip
        """The next ``times`` requests ``method`` to a path matching the regex ``path`` answer ``status`` (0: the normal
        answer, e.g. after a ``delay``), or none at all (``drop``)."""
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        self.failures.append(Failure(method, re.compile(path), status, times, headers, carried_out, delay, drop))

    def payments_of(self, who: str) -> int:
        """How many bonus payments ``who`` (a submission or participant id) received."""
        return sum(1 for paid, _ in self.paid if paid == who)

    def calls(self, method: str | None = None, path: str = "") -> list[Recorded]:
        """The recorded requests (optionally of one method, to paths matching the regex ``path``)."""
        return [r for r in self.requests if (method is None or r.method == method) and re.search(path, r.path)]

    # -- the API ---------------------------------------------------------------------------------

    def answer(self, method: str, path: str, body: object) -> tuple[int, object, dict[str, str], Failure | None]:
        with self.lock:
            for failure in self.failures:
                if failure.times and failure.method == method and failure.pattern.search(path):
                    failure.times -= 1
                    if not failure.status:  # the request is served, then the fault (a delay, a dropped connection)
                        return (*self._route(method, path, body), {}, failure)
                    if failure.carried_out:
                        self._route(method, path, body)
                    return failure.status, {"error": {"detail": "simulated failure"}}, failure.headers, failure
            status, answer = self._route(method, path, body)
            return status, answer, {}, None

    def _route(self, method: str, path: str, body: object) -> tuple[int, object]:
        if m := re.fullmatch(r"/api/v1/submissions/([^/]+)/", path):
            if method != "GET" or m.group(1) == "bonus-payments":
                return self._bonus_setup(body) if method == "POST" else (405, {})
            found = self.submissions.get(m.group(1))
            if found and self.lists_bonuses:
                found = {**found, "bonus_payments": [int(a * 100) for who, a in self.paid if who in (found["id"], found["participant"])]}
            return (200, found) if found else (404, {"error": {"detail": "Not found."}})
        if (m := re.fullmatch(r"/api/v1/submissions/([^/]+)/transition/", path)) and method == "POST":
            return self._transition(m.group(1), body)
        if (m := re.fullmatch(r"/api/v1/bulk-bonus-payments/([^/]+)/pay/", path)) and method == "POST":
            batch = self.bulk.get(m.group(1))
            if batch is None:
                return 404, {"error": {"detail": "Not found."}}
            self.paid += batch["lines"]
            return 200, f"Bulk bonus payment with ID {m.group(1)} is being processed asynchronously."
        if path == "/api/v1/studies/" and method == "POST":
            return self._create_study(body)
        return 404, {"error": {"detail": "Not found."}}

    def _create_study(self, body: object) -> tuple[int, object]:
        """ "Create a draft study": the study is stored UNPUBLISHED (publishing is a second call, never made here)."""
        required = ("name", "description", "external_study_url", "estimated_completion_time", "reward", "total_available_places")
        if not isinstance(body, dict) or any(body.get(k) in (None, "") for k in required):
            return 400, {
                "error": {"detail": {k: ["This field is required."] for k in required if not isinstance(body, dict) or not body.get(k)}}
            }
        if body.get("prolific_id_option") not in ("question", "url_parameters", "not_required"):
            return 400, {"error": {"detail": {"prolific_id_option": ["invalid"]}}}
        codes = body.get("completion_codes")
        if not codes or not all(isinstance(c, dict) and c.get("code") and c.get("code_type") and c.get("actions") for c in codes):
            return 400, {"error": {"detail": {"completion_codes": ["at least one code with code_type and actions"]}}}
        study_id = uuid.uuid4().hex[:24]
        self.studies[study_id] = {**body, "id": study_id, "status": "UNPUBLISHED"}
        return 201, self.studies[study_id]

    def _transition(self, sid: str, body: object) -> tuple[int, object]:
        sub = self.submissions.get(sid)
        if sub is None:
            return 404, {"error": {"detail": "Not found."}}
        if not isinstance(body, dict) or body.get("action") not in ("APPROVE", "REJECT"):
            return 400, {"error": {"detail": {"action": ["invalid"]}}}
        target = "APPROVED" if body["action"] == "APPROVE" else "REJECTED"
        if sub["status"] == target:
            return 200, sub  # idempotent: the same request twice is ignored
        if sub["status"] != "AWAITING REVIEW":
            return 400, {"error": {"detail": f"cannot transition a submission in status {sub['status']}"}}
        if target == "REJECTED":
            if body.get("rejection_category") not in CATEGORIES:
                return 400, {"error": {"detail": {"rejection_category": ["invalid"]}}}
            if len(str(body.get("message", ""))) < 100:
                return 400, {"error": {"detail": {"message": ["must be at least 100 characters"]}}}
        sub["status"] = target
        return 200, sub

    def _bonus_setup(self, body: object) -> tuple[int, object]:
        if not isinstance(body, dict) or not body.get("study_id") or not isinstance(body.get("csv_bonuses"), str):
            return 400, {"error": {"detail": "study_id and csv_bonuses are required"}}
        taking_part = {k for s in self.submissions.values() if s["study_id"] == body["study_id"] for k in (s["id"], s["participant"])}
        lines, wrong = [], []
        for line in body["csv_bonuses"].strip().splitlines():
            who, _, amount = line.partition(",")
            (lines if who in taking_part else wrong).append((who, Decimal(amount)))
        if wrong or not lines:
            return 400, {"error": {"detail": f"ids not in the study: {', '.join(w for w, _ in wrong)}"}}
        batch = uuid.uuid4().hex[:24]
        self.bulk[batch] = {"study": body["study_id"], "lines": lines}
        amount = float(sum(a for _, a in lines))
        return 201, {"id": batch, "study": body["study_id"], "amount": amount, "fees": 0.0, "total_amount": amount, "vat": 0.0}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                api.requests.append(Recorded(self.command, self.path, dict(self.headers.items()), body))
                fault = None
                if self.headers.get("Authorization") != f"Token {api.token}":
                    status, answer, headers = 401, {"error": {"detail": "Invalid token."}}, {}
                else:
                    status, answer, headers, fault = api.answer(self.command, self.path, body)
                if fault is not None and fault.delay:
                    time.sleep(fault.delay)
                if fault is not None and fault.drop:  # the request was received (and acted on): no answer at all
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                data = json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    for name, value in {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers}.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # a client that gave up waiting (a timeout test)
                    self.close_connection = True

            do_GET = do_POST = _serve

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

        return Handler
