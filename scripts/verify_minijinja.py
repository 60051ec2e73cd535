#!/usr/bin/env python3
"""Checks chatplate's MiniJinja engines against minijinja-py of the same version.

For every fixture of FOLDER (an imported corpus: `chatplate import-corpus`), renders it
with chatplate's ENGINE and with scripts/minijinja_py_engine.py run by PYTHON (a Python
with `pip install minijinja==VERSION`), and counts the cases where both give the same
prompt, or both fail, against those where they part. Prints the first few that part.

    python3 scripts/verify_minijinja.py CHATPLATE FOLDER ENGINE PYTHON
    python3 scripts/verify_minijinja.py target/release/chatplate /tmp/dev minijinja@2 /tmp/mj2/bin/python
"""
import json
import pathlib
import subprocess
import sys

chatplate, folder, engine, python = sys.argv[1:5]
adapter = pathlib.Path(__file__).with_name("minijinja_py_engine.py").resolve()
plugin = f"lines:{python} {adapter}"
same = parted = 0
shown = []
for fixture in sorted(pathlib.Path(folder).rglob("*.json")):
    out = subprocess.run(
        [chatplate, "compare", str(fixture), "--template-root", folder, "--engine", engine, "--engine", plugin, "--json"],
        capture_output=True, text=True, env={"CHATPLATE_CONFIG": "/nonexistent", "PATH": "/usr/bin:/bin"},
    )
    try:
        renders = json.loads(out.stdout)["renders"]
    except ValueError:
        print(f"{fixture}: no report: {out.stderr.strip()[:200]}")
        continue
    ours, theirs = renders[1], renders[2]
    agree = ours.get("prompt") == theirs.get("prompt") and ("prompt" in ours or "error" in theirs)
    if agree:
        same += 1
    else:
        parted += 1
        shown.append((fixture, ours.get("prompt", ours.get("error")), theirs.get("prompt", theirs.get("error"))))
print(f"{engine} against {theirs['version']}: {same} cases agree, {parted} part")
for fixture, ours, theirs in shown:
    print(f"  {fixture.relative_to(folder)}\n    chatplate: {str(ours)[:120]!r}\n    minijinja-py: {str(theirs)[:120]!r}")
