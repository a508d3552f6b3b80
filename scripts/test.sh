#!/usr/bin/env bash
# The tests: first that no file points outside the repository; then, with
# what they need installed when missing: Debian's headless
# Chromium and its WebDriver for the browser test (tests/tests/browser.rs),
# and OpenMPI (with libclang, for the bindings) for the MPI tests
# (tests/tests/mpi.rs). Then every test of the workspace, and the MPI tests
# with awari-solve built with the `mpi` feature into a target directory of
# its own (so that the default binaries stay as they are).
set -euo pipefail
cd "$(dirname "$0")/.."
# The repository stands alone: no file may point at a folder beside it.
if grep -rnIE '\.\./(\.\./)?shared' --exclude-dir=.git --exclude-dir=target --exclude=test.sh .; then
  echo "error: the files above refer to a folder outside the repository" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
command -v mpirun > /dev/null || missing+=(openmpi-bin)
[ -e /usr/include/x86_64-linux-gnu/openmpi/mpi.h ] || [ -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] \
  || missing+=(libopenmpi-dev)
ls /usr/lib/llvm-*/lib/libclang.so* > /dev/null 2>&1 || missing+=(libclang-dev)
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
cargo test --workspace --release
# An absolute path: the tests run in their own crate's folder.
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
cargo build --release -q -p awari-solver -p awari-probe \
  --features awari-solver/mpi,awari-probe/mpi --target-dir "$target/mpi"
AWARI_MPI_BIN="$target/mpi/release" cargo test --release -p awari-tests --test mpi -- --ignored
scripts/test-python.sh
