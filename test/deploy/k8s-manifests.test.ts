// The Kubernetes base (deploy/k8s) renders offline with `kubectl kustomize` and every resource
// validates against the Kubernetes API schemas with kubernetes-validate (strict: no unknown
// fields); the KEDA resources (a CRD that tool has no schema for) are checked here for the
// fields the worker autoscaling relies on. Skipped, with the reason, when kubectl or
// kubernetes-validate is missing (scripts/setup-test.sh installs kubernetes-validate).
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stopConfig } from "../../src/config";

const root = resolve(import.meta.dir, "../..");
const validateBin = [
  process.env.KUBERNETES_VALIDATE,
  "/var/cache/docproc/venv-k8s/bin/kubernetes-validate",
  Bun.which("kubernetes-validate"),
].find((p) => p && existsSync(p));
const kubectl = Bun.which("kubectl");
const missing = [!kubectl && "kubectl", !validateBin && "kubernetes-validate"].filter(Boolean).join(" and ");
if (missing)
  console.log(
    `SKIP: k8s manifests: ${missing} not installed (scripts/setup-test.sh installs kubernetes-validate; kubectl from your distribution)`,
  );

function run(argv: string[]): { code: number; out: string; err: string } {
  const p = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

describe.skipIf(!!missing)("deploy/k8s", () => {
  const rendered = missing ? { code: -1, out: "", err: "" } : run([kubectl!, "kustomize", join(root, "deploy/k8s")]);
  const docs = rendered.out
    .split(/^---$/m)
    .map((d) => Bun.YAML.parse(d) as any)
    .filter(Boolean);
  const byKind = (kind: string, name?: string) =>
    docs.find((d) => d.kind === kind && (!name || d.metadata?.name === name));

  test("kubectl kustomize renders the base offline", () => {
    expect(rendered.err).toBe("");
    expect(rendered.code).toBe(0);
    expect(docs.map((d) => `${d.kind}/${d.metadata.name.replace(/-[a-z0-9]{10}$/, "")}`).sort()).toEqual(
      [
        "ConfigMap/docproc",
        "Deployment/docproc-api",
        "Deployment/docproc-worker",
        "Job/docproc-migrate",
        "Namespace/docproc",
        "PodDisruptionBudget/docproc-api",
        "ScaledObject/docproc-worker",
        "Service/docproc-api",
        "TriggerAuthentication/docproc-postgres",
      ].sort(),
    );
  });

  test("every built-in resource validates strictly against the Kubernetes schemas (kubernetes-validate)", () => {
    const dir = mkdtempSync(join(tmpdir(), "k8s-"));
    try {
      const file = join(dir, "rendered.yaml");
      writeFileSync(file, rendered.out);
      const r = run([validateBin!, "--strict", "--quiet", file]);
      expect(r.out + r.err).not.toMatch(/ERROR|failed/i);
      expect(r.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the workers scale on the queue query with KEDA's postgresql scaler, authenticated from the Secret", () => {
    const so = byKind("ScaledObject", "docproc-worker");
    expect(so.spec.scaleTargetRef.name).toBe("docproc-worker");
    const trigger = so.spec.triggers[0];
    expect(trigger.type).toBe("postgresql");
    expect(trigger.metadata.query).toMatch(/FROM jobs WHERE status IN \('queued', 'running'\)/);
    expect(Number(trigger.metadata.targetQueryValue)).toBeGreaterThan(0);
    const auth = byKind("TriggerAuthentication", trigger.authenticationRef.name);
    expect(auth.spec.secretTargetRef).toEqual([{ parameter: "connection", name: "docproc", key: "DATABASE_URL" }]);
  });

  test("pods run non-root on a read-only root with probes, requests, and grace above the supervisor's kill deadline", () => {
    for (const name of ["docproc-api", "docproc-worker"]) {
      const pod = byKind("Deployment", name).spec.template.spec;
      const c = pod.containers[0];
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
      expect(c.readinessProbe).toBeDefined();
      expect(c.livenessProbe).toBeDefined();
      expect(c.resources.requests.memory).toBeDefined();
      // The supervisor kills what still runs after stopConfig.killAfterMs (a worker's stop grace
      // plus its hand-back); Kubernetes' SIGKILL must come later.
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(stopConfig.killAfterMs);
      expect(c.envFrom).toContainEqual({ secretRef: { name: "docproc" } });
    }
    expect(byKind("Deployment", "docproc-api").spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe(
      "/readyz",
    );
  });
});
