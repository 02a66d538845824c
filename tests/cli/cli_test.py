"""twag CLI tests.

Expected values come from the vector files (published sources, see their
"# source:" lines) or from independent implementations run here:
osmo-auc-gen (libosmocore) for Milenage/COMP128/c2/c3 and Python's
"cryptography" package and hmac/hashlib for key wrap, KDFs and SUCI.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import ROOT, Suite, ecies_open, kv  # noqa: E402
from vecfile import read_cases  # noqa: E402

VEC = os.path.join(ROOT, "tests", "vectors")
S = Suite("cli")
rng, check, run, twag = S.rng, S.check, S.run, S.twag


def rhex(n):
    return bytes(rng.randrange(256) for _ in range(n)).hex()


def where(c):
    return f"{c['_file']}:{c['_line']} ({c['_source']})"


def cases(name):
    out = []
    for c in read_cases(os.path.join(VEC, name)):
        c["_file"] = name
        if not check(c["_source"] is not None, f"{name}:{c['_line']} has a source line"):
            continue
        out.append(c)
    return out


def expect(c, got, keys):
    for k in keys:
        if k in c:
            check(got.get(k) == c[k], f"{where(c)}: {k} = {got.get(k)} expected {c[k]}")


def bad(args, option, what):
    rc, out, err = run(*args)
    lines = [x for x in err.strip().split("\n") if x]
    check(rc == 2 and len(lines) == 1 and (option is None or f"--{option}" in err),
          f"bad input ({what}): exit {rc}, stderr {err.strip()!r}")


# --- Milenage: TS 35.208 test sets, both OP and OPc paths -------------------
def test_milenage():
    for c in cases("milenage.vec"):
        base = ["--k", c["k"], "--rand", c["rand"], "--sqn", c["sqn"], "--amf", c["amf"]]
        keys = ["opc", "mac_a", "mac_s", "res", "ck", "ik", "ak", "ak_star"]
        for key in ("op", "opc"):
            if key in c:
                got = twag("milenage", *base, f"--{key}", c[key])
                expect(c, got, keys)
                sqn_ak = bytes(a ^ b for a, b in zip(bytes.fromhex(c["sqn"]), bytes.fromhex(c["ak"])))
                check(got.get("autn") == sqn_ak.hex() + c["amf"] + c["mac_a"],
                      f"{where(c)}: autn = SQN^AK|AMF|MAC-A")
    # Independent: osmo-auc-gen (libosmocore) on random inputs; it also
    # prints SRES/Kc through c2/c3, which checks `twag gsm`.
    for _ in range(8):
        k, opc, rand, amf = rhex(16), rhex(16), rhex(16), rhex(2)
        sqn = "%012x" % rng.randrange(1 << 47)
        p = subprocess.run(["osmo-auc-gen", "-3", "-a", "milenage", "-k", k, "-o", opc,
                            "-f", amf, "-s", str(int(sqn, 16)), "-r", rand],
                           capture_output=True, text=True, timeout=30)
        ref = {}
        for line in p.stdout.split("\n"):
            if ":\t" in line:
                a, b = line.split(":\t", 1)
                ref[a.strip()] = b.strip()
        got = twag("milenage", "--k", k, "--opc", opc, "--rand", rand, "--sqn", sqn, "--amf", amf)
        # osmo-auc-gen may advance SQN before use: compare the SQN-free parts.
        check(ref.get("RES") == got.get("res") and ref.get("CK") == got.get("ck") and
              ref.get("IK") == got.get("ik"), f"milenage vs osmo-auc-gen k={k} opc={opc} rand={rand}")
        used_sqn = int(ref.get("SQN", "0"))
        got2 = twag("milenage", "--k", k, "--opc", opc, "--rand", rand,
                    "--sqn", "%012x" % used_sqn, "--amf", amf)
        check(got2.get("autn") == ref.get("AUTN"), f"milenage AUTN vs osmo-auc-gen (sqn {used_sqn})")
        c2 = twag("gsm", "c2", "--res", got.get("res", ""))
        c3 = twag("gsm", "c3", "--ck", got.get("ck", ""), "--ik", got.get("ik", ""))
        check(c2.get("sres") == ref.get("SRES"), "gsm c2 vs osmo-auc-gen SRES")
        check(c3.get("kc") == ref.get("Kc"), "gsm c3 vs osmo-auc-gen Kc")
    # Custom constants change the output; the defaults given explicitly do not.
    v = cases("milenage.vec")[0]
    base = ["milenage", "--k", v["k"], "--opc", v["opc"], "--rand", v["rand"], "--sqn", v["sqn"], "--amf", v["amf"]]
    dflt = twag(*base, "--c1", "0" * 32, "--c2", "0" * 31 + "1", "--r1", "64", "--r5", "96")
    expect(v, dflt, ["mac_a", "res", "ak_star"])
    custom = twag(*base, "--c2", "0" * 30 + "11", "--r2", "5")
    check(custom.get("res") != v["res"] and custom.get("mac_a") == v["mac_a"],
          "milenage custom c2/r2 change f2 only")


def test_comp128():
    for ver in (1, 2, 3):
        for c in cases(f"comp128v{ver}.vec"):
            got = twag("comp128", "--version", str(ver), "--ki", c["ki"], "--rand", c["rand"])
            expect(c, got, ["sres", "kc"])
        for _ in range(4):
            ki, rand = rhex(16), rhex(16)
            p = subprocess.run(["osmo-auc-gen", "-2", "-a", f"comp128v{ver}", "-k", ki, "-r", rand],
                               capture_output=True, text=True, timeout=30)
            ref = dict((a.strip(), b.strip()) for a, b in
                       (line.split(":\t", 1) for line in p.stdout.split("\n") if ":\t" in line))
            got = twag("comp128", "--version", str(ver), "--ki", ki, "--rand", rand)
            check(got.get("sres") == ref.get("SRES") and got.get("kc") == ref.get("Kc"),
                  f"comp128v{ver} vs osmo-auc-gen ki={ki} rand={rand}")


def test_keywrap():
    from cryptography.hazmat.primitives import keywrap
    for c in cases("keywrap.vec"):
        pad = c.get("variant") == "kwp"
        flags = ["--pad"] if pad else []
        got = twag("keywrap", "wrap", "--kek", c["kek"], "--key", c["key"], *flags)
        check(got.get("wrapped") == c["wrapped"], f"{where(c)}: wrap")
        got = twag("keywrap", "unwrap", "--kek", c["kek"], "--wrapped", c["wrapped"], *flags)
        check(got.get("key") == c["key"], f"{where(c)}: unwrap")
    for _ in range(6):
        kek = bytes.fromhex(rhex(rng.choice((16, 32))))
        key = bytes.fromhex(rhex(8 * rng.randrange(2, 8)))
        ref = keywrap.aes_key_wrap(kek, key)
        got = twag("keywrap", "wrap", "--kek", kek.hex(), "--key", key.hex())
        check(got.get("wrapped") == ref.hex(), "keywrap vs cryptography aes_key_wrap")
        key = bytes.fromhex(rhex(rng.randrange(1, 40)))
        ref = keywrap.aes_key_wrap_with_padding(kek, key)
        got = twag("keywrap", "wrap", "--pad", "--kek", kek.hex(), "--key", key.hex())
        check(got.get("wrapped") == ref.hex(), "keywrap --pad vs cryptography")
        tampered = bytearray(ref)
        tampered[rng.randrange(len(tampered))] ^= 1 << rng.randrange(8)
        rc, out, err = run("keywrap", "unwrap", "--pad", "--kek", kek.hex(), "--wrapped", tampered.hex())
        check(rc == 1 and "key=" not in out, "keywrap unwrap of a tampered blob fails, prints no key")


def test_bad_input():
    k = "00" * 16
    ok = ["--k", k, "--opc", k, "--rand", k, "--sqn", "00" * 6, "--amf", "0000"]
    bad(["milenage", *ok[2:]], "k", "missing --k")
    bad(["milenage", "--k", k[:-2], *ok[2:]], "k", "short --k")
    bad(["milenage", "--k", "zz" + k[2:], *ok[2:]], "k", "non-hex --k")
    bad(["milenage", *ok[:2], "--rand", k, "--sqn", "00" * 6, "--amf", "0000"], "opc", "no OP/OPc")
    bad(["milenage", *ok, "--op", k], "op", "both OP and OPc")
    bad(["milenage", *ok[:-1], "00000"], "amf", "odd-length --amf")
    bad(["milenage", *ok, "--r1", "128"], "r1", "r1 out of range")
    bad(["milenage", *ok, "--bogus", "1"], "bogus", "unknown option")
    bad(["milenage", *ok, "--k", k], "k", "repeated option")
    bad(["milenage", *ok[:-1]], "amf", "option without value")
    bad(["tuak", "--k", "00" * 20, "--topc", "00" * 32, "--rand", k, "--sqn", "00" * 6, "--amf", "0000"], "k", "TUAK K of 160 bits")
    bad(["tuak", "--k", k, "--topc", "00" * 32, "--rand", k, "--sqn", "00" * 6, "--amf", "0000", "--mac-bits", "96"], "mac-bits", "TUAK MAC size")
    bad(["tuak", "--k", k, "--topc", "00" * 32, "--rand", k, "--sqn", "00" * 6, "--amf", "0000", "--iterations", "0"], "iterations", "TUAK iterations 0")
    bad(["comp128", "--version", "4", "--ki", k, "--rand", k], "version", "COMP128 version 4")
    bad(["comp128", "--version", "1", "--ki", k], "rand", "COMP128 missing rand")
    bad(["keywrap", "wrap", "--kek", "00" * 20, "--key", k], "kek", "160-bit KEK")
    bad(["keywrap", "wrap", "--kek", k, "--key", "00" * 12], "key", "RFC 3394 key not a multiple of 8")
    bad(["gsm", "c2", "--res", "00" * 3], "res", "RES too short")
    rc, out, err = run("nosuchcommand")
    check(rc == 2 and err.count("\n") == 1, "unknown command exits 2")


def test_help():
    rc, out, err = run("--help")
    check(rc == 0 and "milenage" in out and "suci" in out, "--help lists the commands")
    got = twag("cpu")
    check("level" in got and "features" in got, "twag cpu prints level and features")


def hmac256(key, msg):
    import hashlib
    import hmac
    return hmac.new(key, msg, hashlib.sha256).digest()


def kdf_3gpp(key, fc, *params):
    """TS 33.220 Annex B.2: S = FC || P0 || L0 || P1 || L1 ..."""
    s = bytes([fc])
    for p in params:
        s += p + len(p).to_bytes(2, "big")
    return hmac256(key, s)


def prf_prime(key, seed, n):
    """RFC 9048 §3.4: T1 = HMAC(K, S|1), Tn = HMAC(K, Tn-1|S|n)."""
    out, t, i = b"", b"", 1
    while len(out) < n:
        t = hmac256(key, t + seed + bytes([i]))
        out += t
        i += 1
    return out[:n]


def fips186_prf(xkey, n):
    """RFC 4186 §7 / FIPS 186-2 change notice 1, x-generation with
    G = SHA-1 compression of XVAL padded with zeros (no SHA padding)."""
    import struct

    def sha1_compress(block):
        h = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0]
        w = list(struct.unpack(">16I", block))
        for i in range(16, 80):
            x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
            w.append(((x << 1) | (x >> 31)) & 0xffffffff)
        a, b, c, d, e = h
        for i in range(80):
            if i < 20:
                f, k = (b & c) | (~b & d), 0x5A827999
            elif i < 40:
                f, k = b ^ c ^ d, 0x6ED9EBA1
            elif i < 60:
                f, k = (b & c) | (b & d) | (c & d), 0x8F1BBCDC
            else:
                f, k = b ^ c ^ d, 0xCA62C1D6
            t = (((a << 5) | (a >> 27)) + (f & 0xffffffff) + e + k + w[i]) & 0xffffffff
            a, b, c, d, e = t, a, ((b << 30) | (b >> 2)) & 0xffffffff, c, d
        return struct.pack(">5I", *[(x + y) & 0xffffffff for x, y in zip(h, [a, b, c, d, e])])

    x = int.from_bytes(xkey, "big")
    out = b""
    while len(out) < n:
        for _ in range(2):
            w = sha1_compress(x.to_bytes(20, "big") + b"\0" * 44)
            out += w
            x = (1 + x + int.from_bytes(w, "big")) % (1 << 160)
    return out[:n]


def test_kdf():
    import hashlib
    for c in cases("eap_aka_prime.vec"):
        got = twag("kdf", "ck-ik-prime", "--ck", c["ck"], "--ik", c["ik"],
                   "--network-name", c["network_name"], "--sqn-xor-ak", c["autn"][:12])
        expect(c, got, ["ck_prime", "ik_prime"])
        got = twag("kdf", "aka-prime", "--ck-prime", c["ck_prime"], "--ik-prime", c["ik_prime"],
                   "--identity", c["identity"])
        expect(c, got, ["k_encr", "k_aut", "k_re", "msk", "emsk"])
    for c in cases("eap_aka.vec"):
        got = twag("kdf", "aka", "--ck", c["ck"], "--ik", c["ik"], "--identity", c["identity"])
        expect(c, got, ["mk", "k_encr", "k_aut", "msk", "emsk"])
    for c in cases("eap_sim.vec"):
        kc = "".join(c[f"kc{i}"] for i in (1, 2, 3) if f"kc{i}" in c)
        got = twag("kdf", "sim", "--identity", c["identity"], "--kc", kc, "--nonce-mt", c["nonce_mt"],
                   "--version-list", c["version_list"], "--selected-version", c["selected_version"])
        expect(c, got, ["mk", "k_encr", "k_aut", "msk", "emsk"])
    for c in cases("kdf_5g.vec"):
        got = twag("kdf", "5g", "--ck", c["ck"], "--ik", c["ik"], "--serving-network-name",
                   c["serving_network_name"], "--sqn-xor-ak", c["autn"][:12], "--rand", c["rand"],
                   "--res", c["res"], "--supi", "imsi-208930000000001", "--abba", "0000")
        expect(c, got, ["kausf", "kseaf", "res_star", "hres_star"])
    # Independent: Python hmac/hashlib on random inputs (KAMF, which no
    # vector file publishes, included), and the RFC label order pinned.
    for _ in range(6):
        ck, ik, sqn_ak, rand = (bytes.fromhex(rhex(n)) for n in (16, 16, 6, 16))
        res = bytes.fromhex(rhex(rng.choice((4, 8, 16))))
        nn = rng.choice(["WLAN", "5G:mnc093.mcc208.3gppnetwork.org", "x" * 70])
        supi_digits = "".join(rng.choice("0123456789") for _ in range(15))
        abba = bytes.fromhex(rhex(2))
        ident = rng.choice(["6" + supi_digits + "@wlan.mnc093.mcc208.3gppnetwork.org", "0" + supi_digits])
        out = kdf_3gpp(ck + ik, 0x20, nn.encode(), sqn_ak)
        got = twag("kdf", "ck-ik-prime", "--ck", ck.hex(), "--ik", ik.hex(), "--network-name", nn,
                   "--sqn-xor-ak", sqn_ak.hex())
        check(got.get("ck_prime") == out[:16].hex() and got.get("ik_prime") == out[16:].hex(),
              "CK'|IK' = first|last 16 octets of the A.2 KDF (RFC 9048 labels)")
        mk = prf_prime(out[16:] + out[:16], b"EAP-AKA'" + ident.encode(), 208)
        got = twag("kdf", "aka-prime", "--ck-prime", out[:16].hex(), "--ik-prime", out[16:].hex(),
                   "--identity", ident)
        check(got.get("k_encr") == mk[:16].hex() and got.get("k_aut") == mk[16:48].hex() and
              got.get("k_re") == mk[48:80].hex() and got.get("msk") == mk[80:144].hex() and
              got.get("emsk") == mk[144:208].hex(), "EAP-AKA' keys vs PRF'(IK'|CK') in Python")
        mk1 = hashlib.sha1(ident.encode() + ik + ck).digest()
        keys = fips186_prf(mk1, 160)
        got = twag("kdf", "aka", "--ck", ck.hex(), "--ik", ik.hex(), "--identity", ident)
        check(got.get("mk") == mk1.hex() and got.get("k_encr") == keys[:16].hex() and
              got.get("k_aut") == keys[16:32].hex() and got.get("msk") == keys[32:96].hex() and
              got.get("emsk") == keys[96:160].hex(), "EAP-AKA keys vs Python FIPS 186-2 PRF")
        kausf = kdf_3gpp(ck + ik, 0x6A, nn.encode(), sqn_ak)
        res_star = kdf_3gpp(ck + ik, 0x6B, nn.encode(), rand, res)[16:]
        kseaf = kdf_3gpp(kausf, 0x6C, nn.encode())
        kamf = kdf_3gpp(kseaf, 0x6D, supi_digits.encode(), abba)
        hres = hashlib.sha256(rand + res_star).digest()[16:]
        got = twag("kdf", "5g", "--ck", ck.hex(), "--ik", ik.hex(), "--serving-network-name", nn,
                   "--sqn-xor-ak", sqn_ak.hex(), "--rand", rand.hex(), "--res", res.hex(),
                   "--supi", "imsi-" + supi_digits, "--abba", abba.hex())
        check(got == {"kausf": kausf.hex(), "kseaf": kseaf.hex(), "res_star": res_star.hex(),
                      "hres_star": hres.hex(), "kamf": kamf.hex()}, "5G chain vs Python hmac/hashlib")
    ok = ["--ck", "00" * 16, "--ik", "00" * 16, "--network-name", "WLAN", "--sqn-xor-ak", "00" * 6]
    bad(["kdf", "ck-ik-prime", *ok[:-1], "00" * 5], "sqn-xor-ak", "short SQN^AK")
    bad(["kdf", "ck-ik-prime", *ok[:4], "--network-name", "", *ok[6:]], "network-name", "empty network name")
    bad(["kdf", "sim", "--identity", "1x", "--kc", "00" * 8, "--nonce-mt", "00" * 16,
         "--version-list", "0001", "--selected-version", "0001"], "kc", "one triplet")
    bad(["kdf", "5g", "--ck", "00" * 16, "--ik", "00" * 16, "--serving-network-name", "x",
         "--sqn-xor-ak", "00" * 6, "--rand", "00" * 16, "--res", "00" * 17, "--supi", "imsi-001010000000001",
         "--abba", "0000"], "res", "RES of 17 octets")
    bad(["kdf", "5g", "--ck", "00" * 16, "--ik", "00" * 16, "--serving-network-name", "x",
         "--sqn-xor-ak", "00" * 6, "--rand", "00" * 16, "--res", "00" * 8, "--supi", "imsi-12a",
         "--abba", "0000"], "supi", "SUPI with a letter")
    bad(["kdf", "nosuch"], None, "unknown kdf")


def test_suci():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, x25519
    for name, prof in (("suci_profile_a.vec", "A"), ("suci_profile_b.vec", "B")):
        for c in cases(name):
            if c.get("supi_type") == "NAI":
                # TS 33.501 C.4.3.2 / C.4.4.2: both SUCI forms of the spec's output
                user, realm = c["supi"][4:].split("@")
                s = 1 if prof == "A" else 2
                got = twag("suci", "encrypt", "--hn-public", c.get("hn_public_uncompressed", c["hn_public"]),
                           "--profile", prof, "--key-id", "27", "--supi", c["supi"],
                           "--ephemeral-private", c["eph_private"])
                want = f"suci-1-{realm}-0-{s}-27-{c['scheme_output']}"
                check(got.get("suci") == want, f"{where(c)}: suci {got.get('suci')} expected {want}")
                got = twag("suci", "encrypt", "--hn-public", c["hn_public"], "--profile", prof,
                           "--key-id", "27", "--supi", c["supi"], "--form", "nai",
                           "--ephemeral-private", c["eph_private"])
                want_nai = f"type1.rid0.schid{s}.hnkey27.{c['scheme_output_text'].lower()}@{realm}"
                check(got.get("suci") == want_nai, f"{where(c)}: NAI form {got.get('suci')}")
                for text in (want, f"type1.rid0.schid{s}.hnkey27.{c['scheme_output_text']}@{realm}"):
                    got = twag("suci", "decrypt", "--hn-private", c["hn_private"], "--suci", text)
                    check(got.get("supi") == c["supi"], f"{where(c)}: deconceal gives {got.get('supi')}")
                continue
            mcc, mnc = c["imsi_mcc_mnc"][:3], c["imsi_mcc_mnc"][3:]
            supi = "imsi-" + c["imsi_mcc_mnc"] + c["imsi_msin"]
            got = twag("suci", "public-key", "--hn-private", c["hn_private"], "--profile", prof)
            check(got.get("hn_public") == c["hn_public"], f"{where(c)}: hn_public")
            got = twag("suci", "encrypt", "--hn-public", c["hn_public"], "--profile", prof,
                       "--key-id", "27", "--supi", supi, "--mnc-digits", str(len(mnc)),
                       "--ephemeral-private", c["eph_private"])
            want = f"suci-0-{mcc}-{mnc}-0-{1 if prof == 'A' else 2}-27-{c['scheme_output']}"
            check(got.get("suci") == want, f"{where(c)}: suci {got.get('suci')} expected {want}")
            got = twag("suci", "decrypt", "--hn-private", c["hn_private"], "--suci", want)
            check(got.get("supi") == supi, f"{where(c)}: deconceal gives {got.get('supi')}")
            tampered = want[:-1] + ("0" if want[-1] != "0" else "1")
            rc, out, err = run("suci", "decrypt", "--hn-private", c["hn_private"], "--suci", tampered)
            check(rc == 1 and "supi=" not in out, f"{where(c)}: tampered MAC tag rejected (exit {rc})")
    # Independent: decrypt what twag encrypts, with Python cryptography only.
    for prof in ("A", "B") * 3:
        if prof == "A":
            hn = x25519.X25519PrivateKey.generate()
            hn_pub = hn.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            hn_priv = hn.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                       serialization.NoEncryption())
        else:
            hn = ec.generate_private_key(ec.SECP256R1())
            hn_pub = hn.public_key().public_bytes(serialization.Encoding.X962,
                                                  serialization.PublicFormat.CompressedPoint)
            hn_priv = hn.private_numbers().private_value.to_bytes(32, "big")
        mnc_digits = rng.choice((2, 3))
        imsi = "".join(rng.choice("0123456789") for _ in range(rng.choice((14, 15))))
        kid = rng.randrange(1, 256)
        got = twag("suci", "encrypt", "--hn-public", hn_pub.hex(), "--profile", prof, "--key-id", str(kid),
                   "--supi", "imsi-" + imsi, "--mnc-digits", str(mnc_digits), "--routing", "12")
        fields = got.get("suci", "").split("-")
        if not check(len(fields) == 8, f"suci encrypt {prof} output form"):
            continue
        out = bytes.fromhex(fields[7])
        plen = 32 if prof == "A" else 33
        eph, ct, tag = out[:plen], out[plen:-8], out[-8:]
        bcd = ecies_open(hn, eph, ct, tag)
        check(bcd is not None, f"suci {prof}: tag verifies with Python cryptography")
        bcd = bcd or b""
        msin = "".join(f"{b & 15:x}{b >> 4:x}" for b in bcd).rstrip("f")
        check(fields[2] == imsi[:3] and fields[3] == imsi[3:3 + mnc_digits] and fields[4] == "12" and
              fields[6] == str(kid) and msin == imsi[3 + mnc_digits:],
              f"suci {prof}: fields and MSIN decrypt with Python cryptography")
        got = twag("suci", "decrypt", "--hn-private", hn_priv.hex(), "--suci", got["suci"])
        check(got.get("supi") == "imsi-" + imsi, f"suci {prof}: round trip")
        # An NAI SUPI, the home network key uncompressed for Profile B, the
        # NAI form: split at the dots and '@', decrypted by Python.
        if prof == "B":
            hn_pub = hn.public_key().public_bytes(serialization.Encoding.X962,
                                                  serialization.PublicFormat.UncompressedPoint)
        # RFC 7542 dot-string: non-empty runs of atext joined by single dots
        user = ".".join("".join(rng.choice("abcxyz019-_!~") for _ in range(rng.randrange(1, 12)))
                        for _ in range(rng.randrange(1, 5)))
        nai = f"{user}@op-{rng.randrange(1000)}.example.net"
        got = twag("suci", "encrypt", "--hn-public", hn_pub.hex(), "--profile", prof, "--key-id", str(kid),
                   "--supi", "nai-" + nai, "--routing", "7", "--form", "nai")
        form = got.get("suci", "")
        head, _, realm = form.partition("@")
        fld = head.split(".")
        if not check(len(fld) == 7 and realm == nai.split("@")[1], f"suci {prof}: NAI form {form}"):
            continue
        eph = bytes.fromhex(fld[4][len("ecckey"):])
        ct = bytes.fromhex(fld[5][len("cip"):])
        tag = bytes.fromhex(fld[6][len("mac"):])
        check(fld[:4] == ["type1", "rid7", f"schid{1 if prof == 'A' else 2}", f"hnkey{kid}"] and
              fld[4].startswith("ecckey") and fld[5].startswith("cip") and fld[6].startswith("mac"),
              f"suci {prof}: NAI form fields")
        check(ecies_open(hn, eph, ct, tag) == user.encode(),
              f"suci {prof}: the NAI username decrypts with Python cryptography")
        got = twag("suci", "decrypt", "--hn-private", hn_priv.hex(), "--suci", form)
        check(got.get("supi") == "nai-" + nai, f"suci {prof}: NAI round trip")
    got = twag("suci", "encrypt", "--profile", "null", "--key-id", "0", "--supi", "imsi-001010123456789")
    check(got.get("suci") == "suci-0-001-01-0-0-0-0123456789", "null scheme SUCI (TS 23.003 2.2B form)")
    got = twag("suci", "decrypt", "--suci", "suci-0-001-01-0-0-0-0123456789")
    check(got.get("supi") == "imsi-001010123456789", "null scheme deconceal")
    priv = "00" * 31 + "01"
    bad(["suci", "encrypt", "--hn-public", "00" * 32, "--profile", "C", "--key-id", "1",
         "--supi", "imsi-001010000000001"], "profile", "unknown profile")
    u9 = "09" + "00" * 31  # the X25519 base point: a valid key
    bad(["suci", "encrypt", "--hn-public", u9, "--profile", "A", "--key-id", "256",
         "--supi", "imsi-001010000000001"], "key-id", "key id 256")
    bad(["suci", "encrypt", "--hn-public", u9, "--profile", "A", "--key-id", "1",
         "--supi", "001010000000001"], "supi", "SUPI without imsi-")
    bad(["suci", "encrypt", "--hn-public", u9, "--profile", "A", "--key-id", "1",
         "--supi", "nai-joe@com"], "supi", "NAI realm without a dot")
    bad(["suci", "encrypt", "--hn-public", u9, "--profile", "A", "--key-id", "1",
         "--supi", "nai-joe@x.org", "--form", "json"], "form", "unknown form")
    # received keys that must be refused, each with its reason
    for key, prof, why in (("00" * 32, "A", "small order"), ("01" + "00" * 31, "A", "small order"),
                           ("ed" + "ff" * 30 + "7f", "A", "not canonical"),
                           ("09" + "00" * 30 + "80", "A", "bit 255"),
                           ("02" + "ff" * 32, "B", "not below the field prime"),
                           ("04" + "00" * 64, "B", "not a point on P-256"),
                           ("06" + "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
                            "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5", "B", "hybrid"),
                           ("05" + "00" * 32, "B", "02 or 03")):
        rc, out, err = run("suci", "encrypt", "--hn-public", key, "--profile", prof, "--key-id", "1",
                           "--supi", "imsi-001010000000001")
        check(rc == 2 and "suci=" not in out and why in err, f"suci encrypt: {why} key refused ({err.strip()})")
    bad(["suci", "encrypt", "--hn-public", "02" * 34, "--profile", "B", "--key-id", "1",
         "--supi", "imsi-001010000000001"], "hn-public", "34-octet P-256 key")
    bad(["suci", "decrypt", "--hn-private", priv, "--suci", "suci-0-001-01-0-1-1-zz"], "suci", "non-hex output")
    bad(["suci", "decrypt", "--hn-private", priv, "--suci", "suci-0-01-01-0-1-1-00"], "suci", "2-digit MCC")
    bad(["suci", "decrypt", "--hn-private", priv[:-2], "--suci", "suci-0-001-01-0-1-1-00"],
        "hn-private", "short private key")


def test_dataplane():
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    # 802.11 PTK: IEEE 802.11 Annex J.7 vectors through `twag wlan ptk`.
    ciphers = {4: "ccmp-128", 8: "gcmp-128", 9: "gcmp-256", 10: "ccmp-256"}
    for c in cases("wlan_keys.vec"):
        if c.get("type") != "ptk" or int(c["cipher"]) not in ciphers:
            continue
        got = twag("wlan", "ptk", "--pmk", c["pmk"], "--aa", c["aa"], "--spa", c["spa"],
                   "--anonce", c["anonce"], "--snonce", c["snonce"], "--akm", c["akm"],
                   "--cipher", ciphers[int(c["cipher"])])
        expect(c, got, ["kck", "kek", "tk"])
    # CCMP: the published test MPDUs, both directions.
    for c in cases("ccmp.vec"):
        if "encrypted_mpdu" not in c or len(c["header"]) != 48:
            continue
        pn = str(int(c["pn"], 16))
        got = twag("ccmp", "encrypt", "--tk", c["tk"], "--pn", pn, "--key-id", str(int(c["key_id"], 16)),
                   "--frame", c["header"] + c["plaintext"])
        check(got.get("frame") == c["encrypted_mpdu"], f"{where(c)}: ccmp encrypt = encrypted_mpdu")
        got = twag("ccmp", "decrypt", "--tk", c["tk"], "--key-id", str(int(c["key_id"], 16)),
                   "--frame", c["encrypted_mpdu"])
        check(got.get("frame", "")[48:] == c["plaintext"] and got.get("pn") == pn,
              f"{where(c)}: ccmp decrypt recovers the body and PN")
        bad_frame = c["encrypted_mpdu"][:-2] + ("00" if c["encrypted_mpdu"][-2:] != "00" else "01")
        rc, out, err = run("ccmp", "decrypt", "--tk", c["tk"], "--key-id", str(int(c["key_id"], 16)),
                           "--frame", bad_frame)
        check(rc == 1 and "frame=" not in out, f"{where(c)}: ccmp decrypt with a bad MIC fails")
    # ESP AES-GCM (RFC 4106): what twag sends opens with Python cryptography.
    for _ in range(6):
        key, salt = bytes.fromhex(rhex(rng.choice((16, 32)))), bytes.fromhex(rhex(4))
        spi, seq = rng.randrange(256, 1 << 32), rng.randrange(1, 1 << 31)
        payload = bytes.fromhex(rhex(rng.randrange(1, 200)))
        name = f"aes-gcm-{len(key) * 8}"
        got = twag("esp", "encrypt", "--sa", f"{name}:{(key + salt).hex()}:{spi}", "--seq", str(seq),
                   "--packet", payload.hex())
        pkt = bytes.fromhex(got.get("packet", ""))
        if not check(len(pkt) >= 8 + 8 + 16, f"esp {name}: packet produced"):
            continue
        hdr, iv, body = pkt[:8], pkt[8:16], pkt[16:]
        check(int.from_bytes(hdr[:4], "big") == spi and int.from_bytes(hdr[4:8], "big") == seq,
              f"esp {name}: SPI and sequence number in the header")
        try:
            plain = AESGCM(key).decrypt(salt + iv, body, hdr)
        except Exception:  # noqa: BLE001 - any failure is a test failure
            plain = b""
        padlen = plain[-2] if len(plain) >= 2 else -1
        ok = (len(plain) >= 2 and plain[:len(payload)] == payload and
              plain[len(payload):-2] == bytes(range(1, padlen + 1)) and plain[-1] == 17)
        check(ok, f"esp {name}: decrypts with Python AESGCM; payload, RFC 4303 padding, next header 17 (transport default)")
        got = twag("esp", "decrypt", "--sa", f"{name}:{(key + salt).hex()}:{spi}", "--seq", str(seq),
                   "--packet", pkt.hex())
        check(got.get("payload") == payload.hex(), f"esp {name}: twag decrypts its own packet")
        tampered = bytearray(pkt)
        tampered[-1] ^= 1
        rc, out, err = run("esp", "decrypt", "--sa", f"{name}:{(key + salt).hex()}:{spi}", "--seq", str(seq),
                           "--packet", tampered.hex())
        check(rc == 1 and "payload=" not in out, f"esp {name}: a bad ICV fails and releases nothing")
    bad(["esp", "encrypt", "--sa", "aes-gcm-128:00:1", "--seq", "1", "--packet", "00"], "sa", "short ESP key")
    bad(["ccmp", "encrypt", "--tk", "00" * 15, "--pn", "1", "--frame", "00" * 30], "tk", "short TK")


TESTS = [test_milenage, test_comp128, test_keywrap, test_kdf, test_suci, test_dataplane, test_bad_input, test_help]
for t in TESTS:
    t()
S.finish()
