"""A RADIUS/1.1 client for the tests (RFC 9765; the Token and attribute
rules of draft-dekok-radext-radiusv11): a bridge from RADIUS/UDP (what
eapol_test speaks, with its shared secret) to RADIUS/1.1 over TLS with ALPN
"radius/1.1". Written here from the specifications, apart from twagd:

  UDP request -> TLS: the Identifier becomes 0 (Reserved-1), the
    Authenticator field a Token (a counter from a random start) and 12
    zeros, the Message-Authenticator is left out;
  TLS reply -> UDP: matched by Token; the request's Identifier back; each
    MS-MPPE key (a plain 32-octet string in RADIUS/1.1) salt-encrypted
    with the UDP secret and the request's authenticator (RFC 2548
    §2.4.2); a Message-Authenticator first (RFC 3579 §3.2) and the
    Response Authenticator (RFC 2865 §3).

eapol_test then checks the MPPE keys against its own MSK: the keys twagd
sent in the clear over RADIUS/1.1 are the session's."""
import hashlib
import hmac
import os
import select
import socket
import struct
import threading

MSG_AUTH, VSA, MS_VENDOR = 80, 26, 311


def attrs_of(pkt):
    n = struct.unpack("!H", pkt[2:4])[0]
    out, i = [], 20
    while i + 2 <= n:
        t, ln = pkt[i], pkt[i + 1]
        if ln < 2 or i + ln > n:
            raise ValueError("bad attribute")
        out.append((t, pkt[i + 2:i + ln]))
        i += ln
    return out


def pack(code, ident, auth, attrs):
    body = b"".join(bytes([t, len(v) + 2]) + v for t, v in attrs)
    return struct.pack("!BBH", code, ident, 20 + len(body)) + auth + body


def mppe_encrypt(key, secret, req_auth):
    """RFC 2548 §2.4.2: Salt (top bit set), then the key length octet, the
    key and zero padding to 16-octet blocks, each XORed with
    MD5(secret | req_auth | salt), then MD5(secret | previous block)."""
    salt = bytes([0x80 | os.urandom(1)[0], os.urandom(1)[0]])
    plain = bytes([len(key)]) + key
    plain += bytes(-len(plain) % 16)
    out, prev = b"", req_auth + salt
    for i in range(0, len(plain), 16):
        b = hashlib.md5(secret + prev).digest()
        c = bytes(x ^ y for x, y in zip(plain[i:i + 16], b))
        out += c
        prev = c
    return salt + out


class Bridge:
    """UDP on 127.0.0.1 (self.port) <-> one RADIUS/1.1 TLS connection."""

    def __init__(self, tls, secret):
        self.tls, self.secret = tls, secret.encode()
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.port = self.udp.getsockname()[1]
        self.token = struct.unpack("!I", os.urandom(4))[0]
        self.pending = {}      # token -> (udp address, id, authenticator)
        self.replies = []      # the RADIUS/1.1 replies as they came
        self.errors = []
        self.done = False
        self.buf = b""
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def to_tls(self, data, addr):
        attrs = [(t, v) for t, v in attrs_of(data) if t != MSG_AUTH]
        self.token = (self.token + 1) & 0xffffffff
        self.pending[self.token] = (addr, data[1], data[4:20])
        self.tls.sendall(pack(data[0], 0, struct.pack("!I", self.token) + bytes(12), attrs))

    def to_udp(self, pkt):
        self.replies.append(pkt)
        token = struct.unpack("!I", pkt[4:8])[0]
        if token not in self.pending:
            self.errors.append(f"reply with unknown token {token:#x}")
            return
        addr, ident, req_auth = self.pending.pop(token)
        if pkt[8:20] != bytes(12):
            self.errors.append("Reserved-2 not zero")
        attrs = []
        for t, v in attrs_of(pkt):
            if t == MSG_AUTH:
                self.errors.append("a Message-Authenticator in a RADIUS/1.1 reply")
                continue
            if t == VSA and len(v) == 6 + 32 and struct.unpack("!I", v[:4])[0] == MS_VENDOR \
                    and v[4] in (16, 17) and v[5] == 2 + 32:
                enc = mppe_encrypt(v[6:], self.secret, req_auth)
                v = v[:4] + bytes([v[4], 2 + len(enc)]) + enc
            elif t == VSA and struct.unpack("!I", v[:4])[0] == MS_VENDOR and v[4] in (16, 17):
                self.errors.append(f"an MS-MPPE key of {len(v) - 6} octets, not 32")
            attrs.append((t, v))
        attrs = [(MSG_AUTH, bytes(16))] + attrs
        out = bytearray(pack(pkt[0], ident, req_auth, attrs))
        out[22:38] = hmac.new(self.secret, bytes(out), hashlib.md5).digest()
        out[4:20] = hashlib.md5(bytes(out) + self.secret).digest()
        self.udp.sendto(bytes(out), addr)

    def run(self):
        while not self.done:
            r, _, _ = select.select([self.udp, self.tls], [], [], 0.2)
            try:
                if self.udp in r:
                    data, addr = self.udp.recvfrom(4096)
                    self.to_tls(data, addr)
                if self.tls in r or self.tls.pending():
                    chunk = self.tls.recv(65536)
                    if not chunk:
                        return
                    self.buf += chunk
                    while len(self.buf) >= 4:
                        n = struct.unpack("!H", self.buf[2:4])[0]
                        if n < 20 or len(self.buf) < n:
                            break
                        self.to_udp(self.buf[:n])
                        self.buf = self.buf[n:]
            except (OSError, ValueError) as e:
                self.errors.append(repr(e))
                return

    def close(self):
        self.done = True
        self.t.join(2)
        self.udp.close()
        try:
            self.tls.close()
        except OSError:
            pass
