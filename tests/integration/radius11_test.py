#!/usr/bin/python3
"""RADIUS/1.1 (RFC 9765) on twagd's RadSec listener: ALPN negotiation
under --radsec-alpn allow, require and forbid (Python's ssl module as the
client: radius/1.1 chosen when offered on TLS 1.3, radius/1.0 or no ALPN
as RADIUS/TLS, the no_application_protocol alert or a close when nothing
fits), then over a RADIUS/1.1 connection: Status-Server and
Accounting-Request answered with the request's Token and no
Message-Authenticator, and a whole EAP-AKA' attach by eapol_test through
a bridge written here (tests/integration/radius11.py) that turns the
UDP RADIUS of eapol_test into RADIUS/1.1 and back, re-encrypting the
clear MS-MPPE keys under eapol_test's secret: eapol_test's own MPPE check
proves the keys twagd sent in the clear are the session's."""
import os
import socket
import ssl
import struct
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402
import radsec as RS  # noqa: E402
import radius11 as V  # noqa: E402

R = T.Results("radius11")


def connect(work, port, alpn, tls13=True, cert="ap1"):
    """(socket or exception, the protocol chosen)."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    c = RS.tls_ctx(work, cert)
    if alpn is not None:
        c.set_alpn_protocols(alpn)
    if not tls13:
        c.maximum_version = ssl.TLSVersion.TLSv1_2
    try:
        s = c.wrap_socket(raw, server_hostname="twagd.test")
    except (ssl.SSLError, OSError) as e:
        raw.close()
        return e, None
    return s, s.selected_alpn_protocol()


def reload_with(d, conf, text):
    """The configuration file rewritten, SIGHUP, and its reload logged."""
    with open(conf, "w") as f:
        f.write(text)
    before = d.log_text().count("event=reload ")
    d.proc.send_signal(T.signal.SIGHUP)
    return T.wait_for(lambda: d.log_text().count("event=reload ") > before, 5)


def v11_packet(code, token, attrs):
    return V.pack(code, 0, struct.pack("!I", token) + bytes(12), attrs)


def main():
    if not T.milenage_selftest(R) or not T.binaries_ok(R, tools=("eapol_test", "openssl")):
        return
    work = T.tmpdir("radius11")
    if not R.check(RS.make_certs(work), "openssl makes the certificates"):
        return
    db = os.path.join(work, "twag.db")
    imsi, card = T.new_usim(db, amf="0000")
    port = RS.free_tcp_port()
    base = ["--radsec-listen", f"127.0.0.1:{port}", "--tls-cert", f"{work}/server.pem",
            "--tls-key", f"{work}/server.key", "--radsec-client", f"127.0.0.1,ca={work}/ca.pem",
            "--acct-listen", f"127.0.0.1:{T.free_udp_port()}"]
    conf = os.path.join(work, "twagd.conf")
    with open(conf, "w") as f:
        f.write("radsec-alpn = allow\n")
    d = T.Twagd(work, db, extra=base + ["--config", conf])
    if not R.check(d.start(), "twagd with RadSec starts", d.log_text()):
        return

    # 1. negotiation under allow
    s, p = connect(work, port, ["radius/1.0", "radius/1.1"])
    R.check(p == "radius/1.1", "allow: both offered -> radius/1.1", repr(s))
    if p:
        s.close()
    s, p = connect(work, port, ["radius/1.0"])
    R.check(p == "radius/1.0", "allow: radius/1.0 offered -> radius/1.0", repr(s))
    if p:
        # RADIUS/TLS as before: a Status-Server with its Message-Authenticator
        ss = RS.status_server(3)
        s.sendall(ss)
        rep = RS.recv_packet(s)
        R.check(rep is not None and rep[0] == T.ACCESS_ACCEPT and
                not T.check_reply("radsec", ss[4:20], rep),
                "radius/1.0: Status-Server answered as RADIUS/TLS (MD5, secret radsec)")
        s.close()
    s, p = connect(work, port, None)
    R.check(p is None and not isinstance(s, Exception), "allow: no ALPN -> RADIUS/TLS", repr(s))
    if not isinstance(s, Exception):
        s.close()
    s, p = connect(work, port, ["radius/1.1"], tls13=False)
    R.check(isinstance(s, Exception), "allow: radius/1.1 over TLS 1.2 only -> refused (RFC 9765 needs 1.3)",
            repr(s))
    s, p = connect(work, port, ["h2"])
    R.check(isinstance(s, Exception) and
            "NO APPLICATION PROTOCOL" in str(s).upper().replace("_", " "),
            "allow: no protocol in common -> no_application_protocol alert", repr(s))

    # 2. RADIUS/1.1 packets: Token, no Message-Authenticator, clear keys
    s, p = connect(work, port, ["radius/1.1"])
    if R.check(p == "radius/1.1", "a RADIUS/1.1 connection", repr(s)):
        s.sendall(v11_packet(T.STATUS_SERVER, 0xa1b2c3d4, []))
        rep = RS.recv_packet(s)
        R.check(rep is not None and rep[0] == T.ACCESS_ACCEPT and rep[4:8] == bytes.fromhex("a1b2c3d4")
                and rep[8:20] == bytes(12) and all(t != V.MSG_AUTH for t, _ in V.attrs_of(rep)),
                "Status-Server: Access-Accept with the Token, Reserved-2 zero, no Message-Authenticator",
                rep.hex() if rep else None)
        acct = v11_packet(4, 7, [(40, struct.pack("!I", 1)), (44, b"v11-acct-1"), (32, b"ap-v11")])
        s.sendall(acct)
        rep = RS.recv_packet(s)
        R.check(rep is not None and rep[0] == 5 and rep[4:8] == struct.pack("!I", 7)
                and rep[8:20] == bytes(12), "Accounting-Request (no MD5): Accounting-Response with its Token",
                rep.hex() if rep else None)
        # a Message-Authenticator of garbage in a RADIUS/1.1 request is ignored
        s.sendall(v11_packet(T.STATUS_SERVER, 8, [(V.MSG_AUTH, os.urandom(16))]))
        rep = RS.recv_packet(s)
        R.check(rep is not None and rep[4:8] == struct.pack("!I", 8),
                "a Message-Authenticator in a request is ignored (RFC 9765 §5.2)")
        # the whole attach through the bridge
        b = V.Bridge(s, "bridge-secret")
        d_port = d.port
        d.port = b.port
        r = T.eapol_test(d, "aka-prime", T.nai(6, imsi), card, secret="bridge-secret")
        d.port = d_port
        b.close()
        R.check(r.success and r.mppe() == (1, 0),
                "EAP-AKA' over RADIUS/1.1: SUCCESS, MPPE keys OK (eapol_test's check)", r.tail())
        R.check(not b.errors, "the RADIUS/1.1 replies as the RFC has them (bridge)", b.errors)
        R.check(len(b.replies) >= 2 and b.replies[-1][0] == T.ACCESS_ACCEPT and
                all(x[1] == 0 for x in b.replies),
                f"{len(b.replies)} replies, the last an Access-Accept, Reserved-1 zero as sent")
    mx = d.metrics()
    R.check(T.metric(mx, "twag_radsec_v11_connections_total") >= 2 and
            T.metric(mx, "twag_radsec_alpn_refused_total") >= 2,
            "metrics: RADIUS/1.1 connections and ALPN refusals counted",
            str({k: v for k, v in mx.items() if "radsec_v11" in k or "alpn" in k}))

    # 3. require and forbid (SIGHUP: new connections take the new mode)
    reload_with(d, conf, "radsec-alpn = require\n")
    s, p = connect(work, port, ["radius/1.0"])
    R.check(isinstance(s, Exception), "require: radius/1.0 only -> refused", repr(s))
    s, p = connect(work, port, None)
    closed = isinstance(s, Exception) or RS.closed_by_peer(s, 3)
    R.check(closed, "require: no ALPN -> closed after the handshake")
    R.check(T.wait_for(lambda: "event=radsec-alpn-refused" in d.log_text(), 3),
            "require: the close is logged (radsec-alpn-refused)")
    s, p = connect(work, port, ["radius/1.0", "radius/1.1"])
    R.check(p == "radius/1.1", "require: both offered -> radius/1.1", repr(s))
    if p:
        s.close()
    reload_with(d, conf, "radsec-alpn = forbid\n")
    s, p = connect(work, port, ["radius/1.1"])
    R.check(isinstance(s, Exception), "forbid: radius/1.1 only -> refused", repr(s))
    s, p = connect(work, port, ["radius/1.1", "radius/1.0"])
    R.check(p == "radius/1.0", "forbid: both offered -> radius/1.0", repr(s))
    if p:
        s.close()
    R.check(d.alive(), "twagd still running")
    R.check(d.stop() == 0, "SIGTERM: exit 0")
    bad = T.subprocess.run([T.TWAGD, "--radsec-alpn", "maybe"] + base[:-2],
                           capture_output=True, text=True, timeout=10)
    R.check(bad.returncode == 2 and "radsec-alpn must be forbid, allow or require" in bad.stderr,
            "--radsec-alpn maybe refused", bad.stderr)


T.run_main(main, R)
