#!/usr/bin/python3
"""twagd on IPv6 only, through every listener, on ::1: RADIUS
(--listen [::1]:PORT), clients by IPv6 prefix (the most specific wins:
::1/128 with its own secret inside ::/64 with another; a prefix that does
not hold ::1 gets nothing), the metrics endpoint (--metrics [::1]:PORT),
accounting (--acct-listen [::1]:PORT, radclient as the NAS) and
`twag session list` reading it over IPv6, an RFC 5176 Disconnect-Request
to a NAS on ::1, --debug-client ::1, and
--check-config of the same command line. eapol_test is the phone
(EAP-AKA' and EAP-SIM with MPPE keys checked by eapol_test itself)."""
import os
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402
import dynauth as D  # noqa: E402

R = T.Results("ipv6")


class V6Twagd(T.Twagd):
    """Every listener on ::1."""

    mhost = "::1"

    def argv(self):
        if getattr(self, "_for", None) != self.port:
            self.aport = T.free_udp_port("::1")
            self._for = self.port
        a = [T.TWAGD, "--listen", f"[::1]:{self.port}", "--store", f"sqlite:{self.db}",
             "--network-name", "WLAN", "--threads", "2",
             "--metrics", f"[::1]:{self.mport}", "--acct-listen", f"[::1]:{self.aport}",
             "--log-level", "debug"]
        for c in self.clients:
            a += ["--client", c]
        return a + self.extra


def status(port, secret):
    c = T.RadiusClient(("::1", port), secret)
    try:
        _, rep = c.request([], code=T.STATUS_SERVER)
    finally:
        c.close()
    return rep


def main():
    try:
        T.free_udp_port("::1")
    except (OSError, RuntimeError) as e:
        R.note(f"SKIP IPv6: no ::1 ({e})")
        R.check(True, "skipped: no ::1")
        return
    if not T.milenage_selftest(R) or not T.binaries_ok(R):
        return
    work = T.tmpdir("ipv6")
    db = os.path.join(work, "twag.db")
    aka_imsi, aka = T.new_usim(db, amf="0000")
    sim_imsi, sim = T.new_sim(db)
    sec, wide = "v6-" + T.rhex(6), "wide-" + T.rhex(6)
    # the NAS's RFC 5176 server on ::1 (requests verified with hashlib)
    nas = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    nas.bind(("::1", 0))
    nas.settimeout(5)
    ctl = os.path.join(work, "control")
    d = V6Twagd(work, db, secret=sec, host="::1",
                clients=[f"::/64={wide}", f"::1/128={sec}"],
                extra=["--debug-client", "::1", "--control-socket", ctl,
                       "--dynauth-port", str(nas.getsockname()[1])])
    if not R.check(d.start(), "twagd with every listener on ::1 starts", d.log_text()):
        return
    ready = [x for x in d.log_text().split("\n") if "event=ready" in x]
    R.check(ready and f"listen=[::1]:{d.port}" in ready[-1] and f"metrics=[::1]:{d.mport}" in ready[-1],
            "ready names the IPv6 listen and metrics addresses", "\n".join(ready))
    R.check(f"[::1]:{d.aport}" in d.log_text() and "event=acct-ready" in d.log_text(),
            "accounting ready on [::1]", d.log_text()[-1500:])

    # RADIUS over ::1, the most specific prefix's secret
    r = T.eapol_test(d, "aka-prime", T.nai(6, aka_imsi), aka, server="::1")
    R.check(r.success and r.mppe() == (1, 0), "EAP-AKA' over ::1: SUCCESS, MPPE keys match", r.tail())
    r = T.eapol_test(d, "sim", T.nai(1, sim_imsi), sim, server="::1")
    R.check(r.success and r.mppe() == (1, 0), "EAP-SIM over ::1: SUCCESS, MPPE keys match", r.tail())
    mx0 = d.metrics()
    R.check(status(d.port, wide) is None, "::1 is ::1/128's client: ::/64's secret is refused")
    rep = status(d.port, sec)
    R.check(rep is not None and rep[0] == T.ACCESS_ACCEPT, "Status-Server with ::1/128's secret answered")
    mx1 = d.metrics()
    R.check(T.mdelta(mx0, mx1, "twag_radius_bad_authenticators_total") == 1,
            "the wrong secret counted as a bad authenticator (metrics over [::1])",
            str({k: v for k, v in mx1.items() if "bad" in k}))
    R.check(T.metric(mx1, "twag_attaches_total", method="aka-prime", kind="full") == 1 and
            T.metric(mx1, "twag_attaches_total", method="sim", kind="full") == 1,
            "the two attaches show in /metrics read over IPv6",
            str({k: v for k, v in mx1.items() if "attaches" in k}))

    # accounting over ::1: radclient as the NAS, twag session over [::1]
    path = os.path.join(work, "start.txt")
    with open(path, "w") as f:
        f.write('Acct-Status-Type = Start\nAcct-Session-Id = "v6-0001"\n'
                f'User-Name = "{T.nai(6, aka_imsi)}"\nNAS-IPv6-Address = ::1\n'
                'Calling-Station-Id = "02-66-66-66-66-01"\n')
    p = subprocess.run(["radclient", "-x", "-r", "1", "-t", "2", "-f", path,
                        f"[::1]:{d.aport}", "acct", sec], capture_output=True, text=True, timeout=20)
    R.check(p.returncode == 0 and "Received Accounting-Response" in p.stdout,
            "radclient Accounting Start to [::1] answered", p.stdout + p.stderr)
    ls = subprocess.run([T.TWAG, "session", "list", "--metrics", f"[::1]:{d.mport}"],
                        capture_output=True, text=True, timeout=20)
    R.check(ls.returncode == 0 and "v6-0001" in ls.stdout and "02-66-66-66-66-01" in ls.stdout,
            "twag session list --metrics [::1]:PORT shows it", ls.stdout + ls.stderr)
    sh = subprocess.run([T.TWAG, "session", "show", "v6-0001", "--metrics", f"[::1]:{d.mport}", "--json"],
                        capture_output=True, text=True, timeout=20)
    R.check(sh.returncode == 0 and "::1" in sh.stdout, "twag session show: the NAS is ::1",
            sh.stdout + sh.stderr)

    # RFC 5176 over IPv6: a Disconnect-Request to the NAS at [::1]
    import threading
    got = []

    def serve_nas():
        try:
            pkt, src = nas.recvfrom(4096)
        except OSError:
            return
        got.append((D.request_ok(sec.encode(), pkt), pkt, src))
        nas.sendto(D.reply(sec.encode(), pkt, pkt[0] + 1, msg_auth=True), src)

    t = threading.Thread(target=serve_nas, daemon=True)
    t.start()
    dc = subprocess.run([T.TWAG, "session", "disconnect", "--imsi", aka_imsi, "--control", ctl],
                        capture_output=True, text=True, timeout=30)
    t.join(6)
    R.check(got and got[0][0] and got[0][1][0] == 40 and got[0][2][0] == "::1",
            "Disconnect-Request to the NAS over IPv6, authenticator right (hashlib)", str(got))
    R.check(dc.returncode == 0 and "outcome=ack" in dc.stdout,
            "twag session disconnect: ack from [::1]", dc.stdout + dc.stderr)
    nas.close()

    # --debug-client ::1
    time.sleep(0.3)
    R.check("event=debug-packet dir=in client=::1 code=Access-Request" in d.log_text(),
            "--debug-client ::1 dumps the conversations from ::1")
    R.check(aka_imsi not in "\n".join(x for x in d.log_text().split("\n") if not x.startswith("####")),
            "no IMSI in clear in the log")

    # --check-config of the same command line
    c = subprocess.run([T.TWAGD, "--check-config"] + d.argv()[1:], capture_output=True, text=True,
                       timeout=30)
    R.check(c.returncode == 0, "--check-config accepts the IPv6 command line", c.stdout + c.stderr)
    R.check(d.stop() == 0, "SIGTERM: exit 0")

    # a prefix that does not hold ::1: nothing answered, counted
    d2 = V6Twagd(T.tmpdir("ipv6-other"), db, secret=sec, host="::1", clients=[f"::2/127={sec}"])
    if R.check(d2.start(), "twagd with only ::2/127 starts", d2.log_text()):
        m0 = d2.metrics()
        R.check(status(d2.port, sec) is None, "::1 outside ::2/127: no answer")
        m1 = d2.metrics()
        R.check(T.mdelta(m0, m1, "twag_radius_unknown_clients_total") == 1,
                "counted as an unknown client")
        R.check(d2.stop() == 0, "SIGTERM: exit 0")


if __name__ == "__main__":
    T.run_main(main, R)
