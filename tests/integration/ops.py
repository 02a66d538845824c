#!/usr/bin/python3
"""twagd under a service manager and started as root: the sd_notify
protocol (a datagram socket this test listens on as NOTIFY_SOCKET, by path
and in the abstract namespace: READY=1 once it answers, WATCHDOG=1 at half
of WATCHDOG_USEC, none for another WATCHDOG_PID, RELOADING=1 and READY=1
around SIGHUP, STOPPING=1 on SIGTERM, each from twagd's own pid) and the
privilege drop (--user/--group: /proc/PID/status shows the user's ids in
every thread, attaches still work, the store's files are the user's; a
store the user cannot write, a user that does not exist, --group alone
and --user from a process that is not root are refused with the reason)."""
import os
import pwd
import grp
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

R = T.Results("ops")


class Listener:
    """A datagram socket as a service manager has one: every message with
    the sender's pid (SO_PASSCRED) and the time it came."""

    def __init__(self, address):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.s.bind(address)
        self.s.settimeout(0.2)
        self.msgs = []          # (time, pid, text)
        self.lock = threading.Lock()
        self.done = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        space = socket.CMSG_SPACE(struct.calcsize("3i"))
        while not self.done:
            try:
                data, anc, _, _ = self.s.recvmsg(4096, space)
            except socket.timeout:
                continue
            except OSError:
                return
            pid = None
            for level, kind, v in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = struct.unpack("3i", v[:12])[0]
            with self.lock:
                self.msgs.append((time.time(), pid, data.decode(errors="replace")))

    def texts(self):
        with self.lock:
            return [m[2] for m in self.msgs]

    def wait(self, pred, timeout=5.0):
        end = time.time() + timeout
        while time.time() < end:
            if pred(self.texts()):
                return True
            time.sleep(0.02)
        return pred(self.texts())

    def close(self):
        self.done = True
        self.t.join(2)
        self.s.close()


def status_ok(port, secret, timeout=1.0):
    c = T.RadiusClient(("127.0.0.1", port), secret)
    try:
        req, rep = c.request([(T.NAS_IDENTIFIER, "ops")], code=T.STATUS_SERVER, timeout=timeout)
    finally:
        c.close()
    return rep is not None and rep[0] == T.ACCESS_ACCEPT and not T.check_reply(secret, req[4:20], rep)


def with_env(env, fn):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update({k: v for k, v in env.items() if v is not None})
    for k, v in env.items():
        if v is None:
            os.environ.pop(k, None)
    try:
        return fn()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def count(texts, line):
    return sum(1 for t in texts if line in t.split("\n"))


def notify_case(work):
    db = os.path.join(work, "notify.db")
    T.new_usim(db)
    path = os.path.join(work, "notify.sock")
    ln = Listener(path)
    d = T.Twagd(work, db, threads=2)
    d.log = os.path.join(work, "twagd-notify.log")
    started = with_env({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000", "WATCHDOG_PID": None},
                       d.start)
    if not R.check(started, "twagd with NOTIFY_SOCKET (a path) starts", d.log_text()):
        ln.close()
        return
    pid = d.proc.pid
    R.check(ln.wait(lambda m: count(m, "READY=1") >= 1), "READY=1 sent", ln.texts())
    with ln.lock:
        ready = [m for m in ln.msgs if "READY=1" in m[2].split("\n")]
    R.check(ready and ready[0][1] == pid, f"READY=1 comes from twagd's pid ({ready[0][1] if ready else None} "
            f"vs {pid}): NotifyAccess=main accepts it")
    R.check(ready and "STATUS=RADIUS on 127.0.0.1:" in ready[0][2], "READY=1 with STATUS= naming the address",
            ready[0][2] if ready else None)
    R.check(status_ok(d.port, d.secret), "after READY=1 the RADIUS socket answers (Status-Server)")
    # WATCHDOG_USEC 0.4 s: a ping every 0.2 s, only after READY=1
    n0 = count(ln.texts(), "WATCHDOG=1")
    time.sleep(1.2)
    n1 = count(ln.texts(), "WATCHDOG=1")
    R.check(n1 - n0 >= 3, f"WATCHDOG=1 at half of WATCHDOG_USEC: {n1 - n0} in 1.2 s (want >= 3)")
    t = ln.texts()
    first_ready = next((i for i, x in enumerate(t) if "READY=1" in x.split("\n")), None)
    first_wd = next((i for i, x in enumerate(t) if x == "WATCHDOG=1"), None)
    R.check(first_ready is not None and first_wd is not None and first_ready < first_wd,
            "the first WATCHDOG=1 follows READY=1", t[:5])

    # SIGHUP: RELOADING=1 (with MONOTONIC_USEC), then READY=1 again
    k = len(ln.texts())
    d.proc.send_signal(signal.SIGHUP)
    ok = ln.wait(lambda m: any("RELOADING=1" in x.split("\n") for x in m[k:]) and
                 count(m[k:], "READY=1") >= 1)
    after = [x for x in ln.texts()[k:] if x != "WATCHDOG=1"]
    R.check(ok and len(after) >= 2 and after[0].startswith("RELOADING=1\nMONOTONIC_USEC=") and
            after[1] == "READY=1", "SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1", after)
    R.check(status_ok(d.port, d.secret), "answers after the reload")

    # SIGTERM: STOPPING=1, exit 0
    k = len(ln.texts())
    rc = d.stop()
    R.check(rc == 0, f"SIGTERM: exit 0 ({rc})")
    R.check(count(ln.texts()[k:], "STOPPING=1") == 1, "SIGTERM: STOPPING=1", ln.texts()[k:])
    ln.close()


def abstract_case(work):
    """@name: the abstract namespace; WATCHDOG_PID naming another process:
    no watchdog pings (sd_watchdog_enabled(3))."""
    db = os.path.join(work, "abstract.db")
    T.new_usim(db)
    name = "@twag-test-" + T.rhex(8)
    ln = Listener("\0" + name[1:])
    d = T.Twagd(work, db, threads=1)
    d.log = os.path.join(work, "twagd-abstract.log")
    started = with_env({"NOTIFY_SOCKET": name, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"}, d.start)
    if R.check(started, "twagd with NOTIFY_SOCKET=@name starts", d.log_text()):
        R.check(ln.wait(lambda m: count(m, "READY=1") >= 1), "abstract socket: READY=1", ln.texts())
        time.sleep(0.8)
        R.check(count(ln.texts(), "WATCHDOG=1") == 0,
                "WATCHDOG_PID of another process: no WATCHDOG=1", ln.texts())
        R.check(d.stop() == 0, "SIGTERM: exit 0")
        R.check(count(ln.texts(), "STOPPING=1") == 1, "abstract socket: STOPPING=1", ln.texts())
    ln.close()

    # a NOTIFY_SOCKET that is no socket address: said once, served anyway
    d = T.Twagd(work, db, threads=1)
    d.log = os.path.join(work, "twagd-badnotify.log")
    started = with_env({"NOTIFY_SOCKET": "relative/notify.sock", "WATCHDOG_USEC": None}, d.start)
    R.check(started and "event=notify-off" in d.log_text() and status_ok(d.port, d.secret),
            "NOTIFY_SOCKET not a path or @name: event=notify-off, twagd serves", d.log_text())
    d.stop()


def ids(pid):
    """{Uid: [...], Gid: [...], Groups: [...]} of /proc/PID/status."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("Uid", "Gid", "Groups"):
                    out[k] = [int(x) for x in v.split()]
    except OSError:
        pass
    return out


def tree_owner(path):
    return sorted({(os.lstat(os.path.join(b, f)).st_uid, os.lstat(os.path.join(b, f)).st_gid)
                   for b, _, fs in os.walk(path) for f in fs + ["."]})


def start_failed(work, db, extra, tag, prefix=()):
    """twagd that must not start: (exit status, its log)."""
    log = os.path.join(work, f"twagd-{tag}.log")
    with open(log, "w") as lf:
        argv = list(prefix) + [T.TWAGD, "--listen", f"127.0.0.1:{T.free_udp_port()}", "--store",
                               f"sqlite:{db}", "--client", "127.0.0.1=x", "--threads", "1"] + extra
        p = T.spawn(argv, stdout=lf, stderr=lf, stdin=subprocess.DEVNULL)
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            pass
        rc = T.stop_child(p, signal.SIGTERM, 5)
    with open(log, errors="replace") as f:
        return rc, f.read()


def user_case(work):
    if os.geteuid() != 0:
        R.note("SKIP --user: not root")
        return
    nobody = pwd.getpwnam("nobody")
    uid, gid = nobody.pw_uid, nobody.pw_gid
    os.chmod(work, 0o711)               # the user walks through to its store
    store = os.path.join(work, "store")
    os.mkdir(store, 0o700)
    db = os.path.join(store, "twag.db")
    imsi, usim = T.new_usim(db)         # provisioned as root: root's files

    # a store the user cannot write is refused, with the reason
    rc, log = start_failed(work, db, ["--user", "nobody"], "rootstore")
    R.check(rc == 1 and "event=start-failed what=store" in log and f"not writable by uid {uid}" in log
            and "owner 0" in log, "--user nobody on root's store: exit 1 naming the owner", log)

    for b, dirs, files in os.walk(store):
        for f in dirs + files + ["."]:
            os.chown(os.path.join(b, f), uid, gid)
    d = T.Twagd(work, db, threads=2, extra=["--user", "nobody"])
    d.log = os.path.join(work, "twagd-user.log")
    if not R.check(d.start(), "twagd --user nobody starts (store owned by nobody)", d.log_text()):
        return
    st = ids(d.proc.pid)
    R.check(st.get("Uid") == [uid] * 4 and st.get("Gid") == [gid] * 4,
            f"/proc/PID/status: Uid and Gid are nobody's ({st})")
    want_groups = sorted({gid} | {g.gr_gid for g in grp.getgrall() if "nobody" in g.gr_mem})
    R.check(sorted(st.get("Groups", [])) == want_groups,
            f"Groups: nobody's supplementary groups only ({st.get('Groups')} vs {want_groups})")
    tasks = os.listdir(f"/proc/{d.proc.pid}/task")
    R.check(len(tasks) >= 3 and all(ids(f"{d.proc.pid}/task/{t}").get("Uid") == [uid] * 4 for t in tasks),
            f"every thread runs as nobody ({len(tasks)} threads)")
    R.check("user=nobody" in d.log_text(), "the ready line names the user")
    r = T.eapol_test(d, "aka-prime", T.nai(6, imsi), usim)
    R.check(r.success and r.mppe() == (1, 0), "EAP-AKA' attach (eapol_test) through the dropped twagd",
            r.tail())
    mx = d.metrics()
    R.check(T.metric(mx, "twag_attaches_total", method="aka-prime", kind="full") == 1,
            "the metrics socket, bound before the drop, serves")
    d.proc.send_signal(signal.SIGHUP)
    time.sleep(0.3)
    R.check("event=reload " in d.log_text() and status_ok(d.port, d.secret),
            "SIGHUP after the drop: reloaded, answering", d.log_text()[-600:])
    R.check(d.stop() == 0, "SIGTERM: exit 0 (the store closed as nobody)")
    R.check(tree_owner(store) == [(uid, gid)], f"every store file is nobody's ({tree_owner(store)})")

    # --group: that group instead of the user's own
    try:
        daemon_gid = grp.getgrnam("daemon").gr_gid
    except KeyError:
        daemon_gid = None
    if daemon_gid is not None:
        d = T.Twagd(work, db, threads=1, extra=["--user", "nobody", "--group", "daemon"])
        d.log = os.path.join(work, "twagd-group.log")
        if R.check(d.start(), "twagd --user nobody --group daemon starts", d.log_text()):
            st = ids(d.proc.pid)
            R.check(st.get("Uid") == [uid] * 4 and st.get("Gid") == [daemon_gid] * 4 and
                    daemon_gid in st.get("Groups", []), f"--group daemon: Gid {daemon_gid} ({st})")
            R.check(status_ok(d.port, d.secret), "answers")
            R.check(d.stop() == 0, "SIGTERM: exit 0")
    else:
        R.note("SKIP --group: no group daemon")

    rc, log = start_failed(work, db, ["--user", "twag-no-such-user"], "nouser")
    R.check(rc == 1 and "--user: no such user 'twag-no-such-user'" in log,
            "--user of a user that does not exist: exit 1, 'no such user'", log)
    rc, log = start_failed(work, db, ["--user", "nobody", "--group", "twag-no-such-group"], "nogroup")
    R.check(rc == 1 and "--group: no such group 'twag-no-such-group'" in log,
            "--group of a group that does not exist: exit 1, 'no such group'", log)
    rc, log = start_failed(work, db, ["--group", "nogroup"], "grouponly")
    R.check(rc == 1 and "--group needs --user" in log, "--group without --user: exit 1", log)
    rc, log = start_failed(work, db, ["--user", "root"], "root")
    R.check(rc == 1 and "is uid 0" in log, "--user root: refused (nothing would be dropped)", log)

    # not root: --user of another user is refused; of itself does nothing
    if shutil.which("setpriv") is None:
        R.note("SKIP --user when not root: no setpriv (util-linux)")
        return
    asnobody = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--init-groups"]
    rc, log = start_failed(work, db, ["--user", "daemon"], "notroot", prefix=asnobody)
    R.check(rc == 1 and "not root, and cannot become" in log,
            "not root: --user of another user is refused with the reason", log)
    d = T.Twagd(work, db, threads=1, extra=["--user", "nobody"])
    d.log = os.path.join(work, "twagd-self.log")
    argv0 = d.argv
    d.argv = lambda: asnobody + argv0()
    if R.check(d.start(), "not root: --user of the user twagd runs as starts (no-op)", d.log_text()):
        R.check(ids(d.proc.pid).get("Uid") == [uid] * 4 and "user=" not in d.log_text(),
                "... as that user, and the ready line names no drop")
        R.check(status_ok(d.port, d.secret), "answers")
        R.check(d.stop() == 0, "SIGTERM: exit 0")


def main():
    if not T.milenage_selftest(R) or not T.binaries_ok(R):
        return
    work = T.tmpdir("ops")
    notify_case(work)
    abstract_case(work)
    user_case(work)


if __name__ == "__main__":
    T.run_main(main, R)
