"""The Python client's object-store calls (issue 17, after issue 13): files.upload_presigned gives a
ready file a rotate job works on, a 503 of the store on the PUT is retried, jobs.result_url's
presigned GET gives the same bytes as the normal download, and a service without an object store
answers both with ApiError 501 presigned_unavailable."""
from __future__ import annotations

import shutil
import time
from datetime import datetime

import httpx
import pytest

import docproc
from docproc import ApiError

from conftest import text_pdf
from test_client import page_rotations

TWO_PAGES = text_pdf([["PRESIGNED 1"], ["PRESIGNED 2"]])


def test_upload_presigned_path_is_ready_and_a_rotate_job_turns_both_pages(s3_client, tmp_path):
    src = tmp_path / "two.pdf"
    src.write_bytes(TWO_PAGES)
    f = s3_client.files.upload_presigned(src)
    assert (f.status, f.type, f.page_count, f.filename, f.size_bytes) == ("ready", "pdf", 2, "two.pdf", len(TWO_PAGES))
    job, result = s3_client.jobs.run({"operation": "rotate", "file_id": f.id, "options": {"degrees": 90}})
    assert job.status == "succeeded"
    assert isinstance(result, bytes) and result[:5] == b"%PDF-"
    if shutil.which("pdfinfo"):  # poppler-utils reads the page rotations
        assert page_rotations(result, tmp_path) == [90, 90]


def test_upload_presigned_puts_exactly_upload_headers_and_retries_a_503_of_the_store(s3_endpoint, s3_base_url, s3_key):
    puts: list[httpx.Request] = []
    real = httpx.HTTPTransport()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "PUT":
            puts.append(request)
            if len(puts) == 1:
                return httpx.Response(503, headers={"retry-after": "0"}, text="busy")
        return real.handle_request(request)

    with docproc.Client(s3_key, s3_base_url, initial_retry_delay_s=0.05, transport=httpx.MockTransport(handler)) as c:
        f = c.files.upload_presigned(TWO_PAGES, filename="bytes.pdf")
    assert (f.status, f.page_count, f.filename, f.content_type) == ("ready", 2, "bytes.pdf", "application/pdf")
    assert len(puts) == 2
    assert str(puts[1].url).startswith(s3_endpoint)
    assert "authorization" not in puts[1].headers  # the API key never goes to the store


def test_result_url_bytes_equal_the_normal_download_and_expire_within_15_minutes(s3_client, s3_endpoint):
    f = s3_client.files.upload(TWO_PAGES, filename="in.pdf")
    job, result = s3_client.jobs.run({"operation": "rotate", "file_id": f.id, "options": {"degrees": 180}})
    link = s3_client.jobs.result_url(job.id)
    assert (link.object, link.job_id, link.content_type, link.bytes) == ("job_result_url", job.id, "application/pdf", len(result))
    assert link.url.startswith(s3_endpoint)
    ttl = datetime.fromisoformat(link.expires_at.replace("Z", "+00:00")).timestamp() - time.time()
    assert 0 < ttl <= 15 * 60
    res = httpx.get(link.url)
    assert res.status_code == 200 and res.content == result


def test_without_an_object_store_upload_presigned_and_result_url_are_501_presigned_unavailable(client, invoice_pdf):
    with pytest.raises(ApiError) as up:
        client.files.upload_presigned(invoice_pdf, filename="in.pdf")
    assert (up.value.status, up.value.code) == (501, "presigned_unavailable")
    f = client.files.upload(invoice_pdf, filename="in.pdf")
    job = client.jobs.wait(client.jobs.create({"operation": "rotate", "file_id": f.id, "options": {"degrees": 90}}).id, timeout=60)
    assert job.status == "succeeded"
    with pytest.raises(ApiError) as url:
        client.jobs.result_url(job.id)
    assert (url.value.status, url.value.code) == (501, "presigned_unavailable")
