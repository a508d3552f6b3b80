#!/usr/bin/env bash
# The tests, with what they need: Debian's headless Chromium and its WebDriver
# for the browser test (tests/tests/browser.rs), installed when missing; then
# every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  $sudo apt-get install -y -q chromium chromium-driver
fi
cargo test --workspace --release
