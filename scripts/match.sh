#!/usr/bin/env bash
# A match between two UCI-like Oware engines (or an engine and OpenSpiel's
# bots), refereed by OpenSpiel's `oware`: see scripts/match.py --help.
# Creates a virtual environment with open_spiel from PyPI if missing, in
# $MATCH_VENV (default: target/match-venv, ignored by git), then runs match.py.
#
#   scripts/match.sh --engine-a "CMD" --engine-b "CMD|openspiel:random|openspiel:mcts" \
#       [--movetime MS] [--openings N] [--seed S] [--json FILE] [--option-a NAME=VALUE]...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${MATCH_VENV:-${CARGO_TARGET_DIR:-$(dirname "$here")/target}/match-venv}
if ! "$venv/bin/python" -c 'import pyspiel' 2> /dev/null; then
  python=${PYTHON:-python3}
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip --disable-pip-version-check -q install open_spiel
fi
exec "$venv/bin/python" "$here/match.py" "$@"
