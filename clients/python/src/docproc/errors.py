"""The client's errors: ApiError carries the service's error envelope (type, code, param,
request_id, status); the others name failures on the client's side."""
from __future__ import annotations

import json
from typing import Any, Optional

import httpx


class DocprocError(Exception):
    """Base class of every error this client raises."""


class ApiError(DocprocError):
    """The service answered with an error status; fields come from its error envelope."""

    def __init__(self, status: int, body: dict[str, Any], headers: Optional[httpx.Headers] = None):
        super().__init__(f"{status} {body.get('code')}: {body.get('message')}")
        self.status = status
        self.type: str = body.get("type", "api_error")
        self.code: str = body.get("code", f"http_{status}")
        self.message: str = body.get("message", "")
        self.param: Optional[str] = body.get("param")
        self.request_id: Optional[str] = body.get("request_id") or (headers.get("x-request-id") if headers else None)
        self.doc_url: Optional[str] = body.get("doc_url")
        ra = headers.get("retry-after") if headers else None
        self.retry_after_s: Optional[int] = int(ra) if ra and ra.isdigit() else None
        #: The whole `error` object, including `upgrade_url`, `pages`, `remaining` when present.
        self.body = body

    @classmethod
    def from_response(cls, res: httpx.Response) -> "ApiError":
        body: Optional[dict[str, Any]] = None
        try:
            parsed = json.loads(res.content)
            if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict) and isinstance(parsed["error"].get("code"), str):
                body = parsed["error"]
        except ValueError:
            pass
        if body is None:  # not the envelope (a proxy's page): still a typed error
            body = {"type": "api_error", "code": f"http_{res.status_code}", "message": res.text[:500] or res.reason_phrase, "param": None}
        return cls(res.status_code, body, res.headers)


class APIConnectionError(DocprocError):
    """The service could not be reached after the configured retries."""


class WaitTimeoutError(DocprocError):
    """`jobs.wait` gave up before the job reached a final state; the job keeps running."""

    def __init__(self, job_id: str, timeout_s: float):
        super().__init__(f"job {job_id} did not finish within {timeout_s} s (it keeps running; wait again or cancel it)")
        self.job_id = job_id
        self.timeout_s = timeout_s


class JobFailedError(DocprocError):
    """`jobs.run` found the job failed or cancelled; `code` is the job's error code."""

    def __init__(self, job: Any):
        err = job.error
        super().__init__(f"job {job.id} {job.status}" + (f": {err.code}: {err.message}" if err else ""))
        self.job = job
        self.code: Optional[str] = err.code if err else None


class WebhookVerificationError(DocprocError):
    """A webhook delivery whose signature or timestamp does not check out."""
