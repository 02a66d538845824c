#!/usr/bin/env python3
"""Writes the hand-written seeds of tests/fuzz/fuzz_server.c for its groups
(the batched receive path: tw_srv_worker_turn) into the directory named on
the command line, as files batch_*. The script format is the one the
target's header comment documents: ops of [op][len high][len low][octets].
Raw datagrams are made here with Python's hmac (RFC 3579 §3.2
Message-Authenticator), independent of twag."""
import hashlib, hmac, os, struct, sys

SECRET = b"fuzzsecret"
REALM = b"@wlan.mnc001.mcc001.3gppnetwork.org"
out = sys.argv[1]

# group flags (fuzz_server.c: enum G_*)
NO_SIGN, NO_LANES, PKTINFO, GSO, DEBUG, EMPTY = 1, 2, 4, 32, 64, 128
W0, W1, W6 = 0, 8, 16  # 127.0.0.1; 127.0.0.1 with UDP GRO; ::1 with UDP GRO


def op(o, octets=b""):
    return bytes([o]) + struct.pack(">H", len(octets)) + octets


def group(flags, env=0):
    """Closes the open group (sent, answered, checked) and opens one."""
    return op(0x83, bytes([flags, env]))


def close():
    return op(0x83)


def identity(digit, n, port=0, state=False):
    """EAP-Response/Identity of subscriber n (method by the leading digit),
    without State: a new conversation."""
    ident = digit + b"00101000000000" + str(n).encode() + REALM
    return op(0x02 | (port << 2) | (0 if state else 32),
              bytes([2, 0]) + struct.pack(">H", 5 + len(ident)) + b"\x01" + ident)


def status(port=0, attrs=b""):
    return op(0x21 | (port << 2), attrs)


def phone_new(kind):
    return op(0xC0 | kind)


def phone():
    return op(0x40)


def again():
    return op(0x03)


def raw(pkt, port=0):
    return op(0x00 | (port << 2), pkt)


def long_dgram(extra, port=0):
    """In a group: a datagram of 4096 + extra octets."""
    return op(0x20 | (port << 2), bytes(extra))


def attr(t, v):
    return bytes([t, len(v) + 2]) + v


def access_request(id_, eap_pkt, good_ma=True, auth=b"\x11" * 16):
    body = attr(80, bytes(16)) + attr(79, eap_pkt)
    pkt = bytearray(bytes([1, id_]) + struct.pack(">H", 20 + len(body)) + auth + body)
    mac = hmac.new(SECRET, bytes(pkt), hashlib.md5).digest()
    pkt[22:38] = mac if good_ma else bytes(b ^ 0x5A for b in mac)
    return bytes(pkt)


def eap_identity(digit, n):
    ident = digit + b"00101000000000" + str(n).encode() + REALM
    return bytes([2, 0]) + struct.pack(">H", 5 + len(ident)) + b"\x01" + ident


def conversation(kind, steps, flags):
    """A phone of kind (1 SIM, 2 AKA, 3 AKA') through its conversation, one
    group per step (each step answers the last reply)."""
    s = group(flags) + phone_new(kind)
    for _ in range(steps):
        s += group(flags) + phone()
    # again, the identity memory kept: fast re-authentication
    s += group(flags) + phone_new(0)
    for _ in range(steps):
        s += group(flags) + phone()
    return s + close()


seeds = {}
# several conversations at once: EAP-AKA and EAP-AKA' challenges parked and
# built together, one EAP-SIM, a Status-Server, a retransmission in the batch
for fl, name in ((0, "park"), (NO_LANES, "nolanes"), (NO_SIGN, "nosign"),
                 (DEBUG, "park_debug"), (PKTINFO | DEBUG, "park_pktinfo")):
    seeds["batch_" + name] = (
        group(fl, 1) + identity(b"0", 2, 0) + identity(b"6", 3, 1) + identity(b"1", 1, 2)
        + identity(b"6", 3, 3) + again() + status(4) + identity(b"0", 9, 5) + close())
# the off forms of the switches: unset, empty, "0"
for env in range(9):
    seeds["batch_env%d" % env] = group(W0, env) + identity(b"6", 3, 0) + identity(b"0", 2, 1) + close()
# whole conversations by the phone, each step its own group
for kind in (1, 2, 3):
    for fl, name in ((0, ""), (DEBUG, "_debug"), (NO_SIGN | DEBUG, "_nosign"),
                     (W1 | GSO, "_gro"), (W6 | PKTINFO | DEBUG, "_v6")):
        seeds["batch_phone%d%s" % (kind, name)] = (
            conversation(kind, 5, fl))
# a phone's step in a group with new conversations from other sockets, and
# the retransmission of the step in the next group (from the same socket)
seeds["batch_mixed"] = (
    group(DEBUG) + phone_new(3) + identity(b"0", 2, 1) + identity(b"6", 3, 2)
    + group(DEBUG) + phone() + identity(b"6", 3, 3)
    + group(DEBUG) + again() + phone() + again()
    + group(0) + phone() + group(0) + again() + close() + again())
# UDP GRO: runs of one length from one socket coalesced (one slot, many
# datagrams; more than a batch of 32), the last one shorter
seeds["batch_gro_many"] = group(W1 | GSO | EMPTY) + status(0) * 40 + status(0, attr(32, b"x")) * 0 + close()
seeds["batch_gro_short"] = group(W1 | GSO) + status(0, attr(32, b"nas1")) * 5 + status(0) + close()
seeds["batch_gro_v6"] = group(W6 | GSO | PKTINFO | DEBUG) + status(1) * 6 + identity(b"6", 3, 2) * 1 + close()
seeds["batch_gso_w0"] = group(W0 | GSO | PKTINFO) + status(0) * 34 + close()
# clients: unknown (socket 7), a network entry (socket 6), the host entry;
# forged Message-Authenticators between good ones; malformed and too long
# datagrams; an empty one
bad = access_request(7, eap_identity(b"0", 2), good_ma=False)
good = access_request(8, eap_identity(b"6", 3), auth=b"\x22" * 16)
for fl, name in ((DEBUG, "w0"), (W1 | DEBUG, "w1"), (W6 | DEBUG | PKTINFO, "v6"),
                 (NO_SIGN | DEBUG, "nosign")):
    seeds["batch_clients_" + name] = (
        group(fl) + status(7) + identity(b"0", 2, 7) + status(6) + identity(b"6", 3, 6)
        + raw(bad, 0) + raw(good, 1) + raw(bad, 2) + raw(b"\x01\x02\x00", 3) + raw(b"", 4)
        + long_dgram(1, 5) + long_dgram(2, 5) + long_dgram(100, 0) + raw(good, 1) + close())
# retransmission of a request answered in the previous group, to the same
# worker from the same socket (the reply must be the same octets)
seeds["batch_again"] = (
    group(0) + identity(b"6", 3, 0) + group(0) + again() + again() + group(W1) + again()
    + group(NO_SIGN) + identity(b"0", 2, 1) + again() + group(NO_SIGN) + again() + close())
# more than a batch from several sockets: two receives
seeds["batch_full"] = group(DEBUG) + b"".join(identity(b"06"[i % 2:i % 2 + 1], 2 + i % 2, i % 6) for i in range(40)) + close()
# a group whose last step parks, then a request to tw_srv_handle on the
# same worker on its own: it must not take the finished park slot
seeds["batch_then_handle"] = group(W0) + identity(b"6", 3, 0) + close() + identity(b"0", 2, 1)


def eap_resp(type_, subtype, attrs):
    d = bytes([type_, subtype, 0, 0]) + attrs
    return bytes([2, 0]) + struct.pack(">H", 4 + len(d)) + d


def at_identity(ident):
    v = struct.pack(">H", len(ident)) + ident
    v += bytes(-(len(v) + 2) % 4)
    return bytes([14, (len(v) + 2) // 4]) + v


def cont(eap_pkt, port=0):
    """The EAP packet with the State of the last reply."""
    return op(0x02 | (port << 2), eap_pkt)


def fresh(eap_pkt, port=0):
    return op(0x22 | (port << 2), eap_pkt)


# every session slot taken: sessions-full (logged once a second)
seeds["batch_sessions_full"] = group(DEBUG) + b"".join(identity(b"1", 1, i % 6) for i in range(40)) + group(DEBUG) + b"".join(identity(b"6", 3, i % 6) for i in range(30)) + close()
# identities: empty, too long, a pseudonym not known (AKA'-Identity asked)
seeds["batch_identities"] = (
    group(DEBUG) + fresh(bytes([2, 0, 0, 5, 1])) + fresh(bytes([2, 0, 1, 49, 1]) + b"6" * 300)
    + identity(b"0", 1, 1) + identity(b"6", 1, 2) + identity(b"1", 2, 3) + close())
# a client error before the IMSI is known: EAP-Failure, logged without one
seeds["batch_client_error"] = (
    group(DEBUG) + fresh(bytes([2, 0, 0, 5 + 20, 1]) + b"6pseudonym@" + b"x" * 9)
    + group(DEBUG) + cont(eap_resp(50, 14, bytes([22, 1, 0, 0]))) + close())
# AKA'-Identity answered twice in one batch: the second finds the session
# busy (parked); the State from another client
ident3 = b"6001010000000003" + REALM
seeds["batch_busy"] = (
    group(DEBUG) + fresh(bytes([2, 0, 0, 5 + 20, 1]) + b"6pseudonym@" + b"x" * 9)
    + group(DEBUG) + cont(eap_resp(50, 5, at_identity(ident3))) + cont(eap_resp(50, 5, at_identity(ident3)))
    + cont(eap_resp(50, 5, at_identity(ident3)), 6) + close())
seeds["batch_other_client"] = (
    group(DEBUG) + identity(b"6", 3, 0) + group(DEBUG) + cont(eap_resp(50, 1, b""), 6)
    + group(W6 | DEBUG) + cont(eap_resp(50, 1, b""), 1) + close())
# nothing answered in a batch; a request without EAP; a forged one from
# a network entry's address
pap = bytes([1, 9, 0, 20 + 6]) + b"\x33" * 16 + attr(1, b"user")
seeds["batch_no_reply"] = group(0) + raw(bad, 0) + group(DEBUG) + raw(pap, 0) + raw(bad, 6) + status(6) + close()

os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
