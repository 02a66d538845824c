#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/fuzz_radius.c with Python's hashlib/hmac
(independent of twag): RFC 2865 §3 Response Authenticator, RFC 3579 §3.2
Message-Authenticator, RFC 2548 §2.4.2 MPPE key encryption."""
import hashlib, hmac, os, struct, sys

SECRET = b"fuzzsecret"
REQ_AUTH = bytes([0x52,0x41,0x44,0x49,0x55,0x53,0x2d,0x66,0x75,0x7a,0x7a,0x2d,0x72,0x65,0x71,0x21])
out = sys.argv[1]

def attr(t, v): return bytes([t, len(v) + 2]) + v
def eap_attrs(e):
    if not e: return attr(79, b"")
    return b"".join(attr(79, e[i:i+253]) for i in range(0, len(e), 253))
def eap(code, id_, data): return bytes([code, id_]) + struct.pack(">H", 4 + len(data)) + data

def request(code, id_, attrs, ma=True):
    body = (attr(80, bytes(16)) if ma else b"") + attrs
    pkt = bytearray(bytes([code, id_]) + struct.pack(">H", 20 + len(body)) + REQ_AUTH + body)
    if ma:
        pkt[22:38] = hmac.new(SECRET, bytes(pkt), hashlib.md5).digest()
    return bytes(pkt)

def response(code, id_, attrs, ma=True):
    body = (attr(80, bytes(16)) if ma else b"") + attrs
    pkt = bytearray(bytes([code, id_]) + struct.pack(">H", 20 + len(body)) + REQ_AUTH + body)
    if ma:
        pkt[22:38] = hmac.new(SECRET, bytes(pkt), hashlib.md5).digest()
    pkt[4:20] = hashlib.md5(bytes(pkt) + SECRET).digest()
    return bytes(pkt)

def mppe(vtype, key, salt):
    p = bytes([len(key)]) + key
    p += bytes(-len(p) % 16)
    c, prev = b"", REQ_AUTH + salt
    for i in range(0, len(p), 16):
        b = hashlib.md5(SECRET + prev).digest()
        blk = bytes(x ^ y for x, y in zip(p[i:i+16], b))
        c += blk; prev = blk
    v = bytes([vtype, 2 + 2 + len(c)]) + salt + c
    return attr(26, struct.pack(">I", 311) + v)

ident = b"06001010000000001@wlan.mnc001.mcc001.3gppnetwork.org"
seeds = {
  "request_identity": request(1, 1, attr(1, ident) + eap_attrs(eap(2, 0, b"\x01" + ident)) + attr(12, struct.pack(">I", 1400))),
  "request_two_fragments": request(1, 2, attr(1, ident) + eap_attrs(eap(2, 1, b"\x32\x01\x00\x00" + bytes(range(256))[:250] * 1 + b"\xaa" * 46)) + attr(24, b"state-0001")),
  "eap_start": request(1, 3, attr(1, ident) + eap_attrs(b"")),
  "challenge": response(11, 2, eap_attrs(eap(1, 2, b"\x32\x01\x00\x00\x01\x05\x00\x00" + bytes(16) + b"\x02\x05\x00\x00" + bytes(16) + b"\x0b\x05\x00\x00" + bytes(16))) + attr(24, b"state-0001")),
  "accept_mppe": response(2, 4, eap_attrs(eap(3, 3, b"")) + mppe(17, bytes(range(32)), b"\x81\x23") + mppe(16, bytes(range(32, 64)), b"\x81\x24") + attr(27, struct.pack(">I", 3600)) + attr(1, ident)),
  "reject": response(3, 5, eap_attrs(eap(4, 3, b"")) + attr(18, b"denied")),
  "status_server": request(12, 6, attr(32, b"twag-test")),
  "rfc2865_7_1_request": bytes.fromhex("010000380f403f9473978057bd83d5cb98f4227a01066e656d6f02120dbe708d93d413ce3196e43f782a0aee0406c0a80110050600000003"),
  "rfc2865_7_1_accept": bytes.fromhex("0200002686fe220e7624ba2a1005f6bf9b55e0b20606000000010f06000000000e06c0a80103"),
  "padding": request(1, 7, attr(1, b"user") + eap_attrs(eap(2, 9, b"\x01user"))) + b"\x00" * 13,
  "bad_eap_order": request(1, 8, attr(79, eap(2, 1, b"\x01ab")[:4]) + attr(1, b"x") + attr(79, b"ab"), ma=False),
  "bad_attr_len": bytes([1, 9, 0, 24]) + REQ_AUTH + bytes([1, 1, 0, 0]),
}
for name, pkt in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(pkt)
    print(name, len(pkt))
