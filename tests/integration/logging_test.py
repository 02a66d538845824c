#!/usr/bin/python3
"""twagd's logs: --log-format json (every line one JSON object with ts,
level and event first, numbers as numbers), and the per-request debug of
chosen conversations (--debug-imsi, --debug-client; changed by SIGHUP
while twagd runs): every attribute of the conversations asked for and of
no other, the secrets elided (no K, OPc, RES, MSK, shared secret or clear
IMSI anywhere in the log), an undecodable packet from a debug client
named as such."""
import hashlib
import json
import os
import socket
import struct
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

R = T.Results("logging")


def lines_since(d, marker):
    return [x for x in d.log_text(marker).split("\n")[1:] if x.strip()]


def parse_json_lines(lines):
    out, bad = [], []
    for x in lines:
        try:
            out.append(json.loads(x))
        except ValueError:
            bad.append(x)
    return out, bad


def debug_lines(text, masked_imsi):
    """The debug-attr User-Name/identity lines naming this subscriber."""
    return [x for x in text.split("\n") if "event=debug-" in x and masked_imsi in x]


def mask(imsi):
    return imsi[:6] + "*" * (len(imsi) - 10) + imsi[-4:]


def sighup_and_wait(d, what, timeout=5.0):
    before = d.log_text().count(what)
    d.proc.send_signal(signal.SIGHUP)
    return T.wait_for(lambda: d.log_text().count(what) > before, timeout)


def main():
    if not T.milenage_selftest(R) or not T.binaries_ok(R):
        return
    work = T.tmpdir("logging")
    db = os.path.join(work, "twag.db")
    a_imsi, a = T.new_usim(db, amf="0000")
    b_imsi, b = T.new_usim(db, amf="0000")
    conf = os.path.join(work, "twagd.conf")
    with open(conf, "w") as f:
        f.write("log-format = json\n")

    # 1. JSON lines
    aport = T.free_udp_port()
    d = T.Twagd(work, db, extra=["--config", conf, "--debug-imsi", a_imsi,
                                 "--acct-listen", f"127.0.0.1:{aport}"])
    if not R.check(d.start(), "twagd starts with --log-format json", d.log_text()):
        return
    r = T.eapol_test(d, "aka-prime", T.nai(6, a_imsi), a)
    R.check(r.success, "EAP-AKA' attach (subscriber A, debugged)", r.tail())
    r = T.eapol_test(d, "aka-prime", T.nai(6, b_imsi), b)
    R.check(r.success, "EAP-AKA' attach (subscriber B, not debugged)", r.tail())
    time.sleep(0.3)   # the workers flush their logs once per batch
    lines = lines_since(d, "#### start 1:")
    objs, bad = parse_json_lines(lines)
    R.check(not bad and len(objs) >= 5, "every log line is one JSON object",
            "\n".join(bad[:5]))
    R.check(all(list(o)[:3] == ["ts", "level", "event"] for o in objs),
            "ts, level and event come first in every object")
    R.check(all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", o["ts"]) for o in objs),
            "ts is RFC 3339 UTC with milliseconds")
    ready = [o for o in objs if o["event"] == "ready"]
    R.check(len(ready) == 1 and isinstance(ready[0].get("threads"), int)
            and ready[0]["threads"] == 2, "ready: threads is the JSON number 2",
            str(ready))
    acc = [o for o in objs if o["event"] == "accept"]
    R.check(len(acc) == 2 and all(o.get("imsi") in (mask(a_imsi), mask(b_imsi)) for o in acc),
            "accept lines carry the masked IMSI as a string", str(acc))

    # 2. the debug lines: A's conversation only, attribute by attribute
    dbg = [o for o in objs if o["event"].startswith("debug-")]
    attrs = [o for o in dbg if o["event"] == "debug-attr"]
    pkts = [o for o in dbg if o["event"] == "debug-packet"]
    names = {o.get("attr") for o in attrs}
    R.check({"User-Name", "EAP-Message", "Message-Authenticator", "State",
             "Vendor-Specific", "Class"} <= names,
            "debug: the request and reply attributes are listed", str(sorted(names)))
    codes = [(o["dir"], o.get("code")) for o in pkts]
    R.check(("in", "Access-Request") in codes and ("out", "Access-Challenge") in codes
            and ("out", "Access-Accept") in codes, "debug: both directions, every round",
            str(codes))
    eap = " ".join(o["value"] for o in attrs if o.get("attr") == "EAP-Message")
    R.check("AKA'" in eap and "subtype=Challenge" in eap and "AT_RAND=" in eap
            and "AT_KDF_INPUT=WLAN" in eap, "debug: EAP-AKA' decoded (subtype, AT_RAND, KDF input)",
            eap[:400])
    R.check(re.search(r"AT_RES=<\d+ octets elided>", eap) and re.search(r"AT_MAC=<\d+ octets elided>", eap),
            "debug: AT_RES and AT_MAC elided", eap[:400])
    vsa = [o["value"] for o in attrs if o.get("attr") == "Vendor-Specific"]
    R.check(vsa and all("elided" in v and "vendor 311" in v for v in vsa),
            "debug: MS-MPPE keys elided", str(vsa))
    users = [o["value"] for o in attrs if o.get("attr") == "User-Name"]
    R.check(users and all(mask(a_imsi) in u for u in users), "debug: User-Name masked", str(users))
    R.check(not any(mask(b_imsi) in json.dumps(o) for o in dbg),
            "debug: nothing of subscriber B's conversation")
    # the test's own "#### start" lines hold the command line: left out
    text = "\n".join(x for x in d.log_text().split("\n") if not x.startswith("####"))
    secrets = {"K of A": a.m.k.hex(), "OPc of A": a.m.opc.hex(), "IMSI A": a_imsi,
               "IMSI B": b_imsi, "shared secret": d.secret}
    leaked = [w for w, v in secrets.items() if v in text]
    R.check(not leaked, "no key, shared secret or clear IMSI in the log", str(leaked))

    # 3. SIGHUP: text format, debug by client, then no condition
    with open(conf, "w") as f:
        f.write("log-format = text\ndebug-client = 127.0.0.0/8\n")
    R.check(sighup_and_wait(d, "event=debug-conditions"), "SIGHUP: debug-conditions logged",
            d.log_text()[-800:])
    R.check("client=127.0.0.0/8" in d.log_text().split("event=debug-conditions")[-1].split("\n")[0],
            "debug-conditions names the client network")
    mark = len(d.log_text())
    r = T.eapol_test(d, "aka-prime", T.nai(6, b_imsi), b)
    R.check(r.success, "attach B after the reload", r.tail())
    # a packet that does not decode, from the debug client
    c = T.RadiusClient(("127.0.0.1", d.port), d.secret)
    c.send(b"\x01\x07\x00\x30" + b"\x00" * 16 + b"\x4f\x01")
    c.close()
    # an Accounting-Request (RFC 2866 §3 authenticator) from the debug client
    body = T.attr(40, struct.pack("!I", 1)) + T.attr(44, b"dbg-session-1") + T.attr(1, T.nai(6, b_imsi).encode())
    pkt = bytearray(struct.pack("!BBH", 4, 9, 20 + len(body)) + bytes(16) + body)
    pkt[4:20] = hashlib.md5(bytes(pkt) + d.secret.encode()).digest()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(bytes(pkt), ("127.0.0.1", aport))
    try:
        acct_resp = s.recv(4096)
    except OSError:
        acct_resp = b""
    s.close()
    R.check(acct_resp[:1] == b"\x05", "Accounting-Response from twagd")
    time.sleep(0.5)
    after = d.log_text()[mark:]
    R.check("code=Accounting-Request id=9" in after and "code=Accounting-Response id=9" in after
            and "attr=Acct-Session-Id value=dbg-session-1" in after,
            "accounting from a debug client is debugged too", after[-900:])
    R.check("event=debug-attr" in after and mask(b_imsi) in after
            and not after.lstrip().startswith("{"),
            "text format again; B's conversation now debugged by its client", after[:600])
    R.check("msg=undecodable" in after, "an undecodable packet from a debug client is named",
            after[-600:])
    with open(conf, "w") as f:
        f.write("log-format = text\n")
    # the command line's --debug-imsi stays: only A
    R.check(sighup_and_wait(d, "event=debug-conditions"), "SIGHUP: conditions changed again")
    mark = len(d.log_text())
    r = T.eapol_test(d, "aka-prime", T.nai(6, b_imsi), b)
    R.check(r.success, "attach B with only --debug-imsi A", r.tail())
    time.sleep(0.3)
    R.check("event=debug-" not in d.log_text()[mark:], "no debug lines once B is no longer asked for",
            d.log_text()[mark:][:600])
    R.check(d.alive(), "twagd still running")
    d.stop()

    # 4. switched at run time over the control socket: twag debug
    ctl = os.path.join(work, "control")
    d = T.Twagd(work, db, extra=["--control-socket", ctl, "--acct-listen", "off"])
    if R.check(d.start(), "twagd with --control-socket starts", d.log_text()):
        def twag_debug(*args):
            return T.subprocess.run([T.TWAG, "debug", *args, "--control", ctl],
                                    capture_output=True, text=True, timeout=20)

        sh = twag_debug()
        R.check(sh.returncode == 0 and "ok clients=0 imsis=0" in sh.stdout,
                "twag debug: no condition at first", sh.stdout + sh.stderr)
        mark = len(d.log_text())
        r = T.eapol_test(d, "aka-prime", T.nai(6, b_imsi), b)
        R.check(r.success and "event=debug-" not in d.log_text()[mark:],
                "no debug lines without a condition", r.tail())
        add = twag_debug("imsi", "add", b_imsi)
        R.check(add.returncode == 0 and f"imsi={mask(b_imsi)}" in add.stdout and b_imsi not in add.stdout,
                "twag debug imsi add: the IMSI shown masked", add.stdout + add.stderr)
        add = twag_debug("client", "add", "127.0.0.0/8")
        R.check(add.returncode == 0 and "client=127.0.0.0/8" in add.stdout and
                "ok clients=1 imsis=1" in add.stdout, "twag debug client add", add.stdout + add.stderr)
        R.check("by=control-socket" in d.log_text(), "the change is logged (event=debug-conditions)")
        mark = len(d.log_text())
        r = T.eapol_test(d, "aka-prime", T.nai(6, b_imsi), b)
        time.sleep(0.3)
        R.check(r.success and "event=debug-attr" in d.log_text()[mark:],
                "B's conversation debugged once switched on at run time", r.tail())
        bad = twag_debug("imsi", "add", "12x")
        R.check(bad.returncode == 2 and "6 to 15 digits" in (bad.stdout + bad.stderr),
                "a bad IMSI is refused with the reason", bad.stdout + bad.stderr)
        bad = twag_debug("client", "del", "10.0.0.0/8")
        R.check(bad.returncode == 2 and "no such condition" in (bad.stdout + bad.stderr),
                "deleting a condition that is not there: an error", bad.stdout + bad.stderr)
        js = twag_debug("--json")
        R.check(js.returncode == 0 and json.loads(js.stdout)["ok"]["clients"] in (1, "1"),
                "twag debug --json", js.stdout)
        clr = twag_debug("clear")
        R.check(clr.returncode == 0 and "ok clients=0 imsis=0" in clr.stdout, "twag debug clear",
                clr.stdout + clr.stderr)
        mark = len(d.log_text())
        r = T.eapol_test(d, "aka-prime", T.nai(6, b_imsi), b)
        time.sleep(0.3)
        R.check(r.success and "event=debug-" not in d.log_text()[mark:],
                "no debug lines once cleared", d.log_text()[mark:][:500])
        d.stop()

    # 5. bad values are refused with the reason
    for args, why in ((["--log-format", "xml"], "log-format must be text or json"),
                      (["--debug-imsi", "12ab"], "IMSI of 6 to 15 digits"),
                      (["--debug-client", "300.1.1.1"], "debug-client must be IP")):
        p = T.spawn([T.TWAGD, "--store", f"sqlite:{db}", "--client", "127.0.0.1=x"] + args,
                    stdout=T.subprocess.PIPE, stderr=T.subprocess.STDOUT)
        out = p.communicate(timeout=10)[0].decode(errors="replace")
        R.check(p.returncode == 2 and why in out, f"{' '.join(args)} refused", out)


if __name__ == "__main__":
    T.run_main(main, R)
