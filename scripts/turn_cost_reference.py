#!/usr/bin/env python3
"""The turn cost of a session computed by the reference: transformers' apply_chat_template
renders each request and what the cache holds, and the same tokenizer.json tokenizes them.

For each user message that follows a reply (index u), as `chatplate inspect --turn-cost`
defines it:
* cached = apply_chat_template(messages[:u], add_generation_prompt=False): the
  conversation through the reply, as the server holds it once the reply was generated;
* request = apply_chat_template(messages[:u+1], add_generation_prompt=True);
* kept = the longest common prefix of their token ids
  (tokenizer(text, add_special_tokens=False)), re-processed = len(request) - kept.

The session's template source is used as the tokenizer's chat_template, its
bos_token/eos_token and variables are passed as keyword arguments, as chatplate passes
them. Prints the turns as JSON: [{"message": u + 1, "request": N, "kept": N,
"reprocessed": N}, ...] (message numbers 1-based, as the app shows them). With `-` for
the tokenizer, the renders are transformers' render_jinja_template and the counts are
UTF-8 bytes (chatplate without a tokenizer).

With `--knob NAME VALUE` instead, prints what setting variable NAME to VALUE (JSON) does
to the session's prompt, as `chatplate knobs` reports a flip: {"at": N, "added": N,
"removed": N} in UTF-8 bytes (one changed stretch between the common prefix and suffix).

Usage: $CHATPLATE_PYTHON scripts/turn_cost_reference.py SESSION.json TOKENIZER_DIR
       $CHATPLATE_PYTHON scripts/turn_cost_reference.py SESSION.json --knob NAME VALUE
"""
import json
import sys

from transformers import AutoTokenizer
from transformers.utils.chat_template_utils import render_jinja_template


def turn_starts(messages):
    starts, replied = [], False
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "user":
            if replied:
                starts.append(index)
            replied = False
        elif role == "assistant":
            replied = True
    return starts


def common_prefix(a, b):
    kept = 0
    while kept < min(len(a), len(b)) and a[kept] == b[kept]:
        kept += 1
    return kept


def main():
    session = json.load(open(sys.argv[1]))
    source = session["template"]["source"]
    kwargs = dict(session.get("variables") or {})
    for key in ("bos_token", "eos_token"):
        if session.get(key) is not None:
            kwargs[key] = session[key]
    messages = session["messages"]

    def render(count, generation_prompt, **more):
        return render_jinja_template(
            conversations=[messages[:count]], tools=session.get("tools"), chat_template=source,
            add_generation_prompt=generation_prompt, **{**kwargs, **more})[0][0]

    if sys.argv[2] == "--knob":
        name, value = sys.argv[3], json.loads(sys.argv[4])
        generation = session.get("add_generation_prompt", False)
        now = render(len(messages), generation).encode()
        flipped = render(len(messages), generation, **{name: value}).encode()
        at = common_prefix(now, flipped)
        suffix = common_prefix(now[at:][::-1], flipped[at:][::-1])
        print(json.dumps({"at": at, "added": len(flipped) - at - suffix,
                          "removed": len(now) - at - suffix}))
        return
    if sys.argv[2] == "-":
        def ids(count, generation_prompt):
            return render(count, generation_prompt).encode()
    else:
        tokenizer = AutoTokenizer.from_pretrained(sys.argv[2])
        tokenizer.chat_template = source

        def ids(count, generation_prompt):
            text = tokenizer.apply_chat_template(
                messages[:count], tools=session.get("tools"), tokenize=False,
                add_generation_prompt=generation_prompt, **kwargs)
            return tokenizer(text, add_special_tokens=False)["input_ids"]

    turns = []
    for user in turn_starts(messages):
        cached, request = ids(user, False), ids(user + 1, True)
        kept = common_prefix(cached, request)
        turns.append({"message": user + 1, "request": len(request), "kept": kept,
                      "reprocessed": len(request) - kept})
    print(json.dumps(turns))


if __name__ == "__main__":
    main()
