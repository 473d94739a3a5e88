"""The dataclass models follow the served OpenAPI document (clients/openapi.json, regenerated and
checked against the service by the TypeScript suite): every property of File and Job, and of the
Job's nested objects, is a field."""
import json
from dataclasses import fields
from pathlib import Path

from docproc import File, Job, JobCredits, JobError, JobProgress, JobResult

document = json.loads((Path(__file__).resolve().parents[2] / "openapi.json").read_text())


def response_schema(operation_id: str) -> dict:
    for item in document["paths"].values():
        for op in item.values():
            if op.get("operationId") == operation_id:
                return op["responses"]["200"]["content"]["application/json"]["schema"]
    raise KeyError(operation_id)


def names(cls) -> set:
    return {f.name for f in fields(cls)} - {"raw"}


def object_of(schema: dict) -> dict:
    """The object branch of `anyOf: [object, null]`."""
    return next(s for s in schema.get("anyOf", [schema]) if s.get("type") == "object")


def test_file_fields_equal_the_documented_properties():
    assert names(File) == set(response_schema("getFile")["properties"])


def test_job_fields_equal_the_documented_properties_including_nested_objects():
    job = response_schema("getJob")
    assert names(Job) == set(job["properties"])
    assert names(JobProgress) == set(job["properties"]["progress"]["properties"])
    assert names(JobCredits) == set(job["properties"]["credits"]["properties"])
    assert names(JobError) == set(object_of(job["properties"]["error"])["properties"])
    # `note` is optional in the document (a sandbox remark) and stays in JobResult.raw.
    documented = object_of(job["properties"]["result"])
    assert names(JobResult) == set(documented["required"])
    assert set(documented["properties"]) - set(documented["required"]) == {"note"}
