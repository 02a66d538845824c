#!/usr/bin/python3
"""twagd as an operator runs it: a configuration file (key = value, '#'
comments) with --log-file and --pid-file, a command-line flag overriding
the file, SIGHUP (log file reopened, client list reloaded), per-client
secrets with address prefixes (RFC 2865 §3: a request from an unknown
address is dropped), IPv6, and the expiry of the duplicate cache."""
import os
import signal
import sqlite3
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

wait_for, read = T.wait_for, T.read
R = T.Results("daemon")


def status(host, port, secret, src=None, timeout=1.0):
    """Status-Server (RFC 5997): True if answered with a good Access-Accept."""
    c = T.RadiusClient((host, port), secret, src=src or ("::1" if ":" in host else "127.0.0.1"))
    try:
        req, rep = c.request([(T.NAS_IDENTIFIER, "daemon")], code=T.STATUS_SERVER, timeout=timeout)
    finally:
        c.close()
    if rep is None:
        return False
    probs = T.check_reply(secret, req[4:20], rep)
    R.check(rep[0] == T.ACCESS_ACCEPT and not probs, f"Status-Server reply from {host}:{port} is good", probs)
    return True


def sqn_reserved(db, imsi):
    """The subscriber's durable SQN high-water mark, read beside twagd."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as h:
            row = h.execute("SELECT sqn_reserved FROM subscriber WHERE imsi = ?", (imsi,)).fetchone()
        return row[0] if row else None
    except sqlite3.Error:
        return None


def config_case(work):
    db = os.path.join(work, "conf.db")
    imsi, usim = T.new_usim(db)
    port, port2, mport = T.free_udp_port(), T.free_udp_port(), T.free_udp_port()
    log, pidf, conf = (os.path.join(work, n) for n in ("twagd-conf.log", "twagd.pid", "twagd.conf"))
    s1, s2 = "first-" + T.rhex(6), "second-" + T.rhex(6)

    def write_conf(secret):
        with open(conf, "w") as f:
            f.write(f"""# twagd integration test configuration
listen = 127.0.0.1:{port}
store = sqlite:{db}

network-name = WLAN   
threads = 1
metrics = 127.0.0.1:{mport}
# logs and pid
log-file = {log}
pid-file = {pidf}
reply-session-timeout = 1234
# the store's knobs
sqn-block = 7
resync-max = 4
resync-window = 30
resync-bad-max = 8
reauth-ttl = 600
identity-cache = 4096
client = 127.0.0.1 {secret}
""")
    write_conf(s1)
    err = open(os.path.join(work, "conf.stderr"), "w")
    p = T.spawn([T.TWAGD, "--config", conf], stdout=err, stderr=err, stdin=subprocess.DEVNULL)
    if not R.check(wait_for(lambda: "event=ready" in read(log)), "twagd --config FILE: event=ready in --log-file",
                   read(log) + read(os.path.join(work, "conf.stderr"))):
        T.stop_child(p)
        return
    R.check(read(pidf).strip() == str(p.pid), f"--pid-file holds the pid ({read(pidf).strip()!r} vs {p.pid})")
    R.check(status("127.0.0.1", port, s1), "config client secret accepted")

    class D:            # what eapol_test() needs
        pass
    d = D()
    d.port, d.secret = port, s1
    reserved0 = sqn_reserved(db, imsi)
    r = T.eapol_test(d, "aka-prime", T.nai(6, imsi), usim)
    R.check(r.success and r.mppe() == (1, 0), "attach through the configured server", r.tail())
    # sqn-block = 7 from the file: the durable mark moved by a block of 7
    # (or two, reserved ahead), not by the default 1000
    reserved1 = sqn_reserved(db, imsi)
    R.check(reserved0 is not None and reserved1 is not None and 0 < reserved1 - reserved0 <= 14,
            f"sqn-block = 7 from the file: SQN reserved {reserved0} -> {reserved1}")
    st = [v for c, a in T.eapol_radius_replies(r.output) if c == T.ACCESS_ACCEPT
          for t, v in a if t == T.SESSION_TIMEOUT]
    R.check(st == ["1234"], f"reply-session-timeout = 1234 from the file ({st})")

    # SIGHUP: the log file is reopened (logrotate moved it) and the client
    # list is reloaded from the file
    os.rename(log, log + ".1")
    write_conf(s2)
    p.send_signal(signal.SIGHUP)
    R.check(wait_for(lambda: os.path.exists(log), 5), "SIGHUP: --log-file reopened (a new file appears)")
    time.sleep(0.3)
    R.check(status("127.0.0.1", port, s2), "SIGHUP: the new client secret is accepted")
    R.check(not status("127.0.0.1", port, s1, timeout=0.7), "SIGHUP: the old client secret is dropped")
    d.secret = s2
    r = T.eapol_test(d, "aka-prime", T.nai(6, imsi), usim)
    R.check(r.success, "attach with the reloaded secret", r.tail())
    R.check(wait_for(lambda: "event=" in read(log), 3), "the reopened log file receives log lines", read(log))
    R.check("event=ready" in read(log + ".1"), "the rotated file kept the earlier lines")
    R.check(p.poll() is None, "twagd survived SIGHUP")
    R.check(T.stop_child(p, signal.SIGTERM, 10) == 0, "SIGTERM: exit 0")

    # a flag overrides the file: --listen elsewhere
    os.rename(log, log + ".2")
    p = T.spawn([T.TWAGD, "--config", conf, "--listen", f"127.0.0.1:{port2}"],
                stdout=err, stderr=err, stdin=subprocess.DEVNULL)
    ok = wait_for(lambda: "event=ready" in read(log) or p.poll() is not None)
    if R.check(ok and p.poll() is None, "twagd --config FILE --listen OTHER starts", read(log)):
        R.check(status("127.0.0.1", port2, s2), "--listen on the command line overrides the file")
        R.check(not status("127.0.0.1", port, s2, timeout=0.5), "... and the file's port is not used")
    R.check(T.stop_child(p, signal.SIGTERM, 10) == 0, "SIGTERM: exit 0")
    err.close()


def prefix_case(work):
    db = os.path.join(work, "prefix.db")
    imsi, _ = T.new_usim(db)
    sa, sb = "net-a-" + T.rhex(4), "net-b-" + T.rhex(4)
    d = T.Twagd(work, db, secret=sa, clients=[f"127.0.0.0/30={sa}", f"127.0.0.8/29={sb}"],
                extra=["--dup-expiry", "1"])
    d.log = os.path.join(work, "twagd-prefix.log")
    if not R.check(d.start(), "twagd with client prefixes starts", d.log_text()):
        return
    mx0 = d.metrics()
    for src, secret, want in (("127.0.0.1", sa, True), ("127.0.0.2", sa, True), ("127.0.0.3", sa, True),
                              ("127.0.0.4", sa, False), ("127.0.0.9", sb, True), ("127.0.0.15", sb, True),
                              ("127.0.0.16", sb, False), ("127.0.0.9", sa, False)):
        try:
            got = status("127.0.0.1", d.port, secret, src=src, timeout=0.6)
        except OSError as e:
            R.note(f"SKIP client {src}: cannot bind ({e})")
            continue
        R.check(got == want, f"client {src} with its {'right' if want else 'wrong/unknown'} secret: "
                f"{'answered' if want else 'dropped'}")
    mx1 = d.metrics()
    R.check(T.mdelta(mx0, mx1, "twag_radius_unknown_clients_total") == 2,
            f"2 requests from outside the prefixes counted as unknown clients "
            f"({T.mdelta(mx0, mx1, 'twag_radius_unknown_clients_total')})")
    R.check(T.mdelta(mx0, mx1, "twag_radius_bad_authenticators_total") == 1,
            "a known client with another client's secret: bad authenticator")

    # --dup-expiry 1: a copy within the second is a duplicate, one sent after
    # expiry is processed as a new request (RFC 5080 §2.2.2 cache lifetime)
    c = T.RadiusClient(("127.0.0.1", d.port), sa)
    idn = T.nai(6, imsi)
    attrs = [(T.USER_NAME, idn), (T.CALLING_STATION_ID, T.station_id(77))] + \
        T.eap_message_attrs(T.eap_identity(1, idn))
    req, rep = c.request(attrs)
    again = c.exchange(req)
    mx0 = d.metrics()
    time.sleep(3.0)
    late = c.exchange(req)
    mx1 = d.metrics()
    c.close()
    R.check(rep is not None and again == rep, "copy within --dup-expiry: the cached reply")
    R.check(late is not None and late != rep and late[0] == T.ACCESS_CHALLENGE,
            "copy after --dup-expiry: processed anew (a new challenge)")
    R.check(T.mdelta(mx0, mx1, "twag_radius_duplicate_requests_total") == 0,
            "copy after --dup-expiry: not counted as a duplicate")
    R.check(d.stop() == 0, "SIGTERM: exit 0")


def ipv6_case(work):
    try:
        T.free_udp_port("::1")
    except (OSError, RuntimeError) as e:
        R.note(f"SKIP IPv6: no ::1 ({e})")
        return
    db = os.path.join(work, "v6.db")
    imsi, _ = T.new_usim(db)
    sec = "v6-" + T.rhex(4)
    d = T.Twagd(work, db, secret=sec, host="::1", clients=[f"::1/128={sec}"])
    d.log = os.path.join(work, "twagd-v6.log")
    if not R.check(d.start(), "twagd --listen [::1]:PORT --client ::1/128=S starts", d.log_text()):
        return
    R.check(status("::1", d.port, sec), "Status-Server over IPv6 answered")
    c = T.RadiusClient(("::1", d.port), sec)
    idn = T.nai(6, imsi)
    req, rep = c.request([(T.USER_NAME, idn), (T.CALLING_STATION_ID, T.station_id(6))]
                         + T.eap_message_attrs(T.eap_identity(1, idn)))
    c.close()
    R.check(rep is not None and rep[0] == T.ACCESS_CHALLENGE and not T.check_reply(sec, req[4:20], rep),
            "EAP identity over IPv6: a good Access-Challenge")
    R.check(d.stop() == 0, "SIGTERM: exit 0")


def spread_case(work):
    """Two workers and one NAS (one client socket): by default the kernel's
    SO_REUSEPORT hash of the source address and port gives every request to
    one worker; with --spread-by-identifier the group's BPF program picks
    worker (Identifier mod 2), and the client's consecutive Identifiers
    alternate. The threads carry their names (twagd-w0, twagd-w1,
    twag-store-wb)."""
    db = os.path.join(work, "spread.db")
    imsi, _ = T.new_usim(db)
    idn = T.nai(6, imsi)
    n = 40
    for spread in (False, True):
        d = T.Twagd(work, db, threads=2, extra=["--spread-by-identifier"] if spread else [])
        d.log = os.path.join(work, f"twagd-spread-{int(spread)}.log")
        how = "--spread-by-identifier" if spread else "default"
        if not R.check(d.start(), f"twagd --threads 2 ({how}) starts", d.log_text()):
            return
        mx0 = d.metrics()
        c = T.RadiusClient(("127.0.0.1", d.port), d.secret)
        answered = 0
        for i in range(n):
            attrs = [(T.USER_NAME, idn), (T.CALLING_STATION_ID, T.station_id(200 + i))] + \
                T.eap_message_attrs(T.eap_identity(1, idn))
            _, rep = c.request(attrs)
            answered += rep is not None and rep[0] == T.ACCESS_CHALLENGE
        c.close()
        mx1 = d.metrics()
        per = [T.mdelta(mx0, mx1, "twag_worker_requests_total", worker=w) for w in (0, 1)]
        R.check(answered == n, f"{how}: {n} EAP starts from one socket answered ({answered})")
        if spread:
            R.check(per == [n // 2, n // 2],
                    f"--spread-by-identifier: consecutive Identifiers alternate workers ({per})")
        else:
            R.check(sorted(per) == [0, n],
                    f"default: one client address and port, one worker ({per})")
        if not spread:
            names = sorted(read(f"/proc/{d.proc.pid}/task/{t}/comm").strip()
                           for t in os.listdir(f"/proc/{d.proc.pid}/task"))
            R.check(all(x in names for x in ("twagd-w0", "twagd-w1", "twag-store-wb")),
                    f"threads named ({names})")
        R.check(d.stop() == 0, f"{how}: SIGTERM: exit 0")


def main():
    if not T.milenage_selftest(R) or not T.binaries_ok(R):
        return
    work = T.tmpdir("daemon")
    config_case(work)
    prefix_case(work)
    ipv6_case(work)
    spread_case(work)


if __name__ == "__main__":
    T.run_main(main, R)
