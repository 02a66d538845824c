#!/usr/bin/python3
"""RADIUS accounting (RFC 2866) against twagd on 127.0.0.1:
  - FreeRADIUS's radclient (Debian freeradius-utils) as the NAS: Start (with
    a Message-Authenticator), Interim-Update, Stop, Accounting-On/-Off from
    files of attribute lines; its responses verified by radclient itself;
    the sessions seen with `twag session list/show` (table, name=value and
    --json), the IMSI masked there and in the log;
  - a client written here on hashlib/hmac (independent of twag's codec):
    the Response Authenticator (RFC 2866 §3) of an answer; a wrong Request
    Authenticator, a wrong Message-Authenticator, an unknown client and
    malformed packets silently discarded and counted; a retransmission
    answered with the same octets and counted once (RFC 5080 §2.2.2); a
    flood of Starts beyond --acct-max-sessions: the table stays bounded,
    the oldest are evicted and counted, twagd keeps answering;
  - `twag session show` of no session, and of no server: exit 2.
"""
import hashlib
import hmac
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

R = T.Results("acct")
SEC = "acct-s3cret"
IMSI = "001010123456789"
USER = f"0{IMSI}@{T.REALM}"
MAX_SESSIONS = 64

ACCT_REQUEST, ACCT_RESPONSE = 4, 5
STATUS, SESSION_ID, NAS_ID, USER_NAME, IN_OCTETS, OUT_OCTETS = 40, 44, 32, 1, 42, 43
MESSAGE_AUTHENTICATOR = 80


class AcctTwagd(T.Twagd):
    """twagd with --acct-listen on a free port of its own."""

    def argv(self):
        if getattr(self, "_aport_for", None) != self.port:
            self.aport = T.free_udp_port()
            self._aport_for = self.port
        return super().argv() + ["--acct-listen", f"127.0.0.1:{self.aport}",
                                 "--acct-max-sessions", str(MAX_SESSIONS)]


def acct_request(secret, ident, attrs, msg_auth=False, bad_ra=False, bad_ma=False):
    """RFC 2866 §3: Request Authenticator = MD5(Code | ID | Length | 16 zero
    octets | attributes | secret); the Message-Authenticator over the packet
    with a zero Authenticator field (as FreeRADIUS and hostapd compute it)."""
    body = b"".join(T.attr(t, v) for t, v in attrs)
    if msg_auth:
        body = T.attr(MESSAGE_AUTHENTICATOR, bytes(16)) + body
    pkt = bytearray(struct.pack("!BBH", ACCT_REQUEST, ident, 20 + len(body)) + bytes(16) + body)
    if msg_auth:
        mac = hmac.new(secret.encode(), bytes(pkt), hashlib.md5).digest()
        if bad_ma:
            mac = bytes([mac[0] ^ 1]) + mac[1:]
        pkt[22:38] = mac
    ra = hashlib.md5(bytes(pkt) + secret.encode()).digest()
    if bad_ra:
        ra = bytes([ra[0] ^ 0x80]) + ra[1:]
    pkt[4:20] = ra
    return bytes(pkt)


def response_ok(secret, req, resp):
    if resp is None or len(resp) < 20 or resp[0] != ACCT_RESPONSE or resp[1] != req[1]:
        return False
    n = struct.unpack("!H", resp[2:4])[0]
    want = hashlib.md5(resp[:4] + req[4:20] + resp[20:n] + secret.encode()).digest()
    return hmac.compare_digest(want, resp[4:20])


def u32(v):
    return struct.pack("!I", v)


def radclient(d, lines, secret=SEC, tag="rc"):
    path = os.path.join(d.work, f"{tag}.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    p = subprocess.run(["radclient", "-x", "-r", "1", "-t", "2", "-f", path,
                        f"127.0.0.1:{d.aport}", "acct", secret],
                       capture_output=True, text=True, timeout=20)
    return p


def twag_session(d, *args, mport=None):
    return subprocess.run([T.TWAG, "session", *args, "--metrics", f"127.0.0.1:{mport or d.mport}"],
                          capture_output=True, text=True, timeout=20)


def part_radclient(d):
    base = [f'User-Name = "{USER}"', 'NAS-Identifier = "ap-integ"',
            'Calling-Station-Id = "02-11-22-33-44-55"', 'Called-Station-Id = "aa-bb-cc-dd-ee-ff:WLAN"',
            "NAS-Port = 3", "Framed-IP-Address = 10.9.8.7"]
    mx0 = d.metrics()
    p = radclient(d, ["Acct-Status-Type = Start", 'Acct-Session-Id = "rc-0001"'] + base +
                  ["Message-Authenticator = 0x00"], tag="start")
    R.check(p.returncode == 0 and "Received Accounting-Response" in p.stdout,
            "radclient Start (with Message-Authenticator) is answered", p.stdout + p.stderr)
    p = radclient(d, ["Acct-Status-Type = Interim-Update", 'Acct-Session-Id = "rc-0001"'] + base +
                  ["Acct-Session-Time = 120", "Acct-Input-Octets = 1000", "Acct-Output-Octets = 2000",
                   "Acct-Input-Gigawords = 1", "Acct-Input-Packets = 10", "Acct-Output-Packets = 20"],
                  tag="interim")
    R.check(p.returncode == 0 and "Received Accounting-Response" in p.stdout,
            "radclient Interim-Update is answered", p.stdout + p.stderr)
    mx1 = d.metrics()
    R.check(T.mdelta(mx0, mx1, "twag_acct_requests_total", status="start") == 1 and
            T.mdelta(mx0, mx1, "twag_acct_requests_total", status="interim-update") == 1 and
            T.metric(mx1, "twag_acct_sessions_active") == 1,
            "Start and Interim-Update counted, one live session")

    ls = twag_session(d, "list")
    R.check(ls.returncode == 0 and "rc-0001" in ls.stdout and "02-11-22-33-44-55" in ls.stdout,
            "twag session list shows the session", ls.stdout + ls.stderr)
    R.check(IMSI not in ls.stdout and "0001010*****6789@" in ls.stdout,
            "twag session list masks the IMSI", ls.stdout)
    row = [x for x in ls.stdout.split("\n") if x.startswith("rc-0001")]
    R.check(row and row[0].split()[-2:] == [str((1 << 32) + 1000), "2000"] and
            row[0].split()[-3] == "120", "the row: duration 120, octets with Gigawords", ls.stdout)
    sh = twag_session(d, "show", "rc-0001")
    f = dict(re.findall(r"^(\w+)=(.*)$", sh.stdout, re.M))
    R.check(sh.returncode == 0 and f.get("nas") == "ap-integ" and f.get("nas_port") == "3" and
            f.get("framed_ip_address") == "10.9.8.7" and
            f.get("called_station_id") == "aa-bb-cc-dd-ee-ff:WLAN" and
            f.get("input_octets") == str((1 << 32) + 1000) and f.get("output_packets") == "20" and
            f.get("session_time") == "120" and f.get("status") == "interim-update" and
            f.get("user") == "0001010*****6789@" + T.REALM, "twag session show: every field",
            sh.stdout + sh.stderr)
    js = twag_session(d, "show", "rc-0001", "--json")
    try:
        doc = json.loads(js.stdout)
        s = doc["sessions"][0]
        ok = s["session_id"] == "rc-0001" and s["input_packets"] == 10 and s["nas_kind"] == "nas-identifier"
    except (ValueError, KeyError, IndexError):
        ok = False
    R.check(js.returncode == 0 and ok, "twag session show --json", js.stdout + js.stderr)
    jl = twag_session(d, "list", "--json")
    try:
        ok = json.loads(jl.stdout)["count"] == 1
    except (ValueError, KeyError):
        ok = False
    R.check(jl.returncode == 0 and ok, "twag session list --json", jl.stdout + jl.stderr)

    p = radclient(d, ["Acct-Status-Type = Stop", 'Acct-Session-Id = "rc-0001"'] + base +
                  ["Acct-Session-Time = 300", "Acct-Terminate-Cause = User-Request"], tag="stop")
    R.check(p.returncode == 0 and "Received Accounting-Response" in p.stdout,
            "radclient Stop is answered", p.stdout + p.stderr)
    sh = twag_session(d, "show", "rc-0001")
    R.check(sh.returncode == 2 and "no such session" in sh.stderr,
            "after Stop: twag session show says no such session, exit 2", sh.stdout + sh.stderr)

    # Accounting-On ends every session of that NAS (and only its)
    for i in range(3):
        radclient(d, ["Acct-Status-Type = Start", f'Acct-Session-Id = "nas-a-{i}"',
                      'NAS-Identifier = "nas-a"', f'User-Name = "{USER}"'], tag=f"a{i}")
    radclient(d, ["Acct-Status-Type = Start", 'Acct-Session-Id = "nas-b-0"', 'NAS-Identifier = "nas-b"'],
              tag="b0")
    mx0 = d.metrics()
    p = radclient(d, ["Acct-Status-Type = Accounting-On", 'NAS-Identifier = "nas-a"'], tag="on")
    mx1 = d.metrics()
    R.check(p.returncode == 0 and T.mdelta(mx0, mx1, "twag_acct_sessions_ended_by_nas_total") == 3 and
            T.metric(mx1, "twag_acct_sessions_active") == 1,
            "radclient Accounting-On: that NAS's 3 sessions end, the other NAS's stays",
            p.stdout + p.stderr)
    p = radclient(d, ["Acct-Status-Type = Accounting-Off", 'NAS-Identifier = "nas-b"'], tag="off")
    mx2 = d.metrics()
    R.check(p.returncode == 0 and T.metric(mx2, "twag_acct_sessions_active") == 0 and
            T.mdelta(mx1, mx2, "twag_acct_requests_total", status="accounting-off") == 1,
            "radclient Accounting-Off: its session ends", p.stdout + p.stderr)
    p = radclient(d, ["Acct-Status-Type = Start", 'Acct-Session-Id = "w"'], secret="wrong", tag="wrong")
    R.check(p.returncode != 0 and "Received Accounting-Response" not in p.stdout,
            "radclient with a wrong secret gets no response", p.stdout + p.stderr)


def part_python(d):
    c = T.RadiusClient(("127.0.0.1", d.aport), SEC)
    base = [(STATUS, u32(1)), (SESSION_ID, "py-1"), (NAS_ID, "py-nas"), (USER_NAME, USER)]

    req = acct_request(SEC, c.next_id(), base, msg_auth=True)
    resp = c.exchange(req)
    R.check(response_ok(SEC, req, resp), "Accounting-Response with a valid Response Authenticator (hashlib)")
    R.check(resp is not None and len(resp) == 20, "the Accounting-Response carries no attribute")

    # retransmission: the same octets, counted once
    mx0 = d.metrics()
    again = c.exchange(req)
    mx1 = d.metrics()
    R.check(again == resp, "a retransmission gets the same response octets")
    R.check(T.mdelta(mx0, mx1, "twag_acct_duplicate_requests_total") == 1 and
            T.mdelta(mx0, mx1, "twag_acct_requests_total", status="start") == 0,
            "the retransmission is counted as a duplicate, not a second Start")

    cases = [
        ("wrong Request Authenticator", "bad-authenticator",
         acct_request(SEC, c.next_id(), base, bad_ra=True)),
        ("wrong Message-Authenticator", "bad-message-authenticator",
         acct_request(SEC, c.next_id(), base, msg_auth=True, bad_ma=True)),
        ("the wrong secret", "bad-authenticator",
         acct_request("other", c.next_id(), base)),
    ]
    for what, reason, pkt in cases:
        mx0 = d.metrics()
        r = c.exchange(pkt, timeout=0.5)
        mx1 = T.metrics_after(d, mx0, "twag_acct_dropped_total", 1, reason=reason)
        R.check(r is None and T.mdelta(mx0, mx1, "twag_acct_dropped_total", reason=reason) == 1,
                f"{what}: no response, counted as {reason}")

    malformed = [
        ("10 octets", "malformed", b"\x04\x01\x00\x0a" + bytes(6)),
        ("Length beyond the datagram", "malformed",
         struct.pack("!BBH", 4, 1, 60) + bytes(16) + T.attr(STATUS, u32(1))),
        ("attribute of length 1", "malformed", struct.pack("!BBH", 4, 1, 23) + bytes(16) + b"\x28\x01\x00"),
        ("Acct-Status-Type of 3 octets", "malformed",
         acct_request(SEC, 7, [(STATUS, b"\0\0\1"), (SESSION_ID, "m1")])),
        ("no Acct-Status-Type", "missing-attribute", acct_request(SEC, 8, [(SESSION_ID, "m2")])),
        ("Start without Acct-Session-Id", "missing-attribute", acct_request(SEC, 9, [(STATUS, u32(1))])),
        ("Acct-Session-Id over 128 octets", "too-long",
         acct_request(SEC, 10, [(STATUS, u32(1)), (SESSION_ID, "x" * 200)])),
        ("an Access-Request on the accounting port", "unknown-code",
         T.build_request(SEC, 1, 11, os.urandom(16), [(USER_NAME, "x")])),
    ]
    for what, reason, pkt in malformed:
        mx0 = d.metrics()
        c.send(pkt)
        r = c.recv(0.4)
        mx1 = T.metrics_after(d, mx0, "twag_acct_dropped_total", 1, reason=reason)
        R.check(r is None and T.mdelta(mx0, mx1, "twag_acct_dropped_total", reason=reason) == 1,
                f"malformed ({what}): no response, counted as {reason}")

    # an unknown client (127.0.0.2 is no client)
    u = T.RadiusClient(("127.0.0.1", d.aport), SEC, src="127.0.0.2")
    mx0 = d.metrics()
    r = u.exchange(acct_request(SEC, 1, base), timeout=0.5)
    mx1 = T.metrics_after(d, mx0, "twag_acct_dropped_total", 1, reason="unknown-client")
    R.check(r is None and T.mdelta(mx0, mx1, "twag_acct_dropped_total", reason="unknown-client") == 1,
            "unknown client: no response, counted")
    u.close()

    # flood beyond --acct-max-sessions
    mx0 = d.metrics()
    n_flood, answered = 4 * MAX_SESSIONS, 0
    for i in range(n_flood):
        pkt = acct_request(SEC, c.next_id(), [(STATUS, u32(1)), (SESSION_ID, f"flood-{i}"),
                                              (NAS_ID, "flood-nas")])
        if response_ok(SEC, pkt, c.exchange(pkt)):
            answered += 1
    mx1 = d.metrics()
    R.check(answered == n_flood, f"flood: all {n_flood} Starts answered", f"{answered} answered")
    R.check(T.metric(mx1, "twag_acct_sessions_active") == MAX_SESSIONS and
            T.mdelta(mx0, mx1, "twag_acct_sessions_evicted_total") == n_flood + 1 - MAX_SESSIONS,
            "flood: the table stays at --acct-max-sessions, the oldest evicted and counted",
            {k: v for k, v in mx1.items() if "acct_sessions" in k})
    ls = twag_session(d, "list")
    rows = [x for x in ls.stdout.split("\n")[1:] if x.strip() and not x.startswith("#")]
    R.check(ls.returncode == 0 and len(rows) == MAX_SESSIONS and "flood-0 " not in ls.stdout and
            ls.stdout.endswith(f"# {MAX_SESSIONS} sessions\n") and
            f"flood-{n_flood - 1} " in ls.stdout, "flood: the list holds the newest sessions only",
            ls.stdout[-2000:])
    req = acct_request(SEC, c.next_id(), base)
    R.check(response_ok(SEC, req, c.exchange(req)) and d.alive(), "after all that: twagd still answers")
    c.close()


def main():
    if not T.binaries_ok(R, tools=("radclient",)):
        return
    work = T.tmpdir("acct")
    db = os.path.join(work, "twag.db")
    T.twag("subscriber", "add", "--db", db, "--imsi", IMSI, "--algo", "milenage", "--ki", T.rhex(16),
           "--opc", T.rhex(16), "--amf", "8000", "--sqn", "000000000000")
    d = AcctTwagd(work, db, secret=SEC, threads=1)
    if not R.check(d.start(), "twagd with --acct-listen starts", d.log_text()):
        return
    R.check(re.search(rf"event=acct-ready listen=127\.0\.0\.1:{d.aport} ", d.log_text()) is not None,
            "event=acct-ready names the accounting address", d.log_text())
    part_radclient(d)
    part_python(d)
    # twagd's own lines (the test's "#### start" lines hold its command line)
    log = "\n".join(x for x in d.log_text().split("\n") if not x.startswith("####"))
    R.check(IMSI not in log, "the IMSI is never in the log in clear")
    R.check(SEC not in log, "the shared secret is never in the log")
    port = d.mport
    rc = d.stop()
    R.check(rc == 0, "twagd stops cleanly (exit 0)", d.log_text()[-3000:])
    nos = twag_session(d, "list", mport=port)
    R.check(nos.returncode == 2 and "cannot connect" in nos.stderr,
            "twag session list without a server: exit 2, a clear message", nos.stderr)
    # --acct-listen off: /sessions says so
    d2 = T.Twagd(T.tmpdir("acct-off"), db, secret=SEC, threads=1, extra=["--acct-listen", "off"])
    if R.check(d2.start(), "twagd --acct-listen off starts", d2.log_text()):
        off = twag_session(d2, "list")
        R.check(off.returncode == 2 and "accounting is off" in off.stderr,
                "twag session list with accounting off: exit 2", off.stdout + off.stderr)
        R.check("acct-ready" not in d2.log_text(), "no accounting socket with --acct-listen off")
        d2.stop()


if __name__ == "__main__":
    T.run_main(main, R)
