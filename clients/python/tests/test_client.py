"""The Python client against the real service (issue 17): upload and rotate, compress, convert to
jpg and OCR blocks; a create whose response is lost is retried with the same key and makes one
job; a 429 is waited out; a webhook delivery verifies and a tampered one is refused; errors
arrive as ApiError with the envelope's fields."""
from __future__ import annotations

import io
import re
import shutil
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

import docproc
from docproc import APIConnectionError, ApiError, JobFailedError, WebhookVerificationError


def page_rotations(pdf: bytes, tmp_path) -> list[int]:
    path = tmp_path / "out.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdfinfo", "-f", "1", "-l", "1000", str(path)], capture_output=True, text=True).stdout
    return [int(m) for m in re.findall(r"^Page\s+\d+\s+rot:\s+(\d+)", out, re.M)]


@pytest.mark.skipif(shutil.which("pdfinfo") is None, reason="pdfinfo (poppler-utils) is needed to read page rotations")
def test_upload_path_then_run_rotate_turns_the_page(client, invoice_pdf, tmp_path):
    src = tmp_path / "invoice.pdf"
    src.write_bytes(invoice_pdf)
    f = client.files.upload(src)
    assert (f.object, f.type, f.page_count, f.filename) == ("file", "pdf", 1, "invoice.pdf")
    seen: list[str] = []
    job, result = client.jobs.run({"operation": "rotate", "file_id": f.id, "options": {"degrees": 90}}, on_progress=lambda j: seen.append(j.status))
    assert job.status == "succeeded" and seen[-1] == "succeeded"
    assert isinstance(result, bytes)
    assert page_rotations(result, tmp_path) == [90]


def test_compress_from_bytes_is_a_pdf_no_larger_than_the_input(client, invoice_pdf):
    f = client.files.upload(invoice_pdf, filename="in.pdf")
    job = client.jobs.create({"operation": "compress", "file_id": f.id, "options": {"level": "strong"}})
    done = client.jobs.wait(job.id, timeout=60)
    assert done.status == "succeeded"
    out = client.jobs.result(done.id)
    assert out[:5] == b"%PDF-" and len(out) <= len(invoice_pdf)


def test_convert_to_jpg_then_ocr_blocks_read_the_words_back(client, invoice_pdf):
    f = client.files.upload(io.BytesIO(invoice_pdf), filename="invoice.pdf")
    _, jpg = client.jobs.run({"operation": "convert", "file_id": f.id, "options": {"target": "jpg", "dpi": 150}})
    assert jpg[:3] == b"\xff\xd8\xff"
    image = client.files.upload(jpg, filename="page.jpg", content_type="image/jpeg")
    assert image.type == "jpeg"
    job, blocks = client.jobs.run({"operation": "ocr", "file_id": image.id, "options": {"output": "blocks"}}, timeout=120)
    assert job.result is not None and job.result.type == "json"
    assert len(blocks["pages"]) == 1 and blocks["pages"][0]["ocr"] is True
    text = blocks["pages"][0]["text"].upper()
    for word in ("INVOICE", "4821", "TOTAL", "PAID"):
        assert word in text
    assert client.jobs.result(job.id, "json") == blocks


def test_cancel_answers_the_job_and_a_failed_job_raises_job_failed_error(client, invoice_pdf):
    f = client.files.upload(invoice_pdf, filename="in.pdf")
    job = client.jobs.create({"operation": "compress", "file_id": f.id})
    assert client.jobs.cancel(job.id).id == job.id
    assert client.jobs.wait(job.id).status in ("cancelled", "succeeded")
    _, locked = client.jobs.run({"operation": "protect", "file_id": f.id, "options": {"user_password": "right"}})
    lf = client.files.upload(locked, filename="locked.pdf")
    with pytest.raises(JobFailedError) as e:
        client.jobs.run({"operation": "unlock", "file_id": lf.id, "options": {"password": "wrong"}})
    assert e.value.code == "invalid_options" and e.value.job.status == "failed"


def test_a_422_is_api_error_with_type_code_param_request_id_and_status(client, invoice_pdf):
    f = client.files.upload(invoice_pdf, filename="in.pdf")
    with pytest.raises(ApiError) as e:
        client.jobs.create({"operation": "rotate", "file_id": f.id, "options": {"degrees": 45}})
    err = e.value
    assert (err.status, err.type, err.code, err.param) == (422, "invalid_request_error", "invalid_options", "options.degrees")
    assert err.request_id and err.request_id.startswith("req_")


def test_an_unreachable_service_is_a_connection_error_after_the_retries():
    with docproc.Client("svk_test_x", "http://127.0.0.1:1/api/v1", initial_retry_delay_s=0.01) as c:
        with pytest.raises(APIConnectionError):
            c.jobs.get(str(uuid.uuid4()))


class LosesFirstJobResponse(httpx.HTTPTransport):
    """Forwards every request; the first POST /jobs reaches the service, then its response is 'lost'."""

    def __init__(self):
        super().__init__()
        self.posts: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        res = super().handle_request(request)
        if request.method == "POST" and request.url.path.endswith("/jobs"):
            self.posts.append(request.headers["idempotency-key"])
            if len(self.posts) == 1:
                res.read()
                res.close()
                raise httpx.ReadError("connection reset (simulated after the request was processed)", request=request)
        return res


def test_a_create_whose_response_is_lost_is_retried_with_the_same_key_and_makes_one_job(base_url, api_key, invoice_pdf):
    transport = LosesFirstJobResponse()
    with docproc.Client(api_key, base_url, transport=transport) as c:
        f = c.files.upload(invoice_pdf, filename="in.pdf")
        job = c.jobs.create({"operation": "rotate", "file_id": f.id, "options": {"degrees": 180}})
        assert len(transport.posts) == 2
        assert re.fullmatch(r"docproc-py-[0-9a-f-]{36}", transport.posts[0])
        assert transport.posts[1] == transport.posts[0]
        assert [j.id for j in c.jobs.list()] == [job.id]


def test_a_429_is_waited_out_and_the_call_succeeds(client, base_url, api_key):
    limited = None
    with httpx.Client() as raw:
        for _ in range(60):
            r = raw.get(f"{base_url}/account", headers={"authorization": f"Bearer {api_key}"})
            if r.status_code == 429:
                limited = r
                break
    assert limited is not None and limited.headers["retry-after"].isdigit()
    t0 = time.monotonic()
    assert client.request("GET", "/account").status_code == 200
    assert time.monotonic() - t0 >= 0.9


class Receiver(ThreadingHTTPServer):
    def __init__(self):
        self.hits: list[tuple[dict, bytes]] = []
        self.arrived = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers["content-length"]))
                outer.hits.append(({k.lower(): v for k, v in self.headers.items()}, raw))
                outer.arrived.set()
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


def test_a_webhook_delivery_verifies_and_a_tampered_one_is_refused(client, invoice_pdf):
    receiver = Receiver()
    try:
        created = client.request("POST", "/webhooks", json={"url": f"http://127.0.0.1:{receiver.server_port}/hook", "events": ["job.succeeded"]}).json()
        secret = created["secret"]
        f = client.files.upload(invoice_pdf, filename="in.pdf")
        job, _ = client.jobs.run({"operation": "rotate", "file_id": f.id, "options": {"degrees": 270}})
        assert receiver.arrived.wait(30), "no webhook delivery within 30 s"
        headers, raw = receiver.hits[0]
        header = headers["service-signature"]
        event = client.webhooks.verify(raw, header, secret)
        assert (event["object"], event["type"], event["livemode"], event["data"]["object"]["id"]) == ("event", "job.succeeded", False, job.id)
        assert docproc.verify_webhook(raw.decode(), header, secret)["id"] == event["id"]

        v1 = re.search(r"v1=([0-9a-f]+)", header).group(1)
        flipped = header.replace(v1, ("1" if v1[0] == "0" else "0") + v1[1:])
        for body, sig, key in [(raw, flipped, secret), (raw.replace(job.id.encode(), str(uuid.uuid4()).encode()), header, secret), (raw, header, secret + "x"), (raw, "t=1,v1=", secret)]:
            with pytest.raises(WebhookVerificationError):
                client.webhooks.verify(body, sig, key)
        t = int(re.search(r"t=(\d+)", header).group(1))
        with pytest.raises(WebhookVerificationError, match="tolerance"):
            client.webhooks.verify(raw, header, secret, now=t + 301)
        assert client.webhooks.verify(raw, header, secret, now=t + 299)["id"] == event["id"]
    finally:
        receiver.shutdown()
