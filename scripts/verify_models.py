#!/usr/bin/env python3
"""Differential check of model-folder templates: transformers 5.23 against chatplate.

For each session (default: tests/fixtures/model-sessions/*.json) whose template is a Hugging
Face model folder (or a file in one), this loads the folder with
`AutoTokenizer.from_pretrained(folder)` and renders with `tokenizer.apply_chat_template(...,
tokenize=False)`, naming the template the way the session does (a `named` reference, or the
file opened: `chat_template.jinja` is "default", `additional_chat_templates/NAME.jinja` is
NAME); otherwise transformers chooses (`tool_use` when there are tools). A folder whose
tokenizer has no template is a processor checkpoint: its template comes from
`ProcessorMixin.get_processor_dict(folder)` and is rendered as `processor.apply_chat_template`
does, with the tokenizer's special tokens.

The prompt is compared byte for byte with the session's `expected` and, when a chatplate
binary is given (default: target/debug/chatplate if built), with `chatplate render SESSION`.
An expected error must be raised by transformers too, with the expected fragment in its
message.

Usage: python3 scripts/verify_models.py [--bless] [--chatplate BIN] [SESSION.json ...]
  --bless   record transformers' prompt as each session's `expected` (errors are kept)
Prints "N passed, N failed"; exits 1 if any disagrees.
"""

import argparse
import glob
import json
import os
import subprocess
import sys

from transformers import AutoTokenizer
from transformers.processing_utils import ProcessorMixin
import transformers.utils.chat_template_utils as ctu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verify_sessions import ROOT, first_difference, fixed_datetime, read  # noqa: E402

SESSIONS = os.path.join(ROOT, "tests", "fixtures", "model-sessions")


def model_and_name(ref, session_dir):
    """The model folder a template reference points into, and the template name it pins."""
    if "named" in ref:
        path, name = os.path.join(session_dir, ref["named"]["path"]), ref["named"]["name"]
    elif "path" in ref:
        path, name = os.path.join(session_dir, ref["path"]), None
    else:
        raise ValueError(f"not a model-folder reference: {ref}")
    if os.path.isdir(path):
        return path, name
    folder, file = os.path.split(path)
    if os.path.basename(folder) == "additional_chat_templates":
        return os.path.dirname(folder), name or file.removesuffix(".jinja")
    if file == "chat_template.jinja":
        return folder, name or "default"
    return folder, name


def render(session, session_dir):
    """The prompt transformers renders for the session, or raises."""
    folder, name = model_and_name(session["template"], session_dir)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    if name == "default" and isinstance(tokenizer.chat_template, str):
        name = None  # a lone chat_template.jinja is a single template, not a named one
    messages = session["messages"]
    kwargs = {k: session[k] for k in ("bos_token", "eos_token") if k in session}
    kwargs.update(session.get("variables", {}))
    options = dict(
        tools=session.get("tools"),
        documents=session.get("documents"),
        add_generation_prompt=session.get("add_generation_prompt", False),
        continue_final_message=session.get("continue_final_message", False),
    )
    real_datetime = ctu.datetime
    if session.get("clock"):
        ctu.datetime = fixed_datetime(session["clock"])
    try:
        if tokenizer.chat_template is None:
            return processor_render(folder, name, tokenizer, messages, options, kwargs)
        return tokenizer.apply_chat_template(messages, chat_template=name, tokenize=False,
                                             **options, **kwargs)
    finally:
        ctu.datetime = real_datetime


def processor_render(folder, name, tokenizer, messages, options, kwargs):
    """`processor.apply_chat_template(..., tokenize=False)` without building the processor."""
    processor_dict, _ = ProcessorMixin.get_processor_dict(folder)
    templates = processor_dict.get("chat_template")
    if templates is None:
        raise ValueError("no chat template in the tokenizer or the processor files")
    if isinstance(templates, dict):
        templates = templates[name or "default"]
    messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
    rendered, _ = ctu.render_jinja_template(conversations=[messages], chat_template=templates,
                                            **options, **{**tokenizer.special_tokens_map, **kwargs})
    return rendered[0]


def chatplate_render(binary, path):
    # The model sessions name folders beside their own (`../models/...`); chatplate only
    # reads templates inside a session's folder unless told, so allow the fixtures tree.
    root = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    result = subprocess.run([binary, "render", "--template-root", root, path], capture_output=True)
    if result.returncode == 0:
        return result.stdout.decode("utf-8"), None
    return None, result.stderr.decode("utf-8", "replace")


def verify(path, binary, bless):
    """None when transformers, the fixture and chatplate agree, else what differs."""
    session = json.loads(read(path))
    expected = session.get("expected")
    try:
        prompt, error = render(session, os.path.dirname(path)), None
    except Exception as err:  # the reference raised
        prompt, error = None, f"{type(err).__name__}: {err}"
    if bless and prompt is not None:
        session["expected"] = {"prompt": prompt}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(session, f, indent=2, ensure_ascii=False)
            f.write("\n")
        expected = session["expected"]
    if expected is None:
        return 'no "expected" recorded (run with --bless)'
    if error is not None:
        if "error" not in expected:
            return f"transformers raised {error}"
        if expected["error"] not in error:
            return f"transformers raised, without {expected['error']!r}: {error}"
    elif "error" in expected:
        return f"expected an error, transformers rendered {prompt[:200]!r}"
    elif prompt != expected["prompt"]:
        at, want, got = first_difference(expected["prompt"], prompt)
        return f"expected prompt differs from transformers at {at}:\n  fixture:      {want!r}\n  transformers: {got!r}"
    if binary:
        ours, our_error = chatplate_render(binary, path)
        if (ours is None) != (prompt is None):
            return f"chatplate {'failed: ' + our_error if ours is None else 'rendered where transformers raised'}"
        if ours is not None and ours != prompt:
            at, want, got = first_difference(prompt, ours)
            return f"chatplate differs at {at}:\n  transformers: {want!r}\n  chatplate:    {got!r}"
    return None


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bless", action="store_true")
    parser.add_argument("--chatplate", default=os.path.join(ROOT, "target", "debug", "chatplate"))
    parser.add_argument("sessions", nargs="*")
    args = parser.parse_args(argv)
    binary = args.chatplate if os.path.isfile(args.chatplate) else None
    if binary is None:
        print(f"note: no chatplate binary at {args.chatplate}; comparing with the fixtures only")
    paths = args.sessions or sorted(glob.glob(os.path.join(SESSIONS, "*.json")))
    failed = 0
    for path in paths:
        problem = verify(path, binary, args.bless)
        label = os.path.relpath(path, ROOT)
        print(f"ok {label}" if problem is None else f"FAIL {label}: {problem}")
        failed += problem is not None
    print(f"{len(paths) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
