#!/usr/bin/python3
"""Protocol-abuse cases against twagd with a RADIUS client written here on
hashlib/hmac (independent of twag's codec), plus eapol_test for the
legitimate attaches:
  - Message-Authenticator missing / wrong on an EAP Access-Request: silently
    dropped, counted, no state, duplicate cache untouched (RFC 3579 §3.2,
    the Blast-RADIUS mitigations);
  - retransmission: the cached reply byte for byte, no second vector
    (RFC 5080 §2.2.2);
  - malformed datagrams (RFC 2865 §3, §5; RFC 3579 §3.1, §3.2): no reply,
    counted, the server still answers;
  - an unknown client address: dropped, counted (RFC 2865 §3);
  - Status-Server (RFC 5997 §3): answered with Access-Accept when it carries
    a valid Message-Authenticator, dropped without one;
  - Message-Authenticator first in every reply;
  - a half-open EAP flood against a small --max-sessions: bounded table, a
    legitimate attach still succeeds;
  - one receive batch of more new requests than duplicate-cache entries:
    each reply and each retransmission's reply is its own request's;
  - receive coalescing (--rx-coalesce-us): sparse requests wait for nothing,
    a stream of them is taken in batches and every one is answered;
  - the store unable to make an SQN durable (another process holds an
    exclusive SQLite write lock; or its file system is full): Access-Reject
    and no challenge; afterwards a fresh SQN the USIM accepts.
"""
import os
import platform
import re
import signal
import socket
import sqlite3
import struct
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twagtest as T  # noqa: E402

R = T.Results("security")
SEC = "s3cr3t-integ"


def eap_of(reply):
    attrs = T.parse_attrs(reply) if reply else None
    return T.eap_join(attrs) if attrs else b""


def state_of(reply):
    attrs = T.parse_attrs(reply) if reply else None
    return T.attr_value(attrs, T.STATE) if attrs else None


def identity_attrs(identity, station, eap_id=1, state=None):
    attrs = [(T.USER_NAME, identity), (T.CALLING_STATION_ID, station),
             (T.NAS_IDENTIFIER, "twag-integ")]
    if state is not None:
        attrs.append((T.STATE, state))
    return attrs + T.eap_message_attrs(T.eap_identity(eap_id, identity))


def start_to_challenge(c, imsi, station):
    """EAP-Response/Identity (and AKA-Identity if the server asks) until the
    AKA'-Challenge. Returns (the request that produced it, the reply)."""
    identity = T.nai(6, imsi)
    req, rep = c.request(identity_attrs(identity, station))
    for _ in range(3):
        eap = eap_of(rep)
        if not rep or rep[0] != T.ACCESS_CHALLENGE or len(eap) < 6 or eap[4] != 50:
            return req, rep
        if eap[5] == 1:                  # AKA-Challenge (RFC 4187 §9.3)
            return req, rep
        if eap[5] != 5:                  # only AKA-Identity expected otherwise
            return req, rep
        attrs = [(T.USER_NAME, identity), (T.CALLING_STATION_ID, station),
                 (T.STATE, state_of(rep))]
        attrs += T.eap_message_attrs(T.aka_identity_response(50, eap[1], identity))
        req, rep = c.request(attrs)
    return req, rep


def is_challenge(rep):
    eap = eap_of(rep)
    return rep is not None and rep[0] == T.ACCESS_CHALLENGE and len(eap) >= 6 \
        and eap[0] == 1 and eap[4] == 50 and eap[5] == 1


def raw(code, ident, attrs_bytes, length=None, auth=None):
    auth = auth or os.urandom(16)
    n = 20 + len(attrs_bytes) if length is None else length
    return struct.pack("!BBH", code, ident, n) + auth + attrs_bytes


def with_ma(secret, pkt):
    """Appends a correct Message-Authenticator to a raw packet (Length grows)."""
    body = pkt + T.attr(T.MESSAGE_AUTHENTICATOR, bytes(16))
    body = body[:2] + struct.pack("!H", len(body)) + body[4:]
    mac = T.hmac.new(secret.encode(), body, T.hashlib.md5).digest()
    return body[:-16] + mac


# ---- the cases --------------------------------------------------------------

def msg_auth_cases(d, c, imsi):
    station = T.station_id(1)
    idn = T.nai(6, imsi)
    mx0 = d.metrics()
    _, rep = c.request(identity_attrs(idn, station), msg_auth=False, timeout=1)
    R.check(rep is None, "EAP Access-Request without Message-Authenticator: no reply")
    _, rep = c.request(identity_attrs(idn, station), msg_auth=os.urandom(16), timeout=1)
    R.check(rep is None, "EAP Access-Request with a wrong Message-Authenticator: no reply")
    wrong = T.RadiusClient(c.server, "not-the-secret")
    _, rep = wrong.request(identity_attrs(idn, station), timeout=1)
    wrong.close()
    R.check(rep is None, "Message-Authenticator under another secret: no reply")
    mx1 = T.metrics_after(d, mx0, "twag_radius_bad_authenticators_total", 3)
    R.check(T.mdelta(mx0, mx1, "twag_radius_bad_authenticators_total") == 3,
            f"twag_radius_bad_authenticators_total +3 "
            f"(got {T.mdelta(mx0, mx1, 'twag_radius_bad_authenticators_total')})")
    for m in ("twag_radius_access_challenges_total", "twag_store_vectors_total",
              "twag_sessions_active", "twag_radius_duplicate_requests_total"):
        R.check(T.mdelta(mx0, mx1, m) == 0, f"bad Message-Authenticator: {m} unchanged "
                f"(delta {T.mdelta(mx0, mx1, m)})")

    # A dropped request must not enter the duplicate cache: the same
    # Identifier and Request Authenticator, now with a valid MA, is new work.
    ident, auth = c.next_id(), os.urandom(16)
    bad = T.build_request(SEC, T.ACCESS_REQUEST, ident, auth, identity_attrs(idn, T.station_id(2)),
                          msg_auth=os.urandom(16))
    c.send(bad)
    time.sleep(0.3)
    good = T.build_request(SEC, T.ACCESS_REQUEST, ident, auth, identity_attrs(idn, T.station_id(2)))
    mx0 = d.metrics()
    rep = c.exchange(good)
    mx1 = d.metrics()
    R.check(rep is not None and rep[0] == T.ACCESS_CHALLENGE,
            "after a dropped request, the same id+authenticator with a valid MA is answered")
    R.check(T.mdelta(mx0, mx1, "twag_radius_duplicate_requests_total") == 0,
            "... and is not counted as a duplicate")


def retransmission_cases(d, c, imsi):
    mx0 = d.metrics()
    req, rep = start_to_challenge(c, imsi, T.station_id(10))
    mx1 = d.metrics()
    if not R.check(is_challenge(rep), "identity leads to an AKA'-Challenge"):
        return
    R.check(T.mdelta(mx0, mx1, "twag_store_vectors_total") == 1,
            f"one vector for the challenge (delta {T.mdelta(mx0, mx1, 'twag_store_vectors_total')})")
    same = []
    for _ in range(3):
        time.sleep(0.1)
        same.append(c.exchange(req))
    mx2 = d.metrics()
    R.check(all(r == rep for r in same), "3 retransmissions: byte-identical cached replies",
            [None if r is None else r.hex()[:80] for r in same])
    R.check(T.mdelta(mx1, mx2, "twag_radius_duplicate_requests_total") == 3,
            f"twag_radius_duplicate_requests_total +3 "
            f"(got {T.mdelta(mx1, mx2, 'twag_radius_duplicate_requests_total')})")
    R.check(T.mdelta(mx1, mx2, "twag_store_vectors_total") == 0,
            "retransmissions consume no vector")
    R.check(T.mdelta(mx1, mx2, "twag_radius_access_challenges_total") == 0,
            "retransmissions build no new challenge")
    # the same Identifier with a new Request Authenticator is a new request
    # (RFC 5080 §2.2.2): a new conversation for that station, a new vector
    attrs = T.parse_attrs(req)
    pkt = T.build_request(SEC, T.ACCESS_REQUEST, req[1], os.urandom(16),
                          [(t, v) for t, v, _ in attrs if t != T.MESSAGE_AUTHENTICATOR])
    rep2 = c.exchange(pkt)
    mx3 = d.metrics()
    R.check(rep2 is not None and rep2 != rep, "same id, new authenticator: a fresh reply")
    R.check(T.mdelta(mx2, mx3, "twag_radius_duplicate_requests_total") == 0,
            "same id, new authenticator: not a duplicate")


def malformed_cases(d, c):
    ma = bytes([T.MESSAGE_AUTHENTICATOR, 18]) + bytes(16)
    eap = T.eap_identity(1, "6001010000000001@" + T.REALM)
    good_attrs = T.attr(T.USER_NAME, "x") + T.attr(T.EAP_MESSAGE, eap)
    cases = [
        ("datagram of 10 octets", os.urandom(10)),
        ("Length 19", raw(T.ACCESS_REQUEST, 1, b"", length=19)),
        ("Length 19 in a 40-octet datagram", raw(T.ACCESS_REQUEST, 2, bytes(20), length=19)),
        ("Length > datagram", raw(T.ACCESS_REQUEST, 3, good_attrs + ma, length=200)),
        ("Length > 4096", raw(T.ACCESS_REQUEST, 4, T.attr(T.USER_NAME, "x") * 1400, length=4200)),
        ("attribute length 0", with_ma(SEC, raw(T.ACCESS_REQUEST, 5, good_attrs + bytes([T.USER_NAME, 0, 1, 2])))),
        ("attribute length 1", with_ma(SEC, raw(T.ACCESS_REQUEST, 6, good_attrs + bytes([T.USER_NAME, 1, 1, 2])))),
        ("attribute overrunning Length", raw(T.ACCESS_REQUEST, 7, good_attrs + ma + bytes([T.USER_NAME, 40]) + b"abc")),
        ("attribute type 0", with_ma(SEC, raw(T.ACCESS_REQUEST, 8, bytes([0, 3, 0x41]) + good_attrs))),
        ("129 attributes", with_ma(SEC, raw(T.ACCESS_REQUEST, 9, T.attr(T.NAS_IDENTIFIER, "a") * 128 + good_attrs))),
        ("two Message-Authenticators", with_ma(SEC, raw(T.ACCESS_REQUEST, 10, good_attrs + ma))),
        ("Message-Authenticator of length 17", raw(T.ACCESS_REQUEST, 11, good_attrs + bytes([80, 17]) + bytes(15))),
        ("EAP-Message attributes not consecutive", with_ma(SEC, raw(
            T.ACCESS_REQUEST, 12, T.attr(T.EAP_MESSAGE, eap[:6]) + T.attr(T.USER_NAME, "x")
            + T.attr(T.EAP_MESSAGE, eap[6:])))),
        ("Status-Server of 19 octets", raw(T.STATUS_SERVER, 13, b"", length=19)),
    ]
    mx_start = d.metrics()
    for what, pkt in cases:
        mx0 = d.metrics()
        c.send(pkt)
        rep = c.recv(0.4)
        mx1 = T.metrics_after(d, mx0, "twag_radius_malformed_packets_total", 1)
        R.check(rep is None, f"malformed ({what}): no reply")
        got = T.mdelta(mx0, mx1, "twag_radius_malformed_packets_total")
        R.check(got == 1, f"malformed ({what}): twag_radius_malformed_packets_total +1 (got {got})")
    mx_end = d.metrics()
    for m in ("twag_radius_access_challenges_total", "twag_sessions_active",
              "twag_radius_access_rejects_total"):
        R.check(T.mdelta(mx_start, mx_end, m) == 0, f"malformed packets: {m} unchanged")
    _, rep = c.request([(T.NAS_IDENTIFIER, "after-malformed")], code=T.STATUS_SERVER)
    R.check(rep is not None and rep[0] == T.ACCESS_ACCEPT, "server still answers after the malformed packets")
    R.check(d.alive(), "twagd alive after the malformed packets")


def unknown_client_case(d):
    try:
        u = T.RadiusClient(("127.0.0.1", d.port), SEC, src="127.0.0.2")
    except OSError as e:
        R.note(f"SKIP unknown client: cannot bind 127.0.0.2 ({e})")
        return
    mx0 = d.metrics()
    _, r1 = u.request([(T.NAS_IDENTIFIER, "stranger")], code=T.STATUS_SERVER, timeout=0.8)
    _, r2 = u.request(identity_attrs(T.nai(6, "001010000000001"), T.station_id(99)), timeout=0.8)
    u.close()
    mx1 = T.metrics_after(d, mx0, "twag_radius_unknown_clients_total", 2)
    R.check(r1 is None and r2 is None, "unknown client 127.0.0.2 (right secret): no reply")
    got = T.mdelta(mx0, mx1, "twag_radius_unknown_clients_total")
    R.check(got == 2, f"twag_radius_unknown_clients_total +2 (got {got})")


def status_server_cases(d, c):
    mx0 = d.metrics()
    req, rep = c.request([(T.NAS_IDENTIFIER, "status")], code=T.STATUS_SERVER)
    R.check(rep is not None and rep[0] == T.ACCESS_ACCEPT, "Status-Server with MA: Access-Accept")
    if rep:
        probs = T.check_reply(SEC, req[4:20], rep)
        R.check(not probs, "Status-Server reply: authenticators right, MA first", probs)
    mx1 = d.metrics()
    R.check(T.mdelta(mx0, mx1, "twag_radius_status_server_total") == 1, "twag_radius_status_server_total +1")
    _, rep = c.request([(T.NAS_IDENTIFIER, "status")], code=T.STATUS_SERVER, msg_auth=False, timeout=1)
    R.check(rep is None, "Status-Server without MA: no reply (RFC 5997 §3)")


def coalesce_case(d, c):
    """--rx-coalesce-us (default 1000 µs): a worker waits before its next
    receive only when traffic is dense (two or more datagrams per 1000 µs).
    Requests 20 ms apart never make it wait; a client with one request in
    flight at a time, back to back, makes it wait at most three times per
    20 ms (waits that gather nothing more stop it for 20 x 1000 µs); a
    stream of 2000 back to back makes it wait and take them several per
    receive, and each is answered."""
    mx0 = d.metrics()
    for i in range(10):
        _, rep = c.request([(T.NAS_IDENTIFIER, f"sparse-{i}")], code=T.STATUS_SERVER)
        if rep is None or rep[0] != T.ACCESS_ACCEPT:
            break
        time.sleep(0.02)
    mx1 = d.metrics()
    R.check(T.mdelta(mx0, mx1, "twag_radius_status_server_total") == 10,
            "10 sparse Status-Server requests answered")
    R.check(T.mdelta(mx0, mx1, "twag_rx_coalesce_waits_total") == 0,
            "sparse requests: no coalescing wait (got "
            f"{T.mdelta(mx0, mx1, 'twag_rx_coalesce_waits_total')})")
    t0, answered1 = time.monotonic(), 0
    for i in range(300):
        _, rep = c.request([(T.NAS_IDENTIFIER, f"serial-{i}")], code=T.STATUS_SERVER)
        answered1 += rep is not None and rep[0] == T.ACCESS_ACCEPT
    ms = (time.monotonic() - t0) * 1000
    mx1b = d.metrics()
    waits = T.mdelta(mx1, mx1b, "twag_rx_coalesce_waits_total")
    R.check(answered1 == 300 and waits <= 3 * (ms / 20 + 1),
            f"one request in flight at a time: 300 answered, {waits} waits in {ms:.0f} ms "
            "(at most 3 per 20 ms)")
    mx1 = mx1b
    socks = [T.RadiusClient(("127.0.0.1", d.port), SEC) for _ in range(4)]
    n, answered, whole = 2000, 0, 0

    def drain(wait):
        nonlocal answered, whole
        for s in socks:
            s.s.settimeout(wait)
            try:
                while True:
                    pkt = s.s.recv(65536)
                    answered += 1
                    # one reply per datagram, as sent (UDP GSO cuts
                    # a batch's replies apart again)
                    whole += (len(pkt) >= 20 and pkt[0] == T.ACCESS_ACCEPT and
                              int.from_bytes(pkt[2:4], "big") == len(pkt))
            except OSError:
                pass

    for i in range(n):
        s = socks[i % len(socks)]
        s.send(T.build_request(SEC, T.STATUS_SERVER, s.next_id(), os.urandom(16),
                               [(T.NAS_IDENTIFIER, "stream")]))
        if i % 128 == 127:  # replies read as they come: no socket buffer overflows
            drain(0.0005)
    deadline = time.monotonic() + 5
    while answered < n and time.monotonic() < deadline:
        drain(0.1)
    for s in socks:
        s.close()
    mx2 = d.metrics()
    req = T.mdelta(mx1, mx2, "twag_radius_status_server_total")
    batches = T.mdelta(mx1, mx2, "twag_rx_batches_total")
    waits = T.mdelta(mx1, mx2, "twag_rx_coalesce_waits_total")
    R.check(req == n and answered == n, f"a stream of {n} Status-Server: all answered "
            f"(server counted {req}, client got {answered})")
    R.check(waits > 0 and batches * 2 <= req,
            f"the stream came in batches after coalescing waits ({req} requests, "
            f"{batches} receives, {waits} waits)")
    R.check(whole == answered, f"each reply datagram one whole Access-Accept ({whole}/{answered})")
    gso = T.mdelta(mx1, mx2, "twag_tx_gso_replies_total")
    if (T.metric(mx2, "twag_udp_gso_workers") or 0) > 0:
        R.check(gso is not None and gso > 0 and
                T.mdelta(mx1, mx2, "twag_tx_gso_fallbacks_total") == 0,
                f"the stream's replies left in UDP GSO sends ({gso} of {answered})")
    else:
        R.note("UDP GSO not available on this kernel: replies sent one by one")


def gso_burst(port, dst, src, n=60, bad=None):
    """One UDP GSO send from src to (dst, port) of n Status-Server requests
    of one length and a shorter one last (GSO's last segment may be
    shorter); request number bad (1-based) carries a wrong
    Message-Authenticator. Returns (replies by Identifier, problems, reply
    source addresses), or None when the kernel refuses the GSO send."""
    udp_segment = 103  # linux/udp.h
    fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((src, 0))
    pkts, auths = [], {}
    for i in range(n + 1):
        ident = i + 1
        auth = os.urandom(16)
        name = "gro-%02d" % i if i < n else "g"
        pkts.append(T.build_request(SEC, T.STATUS_SERVER, ident, auth, [(T.NAS_IDENTIFIER, name)],
                                    msg_auth=True if ident != bad else os.urandom(16)))
        auths[ident] = auth
    seg = len(pkts[0])
    assert all(len(p) == seg for p in pkts[:n]) and len(pkts[n]) < seg
    try:
        s.sendmsg([b"".join(pkts)], [(socket.SOL_UDP, udp_segment, struct.pack("=H", seg))], 0,
                  (dst, port))
    except OSError:
        s.close()
        return None
    got, probs, froms = {}, [], set()
    s.settimeout(0.5)
    try:
        while len(got) < n + 1:
            rep, addr = s.recvfrom(65536)
            froms.add(addr[0])
            ident = rep[1]
            if ident in got or ident not in auths:
                probs.append(f"unexpected reply id {ident}")
                continue
            got[ident] = rep
            probs += [f"id {ident}: {p}" for p in T.check_reply(SEC, auths[ident], rep)]
    except OSError:
        pass
    s.close()
    return got, probs, froms


def gro_case(d):
    """UDP GRO (Linux 5.0): requests of one client that arrive together
    may reach twagd coalesced, one receive for several, and are cut apart
    again. One UDP GSO send (so that they arrive coalesced on loopback) of
    60 Status-Server requests of one length, more than a worker's batch of
    32, then a shorter one last, with the 7th carrying a wrong
    Message-Authenticator: the 60 good ones are answered with valid
    replies, the bad one is dropped and counted."""
    mx0 = d.metrics()
    res = gso_burst(d.port, "127.0.0.1", "127.0.0.1", bad=7)
    if res is None:
        R.note("SKIP gro: UDP GSO send refused here")
        return
    got, probs, _ = res
    mx1 = T.metrics_after(d, mx0, "twag_radius_bad_authenticators_total", 1)
    want = set(range(1, 62)) - {7}
    R.check(set(got) == want and not probs,
            f"GSO burst of 61 requests: the 60 good ones answered, each reply valid "
            f"({len(got)} replies)", probs[:5])
    R.check(T.mdelta(mx0, mx1, "twag_radius_bad_authenticators_total") == 1,
            "the one with a wrong Message-Authenticator dropped and counted")
    gro = T.mdelta(mx0, mx1, "twag_rx_gro_datagrams_total")
    rel = tuple(int(x) for x in re.findall(r"\d+", platform.release())[:2])
    if rel >= (5, 0):
        # loopback hands a GSO send to a GRO socket as one buffer
        R.check(gro is not None and gro >= 2,
                f"the burst arrived coalesced (UDP GRO: {gro} requests)")
    else:
        R.note(f"kernel {platform.release()} has no UDP GRO: requests arrived one by one")


def wildcard_case(work, db):
    """A wildcard listener (0.0.0.0, and [::] taking IPv4 too) answers from
    the address each request was sent to (IP_PKTINFO / IPV6_PKTINFO), also
    for requests that arrived coalesced (UDP GRO) and replies that leave as
    one GSO send: a burst to 127.0.0.2 is answered from 127.0.0.2."""
    cases = [("0.0.0.0", [("127.0.0.2", "127.0.0.1")])]
    try:
        T.free_udp_port("::1")
        cases.append(("::", [("::1", "::1"), ("127.0.0.2", "127.0.0.1")]))
    except OSError as e:
        R.note(f"SKIP wildcard [::]: no ::1 ({e})")
    for host, bursts in cases:
        d = T.Twagd(work, db, secret=SEC, host=host,
                    clients=[f"127.0.0.0/8={SEC}", f"::1={SEC}"])
        if not R.check(d.start(), f"twagd listening on {host} starts", d.log_text()):
            continue
        for dst, src in bursts:
            res = gso_burst(d.port, dst, src, n=40)
            if res is None:
                R.note(f"SKIP wildcard {host}: UDP GSO send refused here")
                continue
            got, probs, froms = res
            R.check(len(got) == 41 and not probs and froms == {dst},
                    f"listening on {host}: a burst of 41 to {dst} answered from {dst} "
                    f"({len(got)} replies from {sorted(froms)})", probs[:5])
        R.check(d.stop() == 0, f"twagd on {host}: SIGTERM, exit 0")


def all_replies_ok(c, what):
    probs = []
    for auth, rep in c.replies:
        probs += [f"code {rep[0]} id {rep[1]}: {p}" for p in T.check_reply(SEC, auth, rep)]
    R.check(c.replies and not probs,
            f"{what}: all {len(c.replies)} replies carry a valid Message-Authenticator first "
            "and a valid Response Authenticator", probs)


class Flood:
    """EAP-Response/Identity starts from distinct Calling-Station-Ids, never
    continued (half-open), over several sockets; replies drained, not used."""

    def __init__(self, port, identity, nsock=8):
        self.socks = [T.RadiusClient(("127.0.0.1", port), SEC) for _ in range(nsock)]
        self.identity = identity
        self.sent = 0
        self.answered = 0
        self.next_station = 1000

    def drain(self):
        for c in self.socks:
            c.s.setblocking(False)
            try:
                while True:
                    c.s.recv(65536)
                    self.answered += 1
            except BlockingIOError:
                pass
            c.s.setblocking(True)

    def burst(self, n):
        for i in range(n):
            c = self.socks[i % len(self.socks)]
            self.next_station += 1
            pkt = T.build_request(SEC, T.ACCESS_REQUEST, c.next_id(), os.urandom(16),
                                  identity_attrs(self.identity, T.station_id(self.next_station)))
            c.send(pkt)
            self.sent += 1
            if i % 64 == 63:
                self.drain()
                time.sleep(0.002)
        self.drain()

    def close(self):
        for c in self.socks:
            c.close()


def flood_case(work):
    db = os.path.join(work, "flood.db")
    flood_imsi, _ = T.new_usim(db)
    legit_imsi, legit = T.new_usim(db)
    d = T.Twagd(work, db, secret=SEC, extra=["--max-sessions", "256"])
    d.log = os.path.join(work, "twagd-flood.log")
    if not R.check(d.start(), "twagd --max-sessions 256 starts", d.log_text()):
        return
    f = Flood(d.port, T.nai(6, flood_imsi))
    t0 = time.time()
    f.burst(3000)
    time.sleep(0.5)
    f.drain()
    mx = d.metrics()
    R.note(f"flood: {f.sent} half-open starts in {time.time() - t0:.1f}s, {f.answered} answered")
    R.check(f.answered > 256, f"the flood got more than 256 challenges ({f.answered})")
    active = T.metric(mx, "twag_sessions_active")
    R.check(active is not None and active <= 256, f"twag_sessions_active <= 256 after the flood ({active})")
    R.check(T.metric(mx, "twag_sessions_max") == 256, f"twag_sessions_max = 256 ({T.metric(mx, 'twag_sessions_max')})")
    R.check((T.metric(mx, "twag_sessions_evicted_total") or 0) > 0, "sessions were evicted")

    # a legitimate attach right after, while a slower flood keeps going
    stop = threading.Event()

    def keep_flooding():
        while not stop.is_set():
            f.burst(20)
            time.sleep(0.05)      # about 400 starts/s

    th = threading.Thread(target=keep_flooding, daemon=True)
    th.start()
    try:
        r = T.eapol_test(d, "aka-prime", T.nai(6, legit_imsi), legit, mac="02:aa:bb:cc:dd:01")
    finally:
        stop.set()
        th.join(10)
    R.check(r.success and r.mppe() == (1, 0), "legitimate attach during/after the flood: SUCCESS, MPPE OK",
            r.tail())
    mx = d.metrics()
    active = T.metric(mx, "twag_sessions_active")
    R.check(active is not None and active <= 256, f"twag_sessions_active <= 256 at the end ({active})")
    R.note(f"flood: {f.sent} starts in all; evicted {T.metric(mx, 'twag_sessions_evicted_total')}")
    f.close()
    R.check(d.alive(), "twagd alive after the flood")
    R.check(d.stop() == 0, "SIGTERM after the flood: exit 0")


def all_stopped(pid):
    """Every thread of pid is stopped (state T or t in /proc)."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] not in ("T", "t"):
                    return False
        return True
    except OSError:
        return False


def aka_prime_challenge_ok(usim, identity, eap):
    """An EAP-Request/AKA'-Challenge checked here, independently of twag:
    AUTN against the USIM's Milenage (TS 33.102 §6.3.3), CK'|IK' =
    HMAC-SHA-256(CK|IK, 0x20 | name | len | SQN^AK | 0x0006) (TS 33.402
    A.2), K_aut from PRF'(IK'|CK', "EAP-AKA'" | identity) (RFC 9048 §3.3)
    and AT_MAC = HMAC-SHA-256-128(K_aut, packet, MAC zero) (§3.4.1)."""
    if len(eap) < 8 or eap[0] != 1 or eap[4] != 50 or eap[5] != 1:
        return False
    at, off = {}, 8
    while off + 2 <= len(eap):
        n = eap[off + 1] * 4
        if n == 0 or off + n > len(eap):
            return False
        at[eap[off]] = (off, eap[off:off + n])
        off += n
    if not all(t in at for t in (1, 2, 11, 23)):  # RAND, AUTN, MAC, KDF_INPUT
        return False
    rand_, autn = at[1][1][4:20], at[2][1][4:20]
    name = at[23][1][4:4 + struct.unpack("!H", at[23][1][2:4])[0]]
    mac_off = at[11][0] + 4
    m = usim.m
    _, ck, ik, ak = m.f2345(rand_)
    if m.f1(rand_, T.xor(autn[:6], ak), autn[6:8])[0] != autn[8:16]:
        return False
    s = b"\x20" + name + struct.pack("!H", len(name)) + autn[:6] + b"\x00\x06"
    ckik = T.hmac.new(ck + ik, s, T.hashlib.sha256).digest()
    key, seed, t, mk, i = ckik[16:] + ckik[:16], b"EAP-AKA'" + identity, b"", b"", 1
    while len(mk) < 48:
        t = T.hmac.new(key, t + seed + bytes([i]), T.hashlib.sha256).digest()
        mk, i = mk + t, i + 1
    zeroed = eap[:mac_off] + bytes(16) + eap[mac_off + 16:]
    return T.hmac.new(mk[16:48], zeroed, T.hashlib.sha256).digest()[:16] == eap[mac_off:mac_off + 16]


def burst_case(work):
    """One receive batch of 40 new EAP requests (twagd stopped while they
    queue, one worker, --dup-cache 16: more new requests than cache entries
    in one batch): every reply answers its own request (authenticators
    checked against that request), then every retransmission gets its own
    request's reply byte for byte (cached) or a fresh valid one, never
    another request's. twagd checks and signs a batch's RADIUS
    authenticators together (docs/twagd.md)."""
    db = os.path.join(work, "burst.db")
    imsi, usim = T.new_usim(db)
    d = T.Twagd(work, db, secret=SEC, threads=1, extra=["--dup-cache", "16"])
    d.log = os.path.join(work, "twagd-burst.log")
    if not R.check(d.start(), "twagd --threads 1 --dup-cache 16 starts", d.log_text()):
        return
    c = T.RadiusClient(("127.0.0.1", d.port), SEC)
    mx0 = d.metrics()
    reqs = {}
    for i in range(40):
        auth = os.urandom(16)
        # requests 5 and 6 come from one station: 6 replaces 5's session
        # while 5 waits for the batch's challenges to be built
        pkt = T.build_request(SEC, T.ACCESS_REQUEST, i, auth,
                              identity_attrs(T.nai(6, imsi), T.station_id(200 + (5 if i == 6 else i))))
        reqs[i] = pkt
    os.kill(d.proc.pid, signal.SIGSTOP)
    # SIGSTOP takes effect asynchronously: wait until every thread is
    # stopped, so that the whole burst queues up for one batch
    end = time.time() + 5
    while time.time() < end and not all_stopped(d.proc.pid):
        time.sleep(0.01)
    try:
        for i in range(40):
            c.send(reqs[i])
        time.sleep(0.2)
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
    first = {}
    end = time.time() + 5
    while len(first) < 40 and time.time() < end:
        r = c.recv(0.5)
        if r is not None and len(r) >= 20:
            first.setdefault(r[1], r)
    R.check(len(first) == 40, f"a reply to each of 40 requests in one batch ({len(first)})")
    bad = [i for i, r in first.items() if T.check_reply(SEC, reqs[i][4:20], r)]
    R.check(not bad, "each reply signed for its own request", bad[:5])
    # the AKA'-Challenges of one batch are built together (with AVX-512 in
    # lockstep lanes): each one's AUTN and AT_MAC checked here
    ident = T.nai(6, imsi).encode()
    badmac = [i for i, r in first.items()
              if r[0] != T.ACCESS_CHALLENGE or
              not aka_prime_challenge_ok(usim, ident, T.eap_join(T.parse_attrs(r) or []))]
    R.check(len(first) == 40 and not badmac,
            f"each AKA'-Challenge of the burst has a valid AUTN and AT_MAC (bad {badmac[:5]})")
    mx1 = d.metrics()
    lanes = T.twag("cpu").stdout.startswith("level=avx512")
    nb = T.mdelta(mx0, mx1, "twag_aka_batched_challenges_total")
    R.check(nb >= 8 if lanes else nb == 0,
            f"challenges computed in lanes: {nb} ({'AVX-512' if lanes else 'no AVX-512: none'})")
    # retransmissions (RFC 5080 §2.2.2): cached or fresh, never another's
    # newest first: a miss takes over the oldest entry, so the cached ones
    # (the last 16 or so) are asked for before any miss can push them out
    again = {}
    for i in reversed(range(40)):
        c.send(reqs[i])
        r = c.recv(1.0)
        if r is not None:
            again[r[1]] = r
    wrong = [i for i, r in again.items() if T.check_reply(SEC, reqs[i][4:20], r)]
    R.check(len(again) == 40 and not wrong,
            f"each retransmission answered for its own request ({len(again)}, wrong {wrong[:5]})")
    same = sum(1 for i, r in again.items() if first.get(i) == r)
    R.note(f"burst: {same} of 40 retransmissions answered from the cache")
    # how many stay cached depends on how the kernel split the burst into
    # receive batches; that a cached reply is resent byte for byte is what
    # counts here (retransmission_cases checks the cache in detail)
    R.check(same >= 1, f"cached replies resent byte for byte ({same})")
    c.close()
    R.check(d.stop() == 0, "SIGTERM after the burst: exit 0")


def store_lock_case(work):
    """Another process holds the SQLite write lock: the gateway cannot make
    an SQN reservation durable, so no vector may leave: Access-Reject."""
    db = os.path.join(work, "lock.db")
    imsi, usim = T.new_usim(db)
    imsi2, usim2 = T.new_usim(db)
    d = T.Twagd(work, db, secret=SEC)
    d.log = os.path.join(work, "twagd-lock.log")
    if not R.check(d.start(), "twagd for the store-lock case starts", d.log_text()):
        return
    con = sqlite3.connect(db, timeout=5, isolation_level=None)
    con.execute("BEGIN EXCLUSIVE")
    try:
        mx0 = d.metrics()
        r = T.eapol_test(d, "aka-prime", T.nai(6, imsi), usim, timeout=15)
        mx1 = d.metrics()
        R.check(not r.success and r.failure, "store locked: eapol_test FAILURE (Access-Reject)", r.tail())
        R.check(not r.umts() and not usim.accepted, "store locked: no challenge reached the USIM")
        R.check((T.mdelta(mx0, mx1, "twag_store_errors_total") or 0) >= 1, "store locked: twag_store_errors_total grows")
        R.check((T.mdelta(mx0, mx1, "twag_radius_access_rejects_total") or 0) >= 1, "store locked: an Access-Reject counted")
        R.check(T.mdelta(mx0, mx1, "twag_store_vectors_total") == 0, "store locked: no vector issued")

        # a request and its retransmission while the store is stuck: one
        # store attempt only; any reply to the copy is the same bytes
        c = T.RadiusClient(("127.0.0.1", d.port), SEC)
        idn = T.nai(6, imsi2)
        pkt = T.build_request(SEC, T.ACCESS_REQUEST, c.next_id(), os.urandom(16),
                              identity_attrs(idn, T.station_id(5)))
        mx0 = d.metrics()
        c.send(pkt)
        time.sleep(0.02)
        c.send(pkt)
        reps = []
        while True:
            x = c.recv(10.0 if not reps else 1.5)
            if x is None:
                break
            reps.append(x)
        c.close()
        mx1 = d.metrics()
        R.check(1 <= len(reps) <= 2 and all(x == reps[0] for x in reps) and reps[0][0] == T.ACCESS_REJECT,
                f"store locked, request + retransmission: Access-Reject, copies identical ({len(reps)} replies)")
        R.check(T.mdelta(mx0, mx1, "twag_store_errors_total") == 1,
                f"store locked, retransmission: one store attempt only "
                f"(store errors +{T.mdelta(mx0, mx1, 'twag_store_errors_total')})")
    finally:
        con.execute("ROLLBACK")
        con.close()
    r = T.eapol_test(d, "aka-prime", T.nai(6, imsi), usim)
    R.check(r.success and r.mppe() == (1, 0), "lock released: attach SUCCESS", r.tail())
    R.check(len(usim.accepted) == 1 and not usim.refused, "lock released: the USIM accepts a fresh SQN")
    r = T.eapol_test(d, "aka-prime", T.nai(6, imsi2), usim2)
    R.check(r.success, "lock released: the other subscriber attaches", r.tail())
    R.check(d.stop() == 0, "SIGTERM: exit 0")


def store_full_case(work):
    """The file system of the store is full (a tmpfs of our own, filled up):
    the SQN reservation cannot be written, so no vector may leave: reject;
    after space is freed, a fresh SQN the USIM accepts."""
    mnt = os.path.join(work, "mnt")
    os.mkdir(mnt)
    if not T.mount_tmpfs(mnt):
        R.note("SKIP store-full case: cannot mount a tmpfs here (the lock case covers the store error)")
        return
    try:
        db = os.path.join(mnt, "full.db")
        imsi, usim = T.new_usim(db)
        d = T.Twagd(work, db, secret=SEC)
        d.log = os.path.join(work, "twagd-full.log")
        if not R.check(d.start(), "twagd on a small tmpfs starts", d.log_text()):
            return
        filler = os.path.join(mnt, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, bytes(4096))
        except OSError:
            pass                               # ENOSPC: the fs is full
        finally:
            os.close(fd)
        mx0 = d.metrics()
        r = T.eapol_test(d, "aka-prime", T.nai(6, imsi), usim)
        mx1 = d.metrics()
        R.check(not r.success and r.failure and not r.umts(),
                "store fs full: eapol_test FAILURE, no challenge", r.tail())
        R.check(T.mdelta(mx0, mx1, "twag_store_vectors_total") == 0, "store fs full: no vector issued")
        R.check((T.mdelta(mx0, mx1, "twag_store_errors_total") or 0) >= 1, "store fs full: store error counted")
        os.unlink(filler)
        r = T.eapol_test(d, "aka-prime", T.nai(6, imsi), usim)
        R.check(r.success and len(usim.accepted) == 1 and not usim.refused,
                "space freed: attach SUCCESS with a fresh SQN", r.tail())
        R.check(d.stop() == 0, "SIGTERM: exit 0")
    finally:
        for p in list(T._children):
            T.stop_child(p)
        T.umount(mnt)


def main():
    if not T.milenage_selftest(R) or not T.binaries_ok(R):
        return
    work = T.tmpdir("security")
    db = os.path.join(work, "twag.db")
    imsi, _ = T.new_usim(db)
    d = T.Twagd(work, db, secret=SEC)
    if not R.check(d.start(), "twagd starts", d.log_text()):
        return
    c = T.RadiusClient(("127.0.0.1", d.port), SEC)
    msg_auth_cases(d, c, imsi)
    retransmission_cases(d, c, imsi)
    malformed_cases(d, c)
    unknown_client_case(d)
    status_server_cases(d, c)
    coalesce_case(d, c)
    gro_case(d)
    all_replies_ok(c, "security client")
    c.close()
    R.check(d.alive(), "twagd alive after the abuse cases")
    R.check(d.stop() == 0, "SIGTERM: exit 0", d.log_text()[-2000:])
    wildcard_case(work, db)
    flood_case(work)
    burst_case(work)
    store_lock_case(work)
    store_full_case(work)


if __name__ == "__main__":
    T.run_main(main, R)
