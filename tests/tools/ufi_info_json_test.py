#!/usr/bin/env python3
"""Every `ufi_info ... --json` output is one valid JSON document with no duplicate keys.

Python's json module (like most parsers) silently keeps the last of two equal keys, so a
record that wrote "kind" twice lost its kind; the object_pairs_hook below refuses them.
Usage: ufi_info_json_test.py <ufi_info> <tests/data/topologies>
"""
import json
import os
import subprocess
import sys


class DuplicateKey(ValueError):
    pass


def unique_pairs(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(f"duplicate key {key!r} in an object with keys {[k for k, _ in pairs]}")
        seen[key] = value
    return seen


ARGS = [
    [], ["-v"], ["-d"], ["-c"], ["--config"], ["-t"], ["-f"], ["-f", "-l"],
    ["-f", "-p", "ufi", "-e", "FI_EP_RDM", "-c", "FI_LOCAL_COMM"],
    ["-f", "-c", "FI_COLLECTIVE"], ["-f", "-p", "tcp"],
    ["-v", "-d", "--config", "-t", "-f"],
]
# Exit 1 is fi_getinfo finding nothing (the JSON says so); anything else is a failure.
NO_MATCH = {("-f", "-c", "FI_COLLECTIVE"), ("-f", "-p", "tcp")}


def run(ufi_info, args, env_extra, label):
    env = dict(os.environ, **env_extra)
    try:
        p = subprocess.run([ufi_info, *args, "--json"], env=env, capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        return f"{label}: timed out"
    want = 1 if tuple(args) in NO_MATCH else 0
    if p.returncode != want:
        return f"{label}: exit {p.returncode} (want {want}); stderr: {p.stderr.strip()}"
    try:
        doc = json.loads(p.stdout, object_pairs_hook=unique_pairs)
    except DuplicateKey as e:
        return f"{label}: {e}"
    except json.JSONDecodeError as e:
        return f"{label}: invalid JSON ({e}): {p.stdout[:300]!r}"
    if not isinstance(doc, dict) or not doc:
        return f"{label}: not a non-empty object"
    return None


def main():
    ufi_info, topologies = sys.argv[1], sys.argv[2]
    envs = [({}, "")]
    envs.append(({"UFI_TLS": "^tcp"}, "UFI_TLS=^tcp "))
    # hwloc reads a synthetic topology from HWLOC_XMLFILE: many devices, of every kind.
    for xml in sorted(os.listdir(topologies)):
        if xml.endswith(".xml"):
            envs.append(({"HWLOC_XMLFILE": os.path.join(topologies, xml)}, f"HWLOC_XMLFILE={xml} "))
    failures = []
    checked = 0
    for env, prefix in envs:
        for args in ARGS:
            label = prefix + "ufi_info " + " ".join(args + ["--json"])
            problem = run(ufi_info, args, env, label)
            checked += 1
            if problem:
                failures.append(problem)
    # The device records keep their kind: "device", and the hardware's in its own field.
    env = dict(os.environ, HWLOC_XMLFILE=os.path.join(topologies, "two_socket_4ib_8gpu.xml"))
    out = subprocess.run([ufi_info, "-t", "--json"], env=env, capture_output=True, text=True,
                         timeout=60).stdout
    devices = [r for r in json.loads(out)["topology"] if r.get("kind") == "device"]
    if not devices:
        failures.append("-t --json: no record of kind 'device' in the synthetic topology")
    for f in failures:
        print("FAIL:", f)
    print(f"{checked - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
