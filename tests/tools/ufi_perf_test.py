#!/usr/bin/env python3
"""ufi_perf as a user runs it: a server and a client on 127.0.0.1, each test (messages and RMA) with --json
on RDM endpoints and on connected ones (-e msg),
(every line one object with test, size, iters, lat_us, bw_MBps, msg_rate), the table and CSV
forms, transports from UFI_TLS (shared memory; tcp on loopback), and bad command lines.
Usage: ufi_perf_test.py <ufi_perf>
Ports are ones the kernel finds free at each run (fixed ports in the ephemeral range collide
with the ones other tests' tcp transports listen on)."""
import json
import os
import socket
import subprocess
import sys

exe = sys.argv[1]
KEYS = {"test", "size", "iters", "lat_us", "bw_MBps", "msg_rate"}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pair(args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    # free_port() releases the port before the server binds it: a test running beside this
    # one may take it meanwhile (the server then says so at once), and another is picked.
    for attempt in range(5):
        port = free_port()
        server = subprocess.Popen([exe, "-p", str(port)], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            try:
                server.wait(timeout=0.2)  # (it listens first thing: exits at once if it cannot)
            except subprocess.TimeoutExpired:
                pass
            if server.returncode is not None and "Address already in use" in server.stderr.read():
                print(f"port {port} taken meanwhile: another one")
                continue
            client = subprocess.run([exe, "-p", str(port)] + args + ["127.0.0.1"], env=env,
                                    capture_output=True, text=True, timeout=120)
            sout, serr = server.communicate(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
        if client.returncode != 0 or server.returncode != 0:
            fail(f"{args}: client {client.returncode} {client.stderr}; server {server.returncode} {serr}")
        return client.stdout
    fail(f"{args}: no free port in 5 tries")


for test in ("tag_lat", "tag_bw", "msg_lat", "msg_bw", "put_lat", "put_bw", "get_lat", "get_bw",
             "fadd_lat", "fadd_rate"):
    for tls in ({"UFI_TLS": "shm"}, {"UFI_TLS": "tcp", "UFI_NET_DEVICES": "lo"}):
        # put_lat polls the last byte written: it starts at 1 byte.
        sizes = [1 if test == "put_lat" else 0, 8, 100, 9000, 100000]
        if test.startswith("fadd"):
            sizes = [8]  # one uint64_t, whatever -s says
        out = pair(["-t", test, "-s", ",".join(map(str, sizes)), "-n", "200", "-w", "20", "--json"], tls)
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        if [r["size"] for r in rows] != sizes:
            fail(f"{test} {tls}: sizes {[r['size'] for r in rows]}")
        for r in rows:
            if not KEYS <= r.keys():
                fail(f"{test}: keys {r.keys()}")
            if r["test"] != test or r["iters"] != 200:
                fail(f"{test}: {r}")
            # (bandwidth is printed in MB/s to 3 decimals: 1 byte on a loaded machine rounds to 0)
            if r["lat_us"] <= 0 or r["msg_rate"] <= 0 or (r["size"] >= 8 and r["bw_MBps"] <= 0):
                fail(f"{test}: non-positive measurement {r}")
            # The median iteration (ucx_perftest's "typical"): latency tests only.
            if test.endswith("_lat") and not 0 < r.get("typical_lat_us", 0) < 100 * r["lat_us"]:
                fail(f"{test}: typical latency {r}")
        print("ok:", test, tls, len(rows), "sizes")

# Other atomics by -o and -D: the element size follows the datatype.
for op, dt, size in (("cswap", "uint32", 4), ("min", "float16", 2), ("prod", "long_double_complex", 32),
                     ("bxor", "uint128", 16)):
    out = pair(["-t", "fadd_rate", "-o", op, "-D", dt, "-n", "100", "-w", "10", "--json"],
               {"UFI_TLS": "shm"})
    r = json.loads(out.splitlines()[-1])
    if r["test"] != "fadd_rate" or r["size"] != size or r["msg_rate"] <= 0:
        fail(f"fadd_rate -o {op} -D {dt}: {r}")
    print("ok: fadd_rate", op, dt)

# Connected endpoints (-e msg): the server follows the client's choice. Over the default
# transports (tcp's connection manager, the data over shared memory) and over tcp alone.
for test in ("tag_lat", "msg_bw", "put_lat", "get_bw", "fadd_rate"):
    for tls in ({"UFI_NET_DEVICES": "lo"}, {"UFI_TLS": "tcp", "UFI_NET_DEVICES": "lo"}):
        sizes = [8] if test.startswith("fadd") else [1, 8, 9000, 100000]
        out = pair(["-e", "msg", "-t", test, "-s", ",".join(map(str, sizes)), "-n", "200", "-w",
                    "20", "--json"], tls)
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        if [r["size"] for r in rows] != sizes:
            fail(f"-e msg {test} {tls}: sizes {[r['size'] for r in rows]}")
        for r in rows:
            if r["test"] != test or r["ep"] != "msg" or r["iters"] != 200 or r["lat_us"] <= 0 \
                    or r["msg_rate"] <= 0:
                fail(f"-e msg {test} {tls}: {r}")
        print("ok: -e msg", test, tls, len(rows), "sizes")
out = pair(["-e", "msg", "-t", "tag_lat", "-s", "8", "-n", "100"], {"UFI_NET_DEVICES": "lo"})
if "msg endpoints" not in out:
    fail("-e msg table header: " + out)
# Without a tcp device there are no connected endpoints: both sides say why and fail.
for port in (free_port(),):
    server = subprocess.Popen([exe, "-p", str(port)], env=dict(os.environ, UFI_TLS="shm"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        client = subprocess.run([exe, "-p", str(port), "-e", "msg", "127.0.0.1"],
                                env=dict(os.environ, UFI_TLS="shm"), capture_output=True,
                                text=True, timeout=120)
        _, serr = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
    if server.returncode != 1 or "no FI_EP_MSG entry" not in serr or client.returncode != 1:
        fail(f"-e msg over UFI_TLS=shm: server {server.returncode} {serr}; client "
             f"{client.returncode} {client.stderr}")
    print("ok: -e msg without a tcp device fails with its reason")

out = pair(["-t", "tag_lat", "-s", "8", "-n", "100"], {"UFI_TLS": "shm"})
if "lat_us" not in out or "tag_lat" not in out:
    fail("table: " + out)
out = pair(["-t", "tag_bw", "-s", "1K", "-n", "100", "--csv"], {"UFI_TLS": "shm"})
if not out.startswith("test,domain,size,iters,lat_us,bw_MBps,msg_rate") or ",1024,100," not in out \
        or not out.rstrip().endswith(",rdm"):
    fail("csv: " + out)

for bad in (["-t", "nope"], ["-s", "abc"], ["-p", "70000"], ["-n", "0"], ["--frobnicate"],
            ["-t", "put_lat", "-s", "0,8"], ["-t", "fadd_lat", "-o", "nope"],
            ["-t", "fadd_lat", "-D", "float128"], ["-e", "dgram"], ["--procs", "2", "-e", "msg"]):
    r = subprocess.run([exe] + bad, capture_output=True, text=True, timeout=10)
    if r.returncode != 2 or "usage" not in r.stderr:
        fail(f"{bad}: exit {r.returncode}, {r.stderr}")
print("PASS")
