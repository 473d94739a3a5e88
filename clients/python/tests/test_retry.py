"""The retry policy with a scripted transport (no service): which answers are retried, how long
each wait is, and that every attempt sends the same Idempotency-Key."""
import httpx
import pytest

import docproc
from docproc import APIConnectionError, ApiError


def scripted(monkeypatch, answers):
    seen, waits = [], []
    monkeypatch.setattr(docproc.client.time, "sleep", waits.append)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.headers.get("idempotency-key"), request.content))
        a = answers.pop(0)
        if isinstance(a, Exception):
            raise a
        return a

    return docproc.Client("svk_test_x", "http://x/api/v1", transport=httpx.MockTransport(handler)), seen, waits


def envelope(status, code, headers=None):
    return httpx.Response(status, json={"error": {"type": "x", "code": code, "message": "m", "param": None}}, headers=headers)


JOB = {"id": "j", "object": "job", "operation": "rotate", "kind": "page_ops", "status": "queued", "file_id": "f", "file_ids": None, "options": {}, "metadata": {},
       "credits": {"billed": False, "pages_estimated": 1, "credits_per_page": 0, "credits_reserved": 0}, "progress": {"pages_done": 0, "pages_total": 1, "percent": 0},
       "result": None, "error": None, "sandbox": True, "livemode": False, "attempts": 0, "created_at": "t", "started_at": None, "finished_at": None}


def test_a_503_and_a_network_error_are_retried_with_the_same_key(monkeypatch):
    c, seen, waits = scripted(monkeypatch, [envelope(503, "queue_unavailable", {"retry-after": "2"}), httpx.ConnectError("down"), httpx.Response(202, json=JOB)])
    assert c.jobs.create({"operation": "rotate"}).id == "j"
    assert len(seen) == 3 and len({k for k, _ in seen}) == 1 and seen[0][0].startswith("docproc-py-")
    assert waits[0] >= 2 and 0.5 <= waits[1] <= 1.0


@pytest.mark.parametrize("answer", [envelope(429, "rate_limited", {"retry-after": "120"}), envelope(422, "invalid_options"), envelope(409, "job_not_finished")])
def test_answers_a_retry_cannot_fix_are_raised_at_once(monkeypatch, answer):
    c, seen, _ = scripted(monkeypatch, [answer, httpx.Response(202, json=JOB)])
    with pytest.raises(ApiError) as e:
        c.jobs.create({"operation": "rotate"})
    assert e.value.status == answer.status_code and len(seen) == 1


def test_after_max_network_retries_the_last_error_is_raised(monkeypatch):
    c, seen, _ = scripted(monkeypatch, [envelope(409, "idempotency_in_progress"), envelope(429, "rate_limited"), envelope(429, "rate_limited"), httpx.Response(202, json=JOB)])
    with pytest.raises(ApiError) as e:
        c.jobs.create({"operation": "rotate"})
    assert e.value.code == "rate_limited" and len(seen) == 3
    c, _, _ = scripted(monkeypatch, [httpx.ConnectError("a"), httpx.ConnectError("b"), httpx.ConnectError("c")])
    with pytest.raises(APIConnectionError):
        c.jobs.get("j")
