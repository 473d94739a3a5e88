"""Verifies a webhook delivery: `Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`
compared in constant time, with a timestamp tolerance (Stripe's scheme)."""
from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any, Optional, Union

from .errors import WebhookVerificationError


def verify(raw_body: Union[bytes, str], signature_header: Optional[str], secret: str, tolerance_s: int = 300, now: Optional[float] = None) -> dict[str, Any]:
    """Checks the signature and returns the parsed event; raises WebhookVerificationError.
    `raw_body` must be the exact bytes received, before any JSON parsing."""
    if not signature_header:
        raise WebhookVerificationError("no Service-Signature header")
    t: Optional[str] = None
    signatures: list[str] = []
    for part in signature_header.split(","):
        k, _, v = part.strip().partition("=")
        if k == "t":
            t = v
        elif k == "v1":
            signatures.append(v)
    if not t or not t.isdigit() or not signatures:
        raise WebhookVerificationError("malformed Service-Signature header (expected t=<unix>,v1=<hex>)")
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else bytes(raw_body)
    expected = hmac.new(secret.encode("utf-8"), t.encode("ascii") + b"." + body, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected.encode("ascii"), s.lower().encode("utf-8")) for s in signatures):
        raise WebhookVerificationError("signature does not match the body and secret")
    current = time.time() if now is None else now
    if abs(current - int(t)) > tolerance_s:
        raise WebhookVerificationError(f"timestamp outside the tolerance of {tolerance_s} s")
    return json.loads(body)
