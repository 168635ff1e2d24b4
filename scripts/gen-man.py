#!/usr/bin/env python3
"""Writes a man page from its template (docs/man/*.in), filling in what the programs know, so
that the pages cannot drift from the code: @ENVIRONMENT@ becomes every variable of the config
registry (`ufi_info -c --json`: name, type, default, meaning), @USAGE@ a program's own --help
text, @VERSION@ ufi's version.

    gen-man.py TEMPLATE OUTPUT VERSION UFI_INFO [PROGRAM_FOR_USAGE]
"""
import json
import os
import subprocess
import sys


def roff_text(text):
    """Plain text as roff: backslashes escaped, no line starting with a control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def clean_env():
    # The registry's defaults, not this shell's settings; ufi quiet.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UFI_", "FI_", "UCX_"))}
    env["UFI_LOG_LEVEL"] = "off"
    # (In a sanitizer build the programs are instrumented: UCX's process-lifetime allocations
    # would fail them at exit; the tests check leaks, not the build.)
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    return env


def environment(ufi_info):
    out = subprocess.run([ufi_info, "-c", "--json"], check=True, capture_output=True, text=True,
                         env=clean_env()).stdout
    variables = [v for v in json.loads(out)["config"] if not v.get("dynamic")]
    parts = []
    for v in variables:
        default = v["default"] if v["default"] != "" else "(unset)"
        parts.append(".TP\n.B %s\n%s; default: %s.\n.br\n%s" % (
            v["name"], roff_text(v["syntax"]), roff_text(default), roff_text(v["doc"])))
    return "\n".join(parts)


def usage(program):
    out = subprocess.run([program, "--help"], capture_output=True, text=True, env=clean_env())
    text = out.stdout or out.stderr
    return ".nf\n" + roff_text(text.rstrip("\n")) + "\n.fi"


def main():
    template, output, version, ufi_info = sys.argv[1:5]
    program = sys.argv[5] if len(sys.argv) > 5 else None
    with open(template, encoding="utf-8") as f:
        page = f.read()
    page = page.replace("@VERSION@", version)
    if "@ENVIRONMENT@" in page:
        page = page.replace("@ENVIRONMENT@", environment(ufi_info))
    if "@USAGE@" in page:
        page = page.replace("@USAGE@", usage(program))
    with open(output, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    main()
