"""Render-only instruction counts (callgrind), chatplate against minijinja-py.

Counts instructions, not time, so machine load does not change the figures. Each case is
a corpus template with `conversation(n, call_content="")` and its tool (the inputs of
scripts/bench_vs_transformers.py):

* chatplate: `target/release/examples/render_once` (build it first:
  `cargo build --release -p chatplate-render --example render_once`), counted only inside
  its `render_once` function (callgrind `--toggle-collect`): the conversation turned into
  template values and the template run, with the metered allocator installed.
* minijinja-py (the same MiniJinja, pycompat on, transformers' `tojson` as a Python
  filter): this script's `--minijinja` mode run twice under callgrind, with and without
  the render call; the difference is the render.

Usage: python scripts/count_render.py [--sizes 1000,10000] [--models Qwen3,gpt-oss]
Prints a Markdown table; notes when the two prompts differ. Needs valgrind and
`pip install minijinja`. Gemma-4 at 10,000 messages takes many minutes under callgrind.

`--check` (CI, `.ci/run`): every dev template at `--sizes` (default 100 messages), and
exit 1 when chatplate's render counts more instructions than minijinja-py's on any
template both render alike (a template minijinja-py refuses, or renders differently, is
listed and not compared). Instructions, not time: the same on any machine under any
load. Python runs with PYTHONHASHSEED=0, which makes its count repeat to within a few
hundred instructions (a 100-message render is about a million). The chatplate side is
`render_once` built as the binary is built (`cargo build --release -p chatplate-render
--features mimalloc --example render_once`: fat LTO, mimalloc). Both sides convert the
conversation at each render (minijinja-py wraps its Python objects), so the count is a
stricter bar than `bench`'s warm renders.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_conversation import TOOLS, conversation, template_variables  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT.parent / "shared" / "conformance" / "dev" / "templates"
OUT = ROOT / "target" / "render-counts"
RENDER_ONCE = ROOT / "target" / "release" / "examples" / "render_once"
MODELS = {
    "Llama-3.1": "meta-llama-Llama-3.1-8B-Instruct",
    "Qwen3": "Qwen-Qwen3-0.6B",
    "gpt-oss": "openai-gpt-oss-120b",
    "DeepSeek-V3.1": "deepseek-ai-DeepSeek-V3.1",
    "Gemma-4": "google-gemma-4-31B-it",
}


def write_context(model, count):
    """The template path and a context file (messages, tools, tokens) for one case."""
    stem = MODELS.get(model, model)
    template = TEMPLATES / f"{stem}.jinja"
    meta = json.loads((TEMPLATES / f"{stem}.json").read_text())
    tokens = {"bos_token": meta.get("bos_token"), "eos_token": meta.get("eos_token"), **template_variables(meta)}
    context = {**tokens, "messages": conversation(count, call_content=""), "tools": TOOLS,
               "add_generation_prompt": True}
    path = OUT / f"{model}-{count}.context.json"
    path.write_text(json.dumps(context, ensure_ascii=False))
    return template, path


def callgrind(command, toggle=None):
    """Instructions callgrind counted for `command` (inside `toggle` only when given)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        if toggle:
            args.append(f"--toggle-collect={toggle}")
        # A fixed hash seed: Python's count then repeats to within a few hundred.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(args + command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"{command}: {done.stderr[-2000:]}")
        for line in out.read_text(errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"{command}: no totals in callgrind's output")


def minijinja_mode(template, context, render, print_prompt):
    """The counted Python side: compile in minijinja-py, then render when asked."""
    import minijinja

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        # transformers' own filter, verbatim in behaviour.
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime(2026, 1, 15, 0, 0, 0).strftime(fmt)

    def raise_exception(message):
        raise minijinja.TemplateError(message)

    env = minijinja.Environment(trim_blocks=True, lstrip_blocks=True, pycompat=True)
    env.add_filter("tojson", tojson)
    env.add_function("strftime_now", strftime_now)
    env.add_function("raise_exception", raise_exception)
    env.add_template("chat", Path(template).read_text())
    variables = json.loads(Path(context).read_text())
    if render:
        prompt = env.render_template("chat", **variables)
        if print_prompt:
            sys.stdout.write(prompt)


def prompts_agree(binary, template, context):
    """Whether chatplate and minijinja-py print the same prompt (run natively)."""
    ours = subprocess.run([str(binary), str(template), str(context), "--print"], capture_output=True)
    theirs = subprocess.run([sys.executable, __file__, "--minijinja", str(template), str(context), "--print"],
                            capture_output=True)
    return ours.returncode == 0 and theirs.returncode == 0 and ours.stdout == theirs.stdout


def counts(binary, model, count):
    """(minijinja-py's render count, chatplate's, whether the prompts agree)."""
    template, context = write_context(model, count)
    ours = callgrind([str(binary), str(template), str(context)], toggle="render_once::render_once")
    python = [sys.executable, __file__, "--minijinja", str(template), str(context)]
    theirs = callgrind(python) - callgrind(python + ["--no-render"])
    return theirs, ours, prompts_agree(binary, template, context)


def count_case(binary, model, count):
    theirs, ours, same = counts(binary, model, count)
    note = "" if same else " (prompts differ)"
    return f"| {model} {count:,} | {theirs / 1e6:,.1f} M{note} | {ours / 1e6:,.1f} M | {ours / theirs:.2f} |"


def check(binary, sizes):
    """`--check`: every dev template; 1 when chatplate counts more than minijinja-py."""
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode != 0:
        print("valgrind is missing: the instruction-count check cannot run", file=sys.stderr)
        return 1
    try:
        import minijinja  # noqa: F401  (the other side, in this Python)
    except ImportError:
        print(f"{sys.executable} has no minijinja (pip install minijinja==3.1.0)", file=sys.stderr)
        return 1
    if not binary.exists():
        print(f"{binary} is missing (cargo build --release -p chatplate-render --features "
              "mimalloc --example render_once)", file=sys.stderr)
        return 1
    stems = sorted(path.stem for path in TEMPLATES.glob("*.jinja"))
    if not stems:
        print(f"no templates in {TEMPLATES}", file=sys.stderr)
        return 1
    above, compared, left_out = [], 0, []
    print("| Case | minijinja-py | chatplate | chatplate / minijinja-py |\n|---|---|---|---|")
    for stem in stems:
        for size in sizes:
            try:
                theirs, ours, same = counts(binary, stem, size)
            except RuntimeError as err:
                # One side raised: the reference refuses the conversation, or minijinja-py
                # does where Python does not (COMPATIBILITY.md lists why).
                said = [line for line in str(err).splitlines() if "Error" in line and not line.startswith("==")]
                left_out.append(f"{stem} at {size:,}: raises ({(said or ['?'])[-1].strip()[:100]})")
                continue
            if not same:
                left_out.append(f"{stem} at {size:,}: minijinja-py's prompt differs")
                continue
            compared += 1
            ratio = ours / theirs
            print(f"| {stem} {size:,} | {theirs / 1e6:,.2f} M | {ours / 1e6:,.2f} M | {ratio:.3f} |", flush=True)
            if ours > theirs:
                above.append(f"{stem} at {size:,}: {ours:,} instructions against minijinja-py's {theirs:,} ({ratio:.3f}x)")
    if compared == 0:
        print("no render compared", file=sys.stderr)
        return 1
    print(f"\n{compared} renders compared; {len(left_out)} left out:")
    for line in left_out:
        print(f"  {line}")
    if above:
        print(f"\n{len(above)} renders count more instructions than minijinja-py's:")
        for line in above:
            print(f"  {line}")
        return 1
    print("every render compared counts at most minijinja-py's instructions")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--render-once", type=Path, default=RENDER_ONCE, help="the chatplate side's binary")
    parser.add_argument("--minijinja", nargs=2, metavar=("TEMPLATE", "CONTEXT"), help=argparse.SUPPRESS)
    parser.add_argument("--no-render", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--print", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true",
                        help="every dev template (--sizes, default 100); exit 1 when chatplate counts more")
    args = parser.parse_args()
    if args.minijinja:
        return minijinja_mode(*args.minijinja, not args.no_render, args.print)
    OUT.mkdir(parents=True, exist_ok=True)
    if args.check:
        sizes = [100] if args.sizes == parser.get_default("sizes") else [int(s) for s in args.sizes.split(",")]
        return check(args.render_once, sizes)
    print("| Case | minijinja-py | chatplate | chatplate / minijinja-py |\n|---|---|---|---|")
    for model in args.models.split(","):
        for size in args.sizes.split(","):
            print(count_case(args.render_once, model, int(size)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
