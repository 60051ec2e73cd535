# A `lines:` plug-in engine for chatplate compare: minijinja-py (MiniJinja's Python
# binding, from PyPI) set up as chatplate's `minijinja` and `minijinja@2` engines set up
# MiniJinja (trim_blocks, lstrip_blocks, raise_exception, strftime_now on the session's
# clock; minijinja-py has pycompat's methods built in). It checks those engines against
# the same MiniJinja version built by someone else: scripts/verify_minijinja.py runs it
# over a corpus beside them.
#
# Usage: --engine 'lines:PYTHON scripts/minijinja_py_engine.py' with a PYTHON that has
# `pip install minijinja==VERSION`.
import datetime
import json
import sys
from importlib.metadata import version

from minijinja import Environment


def raise_exception(message):
    raise RuntimeError(message)


def answer(request):
    clock = request.get("clock")
    now = datetime.datetime.fromisoformat(clock) if clock else datetime.datetime.now()
    env = Environment(trim_blocks=True, lstrip_blocks=True)
    env.add_function("raise_exception", raise_exception)
    env.add_function("strftime_now", lambda fmt: now.strftime(fmt))
    context = dict(request["variables"])
    context.update(messages=request["messages"], tools=request["tools"],
                   documents=request["documents"],
                   add_generation_prompt=request["add_generation_prompt"])
    out = {"version": "minijinja-py " + version("minijinja")}
    try:
        out["prompt"] = env.render_str(request["template"], **context)
    except BaseException as err:  # noqa: BLE001 - a panic in the binding is its error too
        out["error"] = {"type": type(err).__name__, "message": str(err)}
    return out


for line in sys.stdin:
    print(json.dumps(answer(json.loads(line))), flush=True)
