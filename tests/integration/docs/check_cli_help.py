#!/usr/bin/env python3
"""Checks that each subcommand's --help and docs/cli.md agree on its flags.

Usage: check_cli_help.py TILEPIPE_EXE docs/cli.md

For every section "## `tilepipe X`" (with its ### subsections): every flag `tilepipe X --help`
offers is described there or in a section whose heading names X among others, e.g. "## The
communication flags (run, align, pingpong)"; and every flag the section's synopsis (its first code
block) or its tables ("| `--flag ..." rows) offer is one that X accepts. Exit 1 names each
disagreement.
"""
import re
import subprocess
import sys

FLAG = re.compile(r"--[a-z][a-z0-9-]*")


def sections(text):
    """(heading, body) for every ## section, ### subsections folded into their ## section."""
    out = []
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        heading, _, body = part.partition("\n")
        out.append((heading.strip(), body))
    return out


def help_flags(exe, command):
    r = subprocess.run([exe, command, "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"tilepipe {command} --help: exit {r.returncode}: {r.stderr.strip()}")
    flags = set()
    for line in r.stdout.split("\n"):
        m = re.match(r"\s+(-[a-zA-Z],)?(--[a-z][a-z0-9-]*)", line)
        if m:
            flags.add(m.group(2))
    flags.discard("--help")
    return flags


def offered(body):
    """The flags a section offers: its synopsis (first code block) and its table rows."""
    flags = set()
    block = re.search(r"```[a-z]*\n(.*?)```", body, flags=re.S)
    if block:
        flags |= set(FLAG.findall(block.group(1)))
    for row in re.findall(r"^\| `(--[a-z][a-z0-9-]*)", body, flags=re.M):
        flags.add(row)
    return flags


def main():
    exe, doc = sys.argv[1], sys.argv[2]
    all_sections = sections(open(doc, encoding="utf-8").read())
    problems, checked = [], 0
    for heading, body in all_sections:
        m = re.fullmatch(r"`tilepipe (\w+)`", heading)
        if not m:
            continue
        command = m.group(1)
        shared = "".join(b for h, b in all_sections
                         if re.search(r"\(([^)]*\b" + command + r"\b[^)]*)\)", h) and h != heading)
        have = help_flags(exe, command)
        checked += 1
        described = set(FLAG.findall(body)) | set(FLAG.findall(shared))
        for f in sorted(have - described):
            problems.append(f"tilepipe {command} --help offers {f}, which {doc} does not describe")
        for f in sorted(offered(body) - have):
            problems.append(f"{doc} offers {f} for tilepipe {command}, which it does not accept")
    for p in problems:
        print(p)
    print(f"{checked} subcommands checked, {len(problems)} disagreements")
    sys.exit(1 if problems or checked == 0 else 0)


main()
