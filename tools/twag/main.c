/*
 * twag — command-line front end to libtwag: every algorithm, scriptable.
 * Output: "name=value" lines, lowercase hex; bad input: one line on stderr
 * naming the option, exit status 2.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "twag/version.h"

static const char usage[] =
	"usage: twag <command> [options]\n"
	"\n"
	"Algorithms (hex in/out, lowercase, no separators; output name=value lines):\n"
	"  milenage --k HEX32 (--op HEX32 | --opc HEX32) --rand HEX32 --sqn HEX12 --amf HEX4\n"
	"           [--c1 HEX32 ... --c5 HEX32] [--r1 N ... --r5 N]\n"
	"      -> opc mac_a mac_s res ck ik ak ak_star autn          (TS 35.206)\n"
	"  tuak --k HEX32|HEX64 (--top HEX64 | --topc HEX64) --rand HEX32 --sqn HEX12 --amf HEX4\n"
	"       [--mac-bits 64|128|256] [--res-bits 32|64|128|256] [--ck-bits 128|256]\n"
	"       [--ik-bits 128|256] [--iterations N]\n"
	"      -> topc mac_a mac_s res ck ik ak ak_star              (TS 35.231)\n"
	"  comp128 --version 1|2|3 --ki HEX32 --rand HEX32      -> sres kc\n"
	"  gsm c2 --res HEX | gsm c3 --ck HEX32 --ik HEX32       -> sres | kc (TS 33.102 6.8.1.2)\n"
	"  kdf ck-ik-prime --ck HEX32 --ik HEX32 --network-name TEXT --sqn-xor-ak HEX12\n"
	"      -> ck_prime ik_prime                                (TS 33.402 A.2)\n"
	"  kdf aka-prime --ck-prime HEX32 --ik-prime HEX32 --identity TEXT\n"
	"      -> k_encr k_aut k_re msk emsk                       (RFC 9048)\n"
	"  kdf aka --ck HEX32 --ik HEX32 --identity TEXT          -> mk k_encr k_aut msk emsk (RFC 4187)\n"
	"  kdf sim --identity TEXT --kc HEX(16 per triplet, 2 or 3) --nonce-mt HEX32\n"
	"          --version-list HEX --selected-version HEX4  -> mk k_encr k_aut msk emsk (RFC 4186)\n"
	"  kdf 5g --ck HEX32 --ik HEX32 --serving-network-name TEXT --sqn-xor-ak HEX12\n"
	"         --rand HEX32 --res HEX --supi TEXT --abba HEX\n"
	"         (--supi imsi-DIGITS gives P0 = the IMSI digits, TS 33.501 A.7.1; other text is used as is)\n"
	"      -> kausf kseaf res_star hres_star kamf              (TS 33.501 Annex A)\n"
	"  suci decrypt --hn-private HEX64 --suci SUCI [--mnc-digits 2|3]   -> supi\n"
	"      SUCI: suci-0-MCC-MNC-..., suci-1-REALM-... (TS 29.571) or the NAI form\n"
	"      type<T>.rid<R>.schid<S>...@REALM (TS 23.003 28.7.3; --mnc-digits: the MNC\n"
	"      length of an IMSI there, else a leading 0 in mnc0NN means 2 digits)\n"
	"  suci encrypt --hn-public HEX --profile A|B|null --key-id N\n"
	"               --supi imsi-DIGITS|nai-USER@REALM [--form text|nai]\n"
	"               [--mnc-digits 2|3] [--routing DIGITS] [--ephemeral-private HEX64]\n"
	"      -> suci                                             (TS 33.501 Annex C)\n"
	"      --hn-public: A: 32 octets (canonical X25519, no small-order point);\n"
	"      B: 33 (compressed, 02/03) or 65 (uncompressed, 04) octets, a P-256 point\n"
	"  suci public-key --hn-private HEX64 --profile A|B        -> hn_public\n"
	"  keywrap wrap|unwrap --kek HEX32|HEX48|HEX64 (--key HEX | --wrapped HEX) [--pad]\n"
	"      -> wrapped | key                                    (RFC 3394, RFC 5649)\n"
	"  wlan ptk (--msk HEX128 | --pmk HEX64) --aa MAC --spa MAC --anonce HEX64 --snonce HEX64\n"
	"           --akm 1|2|5|6|8 [--cipher ccmp-128|ccmp-256|gcmp-128|gcmp-256]\n"
	"      -> pmk kck kek tk                                   (IEEE 802.11 12.7.1.3)\n"
	"  wlan mic --kck HEX32 --akm 1|2|5|6|8 --frame HEX [--verify]\n"
	"      -> mic frame | mic (exit 1 if --verify fails)        (IEEE 802.11 12.7.2)\n"
	"  ccmp encrypt|decrypt --tk HEX --pn N --frame HEX [--cipher ccmp-128|ccmp-256|gcmp-128|gcmp-256]\n"
	"       [--key-id N]   (decrypt: --pn optional, the last PN accepted)\n"
	"      -> frame pn                                         (IEEE 802.11 12.5.3, 12.5.5)\n"
	"  esp encrypt|decrypt --sa TRANSFORM:KEYHEX:SPI --seq N --packet HEX [--mode transport|tunnel]\n"
	"      [--esn] [--nh N] [--iv HEX]\n"
	"      -> packet | payload next_header seq                 (RFC 4303 ESP, RFC 4302 AH)\n"
	"      TRANSFORM: aes-gcm-128|aes-gcm-256 (KEYHEX = key|4-byte salt), aes-cbc-{128,256}-hmac-{sha1,sha256},\n"
	"      aes-cbc-128-hmac-md5, 3des-cbc-hmac-sha1, null-hmac-sha1, null-hmac-md5 (KEYHEX = enc|auth key),\n"
	"      null (baseline), ah-hmac-sha1|ah-hmac-md5|ah-hmac-sha256 (--packet = whole IPv4 packet)\n"
	"  cpu                                                     -> level features\n"
	"\n"
	"Subscriber store (SQLite; keys wrapped under the KEK; --kek-file F, else TWAG_KEK,\n"
	"else PATH.kek created 0600 beside the database):\n"
	"  subscriber add --db PATH --imsi DIGITS --algo milenage --ki HEX32 (--opc HEX32 | --op HEX32)\n"
	"                 --amf HEX4 --sqn HEX12 [--kek-file F] [--replace]\n"
	"  subscriber add --db PATH --imsi DIGITS --algo tuak --ki HEX32|HEX64 (--topc HEX64 | --top HEX64)\n"
	"                 --amf HEX4 --sqn HEX12 [--mac-bits 64] [--res-bits 32|64|128] [--iterations N]\n"
	"  subscriber add --db PATH --imsi DIGITS --algo comp128v1|comp128v2|comp128v3 --ki HEX32\n"
	"      --sqn: the SQN last used (SEQ || 5-bit IND); the next vector uses SEQ + 1\n"
	"  subscriber del --db PATH --imsi DIGITS [--control PATH]\n"
	"  subscriber disable|enable --db PATH --imsi DIGITS [--control PATH]\n"
	"      disabled: refused at authentication; del and disable tell a running twagd\n"
	"      (its control socket, default /run/twagd/control) to disconnect its sessions\n"
	"  subscriber show --db PATH --imsi DIGITS [--keys]\n"
	"      -> imsi algo amf sqn seq_he sqn_reserved ind_bits [ki opc|topc ...] (keys only with --keys)\n"
	"  subscriber list --db PATH                   -> one line each: imsi algo amf sqn\n"
	"  subscriber import --db PATH --csv FILE [--replace]   -> imported\n"
	"      CSV header: imsi,algo,ki,opc,op,amf,sqn (tuak: opc/op hold TOPc/TOP); all or nothing\n"
	"  store check --db PATH [--kek-file F]   -> problem=... lines, subscribers identity_rows problems\n"
	"      SQLite's integrity check, every row decoded and its keys unwrapped; exit 1 on a problem\n"
	"\n"
	"RADIUS accounting of a running twagd (its --metrics listener, default 127.0.0.1:9812):\n"
	"  session list [--metrics HOST:PORT] [--json]   -> one row per live session\n"
	"  session show ID [--metrics HOST:PORT] [--json] -> every field (name=value)\n"
	"      no such session, no server or accounting off: exit 2\n"
	"\n"
	"Dynamic authorization (RFC 5176) through a running twagd's control socket\n"
	"(--control PATH, default /run/twagd/control):\n"
	"  session disconnect ID|--imsi IMSI [--control PATH] [--json]\n"
	"      Disconnect-Request to the NAS of the session (or of every session of IMSI)\n"
	"  session coa ID|--imsi IMSI ATTR=VALUE... [--control PATH] [--json]\n"
	"      CoA-Request; ATTR: Session-Timeout=S Idle-Timeout=S Acct-Interim-Interval=S\n"
	"      Filter-Id=TEXT or TYPE=HEX; -> one line per request: outcome=ack|nak|timeout\n"
	"      exit 0 all acknowledged, 1 a NAK or timeout, 2 usage, no session, no twagd\n"
	"\n"
	"Per-request debug of a running twagd (every attribute of the chosen\n"
	"conversations in its log, secrets elided; through its control socket):\n"
	"  debug [show] [--control PATH] [--json]   -> client=NET/P, imsi=MASKED lines\n"
	"  debug client add|del IP[/PREFIX] | debug imsi add|del IMSI | debug clear\n"
	"\n"
	"Input limits (longer input is refused with exit status 2, never cut):\n"
	"  keywrap --key/--wrapped 4096 octets; ccmp --frame 11454 octets (+ header and\n"
	"  MIC to decrypt); wlan mic --frame 2048 octets; esp --packet 65535 octets;\n"
	"  kdf TEXT options 65535 octets. Every output octet is printed.\n"
	"\n"
	"Exit status: 0 success, 1 the operation failed (e.g. an integrity check),\n"
	"2 bad input (the message names the option).\n"
	"Environment: TWAG_CPU=portable|aesni|avx2|vaes|avx512 caps the CPU paths.\n"
	"twag --version prints the version.\n";

static const struct {
	const char *name;
	int (*fn)(int, char **);
} commands[] = {
	{ "milenage", cmd_milenage }, { "tuak", cmd_tuak },
	{ "comp128", cmd_comp128 },   { "gsm", cmd_gsm },
	{ "kdf", cmd_kdf },           { "suci", cmd_suci },
	{ "keywrap", cmd_keywrap },   { "cpu", cmd_cpu },
	{ "wlan", cmd_wlan },         { "ccmp", cmd_ccmp },
	{ "esp", cmd_esp },           { "subscriber", cmd_subscriber },
	{ "store", cmd_store },
	{ "session", cmd_session },
	{ "debug", cmd_debug },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage, stdout);
		return cli_finish(0);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("twag %s\n", tw_version());
		return cli_finish(0);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return cli_finish(commands[i].fn(argc - 2, argv + 2));
	fprintf(stderr, "twag: unknown command '%s' (try twag --help)\n", argv[1]);
	return CLI_EXIT_USAGE;
}
