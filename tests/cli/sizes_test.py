"""twag CLI size sweeps: every command that takes input of variable length,
at 0, 1, block-1, block, block+1, 511, 512, 513, 4096 octets and at its
documented maximum (and one past it), each result checked against an
independent implementation computed here:

- key wrap: Python cryptography's aes_key_wrap / aes_key_wrap_with_padding
  (RFC 3394, RFC 5649);
- CCMP/GCMP: AESCCM / AESGCM over the nonce and AAD built here from
  IEEE 802.11-2020 §12.5.3.3 (CCMP) and §12.5.5.3 (GCMP);
- EAPOL-Key MIC: HMAC-SHA1-128 (key descriptor version 2) and AES-128-CMAC
  (version 3) per IEEE 802.11-2020 §12.7.2;
- ESP: AESGCM (RFC 4106), AES-CBC / 3DES-CBC with hmac (RFC 3602, 2451,
  2404, 4868, 2403), RFC 4303 padding, built and parsed here, both ways;
- AH: the RFC 4302 §3.3.3 ICV over IPv4 with the mutable fields zeroed;
- KDF text options: RFC 9048 PRF' computed here;
- gsm c2: TS 33.102 §6.8.1.2 (XRES folded to 32 bits) computed here.

A length past a documented limit must be refused with exit status 2 and
one line on stderr naming the option, never cut.
"""
import hashlib
import hmac
import os
import subprocess
import sys

from cryptography.hazmat.primitives import cmac, keywrap
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM, AESGCM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import TWAG, Suite, ecies_open, kv  # noqa: E402

S = Suite("sizes")
rng, check, run, twag = S.rng, S.check, S.run, S.twag
TMP = S.tmp


def refused(args, option, what):
    rc, out, err = run(*args)
    lines = [x for x in err.strip().split("\n") if x]
    check(rc == 2 and len(lines) == 1 and f"--{option}" in err and out == "",
          f"{what}: expected exit 2 naming --{option}, got {rc}: {err.strip()[:200]}")


def rb(n):
    return bytes(rng.randrange(256) for _ in range(n))


def sweep(block, maximum, lo=0):
    s = {0, 1, block - 1, block, block + 1, 511, 512, 513, 4096, maximum}
    return sorted(x for x in s if lo <= x <= maximum)


# --- key wrap -------------------------------------------------------------

KW_MAX = 4096


def test_keywrap():
    for kek_len in (16, 24, 32):
        kek = rb(kek_len)
        for n in sweep(8, KW_MAX):
            key = rb(n)
            # RFC 5649: any length >= 1.
            if n >= 1:
                ref = keywrap.aes_key_wrap_with_padding(kek, key)
                got = twag("keywrap", "wrap", "--pad", "--kek", kek.hex(), "--key", key.hex())
                check(got.get("wrapped") == ref.hex(), f"kwp wrap {n} octets, KEK {kek_len}")
                got = twag("keywrap", "unwrap", "--pad", "--kek", kek.hex(), "--wrapped", ref.hex())
                check(got.get("key") == key.hex(), f"kwp unwrap {n} octets, KEK {kek_len}")
            # RFC 3394: a multiple of 8, at least 16.
            if n >= 16 and n % 8 == 0:
                ref = keywrap.aes_key_wrap(kek, key)
                got = twag("keywrap", "wrap", "--kek", kek.hex(), "--key", key.hex())
                check(got.get("wrapped") == ref.hex(), f"kw wrap {n} octets, KEK {kek_len}")
                got = twag("keywrap", "unwrap", "--kek", kek.hex(), "--wrapped", ref.hex())
                check(got.get("key") == key.hex(), f"kw unwrap {n} octets, KEK {kek_len}")
            elif n >= 1:
                refused(["keywrap", "wrap", "--kek", kek.hex(), "--key", key.hex()], "key",
                        f"kw wrap of {n} octets")
    kek = rb(16)
    refused(["keywrap", "wrap", "--pad", "--kek", kek.hex(), "--key", "00" * (KW_MAX + 1)], "key",
            "kwp wrap past the maximum")
    refused(["keywrap", "wrap", "--kek", kek.hex(), "--key", "00" * (KW_MAX + 8)], "key",
            "kw wrap past the maximum")
    refused(["keywrap", "unwrap", "--kek", kek.hex(), "--wrapped", "00" * (KW_MAX + 16)], "wrapped",
            "kw unwrap past the maximum")
    refused(["keywrap", "wrap", "--pad", "--kek", kek.hex(), "--key", ""], "key", "kwp wrap of nothing")


# --- CCMP / GCMP ------------------------------------------------------------

FRAME_MAX = 11454
HDR = 24  # a data frame, FromDS, no QoS, no A4


def ccmp_aad_nonce(hdr, pn, gcmp):
    """IEEE 802.11-2020 §12.5.3.3.3-4 (GCMP §12.5.5.3.3-4: the same AAD)."""
    fc = bytearray(hdr[0:2])
    fc[0] &= 0x8F          # data frame: subtype bits 4, 5, 6 masked
    fc[1] &= ~0x38 & 0xFF  # Retry, Power Management, More Data masked
    fc[1] |= 0x40          # Protected Frame set
    sc = bytes([hdr[22] & 0x0F, 0])  # sequence number masked, fragment kept
    aad = bytes(fc) + hdr[4:22] + sc
    a2 = hdr[10:16]
    pn6 = pn.to_bytes(6, "big")
    nonce = a2 + pn6 if gcmp else bytes([0]) + a2 + pn6  # priority 0, not management
    return aad, nonce


def ccmp_header(pn, key_id):
    p = pn.to_bytes(6, "little")
    return bytes([p[0], p[1], 0, 0x20 | (key_id << 6), p[2], p[3], p[4], p[5]])


def ccmp_ref(cipher, tk, pn, key_id, frame):
    gcmp = cipher.startswith("gcmp")
    hdr, body = frame[:HDR], frame[HDR:]
    aad, nonce = ccmp_aad_nonce(hdr, pn, gcmp)
    if gcmp:
        ct = AESGCM(tk).encrypt(nonce, body, aad)
    else:
        ct = AESCCM(tk, tag_length=8 if cipher == "ccmp-128" else 16).encrypt(nonce, body, aad)
    out_hdr = bytearray(hdr)
    out_hdr[1] |= 0x40
    return bytes(out_hdr) + ccmp_header(pn, key_id) + ct


def test_ccmp():
    for cipher, tk_len, mic in (("ccmp-128", 16, 8), ("ccmp-256", 32, 16),
                                ("gcmp-128", 16, 16), ("gcmp-256", 32, 16)):
        tk = rb(tk_len)
        for body_len in sweep(16, FRAME_MAX - HDR):
            hdr = bytes([0x08, 0x02, 0, 0]) + rb(18) + bytes([rng.randrange(256) & 0xF0, rb(1)[0]])
            frame = hdr + rb(body_len)
            pn, key_id = rng.randrange(1, 1 << 48), rng.randrange(4)
            ref = ccmp_ref(cipher, tk, pn, key_id, frame)
            got = twag("ccmp", "encrypt", "--cipher", cipher, "--tk", tk.hex(), "--pn", str(pn),
                       "--key-id", str(key_id), "--frame", frame.hex())
            check(got.get("frame") == ref.hex(), f"{cipher} encrypt, body {body_len} octets")
            if len(ref) <= FRAME_MAX:
                got = twag("ccmp", "decrypt", "--cipher", cipher, "--tk", tk.hex(),
                           "--key-id", str(key_id), "--frame", ref.hex())
                check(got.get("frame", "")[HDR * 2:] == frame[HDR:].hex() and got.get("pn") == str(pn),
                      f"{cipher} decrypt, body {body_len} octets")
            else:
                refused(["ccmp", "decrypt", "--cipher", cipher, "--tk", tk.hex(), "--frame", ref.hex()],
                        "frame", f"{cipher} decrypt of {len(ref)} octets")
            if body_len in (0, 513):
                bad = bytearray(ref)
                bad[-1] ^= 0x80
                rc, out, err = run("ccmp", "decrypt", "--cipher", cipher, "--tk", tk.hex(),
                                   "--key-id", str(key_id), "--frame", bytes(bad).hex())
                check(rc == 1 and out == "", f"{cipher} decrypt with a bad MIC ({body_len}) fails, prints nothing")
        refused(["ccmp", "encrypt", "--cipher", cipher, "--tk", tk.hex(), "--pn", "1",
                 "--frame", "00" * (FRAME_MAX + 1)], "frame", f"{cipher} frame past the maximum")


# --- EAPOL-Key MIC -----------------------------------------------------------

MIC_FRAME_MAX = 2048
MIC_OFF = 81


def eapol_key(key_data_len, version):
    """An EAPOL-Key frame (IEEE 802.1X-2010 §11.3, 802.11-2020 §12.7.2)."""
    info = version | 0x0100 | 0x0008  # version, Key MIC, Pairwise
    body = (bytes([2]) + info.to_bytes(2, "big") + (16).to_bytes(2, "big") + rb(8) + rb(32) +
            bytes(16) + bytes(8) + bytes(8) + bytes(16) + key_data_len.to_bytes(2, "big") +
            rb(key_data_len))
    return bytes([2, 3]) + len(body).to_bytes(2, "big") + body


def test_wlan_mic():
    for akm, version in ((2, 2), (1, 2), (6, 3), (5, 3)):
        kck = rb(16)
        for kd in sweep(16, MIC_FRAME_MAX - 99):
            frame = eapol_key(kd, version)
            if version == 2:
                ref = hmac.new(kck, frame, hashlib.sha1).digest()[:16]
            else:
                c = cmac.CMAC(algorithms.AES(kck))
                c.update(frame)
                ref = c.finalize()
            got = twag("wlan", "mic", "--kck", kck.hex(), "--akm", str(akm), "--frame", frame.hex())
            signed = frame[:MIC_OFF] + ref + frame[MIC_OFF + 16:]
            check(got.get("mic") == ref.hex() and got.get("frame") == signed.hex(),
                  f"wlan mic akm {akm}, {len(frame)}-octet frame")
            if kd in (0, 513):
                got = twag("wlan", "mic", "--verify", "--kck", kck.hex(), "--akm", str(akm),
                           "--frame", signed.hex())
                check(got.get("mic") == ref.hex(), f"wlan mic --verify akm {akm}, {len(frame)} octets")
                bad = bytearray(signed)
                bad[MIC_OFF] ^= 1
                rc, out, err = run("wlan", "mic", "--verify", "--kck", kck.hex(), "--akm", str(akm),
                                   "--frame", bytes(bad).hex())
                check(rc == 1 and out == "", f"wlan mic --verify of a bad MIC fails (akm {akm})")
        for n in (1, 98, MIC_FRAME_MAX + 1):
            refused(["wlan", "mic", "--kck", kck.hex(), "--akm", str(akm), "--frame", rb(n).hex()],
                    "frame", f"wlan mic of {n} octets of noise")
        frame = eapol_key(40, version)
        refused(["wlan", "mic", "--kck", kck.hex(), "--akm", str(akm), "--frame", frame[:-1].hex()],
                "frame", "wlan mic of a frame shorter than its lengths say")


# --- ESP ---------------------------------------------------------------------

PKT_MAX = 65535
# name: (enc key, auth key, IV, block for padding, ICV, hash)
ESP = {
    "aes-gcm-128": (16, 0, 8, 4, 16, None),
    "aes-gcm-256": (32, 0, 8, 4, 16, None),
    "aes-cbc-128-hmac-sha1": (16, 20, 16, 16, 12, hashlib.sha1),
    "aes-cbc-256-hmac-sha1": (32, 20, 16, 16, 12, hashlib.sha1),
    "aes-cbc-128-hmac-sha256": (16, 32, 16, 16, 16, hashlib.sha256),
    "aes-cbc-256-hmac-sha256": (32, 32, 16, 16, 16, hashlib.sha256),
    "aes-cbc-128-hmac-md5": (16, 16, 16, 16, 12, hashlib.md5),
    "3des-cbc-hmac-sha1": (24, 20, 8, 8, 12, hashlib.sha1),
    "null-hmac-sha1": (0, 20, 0, 4, 12, hashlib.sha1),
    "null-hmac-md5": (0, 16, 0, 4, 12, hashlib.md5),
}


def esp_keys(name):
    enc, auth, *_ = ESP[name]
    if name.startswith("aes-gcm"):
        return rb(enc + 4)
    return rb(enc + auth)


def esp_open(name, key, pkt, seq_hi=None):
    """RFC 4303 §3.4 inbound processing, done here; returns (payload, nh) or None."""
    enc, auth, ivl, _, icvl, h = ESP[name]
    hdr, iv = pkt[:8], pkt[8:8 + ivl]
    hi = b"" if seq_hi is None else seq_hi.to_bytes(4, "big")
    if name.startswith("aes-gcm"):
        try:
            plain = AESGCM(key[:enc]).decrypt(key[enc:] + iv, pkt[8 + ivl:], hdr[:4] + hi + hdr[4:])
        except Exception:  # noqa: BLE001 - a failure to verify is the answer
            return None
    else:
        body, icv = pkt[:-icvl], pkt[-icvl:]
        if not hmac.compare_digest(hmac.new(key[enc:], body + hi, h).digest()[:icvl], icv):
            return None
        ct = body[8 + ivl:]
        if enc == 0:
            plain = ct
        else:
            alg = algorithms.TripleDES(key[:enc]) if name.startswith("3des") else algorithms.AES(key[:enc])
            d = Cipher(alg, modes.CBC(iv)).decryptor()
            plain = d.update(ct) + d.finalize()
    if len(plain) < 2:
        return None
    padlen, nh = plain[-2], plain[-1]
    if plain[-2 - padlen:-2] != bytes(range(1, padlen + 1)):
        return None
    return plain[:-2 - padlen], nh


def esp_seal(name, key, spi, seq, payload, nh):
    """RFC 4303 §3.3 outbound processing, done here (minimal padding)."""
    enc, auth, ivl, blk, icvl, h = ESP[name]
    padlen = (-(len(payload) + 2)) % blk
    plain = payload + bytes(range(1, padlen + 1)) + bytes([padlen, nh])
    hdr = spi.to_bytes(4, "big") + seq.to_bytes(4, "big")
    iv = rb(ivl)
    if name.startswith("aes-gcm"):
        return hdr + iv + AESGCM(key[:enc]).encrypt(key[enc:] + iv, plain, hdr)
    if enc == 0:
        ct = plain
    else:
        alg = algorithms.TripleDES(key[:enc]) if name.startswith("3des") else algorithms.AES(key[:enc])
        e = Cipher(alg, modes.CBC(iv)).encryptor()
        ct = e.update(plain) + e.finalize()
    body = hdr + iv + ct
    return body + hmac.new(key[enc:], body, h).digest()[:icvl]


def test_esp():
    for name, (enc, auth, ivl, blk, icvl, h) in ESP.items():
        key = esp_keys(name)
        overhead = 8 + ivl + icvl + 2 + blk  # the most an encapsulation adds
        for n in sweep(blk, PKT_MAX):
            spi, seq = rng.randrange(256, 1 << 32), rng.randrange(1, 1 << 32)
            sa = f"{name}:{key.hex()}:{spi}"
            payload = rb(n)
            got = twag("esp", "encrypt", "--sa", sa, "--seq", str(seq), "--nh", "4",
                       "--packet", payload.hex())
            pkt = bytes.fromhex(got.get("packet", ""))
            opened = esp_open(name, key, pkt)
            check(pkt[:8] == spi.to_bytes(4, "big") + seq.to_bytes(4, "big") and
                  opened == (payload, 4) and (len(pkt) - 8 - ivl - icvl) % blk == 0,
                  f"esp {name} encrypt of {n} octets opens here (RFC 4303 header, padding, ICV)")
            if n > PKT_MAX - overhead:
                continue
            sealed = esp_seal(name, key, spi, seq, payload, 41)
            got = twag("esp", "decrypt", "--sa", sa, "--seq", str(seq), "--packet", sealed.hex())
            check(got.get("payload") == payload.hex() and got.get("next_header") == "41" and
                  got.get("seq") == str(seq), f"esp {name} decrypt of a {len(sealed)}-octet packet made here")
            if n in (0, 513):
                bad = bytearray(sealed)
                bad[-1] ^= 1
                rc, out, err = run("esp", "decrypt", "--sa", sa, "--seq", str(seq), "--packet", bytes(bad).hex())
                check(rc == 1 and out == "", f"esp {name}: a bad ICV ({n}) fails, prints nothing")
        refused(["esp", "encrypt", "--sa", f"{name}:{key.hex()}:1", "--seq", "1",
                 "--packet", "00" * (PKT_MAX + 1)], "packet", f"esp {name} past the maximum")


def ipv4(payload, proto, ttl=64):
    h = bytearray(20)
    h[0], h[1] = 0x45, rng.randrange(256)
    h[2:4] = (20 + len(payload)).to_bytes(2, "big")
    h[4:6] = rb(2)
    h[6:8] = (0x4000).to_bytes(2, "big")
    h[8], h[9] = ttl, proto
    h[12:20] = rb(8)
    s = sum(int.from_bytes(h[i:i + 2], "big") for i in range(0, 20, 2))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    h[10:12] = (~s & 0xFFFF).to_bytes(2, "big")
    return bytes(h) + payload


AH = {"ah-hmac-sha1": (20, 12, hashlib.sha1), "ah-hmac-md5": (16, 12, hashlib.md5),
      "ah-hmac-sha256": (32, 16, hashlib.sha256)}


def ah_icv(key, h, icvl, pkt):
    """RFC 4302 §3.3.3.1: mutable IPv4 fields (TOS, flags/offset, TTL,
    checksum) and the ICV field count as zero."""
    m = bytearray(pkt)
    m[1] = 0
    m[6:8] = b"\0\0"
    m[8] = 0
    m[10:12] = b"\0\0"
    m[20 + 12:20 + 12 + icvl] = bytes(icvl)
    return hmac.new(key, bytes(m), h).digest()[:icvl]


def test_ah():
    for name, (klen, icvl, h) in AH.items():
        key = rb(klen)
        ah_len = 12 + icvl
        for n in sweep(4, PKT_MAX - 20 - ah_len):
            spi, seq = rng.randrange(256, 1 << 32), rng.randrange(1, 1 << 32)
            sa = f"{name}:{key.hex()}:{spi}"
            inner = ipv4(rb(n), 17)
            got = twag("esp", "encrypt", "--sa", sa, "--seq", str(seq), "--packet", inner.hex())
            pkt = bytes.fromhex(got.get("packet", ""))
            ok = (len(pkt) == len(inner) + ah_len and pkt[9] == 51 and
                  int.from_bytes(pkt[2:4], "big") == len(pkt) and
                  pkt[20] == 17 and pkt[21] == ah_len // 4 - 2 and
                  pkt[24:28] == spi.to_bytes(4, "big") and pkt[28:32] == seq.to_bytes(4, "big") and
                  pkt[20 + ah_len:] == inner[20:] and
                  pkt[32:32 + icvl] == ah_icv(key, h, icvl, pkt))
            check(ok, f"{name} of a {len(inner)}-octet packet: RFC 4302 header and ICV computed here")
            if ok:
                got = twag("esp", "decrypt", "--sa", sa, "--seq", str(seq), "--packet", pkt.hex())
                check(got.get("seq") == str(seq) and got.get("packet", "")[40:] == inner[20:].hex(),
                      f"{name} decrypt of {len(pkt)} octets")
            if n in (0, 513) and ok:
                bad = bytearray(pkt)
                bad[-1] ^= 1
                rc, out, err = run("esp", "decrypt", "--sa", sa, "--seq", str(seq), "--packet", bytes(bad).hex())
                check(rc == 1 and out == "", f"{name}: a bad ICV fails, prints nothing")


def test_hex_files():
    """'@FILE' and '@-' give a hex value from a file or standard input."""
    kek, key = rb(16), rb(24)
    ref = keywrap.aes_key_wrap(kek, key).hex()
    path = os.path.join(TMP, "key.hex")
    with open(path, "w") as f:
        f.write("  " + key.hex().upper() + "\n\n")
    got = twag("keywrap", "wrap", "--kek", kek.hex(), "--key", "@" + path)
    check(got.get("wrapped") == ref, "--key @FILE (upper case, white space around)")
    rc, out, err = run("keywrap", "wrap", "--kek", "@-", "--key", key.hex(), stdin=kek.hex())
    check(rc == 0 and kv(out).get("wrapped") == ref, "--kek @- reads standard input")
    with open(path, "w") as f:
        f.write(key.hex() + " " + key.hex())
    refused(["keywrap", "wrap", "--kek", kek.hex(), "--key", "@" + path], "key", "two values in @FILE")
    refused(["keywrap", "wrap", "--kek", kek.hex(), "--key", "@" + path + ".missing"], "key",
            "@FILE that does not exist")
    with open(path, "w") as f:
        f.write("")
    refused(["keywrap", "wrap", "--kek", kek.hex(), "--key", "@" + path], "key", "empty @FILE")
    # A result that cannot be written is a failure, not exit 0.
    with open("/dev/full", "w") as full:
        p = subprocess.run([TWAG, "esp", "encrypt", "--sa", "null:" + ":1", "--seq", "1",
                            "--packet", rb(8192).hex()], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=60)
    check(p.returncode == 1 and "writing the output" in p.stderr,
          f"output to a full device: exit 1 and a message (got {p.returncode}: {p.stderr.strip()})")


# --- KDF text options and gsm c2 ---------------------------------------------

TEXT_MAX = 65535


def prf_prime(key, seed, n):
    """RFC 9048 §3.4: T1 = HMAC-SHA-256(K, S | 1), Tn = HMAC(K, Tn-1 | S | n)."""
    out, t, i = b"", b"", 1
    while len(out) < n:
        t = hmac.new(key, t + seed + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:n]


def test_kdf_text():
    ck, ik = rb(16), rb(16)
    for n in sweep(64, TEXT_MAX, lo=1):
        ident = "".join(rng.choice("0123456789abcdefghijklmnopqrstuvwxyz.@") for _ in range(n))
        # RFC 9048 §3.3: MK = PRF'(IK'|CK', "EAP-AKA'"|Identity).
        mk = prf_prime(ik + ck, b"EAP-AKA'" + ident.encode(), 208)
        got = twag("kdf", "aka-prime", "--ck-prime", ck.hex(), "--ik-prime", ik.hex(), "--identity", ident)
        check(got.get("k_encr") == mk[0:16].hex() and got.get("k_aut") == mk[16:48].hex() and
              got.get("msk") == mk[80:144].hex() and got.get("emsk") == mk[144:208].hex(),
              f"kdf aka-prime, {n}-octet identity (RFC 9048 PRF' computed here)")
    refused(["kdf", "aka-prime", "--ck-prime", ck.hex(), "--ik-prime", ik.hex(), "--identity", ""],
            "identity", "kdf aka-prime with an empty identity")
    refused(["kdf", "aka-prime", "--ck-prime", ck.hex(), "--ik-prime", ik.hex(), "--identity",
             "x" * (TEXT_MAX + 1)], "identity", "kdf aka-prime identity past the maximum")


def test_gsm_c2():
    for n in (4, 8, 15, 16):
        res = rb(n)
        r = res + bytes(16 - n)  # TS 33.102 §6.8.1.2: XRES padded to 128 bits
        sres = bytes(a ^ b ^ c ^ d for a, b, c, d in zip(r[0:4], r[4:8], r[8:12], r[12:16]))
        got = twag("gsm", "c2", "--res", res.hex())
        check(got.get("sres") == sres.hex(), f"gsm c2 of a {n}-octet RES")
    for n in (0, 3, 17):
        refused(["gsm", "c2", "--res", rb(n).hex()], "res", f"gsm c2 of a {n}-octet RES")

# --- SUCI: NAI usernames of every size (TS 33.501 C.3.4, RFC 7542 §2.3) ---

NAI_MAX = 253


def test_suci_nai():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import x25519
    hn = x25519.X25519PrivateKey.generate()
    pub = hn.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    realm = "a.b"
    for n in sweep(16, NAI_MAX - 1 - len(realm), lo=1):
        user = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(n))
        got = twag("suci", "encrypt", "--hn-public", pub.hex(), "--profile", "A", "--key-id", "5",
                   "--supi", f"nai-{user}@{realm}")
        f = got.get("suci", "")
        pre = f"suci-1-{realm}-0-1-5-"
        if not check(f.startswith(pre), f"suci encrypt of a {n}-octet username: {f[:60]}"):
            continue
        out = bytes.fromhex(f[len(pre):])
        eph, ct, tag = out[:32], out[32:-8], out[-8:]
        check(len(ct) == n and ecies_open(hn, eph, ct, tag) == user.encode(),
              f"suci, {n}-octet username: decrypts with Python cryptography")
    refused(["suci", "encrypt", "--hn-public", pub.hex(), "--profile", "A", "--key-id", "5",
             "--supi", "nai-" + "u" * (NAI_MAX - len(realm)) + "@" + realm], "supi",
            "suci encrypt of an NAI past 253 octets")
    for n, ok in ((63, True), (64, False)):
        args = ["suci", "encrypt", "--profile", "null", "--key-id", "0", "--supi", f"nai-u@{'r' * n}.b"]
        if ok:
            check(twag(*args).get("suci") == f"suci-1-{'r' * n}.b-0-0-0-u", f"suci: realm label of {n}")
        else:
            refused(args, "supi", f"suci: realm label of {n}")


for t in (test_hex_files, test_keywrap, test_ccmp, test_wlan_mic, test_esp, test_ah, test_kdf_text, test_gsm_c2, test_suci_nai):
    t()
S.finish()
