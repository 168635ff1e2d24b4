#!/usr/bin/env python3
"""Dumps UCX 1.13's shared-memory (posix, sysv) receive FIFOs mapped into a process: head, tail,
owner pid, and the first element between tail and head whose owner bit says 'not written'.
For a stalled soak (docs/reliability.md): an element claimed by a sender killed before it
published it shows here as 'claimed but never written'. Reads /proc/PID/mem (root, or the
process's owner with ptrace allowed). The layout is UCX 1.13.1's (src/uct/sm/mm/base/
mm_iface.h: uct_mm_fifo_ctl_t, uct_mm_fifo_element_t); another UCX version may differ.
Usage: mm_fifo_dump.py PID [ELEM_SIZE=576 (UFI_SHM_FIFO_ELEM_SIZE)] [FIFO_SIZE=64]"""
import struct, sys, re
pid = int(sys.argv[1]); elem = int(sys.argv[2]) if len(sys.argv) > 2 else 576
size = int(sys.argv[3]) if len(sys.argv) > 3 else 64
shift = size.bit_length() - 1
CTL = 192  # sizeof(uct_mm_fifo_ctl_t) aligned to 64 (UCT_MM_FIFO_CTL_SIZE)
mem = open(f"/proc/{pid}/mem", "rb", 0)
for line in open(f"/proc/{pid}/maps"):
    m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)", line)
    lo, hi, perms, name = int(m[1], 16), int(m[2], 16), m[3], m[4]
    if 's' not in perms or hi - lo < CTL + size * elem or hi - lo > (1 << 20):
        continue
    try:
        mem.seek(lo); data = mem.read(CTL + size * elem)
    except OSError:
        continue
    head, = struct.unpack_from("<Q", data, 0)
    tail, owner = struct.unpack_from("<Qi", data, 128)  # (2nd cache line of 64 B: the 1st holds head and the signal socket)
    head &= (1 << 63) - 1
    if owner <= 0 or not (0 <= head - tail <= size):
        continue
    hole = None
    for i in range(tail, head):
        flags = data[CTL + (i % size) * elem]
        if (flags & 1) != ((i >> shift) & 1):
            hole = i; break
    print(f"{name or hex(lo)}: FIFO of pid {owner}: head {head} tail {tail} "
          f"({head - tail} in use); " + (f"element {hole} claimed but not written (a live sender may be writing it now: look twice)" if hole is not None
                                           else "no unwritten element between tail and head"))
