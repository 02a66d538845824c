#!/usr/bin/python3
"""twagd --check-config [FILE] and the SIGHUP reload that uses the same check.

--check-config reads the configuration whole and names every problem
(FILE:LINE or the option, never a secret), then what start-up would meet
first: the log and pid files, the KEK (missing, open to others, not the
store's) and the store (opened read-only); it binds nothing, creates no
store or KEK, and exits 0 or 1. A reload (SIGHUP) applies a configuration
only when it checks: with a problem the running one is kept and each
problem is logged; otherwise the log names the clients added, removed or
given another secret, applies the log level, and names the options that
changed but need a restart."""
import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

wait_for, read = T.wait_for, T.read
R = T.Results("check_config")


def status(host, port, secret, timeout=1.0):
    """Status-Server (RFC 5997): True if answered with a good Access-Accept."""
    c = T.RadiusClient((host, port), secret, src="127.0.0.1")
    try:
        req, rep = c.request([(T.NAS_IDENTIFIER, "check")], code=T.STATUS_SERVER, timeout=timeout)
    finally:
        c.close()
    return rep is not None and rep[0] == T.ACCESS_ACCEPT and not T.check_reply(secret, req[4:20], rep)


def check(*args):
    p = subprocess.run([T.TWAGD, "--check-config", *args], capture_output=True, text=True,
                       timeout=30)
    return p.returncode, p.stdout, p.stderr


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def check_cases(work):
    db = os.path.join(work, "s.db")
    T.new_usim(db)                      # a store and its KEK (s.db.kek, 0600)
    port = T.free_udp_port()
    good = os.path.join(work, "good.conf")
    secret = "check-" + T.rhex(8)
    write(good, f"listen = 127.0.0.1:{port}\nstore = sqlite:{db}\nclient = 127.0.0.1 {secret}\n")

    rc, out, err = check(good)
    R.check(rc == 0 and "configuration OK" in out and err == "",
            f"a good configuration: exit 0 and OK (rc {rc})", out + err)
    R.check(f"127.0.0.1:{port}" in out and "1 client" in out, "the verdict names listen and clients", out)
    # the same through --config and the option form
    rc2, out2, _ = check("--config", good)
    rc3, out3, _ = check(f"--config={good}", "--threads", "2")
    R.check(rc2 == 0 and rc3 == 0, f"--check-config --config FILE and with flags: exit 0 ({rc2}, {rc3})",
            out2 + out3)

    # every problem of the file and the command line, each with its place
    bad = os.path.join(work, "bad.conf")
    leak = "LEAKED-" + T.rhex(6)
    write(bad, "\n".join([
        f"listen = 127.0.0.1:99999",
        f"store = sqlite:{db}",
        "threads = many",
        "bogus = 1",
        f"client 10.0.0.1 {leak}",
        f"client = 127.0.0.1 {secret}",
        "log-level = loud",
        "max-sessions = 0",
        "x" * 3000,
        "threads = never-read",
    ]) + "\n")
    rc, out, err = check(bad, "--dup-expiry", "0", "--nope")
    want = [f"{bad}:1:", f"{bad}:3:", f"{bad}:4:", f"{bad}:5:", f"{bad}:7:", f"{bad}:8:",
            f"{bad}:9: line too long", "--dup-expiry", "--nope"]
    missing = [w for w in want if w not in err]
    R.check(rc == 1 and not missing, f"a bad configuration: exit 1, every problem named (missing {missing})",
            err)
    n = re.search(r"(\d+) problems", out)
    R.check(n is not None and int(n.group(1)) == len(want), f"the count of problems is {len(want)}", out)
    R.check(leak not in out + err and secret not in out + err, "no secret in the output")
    R.check(f"{bad}:10:" not in err, "nothing after a line too long is read", err)
    # a device is no configuration: refused at once, never read for ever
    rc, out, err = check("/dev/zero")
    R.check(rc == 1 and "line too long" in err, f"--check-config /dev/zero: exit 1 at once ({rc})", err)

    # the KEK: open to others, missing, not the store's
    kek = db + ".kek"
    os.chmod(kek, 0o644)
    rc, out, err = check(good)
    R.check(rc == 1 and "kek:" in err and "chmod 600" in err, f"a KEK open to others: exit 1 ({rc})", err)
    os.chmod(kek, 0o600)
    other = os.path.join(work, "other.kek")
    write(other, "%064x\n" % 7, 0o600)
    rc, out, err = check(good, "--kek-file", other)
    R.check(rc == 1 and "not the key of the store" in err, f"another KEK: exit 1 ({rc})", err)
    rc, out, err = check(good, "--kek-file", os.path.join(work, "absent.kek"))
    R.check(rc == 1 and "absent.kek" in err, f"a missing KEK file: exit 1, named ({rc})", err)

    # a store that is not one, and one in a directory that does not exist
    junk = os.path.join(work, "junk.db")
    write(junk, "this is not a database\n" * 50, 0o600)
    write(junk + ".kek", "%064x\n" % 9, 0o600)
    rc, out, err = check(good, "--store", f"sqlite:{junk}")
    R.check(rc == 1 and "--store" in err, f"a file that is not a store: exit 1 ({rc})", err)
    rc, out, err = check(good, "--store", f"sqlite:{work}/no/such/dir/s.db")
    R.check(rc == 1 and "cannot be created" in err, f"a store that cannot be created: exit 1 ({rc})", err)

    # a store that does not exist yet is created at start-up: a note, and
    # the check creates neither it nor its KEK
    fresh = os.path.join(work, "fresh.db")
    rc, out, err = check(good, "--store", f"sqlite:{fresh}")
    R.check(rc == 0 and "does not exist yet" in out, f"a store still to create: exit 0 with a note ({rc})",
            out + err)
    R.check(not os.path.exists(fresh) and not os.path.exists(fresh + ".kek"),
            "--check-config created no store and no KEK")
    # log and pid files in directories that cannot take them
    rc, out, err = check(good, "--log-file", "/proc/twag-no/log", "--pid-file", "/proc/twag-no/pid")
    R.check(rc == 1 and "--log-file" in err and "--pid-file" in err,
            f"log and pid files that cannot be written: exit 1 ({rc})", err)
    rc, out, err = check(good, "--user", "twag-no-such-user")
    R.check(rc == 1 and "--user: no user" in err, f"an unknown --user: exit 1 ({rc})", err)
    # nothing listens: the port is still free to bind
    R.check(T.free_udp_port() is not None, "no socket left behind")


def reload_case(work):
    db = os.path.join(work, "r.db")
    T.new_usim(db)
    port = T.free_udp_port()
    log, conf = os.path.join(work, "reload.log"), os.path.join(work, "reload.conf")
    s1, s2, s3 = ("r1-" + T.rhex(6)), ("r2-" + T.rhex(6)), ("r3-" + T.rhex(6))

    def conf_text(secret, extra=""):
        return (f"listen = 127.0.0.1:{port}\nstore = sqlite:{db}\nthreads = 1\n"
                f"log-file = {log}\nclient = 127.0.0.1 {secret}\n{extra}")

    write(conf, conf_text(s1, "client = 10.1.0.0/16 other-secret\n"))
    p = T.spawn([T.TWAGD, "--config", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL)
    if not R.check(wait_for(lambda: "event=ready" in read(log)), "twagd --config starts", read(log)):
        T.stop_child(p)
        return
    R.check(status("127.0.0.1", port, s1), "the first secret is accepted")

    # a good change: a new secret, a client removed and one added, the log
    # level (applied) and the thread count (needs a restart)
    write(conf, conf_text(s2, "client = 10.2.0.0/16 third-secret\nlog-level = debug\nthreads = 2\n"))
    p.send_signal(signal.SIGHUP)
    R.check(wait_for(lambda: "event=reload " in read(log), 5), "SIGHUP: event=reload", read(log))
    line = next((ln for ln in read(log).splitlines() if "event=reload " in ln), "")
    R.check("added=10.2.0.0/16" in line and "removed=10.1.0.0/16" in line and
            "secret-changed=127.0.0.1/32" in line and "log_level=debug" in line,
            "the reload names the clients added, removed and re-keyed, and the log level", line)
    pend = next((ln for ln in read(log).splitlines() if "event=reload-pending" in ln), "")
    R.check("keys=threads" in pend and "log-level" not in pend,
            "threads is named as waiting for a restart, the log level is not", pend)
    R.check(status("127.0.0.1", port, s2), "the new secret is accepted")
    R.check(not status("127.0.0.1", port, s1, timeout=0.7), "the old secret is not")
    R.check(s2 not in read(log) and "third-secret" not in read(log), "no secret in the log")

    # a change with a problem: nothing is applied
    write(conf, conf_text(s3, "threads = 0\n"))
    p.send_signal(signal.SIGHUP)
    R.check(wait_for(lambda: "event=reload-refused" in read(log), 5), "SIGHUP with a problem: reload-refused",
            read(log))
    R.check(re.search(r"event=reload-problem .*reload\.conf:\d+: threads", read(log)) is not None,
            "the problem is logged with FILE:LINE", read(log))
    R.check(status("127.0.0.1", port, s2), "the running secret is kept")
    R.check(not status("127.0.0.1", port, s3, timeout=0.7), "the refused file's secret is not used")
    R.check(p.poll() is None, "twagd survived the refused reload")
    R.check(T.stop_child(p, signal.SIGTERM, 10) == 0, "SIGTERM: exit 0")


def main():
    if not T.binaries_ok(R, tools=()):
        return
    work = T.tmpdir("checkcfg")
    check_cases(work)
    reload_case(work)


if __name__ == "__main__":
    T.run_main(main, R)
