#!/usr/bin/python3
"""A capture of real attaches (eapol_test as the phone, EAP-AKA', EAP-AKA,
EAP-SIM, plus a Status-Server) taken with dumpcap on lo and decoded by
tshark (Wireshark's RADIUS and EAP dissectors, with the shared secret so it
also checks every Response Authenticator): no malformed packet, no expert
error, the EAP methods decode, the Access-Accepts carry the MPPE keys, and
every reply starts with a Message-Authenticator that verifies (checked
again here from the raw UDP payloads, RFC 3579 §3.2)."""
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

R = T.Results("capture")


def tshark(pcap, port, secret, flt=None, fields=("frame.number",)):
    argv = ["tshark", "-n", "-r", pcap, "-d", f"udp.port=={port},radius",
            "-o", f"radius.shared_secret:{secret}", "-o", "radius.validate_authenticator:TRUE",
            "-T", "fields"]
    for f in fields:
        argv += ["-e", f]
    if flt:
        argv += ["-Y", flt]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"tshark {flt}: {p.stderr.strip()}")
    return [line.split("\t") for line in p.stdout.split("\n") if line.strip()]


def count(pcap, port, secret, flt):
    return len(tshark(pcap, port, secret, flt))


def main():
    tools = ("eapol_test", "osmo-auc-gen", "dumpcap", "tshark")
    if not T.milenage_selftest(R) or not T.binaries_ok(R, tools=tools):
        return
    work = T.tmpdir("capture")
    db = os.path.join(work, "twag.db")
    akap_imsi, akap = T.new_usim(db)
    aka_imsi, aka = T.new_usim(db)
    sim_imsi, sim = T.new_sim(db)
    d = T.Twagd(work, db)
    if not R.check(d.start(), "twagd starts", d.log_text()):
        return

    pcap = os.path.join(work, "run.pcapng")
    errf = open(os.path.join(work, "dumpcap.err"), "w+")
    cap = T.spawn(["dumpcap", "-q", "-i", "lo", "-f", f"udp port {d.port}", "-w", pcap],
                  stdout=subprocess.DEVNULL, stderr=errf)
    deadline = time.time() + 10
    started = False
    while time.time() < deadline and cap.poll() is None:
        errf.seek(0)
        if "Capturing on" in errf.read():
            started = True
            break
        time.sleep(0.05)
    if not started:
        errf.seek(0)
        T.stop_child(cap)
        R.note(f"SKIP capture: dumpcap cannot capture on lo here: {errf.read().strip()[:200]}")
        R.check(d.stop() == 0, "SIGTERM: twagd exits 0")
        return
    time.sleep(0.3)

    results = [
        ("EAP-AKA'", T.eapol_test(d, "aka-prime", T.nai(6, akap_imsi), akap)),
        ("EAP-AKA", T.eapol_test(d, "aka", T.nai(0, aka_imsi), aka)),
        ("EAP-SIM", T.eapol_test(d, "sim", T.nai(1, sim_imsi), sim)),
    ]
    c = T.RadiusClient(("127.0.0.1", d.port), d.secret)
    _, st = c.request([(T.NAS_IDENTIFIER, "capture")], code=T.STATUS_SERVER)
    c.close()
    time.sleep(0.5)
    T.stop_child(cap, signal.SIGINT, 10)
    errf.close()
    for what, r in results:
        R.check(r.success and r.mppe() == (1, 0), f"{what} attach during the capture", r.tail())
    R.check(st is not None and st[0] == T.ACCESS_ACCEPT, "Status-Server answered during the capture")

    sec = d.secret
    total = count(pcap, d.port, sec, "radius")
    R.check(total >= 3 * 4 + 2, f"capture holds the RADIUS exchanges ({total} RADIUS frames)")
    bad = tshark(pcap, d.port, sec, "_ws.malformed or _ws.expert.severity == error",
                 ("frame.number", "_ws.expert.message"))
    R.check(not bad, "no malformed frame and no expert error", bad)
    R.check(count(pcap, d.port, sec, "udp and not radius") == 0, "every UDP frame decodes as RADIUS")
    for t, name in ((50, "EAP-AKA'"), (23, "EAP-AKA"), (18, "EAP-SIM")):
        R.check(count(pcap, d.port, sec, f"eap.type == {t}") > 0, f"{name} (eap.type == {t}) frames decode")
    # RFC 9048 §3.1 / RFC 5448: the AKA'-Challenge carries AT_KDF_INPUT (23),
    # AT_KDF (24), AT_RAND (1), AT_AUTN (2), AT_MAC (11)
    types = set()
    for row in tshark(pcap, d.port, sec, "eap.code == 1 and eap.type == 50 and eap.aka.subtype == 1",
                      ("eap.aka.subtype.type",)):
        types |= {int(x) for x in row[0].split(",") if x}
    R.check({1, 2, 11, 23, 24} <= types,
            f"AKA'-Challenge has AT_RAND, AT_AUTN, AT_MAC, AT_KDF_INPUT, AT_KDF ({sorted(types)})")
    R.check(count(pcap, d.port, sec, "radius.code == 11") >= 3, "Access-Challenges seen")
    accepts = count(pcap, d.port, sec, "radius.code == 2")
    R.check(accepts == 4, f"4 Access-Accepts (3 attaches + Status-Server) ({accepts})")
    R.check(count(pcap, d.port, sec, "radius.code == 2 and radius.MS_MPPE_Recv_Key and radius.MS_MPPE_Send_Key "
                  "and radius.Session_Timeout and radius.User_Name and radius.Class and eap.code == 3") == 3,
            "each attach's Access-Accept: MPPE keys, Session-Timeout, User-Name, Class, EAP-Success")
    # tshark validates the Response Authenticator of replies to Access-
    # Requests (not of the Status-Server reply; that one is checked below)
    inval = tshark(pcap, d.port, sec, "radius.authenticator.invalid == 1",
                   ("frame.number", "radius.code", "radius.id"))
    R.check(not inval, "tshark: no invalid Response Authenticator", inval)
    replies = count(pcap, d.port, sec, "radius.code == 2 or radius.code == 3 or radius.code == 11")
    valid = count(pcap, d.port, sec, "radius.authenticator.valid == 1")
    R.check(replies > 1 and valid == replies - 1,
            f"tshark: Response Authenticator valid in every reply to an Access-Request ({valid}/{replies - 1})")

    # Our own check from the raw payloads: pair each reply with its request
    # (client port, Identifier) and verify Message-Authenticator first and right.
    rows = tshark(pcap, d.port, sec, "radius", ("udp.srcport", "udp.dstport", "udp.payload"))
    pending, probs, n = {}, [], 0
    for src, dst, payload in rows:
        pkt = bytes.fromhex(payload.replace(":", ""))
        if int(dst) == d.port:
            pending[(int(src), pkt[1])] = pkt[4:20]
            continue
        req = pending.get((int(dst), pkt[1]))
        if req is None:
            probs.append(f"reply id {pkt[1]} without a request")
            continue
        n += 1
        probs += [f"code {pkt[0]} id {pkt[1]}: {p}" for p in T.check_reply(sec, req, pkt)]
    R.check(n > 0 and not probs, f"all {n} replies: Message-Authenticator first and valid", probs)
    R.check(d.stop() == 0, "SIGTERM: twagd exits 0")


if __name__ == "__main__":
    T.run_main(main, R)
