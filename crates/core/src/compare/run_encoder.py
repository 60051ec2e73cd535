# chatplate compare's `py:` engines: a vendor's Python encoder (a function taking the
# messages and keyword arguments and returning the prompt, as DeepSeek's encode_messages),
# called with the conversation. Reads one JSON request on stdin (the plug-in protocol, with
# "encoder": {"file" | "module", "function"}), writes {"prompt"} or {"error"} on stdout.
# With `--lines` (a corpus report), one request a line, the encoder loaded once.
#
# chatplate runs it isolated (`python -I`): the working folder and PYTHON* variables never
# reach sys.path. A file encoder's own folder is put first on sys.path, as `python FILE`
# would, so it imports its siblings.
import importlib
import importlib.util
import inspect
import json
import os
import sys


LOADED = {}


def load(encoder):
    key = (encoder.get("file"), encoder.get("module"), encoder["function"])
    if key not in LOADED:
        LOADED[key] = load_new(encoder)
    return LOADED[key]


def load_new(encoder):
    if "file" in encoder:
        path = encoder["file"]
        sys.path.insert(0, os.path.dirname(path))
        spec = importlib.util.spec_from_file_location("chatplate_encoder", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(encoder["module"])
    return getattr(module, encoder["function"]), getattr(module, "__version__", None)


def arguments(function, data):
    # The conversation's other inputs and the session's variables, each passed when the
    # function takes it by name (or takes **kwargs).
    offered = {
        "tools": data.get("tools"),
        "documents": data.get("documents"),
        "add_generation_prompt": data.get("add_generation_prompt", False),
        "continue_final_message": data.get("continue_final_message") or False,
    }
    offered.update(data.get("variables") or {})
    params = inspect.signature(function).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return offered
    return {key: value for key, value in offered.items() if key in params}


def answer(data):
    encoder = data["encoder"]
    try:
        function, version = load(encoder)
    except Exception as err:  # noqa: BLE001 - the user's module failing is the answer
        return {"missing": f"{type(err).__name__}: {err}"}
    out = {"version": f"{encoder['function']} {version}" if version else encoder["function"]}
    try:
        prompt = function(data["messages"], **arguments(function, data))
        if isinstance(prompt, str):
            out["prompt"] = prompt
        else:
            out["error"] = f"TypeError: {encoder['function']} returned {type(prompt).__name__}, not a string"
    except Exception as err:  # noqa: BLE001 - the encoder's error is the answer
        out["error"] = f"{type(err).__name__}: {err}"
    return out


def main():
    if "--lines" in sys.argv:
        for line in sys.stdin.buffer:
            sys.stdout.write(json.dumps(answer(json.loads(line.decode("utf-8")))) + "\n")
            sys.stdout.flush()
        return
    sys.stdout.write(json.dumps(answer(json.loads(sys.stdin.buffer.read().decode("utf-8")))))


main()
