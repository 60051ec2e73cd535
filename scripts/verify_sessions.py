#!/usr/bin/env python3
"""Verify the sessions' recorded `expected` against the reference: Hugging Face transformers.

For each session (default: sessions/*.json) this renders the same inputs with
`transformers.utils.chat_template_utils.render_jinja_template` and compares the prompt byte for
byte with `expected.prompt`; when the session expects an error it checks that transformers
raises too (and says so when the expected fragment is not in transformers' message, since
chatplate's wording of non-`raise_exception` errors differs from Python's).

Inputs are prepared the way `apply_chat_template` prepares them: top-level message keys whose
value is null are dropped; `bos_token`/`eos_token` are passed as template variables and the
session's `variables` win over them; `strftime_now` sees the session's fixed `clock`.

Usage: python3 scripts/verify_sessions.py [SESSION.json ...]
Prints "N passed, N failed" and exits 1 if any session disagrees.
"""

import datetime as _dt
import glob
import json
import os
import sys

import transformers.utils.chat_template_utils as ctu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLED_DIR = os.path.join(ROOT, "templates")


def fixed_datetime(clock):
    """A `datetime` class whose now() is the session clock (naive, like strftime_now uses)."""
    fixed = _dt.datetime.fromisoformat(clock)

    class FixedDatetime(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return fixed if tz is None else fixed.replace(tzinfo=tz)

    return FixedDatetime


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def config_templates(path):
    """The chat templates of a tokenizer_config.json: {name or None: source}, plus its tokens."""
    config = json.loads(read(path))
    entries = config.get("chat_template")
    if isinstance(entries, str):
        return {None: entries}
    return {entry["name"]: entry["template"] for entry in entries}


def template_source(ref, session_dir):
    """The template text a session's `template` reference names."""
    if "bundled" in ref:
        return read(os.path.join(BUNDLED_DIR, ref["bundled"] + ".jinja"))
    if "source" in ref:
        return ref["source"]
    if "named" in ref:
        path = os.path.join(session_dir, ref["named"]["path"])
        return config_templates(path)[ref["named"]["name"]]
    path = os.path.join(session_dir, ref["path"])
    if path.endswith(".json"):
        templates = config_templates(path)
        return templates[None] if None in templates else templates["default"]
    return read(path)


def render(session, session_dir):
    """Renders a session with transformers; returns the prompt or raises."""
    messages = [{k: v for k, v in m.items() if v is not None} for m in session["messages"]]
    kwargs = {}
    for token in ("bos_token", "eos_token"):
        if token in session:
            kwargs[token] = session[token]
    kwargs.update(session.get("variables", {}))
    real_datetime = ctu.datetime
    if session.get("clock"):
        ctu.datetime = fixed_datetime(session["clock"])
    try:
        rendered, _ = ctu.render_jinja_template(
            conversations=[messages],
            tools=session.get("tools"),
            documents=session.get("documents"),
            chat_template=template_source(session["template"], session_dir),
            add_generation_prompt=session.get("add_generation_prompt", False),
            continue_final_message=session.get("continue_final_message", False),
            **kwargs,
        )
    finally:
        ctu.datetime = real_datetime
    return rendered[0]


def first_difference(a, b):
    index = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return index, a[max(0, index - 40) : index + 40], b[max(0, index - 40) : index + 40]


def verify(path):
    """Returns None when the session agrees with transformers, else what differs."""
    session = json.loads(read(path))
    expected = session.get("expected")
    if expected is None:
        return 'no "expected" recorded'
    try:
        prompt = render(session, os.path.dirname(path))
    except Exception as err:  # the reference raised: right only if an error was expected
        if "error" not in expected:
            return f"transformers raised {type(err).__name__}: {err}"
        if expected["error"] not in str(err):
            print(f"note {path}: both raise; transformers says {type(err).__name__}: {err}")
        return None
    if "error" in expected:
        return f"expected an error, transformers rendered {prompt[:200]!r}..."
    if prompt != expected["prompt"]:
        at, want, got = first_difference(expected["prompt"], prompt)
        return f"prompt differs at character {at}:\n  chatplate:    {want!r}\n  transformers: {got!r}"
    return None


def main(argv):
    paths = argv or sorted(glob.glob(os.path.join(ROOT, "sessions", "*.json")))
    failed = 0
    for path in paths:
        problem = verify(path)
        if problem is None:
            print(f"ok {os.path.relpath(path, ROOT)}")
        else:
            failed += 1
            print(f"FAIL {os.path.relpath(path, ROOT)}: {problem}")
    print(f"{len(paths) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
