#!/usr/bin/env python3
"""Edge cases for AES-GCM, AES-CCM and AES key wrap (with and without
padding), in the manner of Project Wycheproof, written from the published
rules; run by tests/unit/test_cavp.c at test time.

    python3 tests/vectors/cavp/gen_edge.py [SEED]

Every expected value comes from Python `cryptography` (an independent
implementation) or is a rejection the spec prescribes; where both apply,
the generator asserts that `cryptography` rejects the input too. Output:
one case a line, "<alg> <op> expect=<ok|auth|length> why=<name> k=hex ...",
alg gcm | ccm | kw | kwp, op enc | dec (wrap | unwrap).

# source: NIST SP 800-38D §5.2.1.1 (input lengths), §5.2.1.2 (tag length t,
#   the tag is MSB_t of the full tag, §7.1 step 6), §7.2 (FAIL on a tag
#   mismatch); twag/gcm.h accepts t in {16, 12, 8} (RFC 4106 §3) and 96-bit
#   IVs only (§8.2.1)
# source: NIST SP 800-38C §5.4 and Appendix A.1 (n in 7..13, t in
#   {4, 6, ..., 16}, q = 15 - n, Plen < 2^(8q)), §6.2 (INVALID on a MAC
#   mismatch)
# source: RFC 3394 §2.2.1 (n >= 2 semiblocks), §2.2.3 (IV check);
#   RFC 5649 §3 (AIV = A65959A6 || MLI, 8*(n-1) < MLI <= 8*n, zero padding),
#   §4.2 (n = 1: one AES block)
"""
import os
import random
import sys

from cryptography.exceptions import InternalError, InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM, AESGCM
from cryptography.hazmat.primitives import keywrap

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)


def rb(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def emit(alg, op, expect, why, **kv):
    fields = " ".join("%s=%s" % (k, v.hex() if isinstance(v, bytes) else v) for k, v in kv.items())
    print("%s %s expect=%s why=%s %s" % (alg, op, expect, why, fields))


def flip(b, i, bit=0x01):
    b = bytearray(b)
    b[i] ^= bit
    return bytes(b)


def rejects(fn):
    try:
        fn()
    # InternalError: OpenSSL's own refusal (e.g. a CCM payload over 2^(8q))
    except (ValueError, InvalidTag, InternalError, keywrap.InvalidUnwrap):
        return True
    return False


# ---- GCM ----
def gcm_py_decrypt(key, iv, aad, ct, tag):
    d = Cipher(algorithms.AES(key), modes.GCM(iv, tag, min_tag_length=4)).decryptor()
    d.authenticate_additional_data(aad)
    return d.update(ct) + d.finalize()


GCM_TAGS = (16, 12, 8)
for key_len in (16, 32):
    for pl, al in ((0, 0), (0, 1), (1, 0), (0, 16), (16, 0), (15, 17), (16, 16),
                   (17, 15), (31, 33), (64, 0), (255, 256), (257, 13)):
        key, iv, aad, pt = rb(key_len), rb(12), rb(al), rb(pl)
        full = AESGCM(key).encrypt(iv, pt, aad)
        ct, tag = full[:-16], full[-16:]
        for t in range(0, 18):
            if t in GCM_TAGS:
                # §5.2.1.2 / §7.1: T = MSB_t(full tag); cryptography agrees
                assert gcm_py_decrypt(key, iv, aad, ct, tag[:t]) == pt
                emit("gcm", "enc", "ok", "tag%d" % t, key=key, iv=iv, aad=aad, pt=pt, ct=ct, tl=t, tag=tag[:t])
                emit("gcm", "dec", "ok", "tag%d" % t, key=key, iv=iv, aad=aad, pt=pt, ct=ct, tl=t, tag=tag[:t])
                # altered in its first and last octet, and cut: its last
                # octet replaced by the next octet of the full tag
                for why, bad in (("tag_first_bit", flip(tag[:t], 0, 0x80)),
                                 ("tag_last_bit", flip(tag[:t], t - 1)),
                                 ("tag_cut", tag[:t - 1] + bytes([tag[t] if t < 16 else tag[15] ^ 0xff])),
                                 ("tag_zero", bytes(t))):
                    if bad == tag[:t]:
                        continue
                    assert rejects(lambda: gcm_py_decrypt(key, iv, aad, ct, bad))
                    emit("gcm", "dec", "auth", why, key=key, iv=iv, aad=aad, ct=ct, tl=t, tag=bad)
                if t < 16:
                    # a short tag zero-filled to 16 and checked as 16
                    bad = tag[:t] + bytes(16 - t)
                    assert rejects(lambda: gcm_py_decrypt(key, iv, aad, ct, bad))
                    emit("gcm", "dec", "auth", "tag_padded%d" % t, key=key, iv=iv, aad=aad, ct=ct, tl=16, tag=bad)
            else:
                # the API's tag lengths are 16, 12 and 8 only: refused
                bad = (tag + bytes(2))[:t] if t else b""
                emit("gcm", "enc", "length", "tag_len%d" % t, key=key, iv=iv, aad=aad, pt=pt, tl=t)
                emit("gcm", "dec", "length", "tag_len%d" % t, key=key, iv=iv, aad=aad, ct=ct, tl=t, tag=bad)
        if pl:
            assert rejects(lambda: gcm_py_decrypt(key, iv, aad, flip(ct, pl - 1), tag))
            emit("gcm", "dec", "auth", "ct_bit", key=key, iv=iv, aad=aad, ct=flip(ct, pl - 1), tl=16, tag=tag)
        if al:
            assert rejects(lambda: gcm_py_decrypt(key, iv, flip(aad, 0), ct, tag))
            emit("gcm", "dec", "auth", "aad_bit", key=key, iv=iv, aad=flip(aad, 0), ct=ct, tl=16, tag=tag)
        # AAD and ciphertext swapped (same GHASH input length, other layout)
        if pl == al and pl:
            assert rejects(lambda: gcm_py_decrypt(key, iv, ct, aad, tag))
            emit("gcm", "dec", "auth", "aad_ct_swap", key=key, iv=iv, aad=ct, ct=aad, tl=16, tag=tag)
    # 96-bit IV edges: all zero and all one octets (J0 = IV || 0^31 || 1)
    for why, iv in (("iv_zero", bytes(12)), ("iv_ones", b"\xff" * 12)):
        key, aad, pt = rb(key_len), rb(20), rb(70)
        full = AESGCM(key).encrypt(iv, pt, aad)
        emit("gcm", "enc", "ok", why, key=key, iv=iv, aad=aad, pt=pt, ct=full[:-16], tl=16, tag=full[-16:])
        emit("gcm", "dec", "ok", why, key=key, iv=iv, aad=aad, pt=pt, ct=full[:-16], tl=16, tag=full[-16:])
        assert rejects(lambda: gcm_py_decrypt(key, flip(iv, 11), aad, full[:-16], full[-16:]))
        emit("gcm", "dec", "auth", why + "_other", key=key, iv=flip(iv, 11), aad=aad, ct=full[:-16], tl=16, tag=full[-16:])

# ---- CCM ----
for key_len in (16, 32):
    for n in range(6, 15):
        for t in range(0, 20):
            key, nonce, aad, pt = rb(key_len), rb(n), rb(rng.choice((0, 1, 14, 15, 16, 30))), rb(rng.choice((0, 1, 15, 16, 17, 40)))
            ok_n, ok_t = 7 <= n <= 13, 4 <= t <= 16 and t % 2 == 0
            if ok_n and ok_t:
                c = AESCCM(key, tag_length=t)
                full = c.encrypt(nonce, pt, aad)
                ct, tag = full[:-t], full[-t:]
                emit("ccm", "enc", "ok", "n%d_t%d" % (n, t), key=key, nonce=nonce, aad=aad, pt=pt, ct=ct, tl=t, tag=tag)
                emit("ccm", "dec", "ok", "n%d_t%d" % (n, t), key=key, nonce=nonce, aad=aad, pt=pt, ct=ct, tl=t, tag=tag)
                for why, bad in (("tag_last_bit", flip(tag, t - 1)), ("tag_first_bit", flip(tag, 0, 0x80))):
                    assert rejects(lambda: c.decrypt(nonce, ct + bad, aad))
                    emit("ccm", "dec", "auth", why, key=key, nonce=nonce, aad=aad, ct=ct, tl=t, tag=bad)
                if pt:
                    bad = flip(ct, 0)
                    assert rejects(lambda: c.decrypt(nonce, bad + tag, aad))
                    emit("ccm", "dec", "auth", "ct_bit", key=key, nonce=nonce, aad=aad, ct=bad, tl=t, tag=tag)
                # a tag cut by 2 and checked at the shorter length
                if t > 4:
                    assert rejects(lambda: AESCCM(key, tag_length=t - 2).decrypt(nonce, ct + tag[:t - 2], aad))
                    emit("ccm", "dec", "auth", "tag_cut", key=key, nonce=nonce, aad=aad, ct=ct, tl=t - 2, tag=tag[:t - 2])
            else:
                # §A.1: refused; cryptography refuses these parameters too
                if ok_n:
                    assert rejects(lambda: AESCCM(key, tag_length=t))
                else:
                    assert rejects(lambda: AESCCM(key, tag_length=8).encrypt(nonce, pt, aad))
                tag = rb(t)
                emit("ccm", "enc", "length", "n%d_t%d" % (n, t), key=key, nonce=nonce, aad=aad, pt=pt, tl=t)
                emit("ccm", "dec", "length", "n%d_t%d" % (n, t), key=key, nonce=nonce, aad=aad, ct=pt, tl=t, tag=tag)
    # §A.1 payload limit: Plen < 2^(8q); q = 2 for n = 13, q = 3 for n = 12
    key = rb(key_len)
    nonce, pt = rb(13), rb(65535)
    full = AESCCM(key, tag_length=8).encrypt(nonce, pt, b"")
    emit("ccm", "enc", "ok", "q2_max", key=key, nonce=nonce, aad=b"", pt=pt, ct=full[:-8], tl=8, tag=full[-8:])
    emit("ccm", "dec", "ok", "q2_max", key=key, nonce=nonce, aad=b"", pt=pt, ct=full[:-8], tl=8, tag=full[-8:])
    assert rejects(lambda: AESCCM(key, tag_length=8).encrypt(nonce, bytes(65536), b""))
    for n, ln in ((13, 65536), (13, 65537), (12, 1 << 24)):
        emit("ccm", "enc", "length", "q%d_over" % (15 - n), key=key, nonce=rb(n), aad=b"", tl=8, len=ln)
        emit("ccm", "dec", "length", "q%d_over" % (15 - n), key=key, nonce=rb(n), aad=b"", tl=8, tag=rb(8), len=ln)


# ---- key wrap ----
def aes_ecb(kek, block, enc=True):
    c = Cipher(algorithms.AES(kek), modes.ECB())
    x = c.encryptor() if enc else c.decryptor()
    return x.update(block) + x.finalize()


def w(kek, a, p):
    """RFC 3394 §2.2.1 W with an arbitrary initial value a (8 octets)."""
    r = [p[i:i + 8] for i in range(0, len(p), 8)]
    n = len(r)
    for j in range(6):
        for i in range(n):
            b = aes_ecb(kek, a + r[i])
            t = n * j + i + 1
            a = (int.from_bytes(b[:8], "big") ^ t).to_bytes(8, "big")
            r[i] = b[8:]
    return a + b"".join(r)


def kwp_raw(kek, mli, padded):
    """RFC 5649 §4.1 with a chosen MLI and padded key (any padding)."""
    aiv = bytes.fromhex("a65959a6") + mli.to_bytes(4, "big")
    if len(padded) == 8:
        return aes_ecb(kek, aiv + padded)
    return w(kek, aiv, padded)


for kek_len in (16, 24, 32):
    kek = rb(kek_len)
    for n in (16, 24, 32, 40, 64):
        key = rb(n)
        c = keywrap.aes_key_wrap(kek, key)
        assert w(kek, b"\xa6" * 8, key) == c  # our W agrees with cryptography
        emit("kw", "wrap", "ok", "len%d" % n, kek=kek, pt=key, ct=c)
        emit("kw", "unwrap", "ok", "len%d" % n, kek=kek, pt=key, ct=c)
        # §2.2.3: any other initial value fails the integrity check
        for why, a in (("aiv_last_bit", b"\xa6" * 7 + b"\xa7"), ("aiv_first_bit", b"\x26" + b"\xa6" * 7),
                       ("aiv_kwp", bytes.fromhex("a65959a6") + n.to_bytes(4, "big")), ("aiv_zero", bytes(8))):
            bad = w(kek, a, key)
            assert rejects(lambda: keywrap.aes_key_unwrap(kek, bad))
            emit("kw", "unwrap", "auth", why, kek=kek, ct=bad)
        for i in (0, 8, len(c) - 1):
            bad = flip(c, i)
            assert rejects(lambda: keywrap.aes_key_unwrap(kek, bad))
            emit("kw", "unwrap", "auth", "ct_bit%d" % i, kek=kek, ct=bad)
        # semiblocks swapped
        bad = c[:8] + c[16:24] + c[8:16] + c[24:]
        assert rejects(lambda: keywrap.aes_key_unwrap(kek, bad))
        emit("kw", "unwrap", "auth", "swap", kek=kek, ct=bad)
        for cut in (1, 4, 7):
            assert rejects(lambda: keywrap.aes_key_unwrap(kek, c[:-cut]))
            emit("kw", "unwrap", "length", "not_mult8", kek=kek, ct=c[:-cut])
            assert rejects(lambda: keywrap.aes_key_wrap(kek, key[:-cut]))
            emit("kw", "wrap", "length", "not_mult8", kek=kek, pt=key[:-cut])
    # too short: RFC 3394 §2 needs n >= 2 semiblocks of key, 3 of wrapped
    for ln in (0, 8):
        emit("kw", "wrap", "length", "short%d" % ln, kek=kek, pt=rb(ln))
    for ln in (0, 8, 16):
        assert rejects(lambda: keywrap.aes_key_unwrap(kek, rb(ln)))
        emit("kw", "unwrap", "length", "short%d" % ln, kek=kek, ct=rb(ln))

    for n in (1, 7, 8, 9, 15, 16, 17, 20, 24, 31, 32, 33, 65):
        key = rb(n)
        c = keywrap.aes_key_wrap_with_padding(kek, key)
        padded = key + bytes(-n % 8)
        assert kwp_raw(kek, n, padded) == c
        emit("kwp", "wrap", "ok", "len%d" % n, kek=kek, pt=key, ct=c)
        emit("kwp", "unwrap", "ok", "len%d" % n, kek=kek, pt=key, ct=c)
        blocks = len(padded) // 8
        bads = []
        # §3: the AIV's constant part
        aiv = bytes.fromhex("a65959a7") + n.to_bytes(4, "big")
        bads.append(("aiv_const", aes_ecb(kek, aiv + padded) if blocks == 1 else w(kek, aiv, padded)))
        bads.append(("aiv_kw", aes_ecb(kek, b"\xa6" * 8 + padded) if blocks == 1 else w(kek, b"\xa6" * 8, padded)))
        # §3: MLI out of range: 8*(n-1) < MLI <= 8*n
        for mli in (0, 8 * (blocks - 1), 8 * blocks + 1, 0x80000000 | n, 0xffffffff):
            if 8 * (blocks - 1) < mli <= 8 * blocks:
                continue
            bads.append(("mli_%x" % mli, kwp_raw(kek, mli, padded)))
        # §3: padding octets must be zero
        if n % 8:
            for i in range(n, len(padded)):
                p2 = bytearray(padded)
                p2[i] = 0x01 if i == len(padded) - 1 else 0x80
                bads.append(("pad_%d" % (i - n), kwp_raw(kek, n, bytes(p2))))
        # an MLI one short of the key: its last octet (made non-zero)
        # becomes padding
        if n > 1 and n % 8 != 1:
            p2 = bytearray(padded)
            p2[n - 1] |= 0x01
            bads.append(("mli_short", kwp_raw(kek, n - 1, bytes(p2))))
        bads.append(("ct_bit", flip(c, len(c) - 1)))
        for why, bad in bads:
            assert rejects(lambda: keywrap.aes_key_unwrap_with_padding(kek, bad)), why
            emit("kwp", "unwrap", "auth", why, kek=kek, ct=bad)
        for cut in (1, 3, 7):
            assert rejects(lambda: keywrap.aes_key_unwrap_with_padding(kek, c[:-cut]))
            emit("kwp", "unwrap", "length", "not_mult8", kek=kek, ct=c[:-cut])
    emit("kwp", "wrap", "length", "empty", kek=kek, pt=b"")
    for ln in (0, 8):
        assert rejects(lambda: keywrap.aes_key_unwrap_with_padding(kek, rb(ln)))
        emit("kwp", "unwrap", "length", "short%d" % ln, kek=kek, ct=rb(ln))
