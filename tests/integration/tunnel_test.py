"""twag-tunnel between two network namespaces joined by a veth pair.

  - every transform, ESP in UDP (RFC 3948) and ESP/AH in IP: ping through
    the tunnel, and a TCP transfer whose SHA-256 at the receiver must match
    what was sent (the TSO/GSO paths: 4 MiB in large writes);
  - IPv6 inside (TSO6) and an IPv6 outer path; ESN; keys from an EAP MSK;
  - tshark decrypts the ESP captured on the veth with the SA keys (Wireshark's
    ESP SA table): the inner ICMP/TCP dissect, no malformed frame and no
    expert error; with keys derived from the MSK by this script's own
    prf+ (RFC 7296 §2.13 on hashlib's HMAC-SHA-256);
  - an independent ESP peer written here (AES-GCM and AES-CBC from the
    "cryptography" package, HMAC from hashlib) exchanges an ICMP echo with
    twag-tunnel both ways, then sends the bad input: a replay, one left of
    the window, wrong SPI, wrong ICV, truncated, an RFC 3948 keepalive and
    IKE marker, an oversized datagram, one in IP fragments, random garbage;
    each is counted by its reason on /metrics and the tunnel still carries
    the next valid packet; the same over raw IP protocol 50;
  - where the kernel has XFRM ESP, twag-tunnel against the kernel's tunnel
    (this machine's kernel has none: said in a note);
  - --config files (a warning for one others can read, the command line
    winning over the file), /metrics answering 404 elsewhere;
  - the out SA's sequence space used up (seq= start near 2^32, no ESN):
    further packets dropped and counted, the tunnel process still answering.
Namespaces, devices and processes are removed at exit, whatever happened.
Needs root (namespaces, TUN, raw sockets); skipped with a note otherwise.
"""
import atexit
import ctypes
import hashlib
import hmac
import os
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402

R = T.Results("tunnel")
TUNNEL = os.path.join(T.BUILD, "twag-tunnel")
PID = os.getpid()
NSA, NSB = f"twt-a-{PID}", f"twt-b-{PID}"
A4, B4 = "10.231.0.1", "10.231.0.2"
A6, B6 = "fd31::1", "fd31::2"
IA, IB = "10.232.0.1", "10.232.0.2"

# transform: (encryption key octets, integrity key octets)
XFORMS = {
    "aes-gcm-128": (20, 0), "aes-gcm-256": (36, 0),
    "aes-cbc-128-hmac-sha1": (16, 20), "aes-cbc-256-hmac-sha1": (32, 20),
    "aes-cbc-128-hmac-sha256": (16, 32), "aes-cbc-256-hmac-sha256": (32, 32),
    "aes-cbc-128-hmac-md5": (16, 16), "3des-cbc-hmac-sha1": (24, 20),
    "null-hmac-sha1": (0, 20), "null-hmac-md5": (0, 16), "null": (0, 0),
    "ah-hmac-sha1": (0, 20), "ah-hmac-sha256": (0, 32), "ah-hmac-md5": (0, 16),
}
# Wireshark's ESP SA table names (packet-esp.c, Wireshark 4.0)
WS_ENC = {"aes-gcm-128": "AES-GCM with 16 octet ICV [RFC4106]",
          "aes-gcm-256": "AES-GCM with 16 octet ICV [RFC4106]",
          "aes-cbc-128-hmac-sha1": "AES-CBC [RFC3602]", "aes-cbc-128-hmac-sha256": "AES-CBC [RFC3602]",
          "3des-cbc-hmac-sha1": "TripleDES-CBC [RFC2451]", "null-hmac-sha1": "NULL"}
WS_AUTH = {"aes-cbc-128-hmac-sha1": "HMAC-SHA-1-96 [RFC2404]", "3des-cbc-hmac-sha1": "HMAC-SHA-1-96 [RFC2404]",
           "aes-cbc-128-hmac-sha256": "HMAC-SHA-256-128 [RFC4868]", "null-hmac-sha1": "HMAC-SHA-1-96 [RFC2404]"}

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000
_procs = []


def sh(*argv, check=True, timeout=20):
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {p.stderr.strip()}")
    return p


class netns:
    """with netns(NAME): sockets made inside live in that namespace."""
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.back = os.open("/proc/self/ns/net", os.O_RDONLY)
        fd = os.open(f"/run/netns/{self.name}", os.O_RDONLY)
        try:
            if _libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
        finally:
            os.close(fd)

    def __exit__(self, *a):
        _libc.setns(self.back, CLONE_NEWNET)
        os.close(self.back)


def teardown():
    for p in _procs:
        T.stop_child(p, wait=3.0)
    _procs.clear()
    for ns in (NSA, NSB):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def bed(mtu=1500):
    """Namespaces A and B, veth va/vb with IPv4 and IPv6 addresses."""
    teardown()
    sh("ip", "netns", "add", NSA)
    sh("ip", "netns", "add", NSB)
    sh("ip", "link", "add", "va", "netns", NSA, "mtu", str(mtu), "type", "veth",
       "peer", "name", "vb", "netns", NSB, "mtu", str(mtu))
    for ns, dev, a4, a6 in ((NSA, "va", A4, A6), (NSB, "vb", B4, B6)):
        sh("ip", "-n", ns, "addr", "add", f"{a4}/30", "dev", dev)
        sh("ip", "-n", ns, "addr", "add", f"{a6}/64", "dev", dev, "nodad")
        sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")


def start(ns, args, log):
    f = open(log, "w+")
    p = T.spawn(["ip", "netns", "exec", ns, TUNNEL] + args, stdout=f, stderr=subprocess.STDOUT)
    _procs.append(p)
    ok = T.wait_for(lambda: "ready" in T.read(log) or p.poll() is not None, 8.0)
    return p if ok and p.poll() is None else None


def keyhex(n):
    return T.rhex(n) if n else ""


def pair(work, xform, encap="udp", v6=False, extra_a=(), extra_b=(), ka=None, kb=None, tag="t"):
    """Both ends up; returns (pa, pb, ka, kb) or None."""
    e, i = XFORMS[xform]
    ka = ka if ka is not None else keyhex(e + i)
    kb = kb if kb is not None else keyhex(e + i)
    la, lb = (f"[{A6}]", f"[{B6}]") if v6 else (A4, B4)
    common = ["--encap", encap, "--metrics", "127.0.0.1:9100"] + (["--allow-null"] if xform == "null" else [])
    pa = start(NSA, ["--tun", "tw0", "--addr", f"{IA}/24", "--local", la, "--remote", lb,
                     "--sa-out", f"spi=1001,xform={xform},key={ka}", "--sa-in", f"spi=2002,xform={xform},key={kb}"]
               + common + list(extra_a), os.path.join(work, f"{tag}-a.log"))
    pb = start(NSB, ["--tun", "tw0", "--addr", f"{IB}/24", "--local", lb, "--remote", la,
                     "--sa-out", f"spi=2002,xform={xform},key={kb}", "--sa-in", f"spi=1001,xform={xform},key={ka}"]
               + common + list(extra_b), os.path.join(work, f"{tag}-b.log"))
    if pa is None or pb is None:
        R.check(False, f"{tag}: both twag-tunnel ends start",
                T.read(os.path.join(work, f"{tag}-a.log")) + T.read(os.path.join(work, f"{tag}-b.log")))
        return None
    return pa, pb, ka, kb


def stop_pair():
    for p in _procs:
        T.stop_child(p, wait=3.0)
    _procs.clear()


def ping(ns, dst, n=3):
    p = sh("ip", "netns", "exec", ns, "ping", "-c", str(n), "-i", "0.2", "-W", "2", dst, check=False, timeout=20)
    return p.returncode == 0 and f"{n} received" in p.stdout


def tcp_transfer(dst, size=4 << 20, v6=False):
    """Sends size random octets from A to dst in B; SHA-256 at both ends."""
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    with netns(NSB):
        srv = socket.socket(fam, socket.SOCK_STREAM)
        srv.bind((dst, 0))
        srv.listen(1)
    port = srv.getsockname()[1]
    got = {}

    def serve():
        srv.settimeout(15)
        try:
            c, _ = srv.accept()
            c.settimeout(15)
            h, n = hashlib.sha256(), 0
            while True:
                b = c.recv(1 << 16)
                if not b:
                    break
                h.update(b)
                n += len(b)
            got["h"], got["n"] = h.hexdigest(), n
            c.close()
        except OSError as e:
            got["err"] = str(e)
    t = threading.Thread(target=serve)
    t.start()
    data = os.urandom(size)
    with netns(NSA):
        c = socket.socket(fam, socket.SOCK_STREAM)
    c.settimeout(15)
    try:
        c.connect((dst, port))
        for off in range(0, size, 1 << 16):
            c.sendall(data[off:off + (1 << 16)])
        c.shutdown(socket.SHUT_WR)
    except OSError as e:
        got["err"] = f"sender: {e}"
    t.join(20)
    c.close()
    srv.close()
    return got.get("h") == hashlib.sha256(data).hexdigest() and got.get("n") == size, got


def metrics(ns):
    with netns(ns):
        s = socket.create_connection(("127.0.0.1", 9100), timeout=3)
    s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    body = T.recv_all(s).decode(errors="replace")
    s.close()
    out = {}
    for line in body.split("\r\n\r\n", 1)[-1].splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            out[k] = int(v)
    return out


def drops(m, reason):
    return m.get(f'twag_tunnel_drops_total{{reason="{reason}"}}', 0)


# ---- an independent ESP peer (RFC 4303 / RFC 4106 / RFC 3602 + RFC 2404) ----

def inet_csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def icmp_echo(src, dst, ident, seq, payload=b"twag-tunnel test"):
    icmp = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + payload
    icmp = icmp[:2] + struct.pack("!H", inet_csum(icmp)) + icmp[4:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(icmp), ident, 0x4000, 64, 1, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", inet_csum(ip)) + ip[12:]
    return ip + icmp


class PyEsp:
    def __init__(self, xform, spi, key):
        self.xform, self.spi, self.key = xform, spi, bytes.fromhex(key)
        self.gcm = xform.startswith("aes-gcm")

    def seal(self, seq, inner, nh=4):
        if self.gcm:
            k, salt = self.key[:-4], self.key[-4:]
            iv = os.urandom(8)
            pad = (-(len(inner) + 2)) % 4
            pt = inner + bytes(range(1, pad + 1)) + bytes([pad, nh])
            hdr = struct.pack("!II", self.spi, seq)
            return hdr + iv + AESGCM(k).encrypt(salt + iv, pt, hdr)
        k, ik = self.key[:16], self.key[16:]
        iv = os.urandom(16)
        pad = (-(len(inner) + 2)) % 16
        pt = inner + bytes(range(1, pad + 1)) + bytes([pad, nh])
        e = Cipher(algorithms.AES(k), modes.CBC(iv)).encryptor()
        body = struct.pack("!II", self.spi, seq) + iv + e.update(pt) + e.finalize()
        return body + hmac.new(ik, body, hashlib.sha1).digest()[:12]

    def open(self, pkt):
        spi, seq = struct.unpack("!II", pkt[:8])
        if spi != self.spi:
            return None
        if self.gcm:
            k, salt = self.key[:-4], self.key[-4:]
            pt = AESGCM(k).decrypt(salt + pkt[8:16], pkt[16:], pkt[:8])
        else:
            k, ik = self.key[:16], self.key[16:]
            if not hmac.compare_digest(hmac.new(ik, pkt[:-12], hashlib.sha1).digest()[:12], pkt[-12:]):
                return None
            d = Cipher(algorithms.AES(k), modes.CBC(pkt[8:24])).decryptor()
            pt = d.update(pkt[24:-12]) + d.finalize()
        padlen, nh = pt[-2], pt[-1]
        if pt[-2 - padlen:-2] != bytes(range(1, padlen + 1)):
            return None
        return seq, nh, pt[:-2 - padlen]


def prf_plus(key, seed, n):
    out, t, i = b"", b"", 1
    while len(out) < n:
        t = hmac.new(key, t + seed + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:n]


# ---- the tests ----

def traffic_matrix(work):
    for xform in XFORMS:
        encaps = ["ip"] if xform.startswith("ah-") else ["udp", "ip"]
        for encap in encaps:
            tag = f"{xform}/{encap}"
            if pair(work, xform, encap, tag=xform + "-" + encap) is None:
                continue
            R.check(ping(NSA, IB), f"{tag}: ping A -> B through the tunnel")
            ok, got = tcp_transfer(IB)
            R.check(ok, f"{tag}: 4 MiB over TCP arrive intact (SHA-256)", got)
            mb = metrics(NSB)
            R.check(mb.get("twag_tunnel_sa_in_packets_total", 0) > 100 and
                    sum(v for k, v in mb.items() if "drops_total" in k and "replayed" not in k
                        and "too_old" not in k) == 0,
                    f"{tag}: B decapsulated the traffic with no drop", mb)
            stop_pair()


def ipv6_and_esn(work):
    # IPv6 inside (TSO6 and the IPv6 join) and the ESN SA option
    if pair(work, "aes-gcm-128", "udp", extra_a=(), tag="v6in",
            ka=keyhex(20), kb=keyhex(20)) is not None:
        for ns, a in ((NSA, "fd32::1"), (NSB, "fd32::2")):
            sh("ip", "-n", ns, "-6", "addr", "add", f"{a}/64", "dev", "tw0", "nodad")
        R.check(ping(NSA, "fd32::2") or ping(NSA, "fd32::2"), "IPv6 inside: ping6 through the tunnel")
        ok, got = tcp_transfer("fd32::2", v6=True)
        R.check(ok, "IPv6 inside: 4 MiB over TCP arrive intact", got)
        stop_pair()
    for encap in ("udp", "ip"):
        if pair(work, "aes-cbc-128-hmac-sha256", encap, v6=True, tag=f"v6out-{encap}") is not None:
            R.check(ping(NSA, IB), f"IPv6 outer path ({encap}): ping through the tunnel")
            ok, got = tcp_transfer(IB)
            R.check(ok, f"IPv6 outer path ({encap}): TCP transfer intact", got)
            stop_pair()
    ka, kb = keyhex(20), keyhex(20)
    pa = start(NSA, ["--tun", "tw0", "--addr", f"{IA}/24", "--local", A4, "--remote", B4, "--metrics", "127.0.0.1:9100",
                     "--sa-out", f"spi=1001,xform=aes-gcm-128,key={ka},esn", "--sa-in", f"spi=2002,xform=aes-gcm-128,key={kb},esn"],
               os.path.join(work, "esn-a.log"))
    pb = start(NSB, ["--tun", "tw0", "--addr", f"{IB}/24", "--local", B4, "--remote", A4, "--metrics", "127.0.0.1:9100",
                     "--sa-out", f"spi=2002,xform=aes-gcm-128,key={kb},esn", "--sa-in", f"spi=1001,xform=aes-gcm-128,key={ka},esn"],
               os.path.join(work, "esn-b.log"))
    if R.check(pa is not None and pb is not None, "ESN SAs start"):
        R.check(ping(NSA, IB), "ESN: ping through the tunnel")
        ok, got = tcp_transfer(IB, 1 << 20)
        R.check(ok, "ESN: TCP transfer intact", got)
    stop_pair()


def tshark_decrypt(work):
    if not T.binaries_ok(R, names=(), tools=("dumpcap", "tshark", "ethtool")):
        return
    msk = os.urandom(64)
    for xform in ("aes-gcm-128", "aes-cbc-128-hmac-sha1", "3des-cbc-hmac-sha1", "null-hmac-sha1",
                  "aes-cbc-128-hmac-sha256"):
        for encap in ("udp", "ip"):
            tag = f"tshark {xform}/{encap}"
            use_msk = xform == "aes-gcm-128"
            if use_msk:
                # keys from the MSK, computed here independently of twag
                e, i = XFORMS[xform]
                seed = b"twag-tunnel ESP" + struct.pack("!II", 0x1001, 0x2002)
                km = prf_plus(msk, seed, 2 * (e + i))
                ka, kb = km[:e + i].hex(), km[e + i:].hex()
                la = start(NSA, ["--tun", "tw0", "--addr", f"{IA}/24", "--local", A4, "--remote", B4, "--encap", encap,
                                 "--msk", msk.hex(), "--xform", xform, "--spi-out", "1001", "--spi-in", "2002",
                                 "--initiator"], os.path.join(work, f"msk-{encap}-a.log"))
                lb = start(NSB, ["--tun", "tw0", "--addr", f"{IB}/24", "--local", B4, "--remote", A4, "--encap", encap,
                                 "--msk", msk.hex(), "--xform", xform, "--spi-out", "2002", "--spi-in", "1001",
                                 "--responder"], os.path.join(work, f"msk-{encap}-b.log"))
                if not R.check(la is not None and lb is not None, f"{tag}: both ends start with --msk"):
                    stop_pair()
                    continue
            elif pair(work, xform, encap, tag=f"ts-{xform}-{encap}") is None:
                continue
            else:
                ka, kb = _last_keys
            # a capture sees a UDP GSO buffer before it is cut, unless the
            # veth cannot take one (then the kernel cuts it before the tap)
            for ns, dev in ((NSA, "va"), (NSB, "vb")):
                sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, "tx-udp-segmentation", "off", check=False)
            pcap = os.path.join(work, f"{xform}-{encap}.pcap")
            cap = T.spawn(["ip", "netns", "exec", NSB, "dumpcap", "-q", "-i", "vb", "-f",
                           "udp port 4500 or ip proto 50", "-w", pcap], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
            T.wait_for(lambda: os.path.exists(pcap) and os.path.getsize(pcap) > 0, 5.0)
            time.sleep(0.3)
            R.check(ping(NSA, IB), f"{tag}: ping" + (" (keys from the MSK)" if use_msk else ""))
            ok, _ = tcp_transfer(IB, 256 << 10)
            R.check(ok, f"{tag}: TCP transfer intact")
            time.sleep(0.3)
            T.stop_child(cap, wait=3.0)
            stop_pair()
            e, i = XFORMS[xform]

            def sa(src, dst, spi, k):
                kk = bytes.fromhex(k)
                return (f'"IPv4","{src}","{dst}","0x{spi:08x}","{WS_ENC[xform]}",'
                        f'"{"0x" + kk[:e].hex() if e else ""}","{WS_AUTH.get(xform, "NULL")}",'
                        f'"{"0x" + kk[e:].hex() if i else ""}"')
            argv = ["tshark", "-n", "-r", pcap, "-o", "esp.enable_encryption_decode:TRUE",
                    "-o", "esp.enable_authentication_check:TRUE",
                    "-o", "uat:esp_sa:" + sa(A4, B4, 0x1001, ka), "-o", "uat:esp_sa:" + sa(B4, A4, 0x2002, kb)]
            p = subprocess.run(argv + ["-T", "fields", "-e", "frame.number", "-e", "_ws.col.Protocol",
                                       "-e", "_ws.expert.message", "-e", "esp.icv_good"],
                               capture_output=True, text=True, timeout=60)
            rows = [r.split("\t") for r in p.stdout.splitlines() if r]
            icmp = sum(1 for r in rows if r[1] == "ICMP")
            tcp = sum(1 for r in rows if r[1] == "TCP")
            bad = subprocess.run(argv + ["-Y", "_ws.malformed or _ws.expert.severity == error"],
                                 capture_output=True, text=True, timeout=60).stdout.strip()
            R.check(icmp >= 6 and tcp > 20, f"{tag}: tshark decrypts the inner ICMP and TCP",
                    f"icmp={icmp} tcp={tcp}\n{p.stdout[-1500:]}{p.stderr[-500:]}")
            R.check(bad == "", f"{tag}: no malformed frame, no expert error", bad)
            if i:
                goodicv = sum(1 for r in rows if len(r) > 3 and r[3] == "1")
                R.check(goodicv >= len(rows) - 2 and goodicv > 0,
                        f"{tag}: tshark verifies every ICV ({goodicv}/{len(rows)})")


_last_keys = (None, None)
_pair = pair


def pair(work, xform, encap="udp", **kw):  # noqa: F811 (remembers the keys)
    global _last_keys
    r = _pair(work, xform, encap, **kw)
    if r is not None:
        _last_keys = (r[2], r[3])
    return r


def bad_input(work):
    """Python plays end A: twag-tunnel in B talks to this script's ESP."""
    bed(mtu=9000)  # so oversized datagrams arrive whole
    for xform, encap in (("aes-gcm-128", "udp"), ("aes-cbc-128-hmac-sha1", "udp"), ("aes-gcm-128", "ip")):
        tag = f"peer {xform}/{encap}"
        e, i = XFORMS[xform]
        ka, kb = keyhex(e + i), keyhex(e + i)
        pb = start(NSB, ["--tun", "tw0", "--addr", f"{IB}/24", "--local", B4, "--remote", A4, "--encap", encap,
                         "--path-mtu", "1500", "--metrics", "127.0.0.1:9100",
                         "--sa-out", f"spi=2002,xform={xform},key={kb}", "--sa-in", f"spi=1001,xform={xform},key={ka}"],
                   os.path.join(work, f"bad-{xform}-{encap}.log"))
        if not R.check(pb is not None, f"{tag}: twag-tunnel starts"):
            continue
        tx, rx = PyEsp(xform, 0x1001, ka), PyEsp(xform, 0x2002, kb)
        with netns(NSA):
            if encap == "udp":
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind((A4, 4500))
                s.connect((B4, 4500))
            else:
                s = socket.socket(socket.AF_INET, socket.SOCK_RAW, 50)
                s.connect((B4, 0))
        s.settimeout(2.0)

        def send(b):
            s.send(b)

        def drain():
            s.setblocking(False)
            try:
                while True:
                    s.recv(65535)
            except OSError:
                pass
            s.settimeout(2.0)

        def recv_reply(ident):
            end = time.time() + 2.0
            while time.time() < end:
                try:
                    b = s.recv(65535)
                except socket.timeout:
                    return None
                if encap == "ip":
                    b = b[(b[0] & 15) * 4:]
                r = rx.open(b)
                if r is not None and len(r[2]) >= 28 and struct.unpack("!H", r[2][24:26])[0] == ident:
                    return r
            return None

        def echo_ok(seq, ident):
            drain()
            send(tx.seal(seq, icmp_echo(IA, IB, ident, seq)))
            r = recv_reply(ident)
            if r is None:
                return False
            _, nh, inner = r
            return nh == 4 and inner[9] == 1 and inner[20] == 0 and inner[12:16] == socket.inet_aton(IB)

        R.check(echo_ok(1, 0x1234), f"{tag}: an echo request sealed here is answered, "
                "and the reply opens here (ESP interop both ways)")
        m0 = metrics(NSB)
        good = tx.seal(2, icmp_echo(IA, IB, 7, 2))
        send(good)
        send(good)                                     # replayed
        send(tx.seal(500, icmp_echo(IA, IB, 7, 500)))  # moves the window
        send(tx.seal(3, icmp_echo(IA, IB, 7, 3)))      # now left of the window
        send(struct.pack("!I", 0x9999) + good[4:])     # wrong SPI
        bad_icv = tx.seal(600, icmp_echo(IA, IB, 7, 600))  # wrong ICV, fresh seq
        send(bad_icv[:-1] + bytes([bad_icv[-1] ^ 0x80]))
        send(good[:12])                                # truncated
        if encap == "udp":
            send(b"\xff")                              # RFC 3948 §2.3 keepalive
            send(b"\0\0\0\0" + os.urandom(40))         # non-ESP marker (IKE)
        send(tx.seal(700, os.urandom(20) + icmp_echo(IA, IB, 7, 700)[20:]))  # not an IP packet inside
        send(tx.seal(701, icmp_echo(IA, IB, 7, 701)) + os.urandom(4000))     # oversized
        s.setsockopt(socket.IPPROTO_IP, 10, 0)         # IP_MTU_DISCOVER = DONT: may fragment
        send(tx.seal(702, icmp_echo(IA, IB, 7, 702, os.urandom(12000))))     # in IP fragments
        for _ in range(300):
            send(os.urandom(1 + int.from_bytes(os.urandom(2), "big") % 1400))
        time.sleep(0.5)
        R.check(pb.poll() is None, f"{tag}: twag-tunnel still running after the bad input")
        R.check(echo_ok(800, 0x4321), f"{tag}: the next valid packet still gets through")
        m1 = metrics(NSB)

        def d(reason):
            return drops(m1, reason) - drops(m0, reason)
        R.check(d("replayed") == 1, f"{tag}: the replay is counted as replayed", d("replayed"))
        R.check(d("too_old") == 1, f"{tag}: seq 3 after 500 counted as too old", d("too_old"))
        R.check(d("bad_icv") >= 1, f"{tag}: the wrong ICV counted", d("bad_icv"))
        R.check(d("bad_spi") >= 1, f"{tag}: the wrong SPI counted", d("bad_spi"))
        R.check(d("bad_length") + d("non_esp") >= 1, f"{tag}: the truncated packet counted",
                (d("bad_length"), d("non_esp")))
        if encap == "udp":
            R.check(d("non_esp") >= 2, f"{tag}: keepalive and IKE marker counted as non-ESP", d("non_esp"))
        # the library refuses a version that does not match next header 4
        # (bad_next_header); one that does but whose length is wrong: bad_inner
        R.check(d("bad_inner") + d("bad_next_header") == 1,
                f"{tag}: a payload that is not an IP packet counted", (d("bad_inner"), d("bad_next_header")))
        R.check(d("oversized") == 1, f"{tag}: the oversized datagram counted", d("oversized"))
        R.check(d("fragmented") == 1, f"{tag}: the fragmented datagram counted", d("fragmented"))
        ok = m1.get("twag_tunnel_sa_in_packets_total", 0) - m0.get("twag_tunnel_sa_in_packets_total", 0)
        R.check(ok + d("bad_next_header") == 4,
                f"{tag}: exactly the 4 fresh valid packets (2, 500, 700, 800) decrypted", ok)
        s.close()
        stop_pair()
    bed()


def exhaustion(work):
    ka, kb = keyhex(20), keyhex(20)
    pa = start(NSA, ["--tun", "tw0", "--addr", f"{IA}/24", "--local", A4, "--remote", B4, "--metrics", "127.0.0.1:9100",
                     "--sa-out", f"spi=1001,xform=aes-gcm-128,key={ka},seq=fffffffd",
                     "--sa-in", f"spi=2002,xform=aes-gcm-128,key={kb}"], os.path.join(work, "ex-a.log"))
    pb = start(NSB, ["--tun", "tw0", "--addr", f"{IB}/24", "--local", B4, "--remote", A4, "--metrics", "127.0.0.1:9100",
                     "--sa-out", f"spi=2002,xform=aes-gcm-128,key={kb}", "--sa-in", f"spi=1001,xform=aes-gcm-128,key={ka}"],
               os.path.join(work, "ex-b.log"))
    if not R.check(pa is not None and pb is not None, "exhaustion: both ends start (seq=)"):
        stop_pair()
        return
    ping(NSA, IB, 5)
    m = metrics(NSA)
    R.check(m.get("twag_tunnel_sa_out_packets_total") == 2 and drops(m, "seq_exhausted") >= 3,
            "exhaustion: 2 packets up to 2^32 - 1, then dropped and counted (RFC 4303 §3.3.3)", m)
    R.check("used up" in T.read(os.path.join(work, "ex-a.log")), "exhaustion: said once in the log")
    R.check(pa.poll() is None, "exhaustion: the tunnel process still runs")
    stop_pair()


def kernel_esp(work):
    """Where the kernel has XFRM ESP: twag-tunnel in A against the kernel's
    ESP tunnel in B (IP protocol 50, AES-GCM-128)."""
    ka, kb = keyhex(20), keyhex(20)
    p = sh("ip", "-n", NSB, "xfrm", "state", "add", "src", A4, "dst", B4, "proto", "esp", "spi", "0x1001",
           "reqid", "1", "mode", "tunnel", "aead", "rfc4106(gcm(aes))", "0x" + ka, "128", check=False)
    if p.returncode != 0:
        R.note(f"kernel ESP: not available here ({p.stderr.strip()[:120]}): twag-tunnel vs kernel skipped")
        return
    cmds = [
        ["xfrm", "state", "add", "src", B4, "dst", A4, "proto", "esp", "spi", "0x2002", "reqid", "1",
         "mode", "tunnel", "aead", "rfc4106(gcm(aes))", "0x" + kb, "128"],
        ["xfrm", "policy", "add", "src", f"{IB}/32", "dst", f"{IA}/32", "dir", "out",
         "tmpl", "src", B4, "dst", A4, "proto", "esp", "reqid", "1", "mode", "tunnel"],
        ["xfrm", "policy", "add", "src", f"{IA}/32", "dst", f"{IB}/32", "dir", "in",
         "tmpl", "src", A4, "dst", B4, "proto", "esp", "reqid", "1", "mode", "tunnel"],
        ["addr", "add", f"{IB}/32", "dev", "lo"],
        ["route", "add", f"{IA}/32", "dev", "vb", "src", IB],
    ]
    for c in cmds:
        sh("ip", "-n", NSB, *c)
    pa = start(NSA, ["--tun", "tw0", "--addr", f"{IA}/24", "--local", A4, "--remote", B4, "--encap", "ip",
                     "--sa-out", f"spi=1001,xform=aes-gcm-128,key={ka}", "--sa-in", f"spi=2002,xform=aes-gcm-128,key={kb}"],
               os.path.join(work, "kernel-a.log"))
    if R.check(pa is not None, "kernel ESP: twag-tunnel starts"):
        R.check(ping(NSA, IB), "kernel ESP: ping from twag-tunnel to the kernel's ESP tunnel and back")
        ok, got = tcp_transfer(IB, 1 << 20)
        R.check(ok, "kernel ESP: TCP transfer intact", got)
    stop_pair()
    bed()


def config_file(work):
    """--config FILE: the options of one end from a file (mode 0600), the
    other's from a file others can read (a warning); a flag on the command
    line wins over the file."""
    ka, kb = keyhex(36), keyhex(36)
    files = {}
    for side, mode in (("a", 0o600), ("b", 0o644)):
        me, peer, ia = (A4, B4, IA) if side == "a" else (B4, A4, IB)
        out, inn = ("1001", "2002") if side == "a" else ("2002", "1001")
        ko, ki = (ka, kb) if side == "a" else (kb, ka)
        path = os.path.join(work, f"tunnel-{side}.conf")
        with open(path, "w") as f:
            f.write(f"# twag-tunnel {side}\n\ntun tw0\naddr {ia}/24\nlocal {me}\nremote {peer}\n"
                    f"encap udp\nsa-out spi={out},xform=aes-cbc-128-hmac-sha1,key={ko}\n"
                    f"sa-in spi={inn},xform=aes-cbc-128-hmac-sha1,key={ki}\nmtu 1300\n")
        os.chmod(path, mode)
        files[side] = path
    pa = start(NSA, ["--config", files["a"], "--metrics", "127.0.0.1:9100"], os.path.join(work, "conf-a.log"))
    pb = start(NSB, ["--config", files["b"], "--mtu", "1400"], os.path.join(work, "conf-b.log"))
    if R.check(pa is not None and pb is not None, "config: both ends start from --config files"):
        R.check(ping(NSA, IB), "config: ping through the tunnel")
        la, lb = T.read(os.path.join(work, "conf-a.log")), T.read(os.path.join(work, "conf-b.log"))
        R.check("readable by others" not in la and "readable by others" in lb,
                "config: a file others can read is warned about, a 0600 one is not", la + lb)
        R.check("mtu=1300" in la and "mtu=1400" in lb, "config: the file's mtu, and the command line's over it",
                la + lb)
        R.check(ka not in la + lb and kb not in la + lb, "config: no key in the logs")
        with netns(NSA):
            s = socket.create_connection(("127.0.0.1", 9100), timeout=3)
        s.sendall(b"GET /other HTTP/1.0\r\n\r\n")
        R.check(T.recv_all(s).startswith(b"HTTP/1.0 404"), "metrics: another path is 404")
        s.close()
    stop_pair()


def cli_errors(work):
    base = ["--tun", "tw9", "--local", A4, "--remote", B4]
    cases = [
        (["--sa-out", "spi=1,xform=aes-gcm-128,key=00", "--sa-in", "spi=2,xform=aes-gcm-128,key=00"], "takes a key of 20"),
        (["--sa-out", "spi=0,xform=aes-gcm-128", "--sa-in", "spi=2,xform=aes-gcm-128"], "not 0"),
        (["--sa-out", "spi=1,xform=rot13", "--sa-in", "spi=2,xform=null"], "unknown transform"),
        (["--sa-out", "spi=1,xform=null", "--sa-in", "spi=2,xform=null"], "--allow-null"),
        (["--sa-out", "spi=1,xform=ah-hmac-md5,key=" + "00" * 16,
          "--sa-in", "spi=2,xform=ah-hmac-md5,key=" + "00" * 16], "AH needs --encap ip"),
        (["--msk", "00" * 64, "--xform", "aes-gcm-128"], "--initiator or --responder"),
        (["--sa-out", "spi=1,xform=aes-gcm-128,key=" + "00" * 20, "--sa-in", "spi=2,xform=aes-gcm-128,key="
          + "00" * 20 + ",window=5"], "replay window"),
    ]
    for args, want in cases:
        p = subprocess.run([TUNNEL] + base + args, capture_output=True, text=True, timeout=10)
        R.check(p.returncode == 2 and want in p.stderr and "00000000000000" not in p.stderr,
                f"refused with the reason: {want}", p.stderr)


def main():
    if os.geteuid() != 0:
        R.note("SKIP: needs root (network namespaces, TUN, raw sockets)")
        return
    if not T.binaries_ok(R, names=("twag-tunnel",), tools=("ip", "ping")):
        return
    atexit.register(teardown)
    work = T.tmpdir("tunnel")
    cli_errors(work)
    bed()
    traffic_matrix(work)
    ipv6_and_esn(work)
    tshark_decrypt(work)
    exhaustion(work)
    config_file(work)
    kernel_esp(work)
    bad_input(work)
    teardown()
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    R.check(NSA not in p.stdout and NSB not in p.stdout, "namespaces removed")


if __name__ == "__main__":
    T.run_main(main, R)
