#!/usr/bin/python3
"""Seeds of fuzz_dynauth (tests/fuzz/corpus/dynauth/), written with hashlib
(independent of twag's codec): Disconnect/CoA-ACK/NAK replies to the fixed
request of fuzz_dynauth.c under its secret (first octet: 0 Disconnect, 1
CoA), and control request lines (first octet 0x80)."""
import hashlib
import hmac
import os
import struct

SECRET = b"fuzzsecret"
REQ_AUTH = bytes.fromhex("112233445566778899aabbccddeef001")
REQ_ID = 0x2a
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "dynauth")


def reply(code, attrs, ma=False, bad=False, ident=REQ_ID):
    body = b"".join(bytes([t, 2 + len(v)]) + v for t, v in attrs)
    if ma:
        body = bytes([80, 18]) + bytes(16) + body
    pkt = bytearray(struct.pack("!BBH", code, ident, 20 + len(body)) + REQ_AUTH + body)
    if ma:
        pkt[22:38] = hmac.new(SECRET, bytes(pkt), hashlib.md5).digest()
    ra = hashlib.md5(bytes(pkt) + SECRET).digest()
    if bad:
        ra = bytes([ra[0] ^ 1]) + ra[1:]
    pkt[4:20] = ra
    return bytes(pkt)


def main():
    os.makedirs(OUT, exist_ok=True)
    ec = lambda v: (101, struct.pack("!I", v))  # noqa: E731
    seeds = {
        "disc_ack": b"\x00" + reply(41, []),
        "disc_ack_ma": b"\x00" + reply(41, [], ma=True),
        "disc_nak_503": b"\x00" + reply(42, [ec(503)]),
        "disc_nak_bad_ec": b"\x00" + reply(42, [(101, b"\x00\x01\xf7")]),
        "coa_ack": b"\x01" + reply(44, [ec(201)], ma=True),
        "coa_nak_401": b"\x01" + reply(45, [ec(401), (18, b"no such attribute")]),
        "coa_bad_auth": b"\x01" + reply(44, [], bad=True),
        "disc_wrong_id": b"\x00" + reply(41, [], ident=REQ_ID + 1),
        "ctl_disconnect": b"\x80disconnect session SESS-1",
        "ctl_imsi": b"\x80disconnect imsi 001010123456789",
        "ctl_coa": b"\x80coa session S%201 Session-Timeout=600 Filter-Id=gold 26=00000009 Idle-Timeout=30 Acct-Interim-Interval=300",
        "ctl_bad": b"\x80coa session x 80=00 %zz 999=1 Session-Timeout=-1",
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
