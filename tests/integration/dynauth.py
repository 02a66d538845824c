#!/usr/bin/python3
"""RFC 5176 dynamic authorization from twagd towards the NAS, on 127.0.0.1:
  - the phone: eapol_test (external SIM, the USIM in twagtest.py) does a
    full EAP-AKA' attach; the Class of its Access-Accept goes into an
    Accounting-Request Start built here on hashlib (RFC 2866 §3);
  - the NAS's dynamic authorization server: a UDP listener written here
    that checks every Disconnect-/CoA-Request on its own (hashlib: the
    Request Authenticator MD5(Code | ID | Length | 16 zero octets |
    attributes | secret) of RFC 5176 §2.3, the Message-Authenticator of
    §3.3 over a zero Authenticator field), records its attributes and
    answers ACK, NAK with an Error-Cause, nothing (timeout), a reply from
    another port, or a wrong authenticator before the right one;
  - `twag session disconnect ID`, `--imsi`, `twag session coa ID
    Session-Timeout=...`: outcome printed, exit status, --json;
  - `twag subscriber disable`: the subscriber is refused at the next
    attach (reason subscriber-disabled in the log) and its session gets a
    Disconnect-Request; `twag subscriber del` likewise; the store check
    disconnects a subscriber deleted behind twagd's back (a plain `twag
    subscriber del` with no control socket given);
  - malformed control requests get an "error" line; the metrics count it all.
"""
import hashlib
import hmac
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

R = T.Results("dynauth")
SEC = "dynauth-s3cret"

USER_NAME, NAS_IP, CLASS, CALLING, NAS_ID = 1, 4, 25, 31, 32
SESSION_TIMEOUT, FILTER_ID, ACCT_STATUS, ACCT_SESSION_ID = 27, 11, 40, 44
MSG_AUTH, ERROR_CAUSE = 80, 101
DISC_REQ, DISC_ACK, DISC_NAK, COA_REQ, COA_ACK, COA_NAK = 40, 41, 42, 43, 44, 45


def attrs_of(pkt):
    out, i, n = [], 20, struct.unpack("!H", pkt[2:4])[0]
    while i + 2 <= n:
        t, ln = pkt[i], pkt[i + 1]
        if ln < 2 or i + ln > n:
            return None
        out.append((t, pkt[i + 2:i + ln]))
        i += ln
    return out


def request_ok(secret, pkt):
    """RFC 5176 §2.3 and §3.3, independently of twag's codec."""
    n = struct.unpack("!H", pkt[2:4])[0]
    if n != len(pkt) or n < 20:
        return False
    zero = bytearray(pkt)
    zero[4:20] = bytes(16)
    if not hmac.compare_digest(hashlib.md5(bytes(zero) + secret).digest(), pkt[4:20]):
        return False
    a = attrs_of(pkt)
    if a is None or not a or a[0][0] != MSG_AUTH:
        return False                    # twagd puts it first, always
    zero[22:38] = bytes(16)
    return hmac.compare_digest(hmac.new(secret, bytes(zero), hashlib.md5).digest(), pkt[22:38])


def reply(secret, req, code, attrs=(), bad=False, msg_auth=False):
    body = b"".join(T.attr(t, v) for t, v in attrs)
    if msg_auth:
        body = T.attr(MSG_AUTH, bytes(16)) + body
    pkt = bytearray(struct.pack("!BBH", code, req[1], 20 + len(body)) + req[4:20] + body)
    if msg_auth:
        pkt[22:38] = hmac.new(secret, bytes(pkt), hashlib.md5).digest()
    ra = hashlib.md5(bytes(pkt) + secret).digest()
    if bad:
        ra = bytes([ra[0] ^ 1]) + ra[1:]
    pkt[4:20] = ra
    return bytes(pkt)


class Nas(threading.Thread):
    """The NAS's RFC 5176 server: every request verified and kept; the
    answer per self.mode."""

    def __init__(self, secret):
        super().__init__(daemon=True)
        self.secret = secret.encode()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.other.bind(("127.0.0.1", 0))
        self.mode = "ack"
        self.got = []            # (verified, code, attrs, raw)
        self.lock = threading.Lock()
        self.stop = False

    def run(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                pkt, src = self.sock.recvfrom(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            ok = request_ok(self.secret, pkt)
            with self.lock:
                self.got.append((ok, pkt[0], attrs_of(pkt) or [], pkt))
                mode = self.mode
            if not ok or mode == "silent":
                continue
            ack = pkt[0] + 1
            if mode == "ack":
                self.sock.sendto(reply(self.secret, pkt, ack, msg_auth=True), src)
            elif mode == "nak":
                self.sock.sendto(reply(self.secret, pkt, ack + 1,
                                       [(ERROR_CAUSE, struct.pack("!I", 503))]), src)
            elif mode == "tricks":
                # ignored by twagd: another source port, a bad authenticator,
                # another Identifier; then the real ACK
                self.other.sendto(reply(self.secret, pkt, ack), src)
                self.sock.sendto(reply(self.secret, pkt, ack, bad=True), src)
                wrong = bytearray(reply(self.secret, pkt, ack))
                wrong[1] ^= 0x55
                self.sock.sendto(bytes(wrong), src)
                self.sock.sendto(reply(self.secret, pkt, ack), src)

    def take(self):
        with self.lock:
            g, self.got = self.got, []
        return g


def acct_start(d, session_id, user, cls, calling):
    """An Accounting-Request Start (RFC 2866 §3) carrying the Accept's Class."""
    attrs = [(ACCT_STATUS, struct.pack("!I", 1)), (ACCT_SESSION_ID, session_id.encode()),
             (USER_NAME, user.encode()), (NAS_IP, bytes([127, 0, 0, 1])),
             (CALLING, calling.encode()), (CLASS, cls)]
    body = b"".join(T.attr(t, v) for t, v in attrs)
    pkt = bytearray(struct.pack("!BBH", 4, 7, 20 + len(body)) + bytes(16) + body)
    pkt[4:20] = hashlib.md5(bytes(pkt) + SEC.encode()).digest()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    try:
        s.sendto(bytes(pkt), ("127.0.0.1", d.aport))
        resp = s.recv(4096)
        return resp[0] == 5
    except OSError:
        return False
    finally:
        s.close()


class DTwagd(T.Twagd):
    def argv(self):
        if getattr(self, "_aport_for", None) != self.port:
            self.aport = T.free_udp_port()
            self._aport_for = self.port
        return super().argv() + ["--acct-listen", f"127.0.0.1:{self.aport}"]


def attach(d, card, imsi, mac):
    r = T.eapol_test(d, "aka-prime", T.nai("6", imsi), card, mac=mac)
    cls = None
    for code, attrs in T.eapol_radius_replies(r.output):
        if code == 2:
            for t, v in attrs:
                if t == CLASS and v:
                    cls = v.encode() if not all(c in "0123456789abcdef" for c in v) \
                        else bytes.fromhex(v)
    return r, cls


def ctl(*args, control=None):
    argv = list(args) + ["--control", control] if control else list(args)
    return T.twag(*argv, check=False)


def attr_get(attrs, t):
    return [v for a, v in attrs if a == t]


def main():
    if not T.binaries_ok(R, tools=("eapol_test",)):
        return
    work = T.tmpdir("dynauth")
    db = os.path.join(work, "subs.db")
    control = os.path.join(work, "control")
    nas = Nas(SEC)
    nas.start()
    imsi, card = T.new_usim(db)
    imsi2, card2 = T.new_usim(db)
    imsi3, card3 = T.new_usim(db)
    d = DTwagd(work, db, secret=SEC, extra=[
        "--control-socket", control, "--dynauth-port", str(nas.port),
        "--dynauth-timeout-ms", "300", "--dynauth-retries", "2",
        "--dynauth-check-interval", "1", "--dynauth-max-sessions", "64"])
    if not R.check(d.start(), "twagd starts with a control socket", d.log_text()):
        return
    st = os.stat(control)
    R.check(oct(st.st_mode & 0o777) == "0o660", "control socket mode 0660", oct(st.st_mode))

    # -- the control protocol itself
    def raw(line):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(control)
        s.sendall(line)
        try:
            data = T.recv_all(s)
        finally:
            s.close()
        return data.decode(errors="replace")
    R.check(raw(b"ping\n") == "ok pong\n", "ping")
    R.check(raw(b"frobnicate\n").startswith("error unknown command"), "unknown command: error line")
    R.check(raw(b"disconnect\n").startswith("error usage"), "missing arguments: usage line")
    R.check(raw(b"disconnect imsi 12%zz\n").startswith("error malformed"), "bad escape: error")
    R.check(raw(b"x" * 5000 + b"\n").startswith("error request longer"), "too long: error")
    R.check(raw(b"coa session s1 Bogus=1\n").startswith("error"), "bad CoA attribute: error")
    t0 = time.time()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(control)
    s.sendall(b"pi")                     # a stuck client: cut off
    s.settimeout(6)
    try:
        got = s.recv(4096).decode()
    except OSError:
        got = ""
    s.close()
    R.check(got.startswith("error no request line") and time.time() - t0 < 5,
            "a stuck client is cut off by the deadline", got)
    R.check(raw(b"ping\n") == "ok pong\n", "and the socket still answers")

    # -- attach, accounting Start with the Accept's Class
    r, cls = attach(d, card, imsi, "02:00:00:00:00:01")
    if not R.check(r.success and cls and cls.startswith(b"twag:"), "EAP-AKA' attach, Class in the Accept",
                   r.tail()):
        return
    R.check(acct_start(d, "SESS-1", T.nai("6", imsi), cls, "02-00-00-00-00-01"),
            "Accounting-Request Start with that Class answered")

    # -- disconnect by session ID: ACK
    nas.mode = "ack"
    p = ctl("session", "disconnect", "SESS-1", control=control)
    got = nas.take()
    R.check(p.returncode == 0 and "outcome=ack" in p.stdout, "session disconnect: ACK, exit 0",
            p.stdout + p.stderr)
    R.check(len(got) == 1 and got[0][0] and got[0][1] == DISC_REQ,
            "the NAS got one Disconnect-Request whose authenticators verify (hashlib)", got)
    if got:
        a = got[0][2]
        R.check(attr_get(a, ACCT_SESSION_ID) == [b"SESS-1"] and
                attr_get(a, USER_NAME) == [T.nai("6", imsi).encode()] and
                attr_get(a, CALLING) == [b"02-00-00-00-00-01"] and
                attr_get(a, NAS_IP) == [bytes([127, 0, 0, 1])],
                "identification: Acct-Session-Id, User-Name, Calling-Station-Id, NAS-IP-Address", a)
    R.check(f"imsi={imsi}" not in d.log_text() and "event=dynauth" in d.log_text(),
            "the DM is logged, the IMSI masked")

    # -- NAK with Error-Cause, --json
    nas.mode = "nak"
    p = ctl("session", "disconnect", "SESS-1", "--json", control=control)
    nas.take()
    try:
        j = json.loads(p.stdout)
        res = j["results"][0]
    except (ValueError, KeyError, IndexError):
        j, res = None, {}
    R.check(p.returncode == 1 and res.get("outcome") == "nak" and
            res.get("error_cause") == "503" and
            res.get("error_cause_name") == "Session-Context-Not-Found",
            "NAK: Error-Cause 503 named, exit 1, --json", p.stdout + p.stderr)

    # -- CoA with new attributes
    nas.mode = "ack"
    p = ctl("session", "coa", "SESS-1", "Session-Timeout=600", "Filter-Id=gold",
            "Acct-Interim-Interval=300", "26=000000090102", control=control)
    got = nas.take()
    R.check(p.returncode == 0 and "kind=coa" in p.stdout and "outcome=ack" in p.stdout,
            "session coa: CoA-ACK, exit 0", p.stdout + p.stderr)
    R.check(len(got) == 1 and got[0][0] and got[0][1] == COA_REQ and
            attr_get(got[0][2], SESSION_TIMEOUT) == [struct.pack("!I", 600)] and
            attr_get(got[0][2], FILTER_ID) == [b"gold"] and
            attr_get(got[0][2], 85) == [struct.pack("!I", 300)] and
            attr_get(got[0][2], 26) == [bytes.fromhex("000000090102")],
            "the CoA-Request verifies and carries the new attributes", got)

    # -- replies that must be ignored, then the real one
    nas.mode = "tricks"
    before = d.metrics()
    p = ctl("session", "disconnect", "SESS-1", control=control)
    nas.take()
    mx = d.metrics()
    R.check(p.returncode == 0 and "outcome=ack" in p.stdout,
            "wrong port, wrong authenticator, wrong Identifier ignored; the real ACK taken", p.stdout)
    for reason in ("wrong-address", "bad-authenticator", "wrong-identifier"):
        R.check((T.mdelta(before, mx, "twag_dynauth_replies_ignored_total", reason=reason) or 0) >= 1,
                f"ignored reply counted: {reason}")

    # -- timeout: retransmitted, then timeout
    nas.mode = "silent"
    p = ctl("session", "disconnect", "SESS-1", control=control)
    got = nas.take()
    R.check(p.returncode == 1 and "outcome=timeout" in p.stdout, "no answer: timeout, exit 1",
            p.stdout + p.stderr)
    R.check(len(got) == 3 and len({g[3] for g in got}) == 1,
            "sent 1 + 2 retries times, octet for octet the same", [g[3].hex() for g in got])
    nas.mode = "ack"

    # -- errors of the CLI
    p = ctl("session", "disconnect", "NO-SUCH", control=control)
    R.check(p.returncode == 2 and "no such session" in p.stderr, "no such session: exit 2", p.stderr)
    p = ctl("session", "disconnect", "SESS-1", control=os.path.join(work, "none"))
    R.check(p.returncode == 2 and "twagd" in p.stderr, "no twagd: exit 2, said", p.stderr)

    # -- disconnect by IMSI without accounting: from the Access-Request
    r2, cls2 = attach(d, card2, imsi2, "02:00:00:00:00:02")
    R.check(r2.success, "second subscriber attaches", r2.tail())
    p = ctl("session", "disconnect", "--imsi", imsi2, control=control)
    got = nas.take()
    R.check(p.returncode == 0 and "outcome=ack" in p.stdout, "disconnect --imsi: ACK", p.stdout + p.stderr)
    R.check(len(got) == 1 and got[0][0] and
            attr_get(got[0][2], USER_NAME) == [T.nai("6", imsi2).encode()] and
            attr_get(got[0][2], CALLING) == [b"02-00-00-00-00-02"] and
            not attr_get(got[0][2], ACCT_SESSION_ID),
            "without accounting: User-Name and Calling-Station-Id of the Access-Request", got)

    # -- subscriber disable: refused at auth, its session disconnected
    # (the session acknowledged above is gone: a new attach)
    r, _ = attach(d, card, imsi, "02:00:00:00:00:01")
    R.check(r.success, "the first subscriber attaches again", r.tail())
    nas.take()
    p = ctl("subscriber", "disable", imsi, "--db", db, control=control)
    got = nas.take()
    R.check(p.returncode == 0 and "outcome=ack" in p.stdout, "subscriber disable tells twagd: ACK",
            p.stdout + p.stderr)
    R.check(len(got) >= 1 and all(g[0] and g[1] == DISC_REQ for g in got),
            "the disabled subscriber's session got a Disconnect-Request", got)
    p = T.twag("subscriber", "show", "--db", db, "--imsi", imsi, check=False)
    R.check("disabled=yes" in p.stdout, "show says disabled", p.stdout)
    # the store promises another process's change within about 100 ms
    # (its poll of the file): give a loaded machine ten times that
    time.sleep(1.0)
    r, _ = attach(d, card, imsi, "02:00:00:00:00:01")
    R.check(not r.success, "a disabled subscriber is refused", r.tail())
    R.check(T.wait_for(lambda: "reason=subscriber-disabled" in d.log_text(), 3),
            "the reject names the reason subscriber-disabled")
    p = ctl("subscriber", "enable", imsi, "--db", db, control=control)
    time.sleep(1.0)                      # as above: twagd's store sees it
    r, _ = attach(d, card, imsi, "02:00:00:00:00:01")
    R.check(p.returncode == 0 and r.success, "enabled again: attaches", r.tail())

    # -- subscriber del, told to twagd
    nas.take()
    p = ctl("subscriber", "del", "--db", db, "--imsi", imsi, control=control)
    got = nas.take()
    R.check(p.returncode == 0 and "outcome=ack" in p.stdout and got and got[0][0],
            "subscriber del: a Disconnect-Request, ACK", p.stdout + p.stderr)
    p = ctl("subscriber", "disable", imsi2, "--db", db, control=os.path.join(work, "none"))
    R.check(p.returncode == 0 and "not running" in p.stdout, "no twagd: said, not an error",
            p.stdout + p.stderr)

    # -- the store check: deleted without telling twagd
    r3, _ = attach(d, card3, imsi3, "02:00:00:00:00:03")
    R.check(r3.success, "third subscriber attaches", r3.tail())
    nas.take()
    p = T.twag("subscriber", "del", "--db", db, "--imsi", imsi3,
               "--control", os.path.join(work, "none"), check=False)
    R.check(T.wait_for(lambda: any(g[0] and attr_get(g[2], USER_NAME) == [T.nai("6", imsi3).encode()]
                                   for g in nas.got), 8),
            "the store check disconnects a subscriber deleted behind twagd's back", nas.got)
    mx = d.metrics()
    R.check((T.metric(mx, "twag_dynauth_requests_total", kind="disconnect", result="ack") or 0) >= 5 and
            (T.metric(mx, "twag_dynauth_requests_total", kind="coa", result="ack") or 0) == 1 and
            (T.metric(mx, "twag_dynauth_requests_total", kind="disconnect", result="nak") or 0) == 1 and
            (T.metric(mx, "twag_dynauth_requests_total", kind="disconnect", result="timeout") or 0) == 1,
            "twag_dynauth_requests_total by kind and result",
            {k: v for k, v in mx.items() if "dynauth" in k})
    R.check(not any(SEC in ln for ln in d.log_text().split("\n") if not ln.startswith("####")),
            "the secret is never logged")

    rc = d.stop()
    R.check(rc == 0 and not os.path.exists(control), "clean stop, the socket removed", d.log_text()[-2000:])
    nas.stop = True


if __name__ == "__main__":
    T.run_main(main, R)
