#!/usr/bin/env python3
"""Runs every `$ tilepipe ...` command shown in a Markdown file and checks the output it shows.

Usage: check_commands.py TILEPIPE_EXE FILE.md [FILE.md ...]

In a fenced block a line starting with "$ " is a command (continued by a trailing backslash); the
lines after it, up to the next command or the end of the block, are its output as the document
shows it: an excerpt, each shown line matching one line of the real output, in order (lines in
between may be left out; a line that is only "..." says so). Within a line "..." stands for any
text (a time, a rate). A shown output that starts with "{" and holds "..." is a JSON excerpt: every
"key": value pair it shows must be in the command's JSON with that value. Exit 1 names each
command whose exit status or output differs from the document.
"""
import json
import re
import shlex
import subprocess
import sys


def commands(path):
    """(line number, command, shown output lines) for every $-command in fenced blocks."""
    out, in_block, cur = [], False, None
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            if in_block and cur:
                out.append(cur)
            in_block, cur = not in_block, None
        elif in_block and line.startswith("$ "):
            if cur:
                out.append(cur)
            start, cmd = i + 1, line[2:]
            while cmd.endswith("\\"):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            cur = (start, cmd, [])
        elif in_block and cur:
            cur[2].append(line)
        i += 1
    return out


def line_matches(shown, actual):
    pattern = ".*".join(re.escape(part.strip()) for part in shown.split("..."))
    return re.fullmatch(r"\s*" + pattern + r"\s*", actual) is not None


def text_matches(shown, actual):
    """Every shown line (but a lone "...") matches an actual line, in order."""
    k = 0
    for s in shown:
        if s.strip() == "...":
            continue
        while k < len(actual) and not line_matches(s, actual[k]):
            k += 1
        if k == len(actual):
            return False
        k += 1
    return True


def json_matches(shown, actual):
    try:
        got = json.loads(actual)
    except json.JSONDecodeError as e:
        return f"not JSON: {e}"
    for key, value in re.findall(r'"([A-Za-z_0-9]+)":\s*("[^"]*"|\[[^\]]*\]|[-0-9.eE]+|true|false|null)', shown):
        if key not in got:
            return f'no field "{key}"'
        if got[key] != json.loads(value):
            return f'"{key}" is {json.dumps(got[key])}, the document shows {value}'
    return None


def main():
    exe, files = sys.argv[1], sys.argv[2:]
    failures, ran = 0, 0
    for path in files:
        for line, cmd, shown in commands(path):
            argv = shlex.split(cmd)
            if argv[0] != "tilepipe":
                continue
            argv[0] = exe
            r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
            ran += 1
            where = f"{path}:{line}: {cmd}"
            shown = [s for s in shown if s.strip()]
            if r.returncode != 0:
                print(f"{where}: exit {r.returncode}: {r.stderr.strip()}")
                failures += 1
            elif shown and shown[0].lstrip().startswith("{") and "..." in "".join(shown):
                why = json_matches("\n".join(shown), r.stdout)
                if why:
                    print(f"{where}: {why}")
                    failures += 1
            elif not text_matches(shown, [a for a in r.stdout.split("\n") if a.strip()]):
                print(f"{where}: the output differs from the document's:\n{r.stdout}")
                failures += 1
    print(f"{ran} commands run, {failures} differ from their documents")
    if ran == 0:
        sys.exit("no `$ tilepipe` command found")
    sys.exit(1 if failures else 0)


main()
