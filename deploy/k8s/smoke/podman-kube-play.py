# Turns the rendered base (`kubectl kustomize deploy/k8s`, on stdin) into what `podman kube play`
# can run against the compose stack, for scripts/test-containers.sh: the API and worker
# Deployments with one replica, the Secret's variables from the stack's env file as a ConfigMap
# (podman has no Secrets in kube play), the API on PORT inside the pod (no port mapping on a
# compose network). Writes api.yaml, worker.yaml and the two configmap-*.yaml into the directory argv[2].
import os, sys
import yaml

env_file, out = sys.argv[1], sys.argv[2]
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
cm = next(d for d in docs if d["kind"] == "ConfigMap")
env = dict(l.split("=", 1) for l in open(env_file).read().splitlines() if l and not l.startswith("#") and "=" in l)
secret_cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "docproc-secret"}, "data": env}
for name, role in (("docproc-api", "api"), ("docproc-worker", "worker")):
    dep = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == name)
    dep["spec"]["replicas"] = 1
    c = dep["spec"]["template"]["spec"]["containers"][0]
    c["envFrom"] = [{"configMapRef": {"name": "docproc-secret"}}, {"configMapRef": {"name": cm["metadata"]["name"]}}]
    c.pop("ports", None)
    if role == "api":
        c["readinessProbe"]["httpGet"]["port"] = 8080
        c["livenessProbe"]["tcpSocket"]["port"] = 8080
    yaml.safe_dump(dep, open(os.path.join(out, f"{role}.yaml"), "w"))
# One ConfigMap per file: podman 4.3 reads only the first document of each --configmap file.
yaml.safe_dump(cm, open(os.path.join(out, "configmap-settings.yaml"), "w"))
yaml.safe_dump(secret_cm, open(os.path.join(out, "configmap-secret.yaml"), "w"))
