#!/usr/bin/env python3
"""Seeds for fuzz_tunseg: TCP GSO packets as the TUN device hands them over
(virtio-net header, IPv4/IPv6, TCP with options), a packet with a checksum
to complete, and runs of TCP segments of one stream for the joiner.
Usage: gen_tunseg_corpus.py DIR"""
import hashlib
import os
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip4(plen, proto=6, ident=1):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + plen, ident, 0x4000, 64, proto, 0,
                    bytes([10, 232, 0, 1]), bytes([10, 232, 0, 2]))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:]


def ip6(plen, nh=6):
    return struct.pack("!IHBB", 6 << 28, plen, nh, 64) + bytes.fromhex("fd32" + "00" * 13 + "01") \
        + bytes.fromhex("fd32" + "00" * 13 + "02")


def tcp(seq, flags=0x18, opts=b"\x01\x01\x08\x0a" + b"\0\0\0\1\0\0\0\2"):
    doff = (20 + len(opts)) // 4
    return struct.pack("!HHIIBBHHH", 40000, 5201, seq, 77, doff << 4, flags, 512, 0, 0) + opts


def vh(flags, gso_type, hdr_len, gso_size, cs, co):
    return struct.pack("<BBHHHH", flags, gso_type, hdr_len, gso_size, cs, co)


def main(d):
    os.makedirs(d, exist_ok=True)
    seeds = []
    pay = bytes(range(256)) * 24
    for v6 in (False, True):
        t = tcp(1000)
        p = (ip6(len(t) + len(pay)) if v6 else ip4(len(t) + len(pay))) + t + pay
        il = 40 if v6 else 20
        seeds.append(b"\0" + vh(1, 4 if v6 else 1, il + len(t), 1400, il, 16) + p)
        seeds.append(b"\0" + vh(1, 4 if v6 else 1, il + len(t), 536, il, 16) + p[:il + len(t) + 3000])
    u = struct.pack("!HHHH", 1, 2, 8 + 30, 0) + b"u" * 30
    seeds.append(b"\0" + vh(1, 0, 0, 0, 20, 6) + ip4(len(u), 17) + u)
    seeds.append(b"\0" + vh(0, 0, 0, 0, 0, 0) + ip4(0, 1))
    for v6 in (False, True):
        run = b""
        seq = 5000
        for i in range(6):
            n = 1000 if i < 5 else 300
            t = tcp(seq, 0x10 if i < 5 else 0x18)
            p = (ip6(len(t) + n) if v6 else ip4(len(t) + n, ident=i)) + t + bytes([i]) * n
            run += struct.pack("!H", len(p)) + p
            seq += n
        seeds.append(b"\1" + run)
        seeds.append(b"\1" + run[:2 + 60] + run)
    for s in seeds:
        with open(os.path.join(d, hashlib.sha1(s).hexdigest()), "wb") as f:
            f.write(s)


main(sys.argv[1])
