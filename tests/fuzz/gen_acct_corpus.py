#!/usr/bin/python3
"""Seeds for fuzz_acct (tests/fuzz/corpus/acct/), written with hashlib/hmac
independently of twag's codec: Accounting-Requests (RFC 2866 §3 Request
Authenticator; Message-Authenticator over a zero Authenticator field) of
each Acct-Status-Type under the secret "fuzzsecret", with NAS-IP-Address,
NAS-IPv6-Address, NAS-Identifier or none, Gigawords, and a few broken ones
(wrong authenticator, bad attribute lengths, no Acct-Status-Type)."""
import hashlib
import hmac
import os
import struct
import sys

SEC = b"fuzzsecret"


def attr(t, v):
    return bytes([t, len(v) + 2]) + v


def u32(v):
    return struct.pack("!I", v)


def req(attrs, ident=1, ma=False, bad=False):
    body = b"".join(attr(t, v) for t, v in attrs)
    if ma:
        body = attr(80, bytes(16)) + body
    pkt = bytearray(struct.pack("!BBH", 4, ident, 20 + len(body)) + bytes(16) + body)
    if ma:
        pkt[22:38] = hmac.new(SEC, bytes(pkt), hashlib.md5).digest()
    ra = hashlib.md5(bytes(pkt) + SEC).digest()
    pkt[4:20] = bytes([ra[0] ^ 1]) + ra[1:] if bad else ra
    return bytes(pkt)


user = (1, b"0001010123456789@wlan.mnc001.mcc001.3gppnetwork.org")
seeds = {
    "start": req([(40, u32(1)), (44, b"s-1"), (32, b"ap-1"), user, (31, b"02-00-00-00-00-01"),
                  (30, b"aa-bb:WLAN"), (5, u32(3)), (8, bytes([10, 0, 0, 1]))], ma=True),
    "interim": req([(40, u32(3)), (44, b"s-1"), (4, bytes([10, 1, 1, 1])), (46, u32(60)),
                    (42, u32(1000)), (52, u32(1)), (43, u32(2000)), (53, u32(2)), (47, u32(10)),
                    (48, u32(20)), (41, u32(5)), (55, u32(1700000000))]),
    "stop": req([(40, u32(2)), (44, b"s-1"), (95, bytes(range(16))), (49, u32(1)), (46, u32(90))]),
    "on": req([(40, u32(7)), (32, b"ap-1")]),
    "off": req([(40, u32(8))]),
    "other": req([(40, u32(15)), (44, b"x")]),
    "bad_auth": req([(40, u32(1)), (44, b"s-2")], bad=True),
    "bad_len": req([(40, b"\0\1"), (44, b"s-3")]),
    "no_status": req([(44, b"s-4")]),
    "long_id": req([(40, u32(1)), (44, b"i" * 200)]),
    "access": struct.pack("!BBH", 1, 1, 20) + bytes(16),
}
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "acct")
os.makedirs(out, exist_ok=True)
for name, pkt in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(pkt)
