# chatplate compare's `python` engine: renders one chat template with the user's own
# transformers (`render_jinja_template`, the function behind `apply_chat_template`).
# Reads one JSON object on stdin, writes one on stdout: {"prompt"} or {"error"}, with
# "version"; {"missing"} when transformers cannot be imported. With `--lines` (a corpus
# report), it reads one request a line and answers each on a line, so one Python serves
# the whole report.
#
# chatplate runs it isolated (`python -I`): neither the working folder nor PYTHON*
# variables reach sys.path, so nothing a fixture's folder holds is imported.
import datetime as _dt
import json
import os
import site
import sys


def add_user_site():
    # -I also leaves out the user's own site-packages (`pip install --user`). It is the
    # user's, not the folder's: add it back where Python itself would use it (not in a
    # virtual environment), after the installation's own.
    if sys.prefix != sys.base_prefix:
        return
    user = site.getusersitepackages()
    if isinstance(user, str) and os.path.isdir(user) and user not in sys.path:
        site.addsitedir(user)


def fixed_datetime(clock):
    fixed = _dt.datetime.fromisoformat(clock)

    class FixedDatetime(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return fixed if tz is None else fixed.replace(tzinfo=tz)

    return FixedDatetime


REAL_DATETIME = _dt.datetime


def render(ctu, data):
    ctu.datetime = REAL_DATETIME
    if data.get("clock"):
        ctu.datetime = fixed_datetime(data["clock"])
    cont = data.get("continue_final_message")
    rendered, _ = ctu.render_jinja_template(
        conversations=[data["messages"]],
        tools=data.get("tools"),
        documents=data.get("documents"),
        chat_template=data["template"],
        add_generation_prompt=data.get("add_generation_prompt", False),
        continue_final_message=True if cont == "content" else (cont or False),
        **data.get("variables", {}),
    )
    return rendered[0]


def answer(transformers, ctu, data):
    out = {"version": transformers.__version__}
    try:
        out["prompt"] = render(ctu, data)
    except Exception as err:  # noqa: BLE001 - the template's error is the answer
        out["error"] = f"{type(err).__name__}: {err}"
    return json.dumps(out)


def main():
    add_user_site()
    try:
        import transformers
        import transformers.utils.chat_template_utils as ctu
    except Exception as err:  # noqa: BLE001 - any import failure means "not installed"
        json.dump({"missing": f"{type(err).__name__}: {err}"}, sys.stdout)
        return
    if "--lines" in sys.argv:
        for line in sys.stdin.buffer:
            data = json.loads(line.decode("utf-8"))
            sys.stdout.write(answer(transformers, ctu, data) + "\n")
            sys.stdout.flush()
        return
    data = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdout.write(answer(transformers, ctu, data))


main()
