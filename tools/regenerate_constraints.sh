#!/usr/bin/env bash
# Regenerate constraints.txt: install agentworld[all,test] into a fresh virtual environment with the newest
# releases its ranges allow, and record the exact set. Run the suite on the new set before committing it.
#   bash tools/regenerate_constraints.sh            (about two minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(mktemp -d)/venv
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q -U pip
"$venv/bin/python" -m pip install -q ".[all,test]"
{
  cat <<'HEADER'
# The exact set of packages CI tests with (.ci/run installs with `-c constraints.txt`): agentworld[all,test]
# on CPython 3.11, Linux x86_64. pyproject.toml holds the ranges a user's install may take; this file holds
# one tested point inside them, so that a CI run is reproducible. The real-model extra pins its own two
# packages exactly (pyproject.toml); their dependencies follow pip's choice.
# Regenerate it with `bash tools/regenerate_constraints.sh` (a fresh venv, the newest releases the ranges
# allow, `pip freeze`), run the suite, and commit it. CI's "newest" step installs without this file, so a
# range that admits a broken release fails there, not here.
HEADER
  "$venv/bin/python" -m pip freeze --all --exclude-editable | grep -vE '^(pip|agentworld)( |==|@)'
} > constraints.txt
rm -rf "$(dirname "$venv")"
echo "constraints.txt: $(grep -vc '^#' constraints.txt) packages"
