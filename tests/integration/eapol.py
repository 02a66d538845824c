#!/usr/bin/python3
"""eapol_test (Debian eapoltest) as the phone against twagd: EAP-AKA',
EAP-AKA and EAP-SIM full authentications, an AUTS resynchronisation, fast
re-authentication, failures that must fail, and a clean restart.

The USIM is the Python Milenage of twagtest.py (checked against TS 35.208
first), the SIM is osmo-auc-gen's COMP128v1; eapol_test itself checks the
EAP method (RFC 9048 / 4187 / 4186: AT_MAC, AT_KDF, AMF separation bit,
...) and compares its MSK with the MS-MPPE keys of the Access-Accept.
"""
import os
import re
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

R = T.Results("eapol")


def dict_multi(attrs):
    d = {}
    for t, v in attrs:
        d.setdefault(t, []).append(v)
    return d


def attach_ok(what, r, umts=None, gsm=None, mppe=1, session_timeout=3600):
    """SUCCESS, MPPE keys OK: mppe, mismatch 0, and how often the card was
    asked (umts: UMTS-AUTH requests, gsm: GSM-AUTH requests)."""
    ok = R.check(r.success, f"{what}: eapol_test SUCCESS", r.tail())
    R.check(r.mppe() == (mppe, 0), f"{what}: MPPE keys OK: {mppe} mismatch: 0 (got {r.mppe()})",
            None if ok else "")
    if umts is not None:
        R.check(len(r.umts()) == umts, f"{what}: {umts} UMTS-AUTH request(s) (got {r.requests})")
    if gsm is not None:
        R.check(len(r.gsm()) == gsm, f"{what}: {gsm} GSM-AUTH request(s) (got {r.requests})")
    R.check(not r.monitor_errors, f"{what}: control socket monitor clean", r.monitor_errors)
    replies = T.eapol_radius_replies(r.output)
    R.check(replies and all(a and a[0][0] == T.MESSAGE_AUTHENTICATOR for _, a in replies),
            f"{what}: Message-Authenticator first in all {len(replies)} replies",
            [[t for t, _ in a] for _, a in replies])
    accepts = [dict_multi(a) for c, a in replies if c == T.ACCESS_ACCEPT]
    ids = T.eapol_identities(r.output)
    R.check(len(accepts) == mppe and all(
        len(a.get(T.VSA, [])) >= 2 and T.SESSION_TIMEOUT in a and T.CLASS in a
        and T.EAP_MESSAGE in a for a in accepts),
        f"{what}: Access-Accept carries MPPE VSAs, Session-Timeout, Class, EAP-Success",
        accepts)
    R.check(len(ids) == len(accepts) and all(a.get(T.USER_NAME) == [i] for a, i in zip(accepts, ids)),
            f"{what}: Access-Accept User-Name = the EAP identity of that round",
            [(a.get(T.USER_NAME), i) for a, i in zip(accepts, ids)])
    R.check(all(a.get(T.SESSION_TIMEOUT) == [str(session_timeout)] for a in accepts),
            f"{what}: Session-Timeout {session_timeout}", [a.get(T.SESSION_TIMEOUT) for a in accepts])
    # RFC 2548 §2.4.2/§2.4.3: Vendor-Id 311, types 16/17, a salt with its
    # top bit set, a different salt per attribute
    salts_ok = True
    for a in accepts:
        mppe_vsas = [bytes.fromhex(v) for v in a.get(T.VSA, []) if v.startswith("00000137")]
        types = sorted(v[4] for v in mppe_vsas)
        salts = [v[6:8] for v in mppe_vsas]
        salts_ok &= (types == [16, 17] and all(x[0] & 0x80 for x in salts)
                     and len(set(salts)) == 2 and all(v[5] == 2 + 2 + 48 for v in mppe_vsas))
    R.check(salts_ok, f"{what}: MS-MPPE-Send/Recv-Key with distinct salts, top bit set, 48-octet strings",
            accepts)
    return ok


def attach_ok_cards(what, r, method, cards, mppe):
    """attach_ok with the card asked `cards` times: GSM-AUTH for EAP-SIM,
    UMTS-AUTH for EAP-AKA and EAP-AKA'."""
    if method == "sim":
        attach_ok(what, r, gsm=cards, mppe=mppe)
    else:
        attach_ok(what, r, umts=cards, mppe=mppe)


def main():
    if not T.milenage_selftest(R) or not T.binaries_ok(R):
        return

    work = T.tmpdir("eapol-srv")
    db = os.path.join(work, "twag.db")
    # AKA' subscriber with AMF 0000: the separation bit (TS 33.402 §6.1) must
    # come from the gateway, and eapol_test refuses an AUTN without it.
    aka_p_imsi, aka_p = T.new_usim(db, amf="0000")
    aka_imsi, aka = T.new_usim(db, amf=T.rhex(2))
    sim_imsi, sim = T.new_sim(db)
    usim_sim_imsi, usim_sim = T.new_usim(db)        # EAP-SIM on a USIM (c2/c3)
    # store SQN 0x20 = SEQ 1 IND 0; the USIM has already accepted SEQ 100 in
    # every IND slot (e.g. from another network): the first AUTN is stale.
    resync_imsi, resync = T.new_usim(db, sqn="000000000020", usim_seq=100)
    ra_imsis = {m: T.new_usim(db) if m != "sim" else T.new_sim(db)
                for m in ("aka-prime", "aka", "sim")}
    bad_imsi, _ = T.new_usim(db)
    bad_card = T.Usim(T.rbytes(16), T.rbytes(16))   # not the stored keys
    unknown_imsi = T.rand_imsi()

    # --realm: minted re-auth ids carry it (RFC 4187 §4.1.1.8 leaves the realm
    # of a fast re-auth id to the server; the peer uses the id as is)
    d = T.Twagd(work, db, extra=["--realm", T.REALM])
    if not R.check(d.start(), "twagd starts and logs event=ready", d.log_text()):
        return

    # 1. full authentications, one per method
    r = T.eapol_test(d, "aka-prime", T.nai(6, aka_p_imsi), aka_p)
    attach_ok("EAP-AKA' full", r, umts=1)
    R.check(len(aka_p.accepted) == 1, "EAP-AKA': the USIM accepted one fresh SQN")
    r = T.eapol_test(d, "aka", T.nai(0, aka_imsi), aka)
    attach_ok("EAP-AKA full", r, umts=1)
    r = T.eapol_test(d, "sim", T.nai(1, sim_imsi), sim)
    attach_ok("EAP-SIM (COMP128v1) full", r, gsm=1)
    r = T.eapol_test(d, "sim", T.nai(1, usim_sim_imsi), usim_sim)
    attach_ok("EAP-SIM on a Milenage USIM (c2/c3) full", r, gsm=1)

    # 2. more AKA' attaches for the same subscriber: each SQN fresh and rising
    for i in range(2):
        r = T.eapol_test(d, "aka-prime", T.nai(6, aka_p_imsi), aka_p)
        attach_ok(f"EAP-AKA' attach {i + 2}", r, umts=1)
    R.check(len(aka_p.accepted) == 3 and aka_p.accepted == sorted(set(aka_p.accepted))
            and not aka_p.refused,
            f"EAP-AKA': SQNs strictly increase, none refused ({aka_p.accepted})")

    # 3. resynchronisation (TS 33.102 §6.3.5): AUTS, then a fresh challenge
    mx0 = d.metrics()
    r = T.eapol_test(d, "aka-prime", T.nai(6, resync_imsi), resync)
    attach_ok("EAP-AKA' with AUTS resync", r)
    kinds = [k for _, k in r.umts()]
    R.check(kinds == ["sync", "ok"], f"resync: the USIM answered AUTS then RES ({kinds})")
    R.check(resync.accepted and (resync.accepted[-1] >> 5) > 100,
            f"resync: the accepted SQN has SEQ > 100 ({[hex(x) for x in resync.accepted]})")
    mx1 = d.metrics()
    R.check(T.mdelta(mx0, mx1, "twag_resyncs_total") == 1, "resync: twag_resyncs_total +1")
    r = T.eapol_test(d, "aka", T.nai(0, resync_imsi), resync)
    attach_ok("after resync, EAP-AKA attach needs no new resync", r, umts=1)
    R.check([k for _, k in r.umts()] == ["ok"], "after resync: RES at once")

    # 4. fast re-authentication (RFC 4187 §5, RFC 4186 §5): eapol_test -r 2
    #    re-authenticates twice with the server's AT_NEXT_REAUTH_ID; the card
    #    must be asked only for the first, full, authentication.
    for method, (imsi, card) in ra_imsis.items():
        digit = {"aka-prime": 6, "aka": 0, "sim": 1}[method]
        mx0 = d.metrics()
        r = T.eapol_test(d, method, T.nai(digit, imsi), card, reauth=2)
        attach_ok_cards(f"{method} fast re-auth x2", r, method, 1, mppe=3)
        ids = T.eapol_identities(r.output)
        rdig = {"aka-prime": "8", "aka": "4", "sim": "5"}[method]
        R.check(len(ids) == 3 and ids[0] == T.nai(digit, imsi)
                and all(i[:1] == rdig and imsi not in i and i.endswith("@" + T.REALM) for i in ids[1:]),
                f"{method}: rounds 2 and 3 use server-minted re-auth identities "
                f"'{rdig}...@<--realm>' ({ids})")
        mx1 = d.metrics()
        for kind, n in (("full", 1), ("reauth", 2)):
            a = T.metric(mx0, "twag_attaches_total", method=method, kind=kind) or 0
            b = T.metric(mx1, "twag_attaches_total", method=method, kind=kind)
            R.check(b is not None and b - a == n,
                    f"{method}: twag_attaches_total{{kind={kind}}} +{n} (got {a} -> {b})")

    # 5. what must fail: a USIM with other keys (MAC failure at the phone),
    #    an unknown IMSI, a wrong RADIUS secret (dropped: eapol_test times out)
    r = T.eapol_test(d, "aka-prime", T.nai(6, bad_imsi), bad_card, timeout=5)
    R.check(not r.success and bad_card.mac_failures == 1,
            "USIM with other keys: MAC failure at the phone, no SUCCESS", r.tail())
    r = T.eapol_test(d, "aka-prime", T.nai(6, unknown_imsi), bad_card, timeout=5)
    R.check(not r.success and not r.requests, "unknown IMSI: FAILURE, no challenge", r.tail())
    mx0 = d.metrics()
    r = T.eapol_test(d, "aka-prime", T.nai(6, aka_p_imsi), aka_p, timeout=2, secret="wrong-secret")
    R.check(not r.success and not r.requests, "wrong shared secret: no SUCCESS, no challenge", r.tail())
    mx1 = d.metrics()
    R.check((T.mdelta(mx0, mx1, "twag_radius_bad_authenticators_total") or 0) > 0,
            "wrong shared secret: twag_radius_bad_authenticators_total increases")
    R.check(d.alive(), "twagd still running after the failure cases")

    # 6. logs: masked IMSIs, never a key
    log = d.log_text()
    cards = [(aka_p_imsi, aka_p), (aka_imsi, aka), (sim_imsi, sim), (usim_sim_imsi, usim_sim),
             (resync_imsi, resync)] + list(ra_imsis.values())
    leaked = [i for i, _ in cards if i in log]
    R.check(not leaked, f"log never shows a full IMSI (leaked: {leaked})")
    leaked = [k for _, c in cards for k in T.card_secrets(c) if k in log]
    R.check(not leaked, "log never shows a Ki/OPc", leaked)
    R.check(re.search(r"event=accept", log) is not None, "log has event=accept lines")

    # 7. SIGTERM: clean exit 0; each restart on the same store (other flags)
    #    must still give fresh SQNs (attach_ok counts one UMTS-AUTH: no AUTS)
    R.check(d.stop() == 0, "SIGTERM: twagd exits 0", d.log_text()[-2000:])
    phases = [
        (["--no-fast-reauth"], pseudonym_phase),
        (["--reauth-limit", "1"], reauth_limit_phase),
        (["--id-policy", "any"], lambda d, s: policy_phase(d, s, "any")),
        (["--id-policy", "permanent"], lambda d, s: policy_phase(d, s, "permanent")),
        (["--volatile-identities"], volatile_reauth_phase),
        (["--volatile-identities", "--no-fast-reauth"], pseudonym_phase),
    ]
    subs = dict(aka_p=(aka_p_imsi, aka_p), aka=(aka_imsi, aka), sim=(sim_imsi, sim),
                usim_sim=(usim_sim_imsi, usim_sim))
    for extra, phase in phases:
        d = T.Twagd(work, db, extra=extra)
        if not R.check(d.start(), f"twagd {' '.join(extra)} restarts on the same store",
                       d.log_text()[-2000:]):
            return
        n = len(aka_p.accepted)
        r = T.eapol_test(d, "aka-prime", T.nai(6, aka_p_imsi), aka_p)
        attach_ok(f"EAP-AKA' after restart with {' '.join(extra)}", r, umts=1)
        R.check(len(aka_p.accepted) == n + 1 and not aka_p.refused,
                "after restart: the USIM sees a fresh SQN (no resync)")
        phase(d, subs)
        R.check(d.stop() == 0, f"SIGTERM ({' '.join(extra)}): exit 0")


def pseudonym_phase(d, subs):
    """--no-fast-reauth: the second round (eapol_test -r 1) is a full
    authentication with the pseudonym from AT_NEXT_PSEUDONYM (RFC 4187
    §4.1.1.7, RFC 4186 §4.2.1.7), which the server maps back to the IMSI."""
    for method, key, digit, pdig in (("aka-prime", "aka_p", 6, "7"), ("aka", "aka", 0, "2"),
                                     ("sim", "sim", 1, "3")):
        imsi, card = subs[key]
        r = T.eapol_test(d, method, T.nai(digit, imsi), card, reauth=1)
        attach_ok_cards(f"{method} full + pseudonym full", r, method, 2, mppe=2)
        ids = T.eapol_identities(r.output)
        R.check(len(ids) == 2 and ids[1][:1] == pdig and imsi not in ids[1],
                f"{method}: the second round uses a pseudonym '{pdig}...' ({ids})")
        if method != "sim":
            # the pseudonym resolved: no AKA-Identity round asking for the
            # permanent identity, one Access-Challenge per round
            n = sum(1 for c, _ in T.eapol_radius_replies(r.output) if c == T.ACCESS_CHALLENGE)
            R.check(n == 2, f"{method}: the pseudonym resolved at once (Access-Challenges: {n})")


def volatile_reauth_phase(d, subs):
    """--volatile-identities: fast re-authentication from the contexts in
    memory (eapol_test -r 2: full, then two re-auths with the server's
    AT_NEXT_REAUTH_ID); the card is asked once."""
    for method, key, digit in (("aka-prime", "aka_p", 6), ("sim", "sim", 1)):
        imsi, card = subs[key]
        mx0 = d.metrics()
        r = T.eapol_test(d, method, T.nai(digit, imsi), card, reauth=2)
        attach_ok_cards(f"--volatile-identities: {method} fast re-auth x2", r, method, 1, mppe=3)
        time.sleep(1.3)  # a write-behind round of identity rows (every second) had its chance
        mx1 = d.metrics()
        got = T.mdelta(mx0, mx1, "twag_attaches_total", method=method, kind="reauth")
        R.check(got == 2, f"--volatile-identities: {method} re-auth attaches +2 ({got})")
        got = T.mdelta(mx0, mx1, "twag_store_identity_rows_written_total")
        R.check(got == 0, f"--volatile-identities: no identity row written ({got})")


def reauth_limit_phase(d, subs):
    """--reauth-limit 1 ("fast re-authentications per full one", twagd
    --help): full, one fast re-auth, then full again."""
    imsi, card = subs["aka_p"]
    mx0 = d.metrics()
    r = T.eapol_test(d, "aka-prime", T.nai(6, imsi), card, reauth=2)
    attach_ok("--reauth-limit 1, three rounds", r, mppe=3)
    mx1 = d.metrics()
    got = (len(r.umts()), T.mdelta(mx0, mx1, "twag_attaches_total", method="aka-prime", kind="reauth"))
    R.check(got == (2, 1), "--reauth-limit 1: full, re-auth, full (UMTS-AUTH x2, reauth attaches +1) "
            f"(got UMTS-AUTH x{got[0]}, reauth +{got[1]})")


def policy_phase(d, subs, policy):
    """--id-policy any|permanent: AKA-Identity / SIM-Start identity rounds
    (RFC 4187 §4.1.2, RFC 4186 §4.2) before the challenge; and a Nak: a
    phone that only does EAP-AKA' while its identity says EAP-AKA (and one
    that only does EAP-SIM with an AKA' identity) gets the method it asks
    for (RFC 3748 §5.3.1)."""
    imsi, card = subs["sim"]
    r = T.eapol_test(d, "sim", T.nai(1, imsi), card)
    attach_ok(f"--id-policy {policy}: EAP-SIM", r, gsm=1)
    if policy != "any":
        return
    imsi, card = subs["aka"]
    mx0 = d.metrics()
    r = T.eapol_test(d, "aka-prime", T.nai(0, imsi), card)
    attach_ok("identity 0... but the phone Naks to EAP-AKA'", r, umts=1)
    mx1 = d.metrics()
    R.check(T.mdelta(mx0, mx1, "twag_attaches_total", method="aka-prime", kind="full") == 1,
            "Nak to EAP-AKA': counted as an aka-prime attach")
    imsi, card = subs["usim_sim"]
    r = T.eapol_test(d, "sim", T.nai(6, imsi), card)
    attach_ok("identity 6... but the phone Naks to EAP-SIM (USIM, c2/c3)", r, gsm=1)


if __name__ == "__main__":
    T.run_main(main, R)
