#!/usr/bin/python3
"""RADIUS over TLS (RFC 6614) against twagd: Debian's radsecproxy as the
access point's side (UDP in, TLS out to twagd), eapol_test as the phone
through it (EAP-AKA', the MSK checked by eapol_test against the MS-MPPE keys
radsecproxy re-encrypted for its UDP client), radclient accounting through
it, and a Python TLS client (the ssl module) for what radsecproxy will not
do: requests pipelined on one connection, IPv6 ([::1]), and bad peers (not
TLS, no certificate, another CA, the wrong name, a Length out of range, an
idle connection, a stalled handshake, an unknown address, too many
connections), each closed and counted while twagd keeps serving.

Certificates are made here with the openssl CLI (a throwaway CA, the
server's, clients' and another CA's), in a temp dir removed at exit.
"""
import os
import signal
import socket
import ssl
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

R = T.Results("radsec")
RADSEC_SECRET = "radsec"          # RFC 6614 §2.3
ACCOUNTING_REQUEST, ACCOUNTING_RESPONSE = 4, 5


def sh(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30,
                          **kw)


def make_certs(d):
    """ca (+ server, ap1 client, ap2 client with another name), other_ca
    (+ a client). EC P-256 keys, valid one day."""
    def key(name):
        sh(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", f"{d}/{name}.key"])

    def ca(name):
        key(name)
        sh(["openssl", "req", "-x509", "-new", "-key", f"{d}/{name}.key", "-days", "1",
            "-subj", f"/CN={name}", "-out", f"{d}/{name}.pem",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign"])

    def leaf(name, issuer, cn, san, eku):
        key(name)
        sh(["openssl", "req", "-new", "-key", f"{d}/{name}.key", "-subj", f"/CN={cn}",
            "-out", f"{d}/{name}.csr"])
        with open(f"{d}/{name}.ext", "w") as f:
            f.write(f"subjectAltName={san}\nextendedKeyUsage={eku}\n"
                    "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n")
        r = sh(["openssl", "x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/{issuer}.pem",
                "-CAkey", f"{d}/{issuer}.key", "-CAcreateserial", "-days", "1",
                "-extfile", f"{d}/{name}.ext", "-out", f"{d}/{name}.pem"])
        return r.returncode == 0

    ca("ca")
    ca("other_ca")
    ok = leaf("server", "ca", "twagd.test", "DNS:twagd.test,IP:127.0.0.1,IP:::1", "serverAuth")
    ok &= leaf("ap1", "ca", "ap1.test", "DNS:ap1.test", "clientAuth")
    ok &= leaf("ap2", "ca", "ap2.test", "DNS:ap2.test", "clientAuth")
    ok &= leaf("rogue", "other_ca", "ap1.test", "DNS:ap1.test", "clientAuth")
    return ok and all(os.path.exists(f"{d}/{n}.pem") for n in ("server", "ap1", "ap2", "rogue"))


def free_tcp_port(host="127.0.0.1"):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.bind((host, 0))
    p = s.getsockname()[1]
    s.close()
    return p


def tls_ctx(d, cert="ap1"):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.load_verify_locations(f"{d}/ca.pem")
    c.check_hostname = False          # the server is checked by its CA only
    if cert:
        c.load_cert_chain(f"{d}/{cert}.pem", f"{d}/{cert}.key")
    return c


def tls_connect(d, host, port, cert="ap1", timeout=5):
    """A TLS connection, or the exception its handshake raised."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    raw = socket.socket(fam, socket.SOCK_STREAM)
    raw.settimeout(timeout)
    raw.connect((host, port))
    try:
        s = tls_ctx(d, cert).wrap_socket(raw, server_hostname="twagd.test")
        # TLS 1.3: the server sees (and refuses) the client's certificate
        # after the client's handshake ended; one read shows the verdict
        s.settimeout(0.5)
        try:
            data = s.recv(1)
            if data == b"":
                s.close()
                return ConnectionError("closed right after the handshake")
        except socket.timeout:
            pass
        except (ssl.SSLError, OSError) as e:
            s.close()
            return e
        s.settimeout(timeout)
        return s
    except (ssl.SSLError, OSError) as e:
        raw.close()
        return e


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def recv_packet(s):
    hdr = recv_exact(s, 4)
    if len(hdr) < 4:
        return None
    n = struct.unpack("!H", hdr[2:4])[0]
    return hdr + recv_exact(s, n - 4)


def closed_by_peer(s, within=10.0):
    """True when the server closes s (EOF or reset) within `within` s."""
    s.settimeout(within)
    try:
        while True:
            if s.recv(4096) == b"":
                return True
    except socket.timeout:
        return False
    except (ssl.SSLError, OSError):
        return True


def status_server(ident):
    return T.build_request(RADSEC_SECRET, T.STATUS_SERVER, ident, T.rbytes(16), [])


def acct_request(ident, status, session_id, user="1001010000000001@" + T.REALM):
    import hashlib
    attrs = [(40, struct.pack("!I", status)), (44, session_id), (T.USER_NAME, user),
             (4, socket.inet_aton("127.0.0.1"))]
    body = b"".join(T.attr(t, v) for t, v in attrs)
    pkt = struct.pack("!BBH", ACCOUNTING_REQUEST, ident, 20 + len(body)) + bytes(16) + body
    # RFC 2866 §3: Request Authenticator = MD5(Code|ID|Length|16 zero|attrs|secret)
    auth = hashlib.md5(pkt + RADSEC_SECRET.encode()).digest()
    return pkt[:4] + auth + pkt[20:]


def acct_reply_ok(req, reply):
    import hashlib
    if reply is None or reply[0] != ACCOUNTING_RESPONSE or reply[1] != req[1]:
        return False
    want = hashlib.md5(reply[:4] + req[4:20] + reply[20:] + RADSEC_SECRET.encode()).digest()
    return want == reply[4:20]


def radsecproxy_conf(d, udp_port, host, tls_port, name):
    path = f"{d}/{name}.conf"
    with open(path, "w") as f:
        f.write(f"""ListenUDP 127.0.0.1:{udp_port}
LogLevel 4
LogDestination file://{d}/{name}.log
tls default {{
    CACertificateFile {d}/ca.pem
    CertificateFile {d}/ap1.pem
    CertificateKeyFile {d}/ap1.key
}}
client ap {{
    host 127.0.0.1
    type udp
    secret testing123
}}
server twagd {{
    host {host}
    port {tls_port}
    type tls
    tls default
    CertificateNameCheck off
    matchCertificateAttribute SubjectAltName:DNS:/^twagd\\.test$/
}}
realm * {{
    server twagd
    accountingServer twagd
}}
""")
    return path


def main():
    if not T.milenage_selftest(R) or not T.binaries_ok(
            R, tools=("eapol_test", "radsecproxy", "radclient", "openssl")):
        return
    work = T.tmpdir("radsec")
    if not R.check(make_certs(work), "openssl makes the CA, server and client certificates"):
        return
    db = os.path.join(work, "twag.db")
    imsi, card = T.new_usim(db, amf="0000")
    p4, p6 = free_tcp_port(), free_tcp_port("::1")
    idle = 3
    radsec_args = ["--radsec-listen", f"127.0.0.1:{p4}", "--radsec-listen", f"[::1]:{p6}",
                   "--tls-cert", f"{work}/server.pem", "--tls-key", f"{work}/server.key",
                   "--radsec-client", f"127.0.0.1,ca={work}/ca.pem,name=ap1.test",
                   "--radsec-client", f"::1,ca={work}/ca.pem",
                   "--radsec-idle-timeout", str(idle), "--radsec-max-connections", "12"]

    # --check-config: the files read as start-up reads them
    base = [T.TWAGD, "--store", f"sqlite:{db}", "--client", "127.0.0.1=testing123"]
    r = sh(base + radsec_args + ["--check-config"])
    R.check(r.returncode == 0, "--check-config: RadSec configuration OK", r.stdout.decode())
    bad = list(radsec_args)
    bad[bad.index("--tls-key") + 1] = f"{work}/ap1.key"
    r = sh(base + bad + ["--check-config"])
    R.check(r.returncode == 1 and b"not the key of --tls-cert" in r.stdout,
            "--check-config: a key that is not the certificate's is a problem", r.stdout.decode())
    bad = list(radsec_args)
    bad[bad.index(f"127.0.0.1,ca={work}/ca.pem,name=ap1.test")] = f"127.0.0.1,ca={work}/none.pem"
    r = sh(base + bad + ["--check-config"])
    R.check(r.returncode == 1 and b"none.pem" in r.stdout,
            "--check-config: a missing CA file is a problem", r.stdout.decode())
    # the file form: radsec-client = PREFIX ca=FILE [name=NAME]
    cf = os.path.join(work, "twagd.conf")
    with open(cf, "w") as f:
        f.write(f"radsec-listen = 127.0.0.1:{p4}\ntls-cert = {work}/server.pem\n"
                f"tls-key = {work}/server.key\n"
                f"radsec-client = 127.0.0.0/8 ca={work}/ca.pem name=ap1.test\n")
    r = sh(base + ["--check-config", cf])
    R.check(r.returncode == 0, "--check-config FILE: radsec-client = PREFIX ca=FILE name=NAME",
            r.stdout.decode())
    with open(cf, "a") as f:
        f.write("radsec-client = 10.0.0.0/8 name=x\n")
    r = sh(base + ["--check-config", cf])
    R.check(r.returncode == 1 and b"ca=FILE is needed" in r.stdout,
            "--check-config FILE: a radsec-client without ca= is a problem", r.stdout.decode())
    r = sh(base + ["--radsec-listen", f"127.0.0.1:{p4}", "--check-config"])
    R.check(r.returncode == 1 and b"--tls-cert" in r.stdout and b"--radsec-client" in r.stdout,
            "--check-config: --radsec-listen without certificate and clients is refused",
            r.stdout.decode())

    # accounting on a port of its own: the default (1813) may be another
    # twagd's on a shared machine, and then accounting would be off
    d = T.Twagd(work, db, extra=radsec_args + ["--acct-listen", f"127.0.0.1:{T.free_udp_port()}"])
    if not R.check(d.start(), "twagd starts with --radsec-listen on 127.0.0.1 and [::1]",
                   d.log_text()):
        return
    R.check("event=radsec-ready" in d.log_text(), "twagd logs event=radsec-ready", d.log_text())

    # 1. eapol_test -> radsecproxy (UDP) -> twagd (TLS): EAP-AKA'
    udp = T.free_udp_port()
    conf = radsecproxy_conf(work, udp, "127.0.0.1", p4, "rsp")
    rsp = T.spawn(["radsecproxy", "-f", "-c", conf], stdout=subprocess.DEVNULL,
                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    time.sleep(0.5)
    mx0 = d.metrics()
    res = T.eapol_test(d, "aka-prime", T.nai(6, imsi), card, port=udp, secret="testing123")
    R.check(res.success, "EAP-AKA' through radsecproxy over TLS: eapol_test SUCCESS", res.tail())
    R.check(res.mppe() == (1, 0), f"EAP-AKA' over TLS: MPPE keys OK: 1 mismatch: 0 (got {res.mppe()})",
            res.tail())
    mx1 = d.metrics()
    R.check((T.mdelta(mx0, mx1, "twag_radsec_requests_total", code="access-request") or 0) >= 2,
            "the Access-Requests came over TLS (twag_radsec_requests_total)",
            {k: v for k, v in mx1.items() if "radsec" in k})
    R.check((T.mdelta(mx0, mx1, "twag_accepts_total") or 0) >= 1
            if "twag_accepts_total" in mx1 else True,
            "the Access-Accept is counted with the packet path's")
    log = d.log_text()
    R.check("event=radsec-open" in log and "tls=TLSv1.3" in log,
            "the connection is TLS 1.3 (event=radsec-open)", log[-3000:])
    R.check(imsi not in log, "the IMSI is not in the log in the clear")

    # 2. accounting through radsecproxy (radclient -> UDP -> TLS)
    acct_in = ("Acct-Status-Type = Start\nAcct-Session-Id = \"rs-1\"\n"
               f"User-Name = \"{T.nai(6, imsi)}\"\nNAS-IP-Address = 127.0.0.1\n")
    r = subprocess.run(["radclient", "-x", "-r", "2", "-t", "3", f"127.0.0.1:{udp}", "acct",
                        "testing123"], input=acct_in.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    R.check(r.returncode == 0 and b"Accounting-Response" in r.stdout,
            "Accounting-Request through radsecproxy: Accounting-Response", r.stdout.decode())
    mx2 = d.metrics()
    R.check((T.mdelta(mx1, mx2, "twag_radsec_requests_total", code="accounting-request") or 0) >= 1
            and (T.mdelta(mx1, mx2, "twag_acct_requests_total", status="start") or 0) >= 1,
            "the Accounting-Request came over TLS and was recorded",
            {k: v for k, v in mx2.items() if "acct_requests" in k or "radsec_requests" in k})
    T.stop_child(rsp)

    # 3. pipelining over [::1]: Status-Servers, an Accounting-Request and an
    #    EAP-Start in one write, every reply matched by Identifier
    s = tls_connect(work, "::1", p6)
    if R.check(isinstance(s, ssl.SSLSocket), "TLS over [::1] with the client certificate", s):
        reqs = {i: status_server(i) for i in range(1, 9)}
        reqs[20] = acct_request(20, 1, b"pipe-1")
        reqs[21] = T.build_request(RADSEC_SECRET, T.ACCESS_REQUEST, 21, T.rbytes(16),
                                   [(T.USER_NAME, "anonymous"), (T.EAP_MESSAGE, b"")])
        s.sendall(b"".join(reqs.values()))
        got = {}
        for _ in reqs:
            p = recv_packet(s)
            if p is None:
                break
            got[p[1]] = p
        R.check(set(got) == set(reqs), f"{len(reqs)} pipelined requests, {len(got)} replies",
                sorted(got))
        sok = all(got.get(i) is not None and got[i][0] == T.ACCESS_ACCEPT
                  and not T.check_reply(RADSEC_SECRET, reqs[i][4:20], got[i]) for i in range(1, 9))
        R.check(sok, "Status-Server answered with Access-Accept signed with \"radsec\" (RFC 5997)")
        R.check(acct_reply_ok(reqs[20], got.get(20)), "Accounting-Response on the same connection")
        R.check(got.get(21) is not None and got[21][0] == T.ACCESS_CHALLENGE
                and not T.check_reply(RADSEC_SECRET, reqs[21][4:20], got[21]),
                "EAP-Start answered with Access-Challenge on the same connection")
        # a request split across writes, octet by octet at its start
        req = status_server(30)
        for b in (req[:1], req[1:3], req[3:10], req[10:]):
            s.sendall(b)
            time.sleep(0.02)
        p = recv_packet(s)
        R.check(p is not None and p[1] == 30 and p[0] == T.ACCESS_ACCEPT,
                "a request arriving in pieces is answered")
        # a bad Message-Authenticator: discarded, the connection stays
        badreq = T.build_request(RADSEC_SECRET, T.STATUS_SERVER, 31, T.rbytes(16), [],
                                 msg_auth=bytes(16))
        s.sendall(badreq + status_server(32))
        p = recv_packet(s)
        R.check(p is not None and p[1] == 32, "a bad Message-Authenticator is discarded, "
                "the next request on the connection answered", p)
        s.close()

    # 4. bad peers: each closed and counted, twagd keeps serving
    mx0 = d.metrics()
    # plain TCP, not TLS
    raw = socket.create_connection(("127.0.0.1", p4), timeout=5)
    raw.sendall(b"GET / HTTP/1.0\r\n\r\n" + os.urandom(200))
    R.check(closed_by_peer(raw, 5), "a plain TCP client sending garbage is closed")
    raw.close()
    for cert, what in (("rogue", "a certificate from another CA"), (None, "no certificate"),
                       ("ap2", "a certificate without the required name ap1.test")):
        s = tls_connect(work, "127.0.0.1", p4, cert=cert)
        R.check(not isinstance(s, ssl.SSLSocket) or closed_by_peer(s, 5),
                f"a TLS client with {what} is refused", s)
        if isinstance(s, ssl.SSLSocket):
            s.close()
    # ap2 is fine over [::1], which names no certificate
    s = tls_connect(work, "::1", p6, cert="ap2")
    R.check(isinstance(s, ssl.SSLSocket), "the same certificate is fine for a client with no name=",
            s)
    if isinstance(s, ssl.SSLSocket):
        s.close()
    mx1 = d.metrics()
    R.check((T.mdelta(mx0, mx1, "twag_radsec_tls_handshake_failures_total") or 0) >= 4,
            "4 handshake failures counted", {k: v for k, v in mx1.items() if "radsec" in k})
    # Length fields out of range (after a good handshake)
    for length, what in ((5000, "> 4096"), (10, "< 20")):
        s = tls_connect(work, "127.0.0.1", p4)
        if R.check(isinstance(s, ssl.SSLSocket), f"TLS for the Length {what} case", s):
            s.sendall(struct.pack("!BBH", 1, 1, length) + bytes(16))
            R.check(closed_by_peer(s, 5), f"a Length {what} closes the connection")
            s.close()
    # idle past the timeout, and a handshake that never starts
    s = tls_connect(work, "127.0.0.1", p4)
    raw = socket.create_connection(("127.0.0.1", p4), timeout=5)
    if R.check(isinstance(s, ssl.SSLSocket), "TLS for the idle case", s):
        t0 = time.time()
        closed = closed_by_peer(s, idle + 5)
        R.check(closed and time.time() - t0 >= idle - 1,
                f"an idle connection is closed after --radsec-idle-timeout {idle} s "
                f"({time.time() - t0:.1f} s)")
        s.close()
    R.check(closed_by_peer(raw, idle + 5), "a connection that never starts its handshake is closed")
    raw.close()
    # an address in no --radsec-client network (127.0.0.2 is loopback too)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.settimeout(5)
    raw.bind(("127.0.0.2", 0))
    raw.connect(("127.0.0.1", p4))
    R.check(closed_by_peer(raw, 5), "a connection from an unknown address is closed at once")
    raw.close()
    # more connections than --radsec-max-connections 12
    held = [socket.create_connection(("127.0.0.1", p4), timeout=5) for _ in range(13)]
    R.check(closed_by_peer(held[-1], 3), "the 13th connection with --radsec-max-connections 12 is closed")
    for h in held:
        h.close()
    time.sleep(0.3)
    mx2 = d.metrics()
    dl = {r: T.mdelta(mx0, mx2, "twag_radsec_connections_closed_total", reason=r)
          for r in ("bad-length", "idle", "handshake-timeout", "tls-error")}
    R.check(dl["bad-length"] == 2 and dl["idle"] >= 1 and dl["handshake-timeout"] >= 1
            and dl["tls-error"] >= 5,
            "closed connections counted by reason", dl)
    rj = {r: T.mdelta(mx0, mx2, "twag_radsec_connections_rejected_total", reason=r)
          for r in ("unknown-client", "full")}
    R.check(rj["unknown-client"] == 1 and (rj["full"] or 0) >= 1, "refused connections counted", rj)

    # 5. SIGHUP: the certificates read again; still serving, still alive
    d.proc.send_signal(signal.SIGHUP)
    R.check(T.wait_for(lambda: "event=radsec-reload" in d.log_text(), 5),
            "SIGHUP: the RadSec certificates and clients are read again", d.log_text()[-2000:])
    s = tls_connect(work, "127.0.0.1", p4)
    if R.check(isinstance(s, ssl.SSLSocket), "TLS after all of that", s):
        req = status_server(7)
        s.sendall(req)
        p = recv_packet(s)
        R.check(p is not None and p[0] == T.ACCESS_ACCEPT, "twagd still answers over TLS")
        s.close()
    rsp = T.spawn(["radsecproxy", "-f", "-c", conf], stdout=subprocess.DEVNULL,
                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    time.sleep(0.5)
    res = T.eapol_test(d, "aka-prime", T.nai(6, imsi), card, port=udp, secret="testing123")
    R.check(res.success and res.mppe() == (1, 0),
            "EAP-AKA' through radsecproxy again, MPPE keys OK", res.tail())
    T.stop_child(rsp)
    R.check(d.alive(), "twagd is alive")
    R.check(d.stop() == 0, "twagd exits 0 on SIGTERM")
    R.check("AddressSanitizer" not in d.log_text() and "runtime error" not in d.log_text(),
            "no sanitizer report")


if __name__ == "__main__":
    T.run_main(main, R)
