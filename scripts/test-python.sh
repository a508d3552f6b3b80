#!/usr/bin/env bash
# The Python package `awari` (probe/python): built and installed with pip
# (maturin, release) into a fresh virtual environment, with pytest, numpy and
# OpenSpiel from PyPI, then its tests (probe/python/tests), which compare its
# answers with those of awari-solve and awari-probe, built here first.
# About 3-5 minutes on 2 cores when the workspace is already built.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
export CARGO_TARGET_DIR="$target"
# The tools the tests compare with: those `cargo test --workspace --release`
# has just built when run from scripts/test.sh (building them again with
# `-p` would resolve other features and rebuild them for minutes), else built here.
if [ ! -x "$target/release/awari-solve" ] || [ ! -x "$target/release/awari-probe" ]; then
  cargo build --release -q -p awari-solver -p awari-probe
fi
python=${PYTHON:-python3}
if ! "$python" -m venv --help > /dev/null 2>&1 || ! "$python" -c 'import ensurepip' 2> /dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv
fi
venv="$target/python-test-venv"
rm -rf "$venv"
"$python" -m venv "$venv"
# (The build backend runs the venv's maturin.)
export PATH="$venv/bin:$PATH"
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install maturin pytest numpy
# OpenSpiel publishes wheels for some Python versions only; without one its
# tests skip, saying why.
if ! "${pip[@]}" install open_spiel; then
  echo "test-python.sh: warning: open_spiel cannot be installed for $("$venv/bin/python" --version);" \
    "the OpenSpiel tests will be skipped" >&2
fi
"${pip[@]}" install --no-build-isolation ./probe/python
cd probe/python
AWARI_BIN="$target/release" "$venv/bin/python" -m pytest -q -p no:cacheprovider tests
