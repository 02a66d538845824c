"""Shared code for the twag integration tests (tests/integration/test_*.sh).

Everything on the phone side here is independent of twag's own C code:
  - Milenage f1..f5, f1*, f5* (3GPP TS 35.206 V17) in Python on the AES of
    the "cryptography" package, checked against TS 35.208 test set 1 before
    use; a USIM with the SQN array of TS 33.102 V17 Annex C.2;
  - COMP128v1 SIMs through osmo-auc-gen (libosmocore-utils);
  - eapol_test (Debian eapoltest) as the EAP peer with external_sim=1, driven
    over its control socket like wpa_cli does;
  - a RADIUS client on hashlib/hmac (RFC 2865 §3, RFC 3579 §3.2).

The daemon under test is $BUILD/twagd, provisioned with $BUILD/twag
subscriber add (interface: docs/twagd.md).
Every child process gets PR_SET_PDEATHSIG=SIGKILL and is also stopped in
cleanup(), so nothing outlives the test even if the test itself is killed.
"""
import atexit
import ctypes
import hashlib
import hmac
import os
import random
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
TWAGD = os.path.join(BUILD, "twagd")
TWAG = os.path.join(BUILD, "twag")
SEED = int(os.environ.get("TWAG_TEST_SEED", random.randrange(1 << 30)))
rng = random.Random(SEED)
REALM = "wlan.mnc001.mcc001.3gppnetwork.org"
VERBOSE = os.environ.get("TWAG_TEST_VERBOSE", "") not in ("", "0")


# ---- results ----------------------------------------------------------------

class Results:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0
        print(f"note: {name}: TWAG_TEST_SEED={SEED}", flush=True)

    def check(self, ok, what, detail=None):
        if ok:
            self.passed += 1
            if VERBOSE:
                print(f"ok   {self.name}: {what}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {self.name}: {what}", flush=True)
            if detail:
                for line in str(detail).rstrip().split("\n")[-40:]:
                    print(f"     | {line}", flush=True)
        return ok

    def note(self, what):
        print(f"note: {self.name}: {what}", flush=True)

    def finish(self):
        # a sanitizer build (make SANITIZER=...) reports into twagd's logs
        for p in list(_children):
            stop_child(p, signal.SIGKILL, 2.0)
        hits = sanitizer_reports()
        if hits:
            self.check(False, "sanitizer reports in twagd logs", "\n".join(hits))
        cleanup()
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        sys.exit(0 if self.failed == 0 and self.passed > 0 else 1)


# ---- process and temp-dir hygiene ------------------------------------------

_children = []
_tmpdirs = []
_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def _die_with_parent():
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def spawn(argv, **kw):
    """Popen with the child killed if we die; remembered for cleanup()."""
    p = subprocess.Popen(argv, preexec_fn=_die_with_parent, **kw)
    _children.append(p)
    return p


def stop_child(p, sig=signal.SIGTERM, wait=5.0):
    """Signals p and waits; SIGKILL after wait seconds. Returns the exit code."""
    if p.poll() is None:
        try:
            p.send_signal(sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(wait)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in _children:
        _children.remove(p)
    return p.returncode


def wait_for(pred, timeout=10.0):
    """Polls pred() every 50 ms until it is true or timeout s passed."""
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def read(path):
    """A text file's contents, "" when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def tmpdir(tag):
    d = tempfile.mkdtemp(prefix=f"twag-{tag}-", dir="/tmp")
    _tmpdirs.append(d)
    return d


_mounts = []


def mount_tmpfs(path, size="4m"):
    """A small tmpfs of our own at path (root only); False if not possible."""
    try:
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", path],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    if p.returncode == 0:
        _mounts.append(path)
    return p.returncode == 0


def umount(path):
    if path in _mounts:
        if subprocess.run(["umount", path], capture_output=True, timeout=10).returncode != 0:
            subprocess.run(["umount", "-l", path], capture_output=True, timeout=10)
        _mounts.remove(path)


def cleanup():
    for p in list(_children):
        stop_child(p, signal.SIGKILL, 2.0)
    for m in list(_mounts):
        umount(m)
    for d in _tmpdirs:
        if os.environ.get("TWAG_TEST_KEEP"):
            print(f"note: kept {d}", flush=True)
            continue
        shutil.rmtree(d, ignore_errors=True)
    _tmpdirs.clear()


_SAN = re.compile(r"ERROR: AddressSanitizer|WARNING: ThreadSanitizer|ERROR: LeakSanitizer|"
                  r"runtime error:|SUMMARY: \w+Sanitizer")


def sanitizer_reports():
    hits = []
    for d in _tmpdirs:
        for base, _, files in os.walk(d):
            for f in files:
                if not (f.endswith(".log") or f.endswith(".stderr") or ".log." in f):
                    continue
                try:
                    with open(os.path.join(base, f), errors="replace") as fh:
                        for line in fh:
                            if _SAN.search(line):
                                hits.append(f"{f}: {line.rstrip()}")
                except OSError:
                    pass
    return hits[:40]


def _on_signal(signum, frame):
    cleanup()
    print(f"FAIL killed by signal {signum}", flush=True)
    print("0 passed, 1 failed", flush=True)
    os._exit(1)


signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)
signal.signal(signal.SIGHUP, _on_signal)
atexit.register(cleanup)


def free_udp_port(host="127.0.0.1"):
    """A port in 20000-40000 free for UDP (and TCP, for metrics) right now."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(200):
        port = rng.randrange(20000, 40000)
        try:
            for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
                s = socket.socket(fam, kind)
                try:
                    s.bind((host, port))
                finally:
                    s.close()
            return port
        except OSError:
            continue
    raise RuntimeError("no free port in 20000-40000")


# ---- Milenage (3GPP TS 35.206 V17.0.0) --------------------------------------

def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def aes128(k, block):
    e = Cipher(algorithms.AES(k), modes.ECB()).encryptor()
    return e.update(block) + e.finalize()


def rot(x, r):
    """TS 35.206 §4.1: rot(x, r) cyclically rotates the 128-bit x left by r bits
    (r is a multiple of 8 for the default constants)."""
    n = r // 8
    return x[n:] + x[:n]


def opc_from_op(k, op):
    # TS 35.206 §4.1: OPc = OP ^ E[OP]_K
    return xor(op, aes128(k, op))


_C = [bytes(15) + bytes([c]) for c in (0, 1, 2, 4, 8)]  # c1..c5
_R = [64, 0, 32, 64, 96]                                 # r1..r5


class Milenage:
    def __init__(self, k, opc):
        self.k, self.opc = k, opc

    def _temp(self, rand_):
        # TS 35.206 §4.1: TEMP = E[RAND ^ OPc]_K
        return aes128(self.k, xor(rand_, self.opc))

    def f1(self, rand_, sqn, amf):
        """(MAC-A, MAC-S): IN1 = SQN||AMF||SQN||AMF,
        OUT1 = E[TEMP ^ rot(IN1 ^ OPc, r1) ^ c1]_K ^ OPc."""
        temp = self._temp(rand_)
        in1 = sqn + amf + sqn + amf
        out1 = xor(aes128(self.k, xor(xor(temp, rot(xor(in1, self.opc), _R[0])), _C[0])), self.opc)
        return out1[:8], out1[8:]

    def _out(self, temp, i):
        # OUTi = E[rot(TEMP ^ OPc, ri) ^ ci]_K ^ OPc, i = 2..5
        return xor(aes128(self.k, xor(rot(xor(temp, self.opc), _R[i - 1]), _C[i - 1])), self.opc)

    def f2345(self, rand_):
        """(RES, CK, IK, AK): f2 = OUT2[64..127], f5 = OUT2[0..47],
        f3 = OUT3, f4 = OUT4."""
        temp = self._temp(rand_)
        out2 = self._out(temp, 2)
        return out2[8:], self._out(temp, 3), self._out(temp, 4), out2[:6]

    def f5star(self, rand_):
        """AK* = OUT5[0..47]."""
        return self._out(self._temp(rand_), 5)[:6]


def gsm_c2(res):
    # TS 33.102 §6.8.1.2: c2 for a 64-bit RES: SRES = RES[0..31] ^ RES[32..63]
    return xor(res[:4], res[4:8])


def gsm_c3(ck, ik):
    # TS 33.102 §6.8.1.2: Kc = CK1 ^ CK2 ^ IK1 ^ IK2 (64-bit halves)
    return xor(xor(ck[:8], ck[8:]), xor(ik[:8], ik[8:]))


# 3GPP TS 35.208 §4.3, Test Set 1 (inputs and f1..f5, f1*, f5*), and the GSM
# SRES/Kc of the same set (TS 35.208 §4.3 / TS 35.207 set 1: c2/c3).
TS35208_SET1 = dict(
    k="465b5ce8b199b49faa5f0a2ee238a6bc", op="cdc202d5123e20f62b6d676ac72cb318",
    opc="cd63cb71954a9f4e48a5994e37a02baf", rand="23553cbe9637a89d218ae64dae47bf35",
    sqn="ff9bb4d0b607", amf="b9b9", mac_a="4a9ffac354dfafb3", mac_s="01cfaf9ec4e871e9",
    res="a54211d5e3ba50bf", ck="b40ba9a3c58b2a05bbf0d987b21bf8cb",
    ik="f769bcd751044604127672711c6d3441", ak="aa689c648370", ak_star="451e8beca43b",
    sres="46f8416a", kc="eae4be823af9a08b")


def milenage_selftest(R):
    """Our Python USIM must be right before it judges the daemon."""
    v = {k: bytes.fromhex(x) for k, x in TS35208_SET1.items()}
    opc = opc_from_op(v["k"], v["op"])
    m = Milenage(v["k"], opc)
    mac_a, mac_s = m.f1(v["rand"], v["sqn"], v["amf"])
    res, ck, ik, ak = m.f2345(v["rand"])
    got = dict(opc=opc, mac_a=mac_a, mac_s=mac_s, res=res, ck=ck, ik=ik, ak=ak,
               ak_star=m.f5star(v["rand"]), sres=gsm_c2(res), kc=gsm_c3(ck, ik))
    bad = [n for n in got if got[n] != v[n]]
    return R.check(not bad, "Python Milenage reproduces TS 35.208 test set 1",
                   f"mismatch in {bad}")


class Usim:
    """A USIM: Milenage and the SQN array of TS 33.102 Annex C.2 (IND of
    ind_bits, SEQ_MS(i) per slot, freshness limit L = 2^28, C.2.2)."""

    DELTA = 1 << 28

    def __init__(self, k, opc, ind_bits=5, seq_ms=0):
        self.m = Milenage(k, opc)
        self.ind_bits = ind_bits
        self.seq = [seq_ms] * (1 << ind_bits)
        self.accepted = []      # every SQN accepted, in order
        self.refused = []       # SQNs refused as not fresh
        self.mac_failures = 0
        self.lock = threading.Lock()

    def sqn_ms(self):
        """The highest SQN accepted so far: SEQ_MS || IND_MS (C.3.4 / §6.3.5)."""
        i = max(range(len(self.seq)), key=lambda j: self.seq[j])
        return (self.seq[i] << self.ind_bits) | i

    def umts_auth(self, rand_, autn):
        """TS 33.102 §6.3.3. Returns ("ok", res, ck, ik), ("sync", auts) or
        ("mac", None)."""
        with self.lock:
            m = self.m
            res, ck, ik, ak = m.f2345(rand_)
            sqn = xor(autn[:6], ak)                 # AUTN = SQN^AK || AMF || MAC
            amf, mac = autn[6:8], autn[8:16]
            if not hmac.compare_digest(m.f1(rand_, sqn, amf)[0], mac):
                self.mac_failures += 1
                return ("mac", None)
            sqn_i = int.from_bytes(sqn, "big")
            seq, ind = sqn_i >> self.ind_bits, sqn_i & ((1 << self.ind_bits) - 1)
            # C.2.2: fresh iff SEQ > SEQ_MS(IND) and SEQ - max SEQ_MS <= L
            if seq <= self.seq[ind] or seq - max(self.seq) > self.DELTA:
                self.refused.append(sqn_i)
                # §6.3.5: AUTS = SQN_MS ^ AK* || MAC-S, MAC-S = f1*(SQN_MS, RAND,
                # AMF*) with the dummy AMF* = 0x0000
                sqn_ms = self.sqn_ms().to_bytes(6, "big")
                mac_s = m.f1(rand_, sqn_ms, b"\0\0")[1]
                return ("sync", xor(sqn_ms, m.f5star(rand_)) + mac_s)
            self.seq[ind] = seq
            self.accepted.append(sqn_i)
            return ("ok", res, ck, ik)

    def gsm_auth(self, rand_):
        """A USIM in a GSM context (§6.8.1.2): (Kc, SRES) = (c3(CK, IK), c2(RES))."""
        res, ck, ik, _ = self.m.f2345(rand_)
        return gsm_c3(ck, ik), gsm_c2(res)


class Comp128Sim:
    """A SIM: COMP128 computed by osmo-auc-gen (libosmocore)."""

    def __init__(self, ki, version=1):
        self.ki, self.version = ki, version
        self.calls = 0

    def gsm_auth(self, rand_):
        self.calls += 1
        out = subprocess.run(["osmo-auc-gen", "-2", "-a", f"comp128v{self.version}",
                              "-k", self.ki.hex(), "-r", rand_.hex()],
                             capture_output=True, text=True, timeout=10).stdout
        f = dict(re.findall(r"^(\w+):\s*([0-9a-fA-F]+)\s*$", out, re.M))
        return bytes.fromhex(f["Kc"]), bytes.fromhex(f["SRES"])


def rand_imsi(prefix="00101"):
    return prefix + "".join(str(rng.randrange(10)) for _ in range(15 - len(prefix)))


def rbytes(n):
    """Seeded (TWAG_TEST_SEED) random octets: a failing run can be replayed."""
    return bytes(rng.randrange(256) for _ in range(n))


def rhex(n):
    return rbytes(n).hex()


def nai(digit, imsi):
    return f"{digit}{imsi}@{REALM}"


# ---- twag subscriber ----------------------------------------------------------

def twag(*args, check=True):
    p = subprocess.run([TWAG, *args], capture_output=True, text=True, timeout=30)
    if check and p.returncode != 0:
        raise RuntimeError(f"twag {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def add_milenage(db, imsi, k, opc, amf="8000", sqn="000000000000", kek=None):
    args = ["subscriber", "add", "--db", db, "--imsi", imsi, "--algo", "milenage",
            "--ki", k.hex(), "--opc", opc.hex(), "--amf", amf, "--sqn", sqn]
    if kek:
        args += ["--kek-file", kek]
    twag(*args)


def add_comp128(db, imsi, ki, version=1, kek=None):
    args = ["subscriber", "add", "--db", db, "--imsi", imsi, "--algo",
            f"comp128v{version}", "--ki", ki.hex()]
    if kek:
        args += ["--kek-file", kek]
    twag(*args)


def new_usim(db, imsi=None, amf="8000", sqn="000000000000", usim_seq=0, kek=None):
    """Provisions a random Milenage subscriber; returns (imsi, Usim)."""
    imsi = imsi or rand_imsi()
    k, opc = rbytes(16), rbytes(16)
    add_milenage(db, imsi, k, opc, amf=amf, sqn=sqn, kek=kek)
    return imsi, Usim(k, opc, seq_ms=usim_seq)


def new_sim(db, imsi=None, kek=None):
    imsi = imsi or rand_imsi()
    ki = rbytes(16)
    add_comp128(db, imsi, ki, kek=kek)
    return imsi, Comp128Sim(ki)


# ---- twagd --------------------------------------------------------------------

def recv_all(s):
    """Everything s sends until it closes."""
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk


class Twagd:
    """twagd on 127.0.0.1 with a free port; stderr/stdout to a log file."""

    def __init__(self, work, db, secret="testing123", extra=(), clients=None,
                 threads=2, host="127.0.0.1"):
        self.work, self.db, self.secret, self.host = work, db, secret, host
        self.extra = list(extra)
        self.clients = clients or [f"127.0.0.1={secret}"]
        self.threads = threads
        self.proc = None
        self.port = self.mport = None
        self.log = os.path.join(work, "twagd.log")
        self.starts = 0

    def argv(self):
        listen = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        a = [TWAGD, "--listen", listen, "--store", f"sqlite:{self.db}",
             "--network-name", "WLAN", "--threads", str(self.threads),
             "--metrics", f"127.0.0.1:{self.mport}", "--log-level", "debug"]
        for c in self.clients:
            a += ["--client", c]
        return a + self.extra

    def start(self, timeout=15.0):
        for attempt in range(5):
            self.port = free_udp_port(self.host)
            self.mport = free_udp_port()
            self.starts += 1
            logf = open(self.log, "a")
            logf.write(f"#### start {self.starts}: {' '.join(self.argv())}\n")
            logf.flush()
            self.proc = spawn(self.argv(), stdout=logf, stderr=logf, stdin=subprocess.DEVNULL)
            logf.close()
            marker = f"#### start {self.starts}:"
            deadline = time.time() + timeout
            while time.time() < deadline:
                text = self.log_text(marker)
                if "event=ready" in text or '"event":"ready"' in text:
                    return True
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
            if self.proc.poll() is None:       # no ready line in time
                stop_child(self.proc, signal.SIGKILL)
                return False
            text = self.log_text(marker)
            if not re.search(r"in use|EADDRINUSE|bind", text, re.I):
                return False                   # a real start failure
        return False

    def log_text(self, since=None):
        try:
            with open(self.log, errors="replace") as f:
                t = f.read()
        except OSError:
            return ""
        if since and since in t:
            t = t[t.rindex(since):]
        return t

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, wait=10.0):
        if self.proc is None:
            return None
        rc = stop_child(self.proc, sig, wait)
        self.proc = None
        return rc

    mhost = "127.0.0.1"      # the metrics listener's address

    def metrics(self):
        """GET /metrics -> {"name" or "name{labels}": float}."""
        s = socket.create_connection((self.mhost, self.mport), timeout=3)
        try:
            s.sendall(b"GET /metrics HTTP/1.0\r\nHost: twagd\r\n\r\n")
            data = recv_all(s)
        finally:
            s.close()
        head, _, body = data.partition(b"\r\n\r\n")
        if b" 200" not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"metrics: {head[:80]!r}")
        out = {}
        for line in body.decode().split("\n"):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})?)\s+(\S+)", line)
            if m:
                name = re.sub(r"\s+", "", m.group(1))
                out[name] = float(m.group(3))
        return out


def metric(mx, name, **labels):
    """A metric value; with labels, the series whose labels include them;
    without, the plain series or the sum over all labelled ones."""
    if not labels and name in mx:
        return mx[name]
    total, found = 0.0, False
    for key, v in mx.items():
        if not key.startswith(name + "{"):
            continue
        lab = dict(re.findall(r'(\w+)="([^"]*)"', key))
        if all(lab.get(k) == str(x) for k, x in labels.items()):
            total += v
            found = True
    return total if found else None


# ---- eapol_test with an external SIM over its control socket ---------------

class EapolResult:
    def __init__(self):
        self.rc = None
        self.output = ""
        self.requests = []      # ("UMTS-AUTH"|"GSM-AUTH", answer kind)
        self.monitor_errors = []

    @property
    def success(self):
        lines = [x for x in self.output.strip().split("\n") if x.strip()]
        return self.rc == 0 and bool(lines) and lines[-1].strip() == "SUCCESS"

    @property
    def failure(self):
        return self.rc != 0 and re.search(r"^FAILURE$", self.output, re.M) is not None

    def mppe(self):
        m = re.search(r"MPPE keys OK: (\d+)\s+mismatch: (\d+)", self.output)
        return (int(m.group(1)), int(m.group(2))) if m else (None, None)

    def umts(self):
        return [r for r in self.requests if r[0] == "UMTS-AUTH"]

    def gsm(self):
        return [r for r in self.requests if r[0] == "GSM-AUTH"]

    def tail(self, n=30):
        lines = self.output.rstrip().split("\n")
        errs = [f"monitor: {e}" for e in self.monitor_errors]
        reqs = [f"monitor: {r}" for r in self.requests]
        return "\n".join(reqs + errs + lines[-n:])


_EAP_NAME = {"aka-prime": "AKA'", "aka": "AKA", "sim": "SIM"}


def eapol_test(twagd, method, identity, card, reauth=0, timeout=10, mac=None,
               secret=None, port=None, server=None):
    """Runs one eapol_test (full auth plus reauth re-authentications) as the
    phone; card is a Usim or Comp128Sim answering the control socket."""
    work = tmpdir("eapol")
    ctrl = os.path.join(work, "ctrl")
    os.mkdir(ctrl)
    conf = os.path.join(work, "eapol.conf")
    with open(conf, "w") as f:
        f.write(f"ctrl_interface={ctrl}\nexternal_sim=1\nnetwork={{\n"
                f"\tkey_mgmt=IEEE8021X\n\teap={_EAP_NAME[method]}\n"
                f"\tidentity=\"{identity}\"\n}}\n")
    argv = ["eapol_test", "-W", "-c", conf, "-a", server or "127.0.0.1",
            "-p", str(port or twagd.port), "-s", secret or twagd.secret,
            "-t", str(timeout)]
    if reauth:
        argv += ["-r", str(reauth)]
    if mac:
        argv += ["-M", mac]
    out_path = os.path.join(work, "out.txt")
    res = EapolResult()
    with open(out_path, "w") as outf:
        p = spawn(argv, stdout=outf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    mon = None
    try:
        sock_path = os.path.join(ctrl, "test")
        deadline = time.time() + 5
        while not os.path.exists(sock_path) and time.time() < deadline and p.poll() is None:
            time.sleep(0.02)
        mon = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        mon.bind(os.path.join(work, "mon"))
        mon.connect(sock_path)
        mon.send(b"ATTACH")
        r, _, _ = select.select([mon], [], [], 3)
        if not r or mon.recv(4096) != b"OK\n":
            res.monitor_errors.append("ATTACH not acknowledged")
        end = time.time() + timeout * (reauth + 1) + 10
        while p.poll() is None and time.time() < end:
            r, _, _ = select.select([mon], [], [], 0.1)
            if not r:
                continue
            try:
                msg = mon.recv(65536).decode(errors="replace")
            except OSError:
                break
            m = re.search(r"CTRL-REQ-SIM-(\d+):(UMTS-AUTH|GSM-AUTH):([0-9a-fA-F:]+)", msg)
            if not m:
                continue
            nid, kind, params = m.group(1), m.group(2), m.group(3).split(":")
            answer = _answer(card, kind, params, res)
            if answer:
                mon.send(f"CTRL-RSP-SIM-{nid}:{answer}".encode())
        if p.poll() is None:
            res.monitor_errors.append("eapol_test did not finish in time")
    except OSError as e:
        res.monitor_errors.append(f"control socket: {e}")
    finally:
        if mon:
            mon.close()
        res.rc = stop_child(p, signal.SIGTERM, timeout * (reauth + 1) + 10)
    with open(out_path, errors="replace") as f:
        res.output = f.read()
    return res


def _answer(card, kind, params, res):
    if kind == "UMTS-AUTH":
        if not isinstance(card, Usim) or len(params) < 2:
            res.requests.append((kind, "unexpected"))
            return "UMTS-FAIL"
        r = card.umts_auth(bytes.fromhex(params[0]), bytes.fromhex(params[1]))
        if r[0] == "ok":
            res.requests.append((kind, "ok"))
            _, res_, ck, ik = r
            return f"UMTS-AUTH:{ik.hex()}:{ck.hex()}:{res_.hex()}"
        if r[0] == "sync":
            res.requests.append((kind, "sync"))
            return f"UMTS-AUTS:{r[1].hex()}"
        res.requests.append((kind, "mac"))
        return "UMTS-FAIL"         # not understood by the peer: it gives up
    # GSM-AUTH:RAND1:RAND2[:RAND3] -> GSM-AUTH:Kc1:SRES1:Kc2:SRES2...
    parts = []
    for rh in params:
        kc, sres = card.gsm_auth(bytes.fromhex(rh))
        parts += [kc.hex(), sres.hex()]
    res.requests.append((kind, f"{len(params)} rands"))
    return "GSM-AUTH:" + ":".join(parts)


# ---- RADIUS client (RFC 2865, RFC 2869, RFC 3579) ---------------------------

ACCESS_REQUEST, ACCESS_ACCEPT, ACCESS_REJECT, ACCESS_CHALLENGE, STATUS_SERVER = 1, 2, 3, 11, 12
USER_NAME, STATE, CLASS, VSA, SESSION_TIMEOUT = 1, 24, 25, 26, 27
CALLING_STATION_ID, NAS_IDENTIFIER, EAP_MESSAGE, MESSAGE_AUTHENTICATOR = 31, 32, 79, 80


def attr(t, v):
    if isinstance(v, str):
        v = v.encode()
    assert len(v) <= 253
    return bytes([t, len(v) + 2]) + v


def build_request(secret, code, ident, authenticator, attrs, msg_auth=True):
    """attrs: list of (type, value). msg_auth: True (computed, placed last),
    False (none) or 16 bytes placed verbatim (a wrong one)."""
    body = b"".join(attr(t, v) for t, v in attrs)
    if msg_auth is not False:
        body += attr(MESSAGE_AUTHENTICATOR, bytes(16))
    pkt = struct.pack("!BBH", code, ident, 20 + len(body)) + authenticator + body
    if msg_auth is True:
        # RFC 3579 §3.2: HMAC-MD5(secret, packet with the MA value zeroed)
        mac = hmac.new(secret.encode(), pkt, hashlib.md5).digest()
        pkt = pkt[:-16] + mac
    elif msg_auth is not False:
        pkt = pkt[:-16] + msg_auth
    return pkt


def parse_attrs(pkt):
    """[(type, value, offset_of_value)] or None if malformed."""
    if len(pkt) < 20:
        return None
    n = struct.unpack("!H", pkt[2:4])[0]
    if n < 20 or n > len(pkt):
        return None
    out, i = [], 20
    while i < n:
        if i + 2 > n or pkt[i + 1] < 2 or i + pkt[i + 1] > n:
            return None
        out.append((pkt[i], pkt[i + 2:i + pkt[i + 1]], i + 2))
        i += pkt[i + 1]
    return out


def check_reply(secret, req_auth, reply):
    """RFC 2865 §3 Response Authenticator and RFC 3579 §3.2 Message-
    Authenticator (over the reply with the Request Authenticator in place).
    Returns a list of problems (empty when the reply is good)."""
    probs = []
    attrs = parse_attrs(reply)
    if attrs is None:
        return ["reply does not parse"]
    n = struct.unpack("!H", reply[2:4])[0]
    reply = reply[:n]
    want = hashlib.md5(reply[:4] + req_auth + reply[20:] + secret.encode()).digest()
    if not hmac.compare_digest(want, reply[4:20]):
        probs.append("bad Response Authenticator")
    mas = [a for a in attrs if a[0] == MESSAGE_AUTHENTICATOR]
    if not mas:
        probs.append("no Message-Authenticator")
    else:
        if attrs[0][0] != MESSAGE_AUTHENTICATOR:
            probs.append("Message-Authenticator is not the first attribute")
        if len(mas) != 1 or len(mas[0][1]) != 16:
            probs.append("bad Message-Authenticator attribute")
        else:
            off = mas[0][2]
            z = reply[:4] + req_auth + reply[20:off] + bytes(16) + reply[off + 16:]
            mac = hmac.new(secret.encode(), z, hashlib.md5).digest()
            if not hmac.compare_digest(mac, mas[0][1]):
                probs.append("wrong Message-Authenticator")
    return probs


def eap_join(attrs):
    return b"".join(v for t, v, _ in attrs if t == EAP_MESSAGE)


def eap_message_attrs(eap):
    """RFC 3579 §3.1: split into EAP-Message attributes of <= 253 octets."""
    return [(EAP_MESSAGE, eap[i:i + 253]) for i in range(0, len(eap), 253)] or [(EAP_MESSAGE, b"")]


def eap_identity(ident, identity):
    body = identity.encode()
    return struct.pack("!BBHB", 2, ident, 5 + len(body), 1) + body


def aka_identity_response(eap_type, ident, identity):
    """EAP-Response/AKA-Identity (RFC 4187 §9.2, subtype 5) with AT_IDENTITY
    (§10.5: type 14, actual length, identity padded to 4)."""
    idb = identity.encode()
    pad = -len(idb) % 4
    at = struct.pack("!BBH", 14, (4 + len(idb) + pad) // 4, len(idb)) + idb + bytes(pad)
    return struct.pack("!BBHBBH", 2, ident, 8 + len(at), eap_type, 5, 0) + at


class RadiusClient:
    def __init__(self, server, secret, src="127.0.0.1"):
        self.server, self.secret = server, secret
        fam = socket.AF_INET6 if ":" in server[0] else socket.AF_INET
        if fam == socket.AF_INET6 and src == "127.0.0.1":
            src = "::1"
        self.s = socket.socket(fam, socket.SOCK_DGRAM)
        self.s.bind((src, 0))
        self.ident = rng.randrange(256)
        self.replies = []       # (request authenticator, reply) for every reply seen

    def close(self):
        self.s.close()

    def next_id(self):
        self.ident = (self.ident + 1) & 0xff
        return self.ident

    def send(self, pkt):
        self.s.sendto(pkt, self.server)

    def recv(self, timeout=1.0):
        end = time.time() + timeout
        while True:
            left = end - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.s], [], [], left)
            if not r:
                return None
            data, addr = self.s.recvfrom(65536)
            if addr[:2] == tuple(self.server):
                return data

    def exchange(self, pkt, timeout=2.0):
        """Sends pkt, returns the reply with the same Identifier or None."""
        self.send(pkt)
        end = time.time() + timeout
        while True:
            left = end - time.time()
            if left <= 0:
                return None
            r = self.recv(left)
            if r is None:
                return None
            if len(r) >= 2 and r[1] == pkt[1]:
                self.replies.append((pkt[4:20], r))
                return r

    def request(self, attrs, code=ACCESS_REQUEST, msg_auth=True, timeout=2.0):
        """Builds and exchanges; returns (request bytes, reply or None)."""
        auth = os.urandom(16)
        pkt = build_request(self.secret, code, self.next_id(), auth, attrs, msg_auth)
        return pkt, self.exchange(pkt, timeout)

    def eap_round(self, eap, state=None, station=None, user=None, timeout=2.0):
        attrs = []
        if user:
            attrs.append((USER_NAME, user))
        if station:
            attrs.append((CALLING_STATION_ID, station))
        attrs.append((NAS_IDENTIFIER, "twag-integ"))
        if state is not None:
            attrs.append((STATE, state))
        attrs += eap_message_attrs(eap)
        return self.request(attrs, timeout=timeout)


def station_id(i):
    b = (0x02_00_00_00_00_00 | (i & 0xffffffffff)).to_bytes(6, "big")
    return "-".join(f"{x:02X}" for x in b)


def attr_value(attrs, t):
    for a in attrs:
        if a[0] == t:
            return a[1]
    return None


def eapol_radius_replies(output):
    """The RADIUS replies eapol_test printed (its debug dump after "Received
    RADIUS message"): [(code, [(type, value as printed)])] in order."""
    out, cur, want = [], None, False
    for line in output.split("\n"):
        if line.startswith("Received RADIUS message"):
            want = True
            continue
        m = re.match(r"RADIUS message: code=(\d+)", line)
        if m:
            cur = (int(m.group(1)), []) if want else None
            if cur:
                out.append(cur)
            want = False
            continue
        if cur is None:
            continue
        m = re.match(r"   Attribute (\d+) ", line)
        if m:
            cur[1].append([int(m.group(1)), None])
            continue
        m = re.match(r"      Value: (.*)$", line)
        if m and cur[1]:
            cur[1][-1][1] = m.group(1).strip("'")
            continue
        cur = None
    return [(c, [tuple(a) for a in attrs]) for c, attrs in out]


def metrics_after(d, before, name, want, timeout=2.0, **labels):
    """Polls d's metrics until name grew by at least want since before (a
    dropped packet gives no reply to wait for); returns the last snapshot."""
    end = time.time() + timeout
    while True:
        mx = d.metrics()
        got = mdelta(before, mx, name, **labels)
        if (got is not None and got >= want) or time.time() > end:
            return mx
        time.sleep(0.05)


def mdelta(before, after, name, **labels):
    """after - before for a metric; None when it is missing in either."""
    a, b = metric(before, name, **labels), metric(after, name, **labels)
    return None if a is None or b is None else b - a


def run_main(main, R):
    """Runs main(); an exception is one failure (with its traceback), and the
    result line is printed in every case."""
    import traceback
    try:
        main()
    except SystemExit:
        raise
    except Exception:
        R.check(False, "test raised an exception", traceback.format_exc())
    R.finish()


def binaries_ok(R, names=("twagd", "twag"), tools=("eapol_test", "osmo-auc-gen")):
    """Our binaries are built and the Debian peers installed (scripts/deps.sh)."""
    ok = True
    for t in tools:
        ok &= R.check(shutil.which(t) is not None, f"{t} is installed (scripts/deps.sh)")
    for n in names:
        b = os.path.join(BUILD, n)
        ok &= R.check(os.access(b, os.X_OK), f"{b} is built")
    return ok


def eapol_identities(output):
    """The EAP-Response/Identity of each round, as eapol_test logged it."""
    out = []
    for m in re.finditer(r"^Learned identity from EAP-Response-Identity - hexdump\(len=\d+\):"
                         r"((?: [0-9a-f]{2})*)", output, re.M):
        out.append(bytes.fromhex(m.group(1).replace(" ", "")).decode(errors="replace"))
    return out


def card_secrets(card):
    """Hex strings of a card's long-term keys (must never reach a log)."""
    if isinstance(card, Usim):
        keys = [card.m.k, card.m.opc]
    else:
        keys = [card.ki]
    return [k.hex() for k in keys] + [k.hex().upper() for k in keys]
