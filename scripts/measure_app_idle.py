#!/usr/bin/env python3
"""Opens SESSION in the app in a detached 100x30 tmux, waits until it is idle, presses
the PREP keys (comma-separated, waiting for idle after each), then KEY, and reports how
long until the process stops using CPU (utime+stime sampled every 100 ms; idle: unchanged
for 1 s) and until the screen last changed. Sessions: scripts/make_app_sessions.py.
On a loaded machine, note the load average with the numbers.

Usage: python3 scripts/measure_app_idle.py BINARY SESSION [PREP] [KEY]
  e.g. target/release/chatplate target/app-sessions/Qwen-Qwen3-0.6B-10000.json G,k c
"""
import os, subprocess, sys, time

binary, session = sys.argv[1], sys.argv[2]
prep_keys = sys.argv[3].split(",") if len(sys.argv) > 3 and sys.argv[3] else []
key = sys.argv[4] if len(sys.argv) > 4 else "c"
name = f"m{os.getpid()}"
tick = os.sysconf("SC_CLK_TCK")

def tmux(*args):
    return subprocess.run(["tmux", *args], capture_output=True, text=True).stdout

# A recovery file beside the session would open the restore question, which the keys
# below would answer instead of editing (the app writes one when its terminal closes,
# as it does at the end of each run: removed there).
recovery = os.path.splitext(session)[0] + ".recovery.json"
if os.path.exists(recovery):
    sys.exit(f"{recovery} exists: the app would ask about it first; remove it")
tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30", f"{binary} {session}")
time.sleep(0.5)
pid = int(tmux("list-panes", "-t", name, "-F", "#{pane_pid}").strip())

def cpu():
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick

def wait_idle(limit=900):
    start, last, last_change = time.time(), cpu(), time.time()
    screen, screen_change = tmux("capture-pane", "-p", "-t", name), time.time()
    while time.time() - start < limit:
        time.sleep(0.1)
        now = cpu()
        if now != last:
            last, last_change = now, time.time()
        s = tmux("capture-pane", "-p", "-t", name)
        if s != screen:
            screen, screen_change = s, time.time()
        if time.time() - last_change >= 1.0 and time.time() - screen_change >= 1.0:
            break
    return last_change - start, screen_change - start, last

t_open, _, c_open = wait_idle()
print(f"open: idle after {t_open:.1f} s, {c_open:.1f} CPU-s")
for k in prep_keys:
    tmux("send-keys", "-t", name, k)
    wait_idle()
c0 = cpu()
tmux("send-keys", "-t", name, key)
t_idle, t_screen, c1 = wait_idle()
print(f"key {key!r}: CPU idle after {t_idle:.2f} s ({c1 - c0:.2f} CPU-s), screen last changed after {t_screen:.2f} s")
print(tmux("capture-pane", "-p", "-t", name)[-600:])
tmux("kill-session", "-t", name)
# The closed terminal makes the app save the edit to the recovery file: wait for it to
# exit, then remove the file, so the next run opens the session as this one did.
for _ in range(100):
    if not os.path.exists(f"/proc/{pid}"):
        break
    time.sleep(0.05)
if os.path.exists(recovery):
    os.remove(recovery)
