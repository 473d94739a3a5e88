"""Fixtures for the client tests against the real service. tests/pytest.test.ts starts the
service and passes DOCPROC_BASE_URL and DOCPROC_API_KEYS (fresh sandbox keys, one per test:
each key has its own 30 requests/minute bucket). When Garage is installed it also starts a
second service backed by it and passes DOCPROC_S3_BASE_URL, DOCPROC_S3_API_KEYS and
DOCPROC_S3_ENDPOINT (the store's URL); without them the object-store tests skip."""
from __future__ import annotations

import os
from typing import Iterator

import pytest

import docproc


def text_pdf(pages: list[list[str]]) -> bytes:
    """A small PDF, one page per entry, each line in 36 pt Helvetica (large enough for OCR)."""
    objects: dict[int, str] = {}
    page_ids = [4 + i * 2 for i in range(len(pages))]
    objects[1] = "<< /Type /Catalog /Pages 2 0 R >>"
    objects[2] = f"<< /Type /Pages /Kids [{' '.join(f'{i} 0 R' for i in page_ids)}] /Count {len(pages)} >>"
    objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    for pid, lines in zip(page_ids, pages):
        stream = "\n".join(f"BT /F1 36 Tf 72 {700 - j * 60} Td ({line}) Tj ET" for j, line in enumerate(lines))
        objects[pid] = f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {pid + 1} 0 R >>"
        objects[pid + 1] = f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream"
    out = "%PDF-1.4\n"
    offsets = {}
    for oid in sorted(objects):
        offsets[oid] = len(out)
        out += f"{oid} 0 obj\n{objects[oid]}\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n" + "".join(f"{offsets[o]:010d} 00000 n \n" for o in sorted(objects))
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    return out.encode("latin-1")


@pytest.fixture(scope="session")
def base_url() -> str:
    url = os.environ.get("DOCPROC_BASE_URL")
    if not url:
        pytest.fail("DOCPROC_BASE_URL is not set: run these tests through clients/python/tests/pytest.test.ts (bun test), which starts the service")
    return url


_keys: Iterator[str] = iter(os.environ.get("DOCPROC_API_KEYS", "").split(","))


@pytest.fixture
def api_key() -> str:
    key = next(_keys, "")
    if not key:
        pytest.fail("DOCPROC_API_KEYS has no key left for this test; the harness creates one per test")
    return key


@pytest.fixture
def client(base_url: str, api_key: str) -> Iterator[docproc.Client]:
    with docproc.Client(api_key, base_url) as c:
        yield c


@pytest.fixture(scope="session")
def invoice_pdf() -> bytes:
    return text_pdf([["INVOICE 4821", "TOTAL PAID"]])


_s3_keys: Iterator[str] = iter(os.environ.get("DOCPROC_S3_API_KEYS", "").split(","))


@pytest.fixture(scope="session")
def s3_endpoint() -> str:
    endpoint = os.environ.get("DOCPROC_S3_ENDPOINT")
    if not endpoint:
        pytest.skip("no Garage-backed service (the harness starts one when Garage is installed; ./scripts/setup-test.sh installs it)")
    return endpoint


@pytest.fixture
def s3_key(s3_endpoint: str) -> str:
    key = next(_s3_keys, "")
    if not key:
        pytest.fail("DOCPROC_S3_API_KEYS has no key left for this test; the harness creates one per test")
    return key


@pytest.fixture
def s3_base_url(s3_endpoint: str) -> str:
    return os.environ["DOCPROC_S3_BASE_URL"]


@pytest.fixture
def s3_client(s3_base_url: str, s3_key: str) -> Iterator[docproc.Client]:
    """A client of the service backed by the object store, on a fresh sandbox key."""
    with docproc.Client(s3_key, s3_base_url, initial_retry_delay_s=0.05) as c:
        yield c
