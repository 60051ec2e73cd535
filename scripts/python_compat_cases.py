#!/usr/bin/env python3
"""Fills in or verifies tests/python_compat/cases.json against the reference.

Each case is rendered with transformers' own `render_jinja_template` (the function
behind `apply_chat_template`), with the fixed clock the corpus uses. `--write` records
the outcome as `expected` (or `"error": true`); `--check` (default) fails on any drift.

Needs: pip install transformers==5.23.0 jinja2==3.1.6
"""
import json
import sys
from datetime import datetime
from pathlib import Path

import transformers.utils.chat_template_utils as ctu

CASES = Path(__file__).resolve().parent.parent / "tests" / "python_compat" / "cases.json"


class FixedClock(datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 1, 15, 0, 0, 0)


def render(case):
    ctu.datetime = FixedClock
    messages = [{k: v for k, v in m.items() if v is not None} for m in case.get("messages", [{"role": "user", "content": "hi"}])]
    try:
        out, _ = ctu.render_jinja_template(
            conversations=[messages],
            tools=case.get("tools"),
            chat_template=case["template"],
            add_generation_prompt=case.get("add_generation_prompt", False),
            continue_final_message=case.get("continue_final_message", False),
            **case.get("variables", {}),
        )
        return {"expected": out[0]}
    except Exception as exc:  # the reference raised: chatplate must raise too
        return {"error": True, "python_error": f"{type(exc).__name__}: {exc}"}


def main():
    write = "--write" in sys.argv
    cases = json.loads(CASES.read_text())
    drift = 0
    for case in cases:
        outcome = render(case)
        recorded = {k: case[k] for k in ("expected", "error", "python_error") if k in case}
        if write:
            for key in ("expected", "error", "python_error"):
                case.pop(key, None)
            case.update(outcome)
        elif recorded != outcome:
            drift += 1
            print(f"DRIFT {case['name']}: recorded {recorded!r}, reference {outcome!r}")
    if write:
        CASES.write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {len(cases)} cases")
    else:
        print(f"{len(cases) - drift} passed, {drift} failed")
        sys.exit(1 if drift else 0)


if __name__ == "__main__":
    main()
