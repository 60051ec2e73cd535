# A `lines:` plug-in for chatplate's tests: a server in the style of those that render the
# chat template with Jinja2 and then tokenize the prompt with `tokenizer.encode(prompt)`,
# whose default `add_special_tokens=True` adds the tokenizer's BOS in front of the one the
# template printed (the double-BOS bug). It answers tokens, and the request's reference
# prompt tokenized with the same tokenizer (without adding special tokens, as the text
# already holds them).
#
# Usage: lines:PYTHON tokenizing_server.py TOKENIZER.json LOG; each request appends the
# process id to LOG, so the tests see how many processes served a report.
import json
import os
import sys

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

tokenizer = Tokenizer.from_file(sys.argv[1])
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)


def strings(ids):
    return [tokenizer.decode([i], skip_special_tokens=False) for i in ids]


def answer(request):
    prompt = env.from_string(request["template"]).render(
        messages=request["messages"], add_generation_prompt=request["add_generation_prompt"],
        **request["variables"])
    ids = tokenizer.encode(prompt, add_special_tokens=True).ids
    out = {"tokens": ids, "token_strings": strings(ids), "version": "jinja2 " + jinja2.__version__}
    if request["reference"] is not None:
        reference = tokenizer.encode(request["reference"], add_special_tokens=False).ids
        out["reference_tokens"] = reference
        out["reference_token_strings"] = strings(reference)
    return out


for line in sys.stdin:
    with open(sys.argv[2], "a") as log:
        log.write(f"{os.getpid()}\n")
    print(json.dumps(answer(json.loads(line))), flush=True)
