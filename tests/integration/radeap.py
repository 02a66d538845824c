#!/usr/bin/python3
"""radeapclient (Debian freeradius-utils) against twagd: full EAP-SIM
authentications with COMP128v1 computed by FreeRADIUS's own client from the
Ki, in parallel. radeapclient needs AT_FULLAUTH_ID_REQ in EAP-SIM/Start,
hence --sim-fullauth-id-req (radeapclient expects AT_FULLAUTH_ID_REQ in SIM/Start)."""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

R = T.Results("radeapclient")
N = 24


def block(identity, ki):
    # radeapclient input: one block per authentication, blank-line separated
    return (f'User-Name = "{identity}", EAP-Code = Response, EAP-Id = 1, '
            f'EAP-Type-Identity = "{identity}", EAP-Sim-Ki = 0x{ki.hex()}, '
            f'Message-Authenticator = 0x00\n')


def radeapclient(d, path, parallel=8):
    p = T.spawn(["radeapclient", "-q", "-s", "-p", str(parallel), "-r", "2", "-t", "2",
                 "-f", path, f"127.0.0.1:{d.port}", "auth", d.secret],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        T.stop_child(p, wait=1)
        return None, None, "radeapclient timed out"
    T.stop_child(p)
    a = re.search(r"Total approved auths:\s*(\d+)", out)
    n = re.search(r"Total denied auths:\s*(\d+)", out)
    lost = re.search(r"Total lost auths:\s*(\d+)", out)
    if lost and int(lost.group(1)):
        out += f"\n(lost: {lost.group(1)})"
    return (int(a.group(1)) if a else None), (int(n.group(1)) if n else None), out


def main():
    if not T.binaries_ok(R, tools=("radeapclient",)):
        return
    work = T.tmpdir("radeap")
    db = os.path.join(work, "twag.db")
    subs = []
    for _ in range(N):
        imsi, sim = T.new_sim(db)
        subs.append((imsi, sim.ki))
    d = T.Twagd(work, db, extra=["--sim-fullauth-id-req"])
    if not R.check(d.start(), "twagd --sim-fullauth-id-req starts", d.log_text()):
        return

    good = os.path.join(work, "good.txt")
    with open(good, "w") as f:
        f.write("\n".join(block(T.nai(1, i), ki) for i, ki in subs))
    for rnd in range(2):
        mx0 = d.metrics()
        ok, denied, out = radeapclient(d, good)
        R.check(ok == N and denied == 0,
                f"round {rnd + 1}: {N} EAP-SIM authentications all Access-Accept "
                f"(approved {ok}, denied {denied})", out)
        mx1 = d.metrics()
        got = T.mdelta(mx0, mx1, "twag_attaches_total", method="sim", kind="full")
        R.check(got == N, f"round {rnd + 1}: twag_attaches_total{{method=sim,kind=full}} +{N} (got {got})")
        got = T.mdelta(mx0, mx1, "twag_radius_access_accepts_total")
        R.check(got == N, f"round {rnd + 1}: twag_radius_access_accepts_total +{N} (got {got})")

    # A wrong Ki: radeapclient's SRES/MAC do not match the server's: that
    # authentication must not be accepted, the others still are.
    bad = os.path.join(work, "bad.txt")
    with open(bad, "w") as f:
        f.write("\n".join([block(T.nai(1, subs[0][0]), T.rbytes(16)),
                           block(T.nai(1, subs[1][0]), subs[1][1])]))
    mx0 = d.metrics()
    ok, denied, out = radeapclient(d, bad, parallel=2)
    R.check(ok == 1, f"one good and one wrong Ki: exactly one approved (approved {ok})", out)
    mx1 = d.metrics()
    R.check(T.mdelta(mx0, mx1, "twag_radius_access_accepts_total") == 1,
            "wrong Ki: no Access-Accept for it")

    # Without --sim-fullauth-id-req radeapclient is documented not to work;
    # nothing to test there. A clean stop:
    R.check(d.stop() == 0, "SIGTERM: twagd exits 0", d.log_text()[-2000:])


if __name__ == "__main__":
    T.run_main(main, R)
