"""The docproc client (sync, httpx): uploads, idempotent job creation retried on network errors,
429 and 503 with exponential backoff honouring Retry-After (stripe-node's policy), waiting,
results, cancellation and webhook verification. Errors are raised as ApiError."""
from __future__ import annotations

import os
import random
import time
import uuid
from pathlib import Path
from typing import IO, Any, Callable, Literal, Optional, Union, overload

import httpx

from . import webhooks as _webhooks
from .errors import APIConnectionError, ApiError, JobFailedError, WaitTimeoutError
from .models import File, Job, ResultUrl


class Client:
    """`Client(api_key, base_url)`; `base_url` ends in /api/v1."""

    def __init__(
        self,
        api_key: str,
        base_url: str,
        *,
        max_network_retries: int = 2,
        initial_retry_delay_s: float = 0.5,
        max_retry_delay_s: float = 5.0,
        max_retry_after_s: float = 60.0,
        timeout_s: float = 60.0,
        transport: Optional[httpx.BaseTransport] = None,
    ):
        if not api_key:
            raise ValueError("api_key is required")
        if not base_url:
            raise ValueError("base_url is required (it ends in /api/v1)")
        self.max_network_retries = max_network_retries
        self.initial_retry_delay_s = initial_retry_delay_s
        self.max_retry_delay_s = max_retry_delay_s
        self.max_retry_after_s = max_retry_after_s
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"authorization": f"Bearer {api_key}", "user-agent": "docproc-python/0.1.0"},
            timeout=timeout_s,
            transport=transport,
        )
        # The presigned PUT goes to the object store: no base URL, and never the API key.
        self._store = httpx.Client(timeout=timeout_s, transport=transport)
        self.files = Files(self)
        self.jobs = Jobs(self)
        self.webhooks = Webhooks()

    def close(self) -> None:
        self._http.close()
        self._store.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _backoff_s(self, retry: int, retry_after_s: Optional[int]) -> float:
        # stripe-node: exponential from the initial delay, capped, jittered to 50-100 %, never below the initial delay.
        s = min(self.initial_retry_delay_s * 2 ** (retry - 1), self.max_retry_delay_s)
        s = max(self.initial_retry_delay_s, s * 0.5 * (1 + random.random()))
        return s if retry_after_s is None else max(s, float(retry_after_s))

    def _retryable(self, res: httpx.Response) -> bool:
        if res.status_code in (429, 503):
            ra = res.headers.get("retry-after")
            return not (ra and ra.isdigit() and int(ra) > self.max_retry_after_s)
        if res.status_code == 409:  # only the conflict a retry resolves: the first request with this key still running
            try:
                return res.json().get("error", {}).get("code") == "idempotency_in_progress"
            except ValueError:
                return False
        return False

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Sends one API call with retries and returns the response; raises ApiError on an error status.
        Every attempt sends the same headers, so a POST /jobs retry carries the same Idempotency-Key."""
        return self._send(self._http, method, path, **kwargs)

    def _send(self, http: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
        retry = 0
        while True:
            try:
                res = http.request(method, path, **kwargs)
            except httpx.TransportError as e:
                if retry >= self.max_network_retries:
                    raise APIConnectionError(f"{method} {path} failed after {retry + 1} attempt(s): {e!r}") from e
                retry += 1
                time.sleep(self._backoff_s(retry, None))
                continue
            if res.is_success:
                return res
            if retry < self.max_network_retries and self._retryable(res):
                retry += 1
                ra = res.headers.get("retry-after")
                time.sleep(self._backoff_s(retry, int(ra) if ra and ra.isdigit() else None))
                continue
            raise ApiError.from_response(res)


def _read(file: Union[str, os.PathLike, bytes, IO[bytes]], filename: Optional[str]) -> tuple[bytes, Optional[str]]:
    """The bytes of a path, bytes or binary file object, and its name (given, else the path's or file's)."""
    if isinstance(file, (str, os.PathLike)):
        return Path(file).read_bytes(), filename or Path(file).name
    if isinstance(file, (bytes, bytearray)):
        return bytes(file), filename
    return file.read(), filename or os.path.basename(getattr(file, "name", "") or "") or None


class Files:
    def __init__(self, client: Client):
        self._c = client

    def upload(self, file: Union[str, os.PathLike, bytes, IO[bytes]], filename: Optional[str] = None, content_type: Optional[str] = None) -> File:
        """Uploads a path, bytes or a binary file object (multipart). The service decides the type from the bytes."""
        data, filename = _read(file, filename)
        part = (filename or "upload", data) if content_type is None else (filename or "upload", data, content_type)
        return File.from_dict(self._c.request("POST", "/files", files={"file": part}).json())

    def upload_presigned(self, file: Union[str, os.PathLike, bytes, IO[bytes]], filename: Optional[str] = None, content_type: Optional[str] = None) -> File:
        """Uploads through the object store (the service needs S3, else ApiError 501 presigned_unavailable):
        POST /files with {filename, content_type, size_bytes}, PUT the bytes to `upload.url` with exactly
        `upload.headers`, then POST /files/{id}/complete, which checks the object and returns the ready file.
        Each step is retried like every call (network errors, 429, 503; Retry-After honoured). `content_type`
        defaults to application/pdf for a .pdf name, else application/octet-stream (the service then goes by
        the extension)."""
        data, filename = _read(file, filename)
        name = filename or "upload"
        ctype = content_type or ("application/pdf" if name.lower().endswith(".pdf") else "application/octet-stream")
        created = self._c.request("POST", "/files", json={"filename": name, "content_type": ctype, "size_bytes": len(data)}).json()
        upload = created.get("upload")
        if not isinstance(upload, dict):
            raise ValueError("POST /files answered without `upload` (not a presigned answer)")
        self._c._send(self._c._store, upload["method"], upload["url"], content=data, headers=upload.get("headers") or {})
        return File.from_dict(self._c.request("POST", f"/files/{created['id']}/complete").json())

    def get(self, file_id: str) -> File:
        return File.from_dict(self._c.request("GET", f"/files/{file_id}").json())

    def delete(self, file_id: str) -> None:
        self._c.request("DELETE", f"/files/{file_id}")


class Jobs:
    def __init__(self, client: Client):
        self._c = client

    def create(self, request: dict[str, Any], *, idempotency_key: Optional[str] = None) -> Job:
        """Creates a job. Every attempt sends the same Idempotency-Key (generated when none is given),
        so a retry after a lost response or a 429/503 returns the first job, never a second."""
        key = idempotency_key or f"docproc-py-{uuid.uuid4()}"
        return Job.from_dict(self._c.request("POST", "/jobs", json=request, headers={"Idempotency-Key": key}).json())

    def get(self, job_id: str) -> Job:
        return Job.from_dict(self._c.request("GET", f"/jobs/{job_id}").json())

    def list(self, *, limit: Optional[int] = None, status: Optional[str] = None, starting_after: Optional[str] = None) -> list[Job]:
        params = {k: v for k, v in {"limit": limit, "status": status, "starting_after": starting_after}.items() if v is not None}
        return [Job.from_dict(j) for j in self._c.request("GET", "/jobs", params=params).json()["data"]]

    def cancel(self, job_id: str) -> Job:
        """Cancels a job; a finished job is returned unchanged."""
        return Job.from_dict(self._c.request("POST", f"/jobs/{job_id}/cancel").json())

    def wait(self, job_id: str, *, timeout: float = 600.0, on_progress: Optional[Callable[[Job], None]] = None, poll_interval: float = 0.5) -> Job:
        """Polls until the job is succeeded, failed or cancelled and returns it (no exception for failed).
        The interval grows by half each poll up to 5 s; raises WaitTimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        seen = None
        interval = poll_interval
        while True:
            job = self.get(job_id)
            state = (job.status, job.progress.pages_done, job.progress.pages_total)
            if state != seen:
                seen = state
                if on_progress:
                    on_progress(job)
            if job.finished:
                return job
            left = deadline - time.monotonic()
            if left <= 0:
                raise WaitTimeoutError(job_id, timeout)
            time.sleep(min(interval, left))
            interval = min(interval * 1.5, 5.0)

    @overload
    def result(self, job_id: str) -> bytes: ...
    @overload
    def result(self, job_id: str, format: Literal["download"]) -> bytes: ...
    @overload
    def result(self, job_id: str, format: Literal["json"]) -> dict[str, Any]: ...
    def result(self, job_id: str, format: str = "download") -> Union[bytes, dict[str, Any]]:
        """The result file's bytes, or with format="json" the OCR blocks (docs/ocr.md)."""
        res = self._c.request("GET", f"/jobs/{job_id}/result", params={"format": format})
        return res.json() if format == "json" else res.content

    def result_url(self, job_id: str) -> ResultUrl:
        """A presigned GET URL of the result (format=url; the service needs S3, else ApiError 501
        presigned_unavailable): url, expires_at (15 minutes, never past the result's expiry), filename,
        content_type, bytes. The URL needs no API key."""
        return ResultUrl.from_dict(self._c.request("GET", f"/jobs/{job_id}/result", params={"format": "url"}).json())

    def run(self, request: dict[str, Any], *, idempotency_key: Optional[str] = None, timeout: float = 600.0, on_progress: Optional[Callable[[Job], None]] = None) -> tuple[Job, Union[bytes, dict[str, Any]]]:
        """Creates the job, waits for it and returns (job, result): bytes for a file result, the parsed
        OCR blocks for a JSON one. Raises JobFailedError when the job failed or was cancelled."""
        job = self.wait(self.create(request, idempotency_key=idempotency_key).id, timeout=timeout, on_progress=on_progress)
        if job.status != "succeeded":
            raise JobFailedError(job)
        if job.result is not None and job.result.type == "json":
            return job, self.result(job.id, "json")
        return job, self.result(job.id)


class Webhooks:
    def verify(self, raw_body: Union[bytes, str], signature_header: Optional[str], secret: str, *, tolerance_s: int = 300, now: Optional[float] = None) -> dict[str, Any]:
        """Verifies `Service-Signature` over the raw body (constant time, timestamp within
        `tolerance_s`) and returns the event; raises WebhookVerificationError."""
        return _webhooks.verify(raw_body, signature_header, secret, tolerance_s=tolerance_s, now=now)
