#!/usr/bin/python3
"""twagd's accounting records on disk (--acct-db, SQLite): the live
sessions survive kill -9 and a restart (twag session shows them with their
counters), a Stop moves the session into the history with the figures of
the whole session, a Stop for a session never seen and Accounting-On are
recorded too, and a request the database cannot take is not answered
(RFC 2866 §2) until it can: the NAS's retransmission is. The rows are
read with Python's own sqlite3 module."""
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402
import acct as A  # noqa: E402

R = T.Results("acct-db")


def send(d, pkt, timeout=1.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.sendto(pkt, ("127.0.0.1", d.aport))
        return s.recv(4096)
    except OSError:
        return None
    finally:
        s.close()


def req(ident, status, sid, extra=()):
    attrs = [(A.STATUS, A.u32(status)), (A.SESSION_ID, sid.encode()),
             (A.NAS_ID, b"ap-db"), (A.USER_NAME, A.USER.encode())] + list(extra)
    return A.acct_request(A.SEC, ident, attrs)


def rows(path, sql):
    c = sqlite3.connect(path, timeout=5)
    try:
        return c.execute(sql).fetchall()
    finally:
        c.close()


def main():
    if not T.binaries_ok(R):
        return
    work = T.tmpdir("acct-db")
    db = os.path.join(work, "twag.db")
    T.new_usim(db)
    adb = os.path.join(work, "twag.acct.db")
    d = A.AcctTwagd(work, db, secret=A.SEC, threads=1)
    if not R.check(d.start(), "twagd with accounting starts", d.log_text()):
        return
    R.check("event=acct-db" in d.log_text() and os.path.exists(adb),
            "the records go next to the store (twag.acct.db)", d.log_text()[-800:])

    # Start and Interim: one live row
    r = send(d, req(1, 1, "db-0001"))
    R.check(A.response_ok(A.SEC, req(1, 1, "db-0001"), r), "Start answered")
    interim = req(2, 3, "db-0001", [(A.IN_OCTETS, A.u32(5000)), (A.OUT_OCTETS, A.u32(7000)),
                                     (46, A.u32(60))])
    R.check(A.response_ok(A.SEC, interim, send(d, interim)), "Interim-Update answered")
    live = rows(adb, "SELECT session_id, nas, user, in_octets, out_octets, session_time, status "
                     "FROM acct_live")
    R.check(live == [("db-0001", "ap-db", "0001010*****6789@" + T.REALM, 5000, 7000, 60,
                      "interim-update")], "acct_live holds the session, User-Name masked", str(live))
    R.check(A.IMSI.encode() not in open(adb, "rb").read(), "no IMSI in clear in the file")

    # kill -9 and restart: the session is back
    d.stop(signal.SIGKILL)
    if not R.check(d.start(), "twagd restarts after kill -9", d.log_text()):
        return
    R.check("restored=1" in d.log_text("#### start 2:"), "event=acct-db restored=1",
            d.log_text("#### start 2:")[-800:])
    ls = A.twag_session(d, "list")
    R.check(ls.returncode == 0 and "db-0001" in ls.stdout and "5000" in ls.stdout,
            "twag session list shows it again with its octets", ls.stdout + ls.stderr)

    # Stop: the history row has the whole session's figures
    stop = req(3, 2, "db-0001", [(A.IN_OCTETS, A.u32(9000)), (49, A.u32(1))])
    R.check(A.response_ok(A.SEC, stop, send(d, stop)), "Stop answered")
    hist = rows(adb, "SELECT reason, session_id, in_octets, out_octets, terminate_cause, "
                     "start_time > 0 FROM acct_stop")
    R.check(hist == [("stop", "db-0001", 9000, 7000, 1, 1)],
            "acct_stop: the Stop's octets, the Interim's out octets, the cause", str(hist))
    R.check(rows(adb, "SELECT count(*) FROM acct_live") == [(0,)], "the live row is gone")

    # a Stop for a session never seen, and Accounting-On
    lone = req(4, 2, "db-lone", [(A.OUT_OCTETS, A.u32(123))])
    R.check(A.response_ok(A.SEC, lone, send(d, lone)), "Stop of an unknown session answered")
    for i, sid in enumerate(("db-a", "db-b")):
        p = req(5 + i, 1, sid)
        R.check(A.response_ok(A.SEC, p, send(d, p)), f"Start {sid} answered")
    on = A.acct_request(A.SEC, 9, [(A.STATUS, A.u32(7)), (A.NAS_ID, b"ap-db")])
    R.check(A.response_ok(A.SEC, on, send(d, on)), "Accounting-On answered")
    hist = rows(adb, "SELECT reason, session_id, out_octets FROM acct_stop ORDER BY id")
    R.check(hist[1:] == [("stop-unknown", "db-lone", 123), ("nas-reset", "db-a", 0),
                         ("nas-reset", "db-b", 0)] or
            hist[1:] == [("stop-unknown", "db-lone", 123), ("nas-reset", "db-b", 0),
                         ("nas-reset", "db-a", 0)],
            "stop-unknown and nas-reset rows", str(hist))
    R.check(rows(adb, "SELECT count(*) FROM acct_live") == [(0,)], "Accounting-On emptied acct_live")

    # the database locked by another writer: no answer, then the
    # retransmission is answered once it is free again
    mx0 = d.metrics()
    lock = sqlite3.connect(adb, timeout=5, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    p = req(20, 1, "db-locked")
    r1 = send(d, p, timeout=3.5)
    lock.execute("COMMIT")
    lock.close()
    R.check(r1 is None, "a request the database cannot take is not answered")
    r2 = send(d, p, timeout=3.0)
    R.check(A.response_ok(A.SEC, p, r2), "its retransmission is, once the database is free")
    mx1 = d.metrics()
    R.check(T.mdelta(mx0, mx1, "twag_acct_dropped_total", reason="not-recorded") == 1,
            "counted as not-recorded")
    R.check("event=acct-db-error" in d.log_text(), "event=acct-db-error logged")
    R.check(rows(adb, "SELECT session_id FROM acct_live") == [("db-locked",)],
            "recorded once")
    R.check(d.stop() == 0, "SIGTERM: exit 0")

    # --acct-db off: memory only; --acct-history-days 0: no history
    w2 = T.tmpdir("acct-db-off")
    db2 = os.path.join(w2, "twag.db")
    T.new_usim(db2)
    d2 = A.AcctTwagd(w2, db2, secret=A.SEC, threads=1, extra=["--acct-db", "off"])
    if R.check(d2.start(), "twagd --acct-db off starts", d2.log_text()):
        p = req(1, 1, "mem-1")
        R.check(A.response_ok(A.SEC, p, send(d2, p)), "Start answered (memory only)")
        R.check(not os.path.exists(os.path.join(w2, "twag.acct.db")), "no file written")
        d2.stop()
    own = os.path.join(w2, "own.db")
    d3 = A.AcctTwagd(w2, db2, secret=A.SEC, threads=1,
                     extra=["--acct-db", own, "--acct-history-days", "0"])
    if R.check(d3.start(), "twagd --acct-db FILE --acct-history-days 0 starts", d3.log_text()):
        for i, st in ((1, 1), (2, 2)):
            p = req(i, st, "h0")
            R.check(A.response_ok(A.SEC, p, send(d3, p)), f"status {st} answered")
        R.check(rows(own, "SELECT count(*) FROM acct_stop") == [(0,)] and
                rows(own, "SELECT count(*) FROM acct_live") == [(0,)],
                "no history kept with --acct-history-days 0")
        d3.stop()
    bad = subprocess.run([T.TWAGD, "--store", f"sqlite:{db2}", "--client", "127.0.0.1=x",
                          "--acct-history-days", "-1"], capture_output=True, text=True, timeout=10)
    R.check(bad.returncode == 2 and "acct-history-days must be an integer" in bad.stderr,
            "--acct-history-days -1 refused", bad.stderr)

    # --acct-interim-interval: RFC 2869 §5.16 in every Access-Accept
    imsi, card = T.new_usim(db2, amf="0000")
    d4 = A.AcctTwagd(w2, db2, secret=A.SEC, threads=1, extra=["--acct-interim-interval", "300"])
    if R.check(d4.start(), "twagd --acct-interim-interval 300 starts", d4.log_text()):
        r = T.eapol_test(d4, "aka-prime", T.nai(6, imsi), card)
        accepts = [a for c, a in T.eapol_radius_replies(r.output) if c == T.ACCESS_ACCEPT]
        R.check(r.success and len(accepts) == 1 and
                [v for t, v in accepts[0] if t == 85] == ["300"],
                "the Access-Accept carries Acct-Interim-Interval 300", str(accepts))
        d4.stop()
    for v in ("59", "86401", "x"):
        bad = subprocess.run([T.TWAGD, "--store", f"sqlite:{db2}", "--client", "127.0.0.1=x",
                              "--acct-interim-interval", v], capture_output=True, text=True,
                             timeout=10)
        R.check(bad.returncode == 2 and "acct-interim-interval must be 0 or 60..86400" in bad.stderr,
                f"--acct-interim-interval {v} refused", bad.stderr)


T.run_main(main, R)
