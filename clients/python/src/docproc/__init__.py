"""Python client for the docproc document processing API."""
from .client import Client, Files, Jobs, Webhooks
from .errors import APIConnectionError, ApiError, DocprocError, JobFailedError, WaitTimeoutError, WebhookVerificationError
from .models import File, Job, JobCredits, JobError, JobProgress, JobResult, ResultUrl
from .webhooks import verify as verify_webhook

__all__ = [
    "Client", "Files", "Jobs", "Webhooks",
    "ApiError", "APIConnectionError", "DocprocError", "JobFailedError", "WaitTimeoutError", "WebhookVerificationError",
    "File", "Job", "JobCredits", "JobError", "JobProgress", "JobResult", "ResultUrl", "verify_webhook",
]
