#!/usr/bin/python3
"""RADIUS accounting authenticators on Python's hashlib/hmac, independent
of twag's codec (tests/unit/test_radius_acct.c feeds it packets).

Input lines: "req PKT SECRET" or "resp PKT REQAUTH SECRET" (hex).
Output, one line each: "ra=HEX ma=HEX|-".
  req:  RFC 2866 §3 Request Authenticator = MD5(Code | Identifier | Length |
        16 zero octets | Attributes | Secret); Message-Authenticator (type
        80), when present, HMAC-MD5 over the packet with the Authenticator
        field and its own value zero (RFC 5176 §3.3; FreeRADIUS, hostapd).
  resp: RFC 2866 §3 Response Authenticator = MD5(Code | Identifier | Length |
        RequestAuth | Attributes | Secret).
"""
import hashlib
import hmac
import sys


def ma_offset(pkt):
    off = 20
    while off + 2 <= len(pkt):
        t, n = pkt[off], pkt[off + 1]
        if n < 2:
            return None
        if t == 80:
            return off + 2
        off += n
    return None


for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "req":
        pkt, sec = bytearray(bytes.fromhex(f[1])), bytes.fromhex(f[2])
        pkt[4:20] = bytes(16)
        mo = ma_offset(pkt)
        ma = "-"
        if mo is not None:
            pkt[mo:mo + 16] = bytes(16)
            mac = hmac.new(sec, bytes(pkt), hashlib.md5).digest()
            pkt[mo:mo + 16] = mac
            ma = mac.hex()
        ra = hashlib.md5(bytes(pkt) + sec).hexdigest()
        print(f"ra={ra} ma={ma}", flush=True)
    elif f[0] == "resp":
        pkt, ra_req, sec = bytes.fromhex(f[1]), bytes.fromhex(f[2]), bytes.fromhex(f[3])
        ra = hashlib.md5(pkt[:4] + ra_req + pkt[20:] + sec).hexdigest()
        print(f"ra={ra} ma=-", flush=True)
    else:
        print("ra=- ma=-", flush=True)
