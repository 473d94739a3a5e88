"""Typed models of the API's objects, written from the OpenAPI document (clients/openapi.json,
operations getFile and getJob). tests/test_models.py checks the fields against that document,
so a change of the served schema fails the suite. Unknown fields are kept in `raw`."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Optional, TypeVar

T = TypeVar("T")


def _build(cls: type[T], data: dict[str, Any], **nested: Any) -> T:
    names = {f.name for f in fields(cls)} - {"raw"}  # type: ignore[arg-type]
    values = {k: data.get(k) for k in names}
    values.update(nested)
    return cls(**values, raw=data)  # type: ignore[call-arg]


@dataclass
class File:
    id: str
    object: str
    filename: str
    content_type: str
    type: str
    size_bytes: int
    page_count: Optional[int]
    encrypted: bool
    status: str
    livemode: bool
    created_at: str
    expires_at: str
    raw: dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "File":
        return _build(cls, d)


@dataclass
class JobProgress:
    pages_done: int
    pages_total: int
    percent: int
    raw: dict[str, Any] = field(repr=False, default_factory=dict)


@dataclass
class JobCredits:
    billed: bool
    pages_estimated: int
    credits_per_page: int
    credits_reserved: int
    raw: dict[str, Any] = field(repr=False, default_factory=dict)


@dataclass
class JobResult:
    download_url: str
    pages_processed: int
    type: str
    filename: Optional[str]
    content_type: Optional[str]
    bytes: Optional[int]
    expires_at: Optional[str]
    raw: dict[str, Any] = field(repr=False, default_factory=dict)


@dataclass
class JobError:
    code: str
    message: str
    raw: dict[str, Any] = field(repr=False, default_factory=dict)


@dataclass
class Job:
    id: str
    object: str
    operation: str
    kind: str
    status: str
    file_id: Optional[str]
    file_ids: Optional[list[str]]
    options: dict[str, Any]
    metadata: dict[str, str]
    credits: JobCredits
    progress: JobProgress
    result: Optional[JobResult]
    error: Optional[JobError]
    sandbox: bool
    livemode: bool
    attempts: int
    created_at: str
    started_at: Optional[str]
    finished_at: Optional[str]
    raw: dict[str, Any] = field(repr=False, default_factory=dict)

    FINAL = ("succeeded", "failed", "cancelled")

    @property
    def finished(self) -> bool:
        return self.status in self.FINAL

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Job":
        return _build(
            cls,
            d,
            credits=_build(JobCredits, d["credits"]),
            progress=_build(JobProgress, d["progress"]),
            result=_build(JobResult, d["result"]) if d.get("result") else None,
            error=_build(JobError, d["error"]) if d.get("error") else None,
        )


@dataclass
class ResultUrl:
    """GET /jobs/{id}/result?format=url (README, Result URL; the OpenAPI document leaves this body undescribed)."""
    object: str
    job_id: str
    url: str
    expires_at: str
    filename: str
    content_type: str
    bytes: int
    raw: dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ResultUrl":
        return _build(cls, d)
