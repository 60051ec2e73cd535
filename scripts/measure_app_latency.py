#!/usr/bin/env python3
"""The app's latency as a user meets it: the real binary in a pseudo-terminal, timed from
the bytes it writes (no tmux in between, no polling of a screen capture).

For one session (or, with --all-templates, every dev template's 10,000-message session
from scripts/make_app_sessions.py --all --sizes 10000), it:

1. starts the binary on a copy of the session in a fresh pseudo-terminal (120x40 unless
   --size), and times **first prompt**: process start until the Prompt pane's title shows
   a render of the session (a line count, or an error mark, without `· stale`);
2. waits until the app is idle (its CPU time, utime + stime of all its threads from
   /proc/PID/stat, unchanged for 1 s; **open idle**), then presses `2` `g` `j` `e`:
   the Messages pane, its first message, the next one (message 2, an early message, so
   every edit renders the whole prompt again and the attribution runs again) and the
   content editor; waits for idle again;
3. types --keys characters, one every --interval ms (**typing**), or all in one write
   (--burst), while the renders and attributions they cause run; then
4. reports, per key, the **echo**: from the key written to the pty until the typed
   character is in the output (each key is a different Greek letter that is nowhere
   on the screen before, so its first byte sequence in the output is its echo): median,
   95th percentile and max; **prompt after last key**: until the title shows the last
   key's render (no `· stale`); **idle after last key**: until the CPU time stops
   changing for 1 s; and the CPU seconds used from the first key until idle.

The app has no frame clock: it draws a frame whenever something changed, right after
taking in every event that is ready (docs/app.md, "Never freezes"). "Within one frame"
is measured against the 16.7 ms budget of a 60 Hz display (BENCHMARKS.md's frame budget).

Output: one Markdown row per session, with the load average (1 min) before and after;
BENCHMARKS.md's rule: publish only when the load stays under 1.5. Python stdlib only.

Usage:
  python3 scripts/measure_app_latency.py target/release/chatplate SESSION [--size 80x24]
  python3 scripts/make_app_sessions.py --all --sizes 10000
  python3 scripts/measure_app_latency.py target/release/chatplate --all-templates [--only Qwen,Reka]
"""
import argparse
import fcntl
import os
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "target" / "app-sessions"
# 48 letters that no dev template, the generated conversation or the app's chrome
# shows: each key types the next one, so its first appearance in the output is its echo.
MARKS = "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ"
FRAME_MS = 1000 / 60
IDLE_FOR = 1.0
TICK = os.sysconf("SC_CLK_TCK")


class Screen:
    """Just enough of a terminal for what ratatui writes through crossterm: cursor moves
    (CUP, CUF and friends), erases, printed characters (wide ones take two cells); colours
    and modes are read and dropped. Frames are diffs, so titles must be read from a grid."""

    CSI = re.compile(rb"\x1b\[([0-9;?<=>]*)[ -/]*([@-~])")
    OSC = re.compile(rb"\x1b\].*?(?:\x07|\x1b\\)", re.S)

    def __init__(self, rows, cols):
        self.rows, self.cols = rows, cols
        self.grid = [[" "] * cols for _ in range(rows)]
        self.row = self.col = 0
        self.pending = b""

    def feed(self, data):
        data = self.pending + data
        self.pending = b""
        i = 0
        while i < len(data):
            byte = data[i]
            if byte == 0x1B:
                match = self.CSI.match(data, i) or self.OSC.match(data, i)
                if match is None:
                    if len(data) - i < 64:  # an escape cut off by the read: wait for the rest
                        self.pending = data[i:]
                        return
                    i += 2  # an escape this screen does not know (two bytes: ESC 7, ESC =)
                    continue
                if match.re is self.CSI:
                    self.control(match.group(1).decode(), chr(match.group(2)[0]))
                i = match.end()
            elif byte < 0x20:
                if byte == 0x0D:
                    self.col = 0
                elif byte == 0x0A:
                    self.row = min(self.row + 1, self.rows - 1)
                elif byte == 0x08:
                    self.col = max(self.col - 1, 0)
                i += 1
            else:
                length = 1 if byte < 0x80 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
                if i + length > len(data):
                    self.pending = data[i:]
                    return
                self.put(data[i:i + length].decode("utf-8", "replace"))
                i += length

    def control(self, params, final):
        if params.startswith("?"):
            return
        numbers = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else []
        first = numbers[0] if numbers else 0
        if final in "Hf":
            row = numbers[0] if numbers else 1
            col = numbers[1] if len(numbers) > 1 else 1
            self.row, self.col = min(max(row, 1), self.rows) - 1, min(max(col, 1), self.cols) - 1
        elif final == "C":
            self.col = min(self.col + max(first, 1), self.cols - 1)
        elif final == "D":
            self.col = max(self.col - max(first, 1), 0)
        elif final == "A":
            self.row = max(self.row - max(first, 1), 0)
        elif final == "B":
            self.row = min(self.row + max(first, 1), self.rows - 1)
        elif final == "G":
            self.col = min(max(first, 1), self.cols) - 1
        elif final == "J":
            if first == 2 or first == 3:
                self.grid = [[" "] * self.cols for _ in range(self.rows)]
            elif first == 0:
                self.grid[self.row][self.col:] = [" "] * (self.cols - self.col)
                for row in range(self.row + 1, self.rows):
                    self.grid[row] = [" "] * self.cols
        elif final == "K":
            if first == 0:
                self.grid[self.row][self.col:] = [" "] * (self.cols - self.col)
            elif first == 2:
                self.grid[self.row] = [" "] * self.cols

    def put(self, char):
        if unicodedata.combining(char):
            return
        wide = unicodedata.east_asian_width(char) in "WF"
        if self.col >= self.cols:
            return
        self.grid[self.row][self.col] = char
        if wide and self.col + 1 < self.cols:
            self.grid[self.row][self.col + 1] = ""
        self.col += 2 if wide else 1

    def text(self):
        return "\n".join("".join(row) for row in self.grid)


PROMPT_TITLE = re.compile(r"Prompt\b[^\n│]*?(?:\d[\d,]* lines?|✗)")


def prompt_shown(screen):
    """The Prompt pane's title shows a render of the current text (not `· stale`)."""
    for line in screen.text().split("\n"):
        if "Prompt" in line and PROMPT_TITLE.search(line) and "stale" not in line:
            return True
    return False


class App:
    """The binary in a pseudo-terminal; every byte it writes is timed."""

    def __init__(self, binary, session, size):
        self.cols, self.rows = size
        self.dir = Path(tempfile.mkdtemp(prefix="chatplate-latency-"))
        # A copy, so the recovery file the app writes when its terminal closes lands here
        # (beside the original it would ask its restore question at the next start).
        shutil.copy(session, self.dir / "session.json")
        (self.dir / "config").mkdir()
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", self.rows, self.cols, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(self.dir / "config")}
        for name in ("TMUX", "STY", "NO_COLOR"):
            env.pop(name, None)

        def controlling_terminal():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.started = time.monotonic()
        self.process = subprocess.Popen([os.path.abspath(binary), "session.json"], cwd=self.dir, env=env, stdin=slave,
                                        stdout=slave, stderr=slave, preexec_fn=controlling_terminal,
                                        close_fds=True)
        os.close(slave)
        self.master = master
        os.set_blocking(master, False)
        self.screen = Screen(self.rows, self.cols)
        self.output = bytearray()
        # (output length after each read, its arrival time): when each byte came.
        self.chunks = []
        self.last_cpu, self.cpu_changed = 0.0, self.started

    def read(self, timeout):
        """Reads what arrives within `timeout` s (and samples the CPU time); returns the
        time it arrived, or None."""
        ready, _, _ = select.select([self.master], [], [], max(timeout, 0))
        arrived = time.monotonic()
        self.sample_cpu(arrived)
        if not ready:
            return None
        try:
            data = os.read(self.master, 1 << 20)
        except (BlockingIOError, OSError):
            return None
        self.output += data
        self.chunks.append((len(self.output), arrived))
        self.screen.feed(data)
        return arrived

    def wait_until(self, condition, limit):
        """Reads until `condition()` holds; the time it first held, or None after `limit` s."""
        deadline = time.monotonic() + limit
        while not condition():
            if time.monotonic() > deadline or self.process.poll() is not None:
                return None
            self.read(min(0.02, deadline - time.monotonic()))
        return time.monotonic()

    def cpu(self):
        """The process's CPU seconds (user + system, all threads)."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return self.last_cpu
        return (int(fields[11]) + int(fields[12])) / TICK

    def sample_cpu(self, now):
        """Notes when the CPU time last changed (sampled at every read, at least every 20 ms
        while waiting)."""
        cpu = self.cpu()
        if cpu != self.last_cpu:
            self.last_cpu, self.cpu_changed = cpu, now

    def wait_idle(self, since, limit):
        """Reads until the CPU time has not changed for 1 s. Returns when it last changed
        (not before `since`), and whether idle came within `limit` s of `since`."""
        deadline = since + limit
        while time.monotonic() < deadline:
            self.read(0.02)
            if time.monotonic() - max(self.cpu_changed, since) >= IDLE_FOR:
                return max(self.cpu_changed, since), True
        return max(self.cpu_changed, since), False

    def send(self, text):
        os.write(self.master, text.encode())
        return time.monotonic()

    def close(self):
        try:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=10)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            self.process.kill()
            self.process.wait()
        while self.read(0.01) is not None:
            pass
        os.close(self.master)
        shutil.rmtree(self.dir, ignore_errors=True)


def percentile(values, fraction):
    """The value at `fraction` of the sorted values (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def measure(binary, session, args):
    """One run on `session`: a dict of figures (seconds), or of what went wrong."""
    app = App(binary, session, args.size)
    try:
        return run(app, args)
    finally:
        app.close()


def run(app, args):
    """Open, wait, focus message 2's editor, type, wait: the figures of one run."""
    result = {}
    shown = app.wait_until(lambda: prompt_shown(app.screen), args.limit)
    if shown is None:
        return {"error": "no prompt within the limit", "screen": app.screen.text()}
    result["first_prompt"] = shown - app.started
    if args.screens:
        print(app.screen.text(), file=sys.stderr)
    opened, quiet = app.wait_idle(shown, args.limit)
    result["open_idle"] = (opened - app.started, quiet)
    for key in "2gje":
        app.send(key)
        app.read(0.05)
    if app.wait_until(lambda: "Esc" in app.screen.text() and "#2" in app.screen.text(), 10) is None:
        return {**result, "error": "the editor did not open", "screen": app.screen.text()}
    app.wait_idle(time.monotonic(), args.limit)
    marks = [m for m in MARKS if m not in app.screen.text()][:args.keys]
    cpu_before = app.cpu()
    sent = type_marks(app, marks, 0 if args.burst else args.interval / 1000)
    last = sent[-1][1]
    prompt = app.wait_until(lambda: prompt_shown(app.screen), args.limit)
    idle, quiet = app.wait_idle(last, args.limit)
    echoes = [echo(app, mark, offset, at) for mark, (offset, at) in zip(marks, sent)]
    result.update(echoes=echoes, prompt_after=None if prompt is None else prompt - last,
                  idle_after=(idle - last, quiet), cpu=app.cpu() - cpu_before)
    result["screen"] = app.screen.text()
    result["trouble"] = None in echoes or prompt is None or not quiet
    return result


def type_marks(app, marks, interval):
    """Writes each mark at its time (all in one write when `interval` is 0), reading the
    output meanwhile; returns (output length, time) at each key's write."""
    sent = []
    if not interval:
        offset = len(app.output)
        sent = [(offset, app.send("".join(marks)))] * len(marks)
    for mark in marks[len(sent):]:
        if sent:
            # A user types on whatever the app shows: the key goes at its time.
            target = sent[-1][1] + interval
            while (left := target - time.monotonic()) > 0:
                app.read(left)
        offset = len(app.output)
        sent.append((offset, app.send(mark)))
    # Until every echo is in (or 30 s).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(m.encode() in app.output[o:] for m, (o, _) in zip(marks, sent)):
        app.read(0.05)
    return sent


def echo(app, mark, offset, at):
    """Seconds from the key's write (at output length `offset`, time `at`) until the output
    that first held its mark arrived; None when it never did."""
    position = app.output.find(mark.encode(), offset)
    if position < 0:
        return None
    end = position + len(mark.encode())
    arrived = next(when for length, when in app.chunks if length >= end)
    return max(arrived - at, 0.0)


def ms(seconds):
    return "–" if seconds is None else f"{seconds * 1000:.0f}"


def row(name, result):
    """One Markdown row of a run's figures."""
    if "error" in result and "echoes" not in result:
        return f"| {name} | {result['error']} |" + " |" * 6
    echoes = [e for e in result["echoes"] if e is not None]
    missing = len(result["echoes"]) - len(echoes)
    over = sum(e * 1000 > FRAME_MS for e in echoes)
    open_idle, open_quiet = result["open_idle"]
    idle, quiet = result["idle_after"]
    cells = [
        name,
        f"{ms(statistics.median(echoes))} / {ms(percentile(echoes, 0.95))} / {ms(max(echoes))}"
        + (f" ({missing} never)" if missing else ""),
        f"{over}/{len(result['echoes'])}",
        ms(result["first_prompt"]),
        f"{open_idle:.1f}" + ("" if open_quiet else " (busy)"),
        ms(result["prompt_after"]),
        f"{idle:.1f}" + ("" if quiet else " (busy)"),
        f"{result['cpu']:.1f}",
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| Session | Echo ms median / p95 / max | Keys over a frame | First prompt ms "
          "| Open: idle after s | Prompt after last key ms | Idle after last key s | CPU-s typing to idle "
          "| Load before / after |\n|---|---:|---:|---:|---:|---:|---:|---:|---|")


def load():
    return os.getloadavg()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("session", nargs="?", type=Path)
    parser.add_argument("--all-templates", action="store_true",
                        help="every DEV-TEMPLATE-10000.json in --sessions")
    parser.add_argument("--sessions", type=Path, default=SESSIONS)
    parser.add_argument("--only", default="", help="comma-separated parts of template names")
    parser.add_argument("--size", default="120x40", type=lambda s: tuple(int(n) for n in s.split("x")))
    parser.add_argument("--keys", type=int, default=32, help=f"characters typed (at most {len(MARKS)})")
    parser.add_argument("--interval", type=float, default=100, help="ms between keys")
    parser.add_argument("--burst", action="store_true", help="every key in one write")
    parser.add_argument("--limit", type=float, default=120, help="s to wait for a prompt or for idle")
    parser.add_argument("--screens", action="store_true", help="print the screen after each run")
    args = parser.parse_args()
    if args.all_templates:
        sessions = sorted(args.sessions.glob("*-10000.json"))
    elif args.session:
        sessions = [args.session]
    else:
        parser.error("a SESSION or --all-templates")
    wanted = [part for part in args.only.split(",") if part]
    sessions = [s for s in sessions if not wanted or any(w in s.name for w in wanted)]
    if not sessions:
        sys.exit(f"no sessions (python3 scripts/make_app_sessions.py --all --sizes 10000 {args.sessions})")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    mode = "one write" if args.burst else f"one every {args.interval:.0f} ms"
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}, {os.cpu_count()} cores, "
          f"{args.size[0]}x{args.size[1]}, {args.keys} keys typed into message 2, {mode}.\n")
    print(HEADER)
    for session in sessions:
        before = load()
        result = measure(args.binary, session, args)
        name = session.name.removesuffix(".json")
        print(f"{row(name, result)} {before:.2f}/{load():.2f} |", flush=True)
        if args.screens or result.get("trouble", "error" in result):
            print(result.get("screen", ""), file=sys.stderr)


if __name__ == "__main__":
    main()
