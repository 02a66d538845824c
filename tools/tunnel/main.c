/*
 * twag-tunnel — command line, set-up and shutdown (see tunnel.h for what it
 * is, dp.c for the data path).
 *
 * Needs CAP_NET_ADMIN (the TUN device) and, for --encap ip, CAP_NET_RAW.
 * Keys given on the command line are visible to other users in
 * /proc/PID/cmdline: give them in a --config file (mode 0600) instead.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/filter.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tunnel.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/hex.h"
#include "twag/udp_gso.h"
#include "twag/version.h"

static const char usage[] =
	"usage: twag-tunnel --tun NAME [--addr A.B.C.D/N] [--mtu N] [--path-mtu N]\n"
	"                   --local IP[:PORT] --remote IP[:PORT] [--encap udp|ip]\n"
	"                   (--sa-out SPEC --sa-in SPEC | --msk HEX --xform NAME --spi-out HEX\n"
	"                    --spi-in HEX --initiator|--responder [--esn])\n"
	"                   [--allow-null] [--threads N] [--metrics HOST:PORT] [--config FILE]\n"
	"  A userspace IPsec tunnel (RFC 4303 ESP / RFC 4302 AH, tunnel mode) between\n"
	"  the TUN device NAME and the peer, in UDP (RFC 3948, port 4500) or in IP.\n"
	"  --tun NAME        TUN device to create (removed at exit)\n"
	"  --addr A.B.C.D/N  IPv4 address of the device (it is brought up)\n"
	"  --mtu N           the device's MTU (default: the largest inner packet that\n"
	"                    fits --path-mtu once encapsulated)\n"
	"  --path-mtu N      the path's MTU (default 1500)\n"
	"  --local, --remote this end's and the peer's address (port 4500 by default)\n"
	"  --encap udp|ip    ESP in UDP (default), or ESP/AH directly in IP (50/51)\n"
	"  --sa-out, --sa-in spi=HEX,xform=NAME,key=HEX[,esn][,window=N]; key is the\n"
	"                    encryption key then the integrity key, in hex. xform:\n"
	"                    aes-gcm-128 aes-gcm-256 aes-cbc-128-hmac-sha1\n"
	"                    aes-cbc-256-hmac-sha1 aes-cbc-128-hmac-sha256\n"
	"                    aes-cbc-256-hmac-sha256 aes-cbc-128-hmac-md5\n"
	"                    3des-cbc-hmac-sha1 null-hmac-sha1 null-hmac-md5 null\n"
	"                    ah-hmac-sha1 ah-hmac-sha256 ah-hmac-md5 (AH: --encap ip)\n"
	"  --msk HEX         derive both SAs from an EAP MSK (prf+ of RFC 7296 §2.13\n"
	"                    with HMAC-SHA-256); --initiator on one end, --responder\n"
	"                    on the other; the ends' --spi-out/--spi-in swapped\n"
	"  --allow-null      permit xform null (no confidentiality, no integrity)\n"
	"  --threads N       workers, one TUN queue each (default 1)\n"
	"  --metrics H:P     Prometheus text on GET /metrics\n"
	"  --no-gso, --no-gro  turn the TUN/UDP segmentation offloads off\n"
	"  --config FILE     options from FILE, one per line: NAME VALUE (no --)\n"
	"  --version, --help\n";

enum {
	O_TUN = 256, O_ADDR, O_MTU, O_PATH_MTU, O_LOCAL, O_REMOTE, O_ENCAP, O_SA_OUT,
	O_SA_IN, O_MSK, O_XFORM, O_SPI_OUT, O_SPI_IN, O_INIT, O_RESP, O_ESN,
	O_ALLOW_NULL, O_THREADS, O_METRICS, O_CONFIG, O_NO_GSO, O_NO_GRO, O_VERSION, O_HELP,
};

static const struct option opts[] = {
	{ "tun", required_argument, NULL, O_TUN },
	{ "addr", required_argument, NULL, O_ADDR },
	{ "mtu", required_argument, NULL, O_MTU },
	{ "path-mtu", required_argument, NULL, O_PATH_MTU },
	{ "local", required_argument, NULL, O_LOCAL },
	{ "remote", required_argument, NULL, O_REMOTE },
	{ "encap", required_argument, NULL, O_ENCAP },
	{ "sa-out", required_argument, NULL, O_SA_OUT },
	{ "sa-in", required_argument, NULL, O_SA_IN },
	{ "msk", required_argument, NULL, O_MSK },
	{ "xform", required_argument, NULL, O_XFORM },
	{ "spi-out", required_argument, NULL, O_SPI_OUT },
	{ "spi-in", required_argument, NULL, O_SPI_IN },
	{ "initiator", no_argument, NULL, O_INIT },
	{ "responder", no_argument, NULL, O_RESP },
	{ "esn", no_argument, NULL, O_ESN },
	{ "allow-null", no_argument, NULL, O_ALLOW_NULL },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "metrics", required_argument, NULL, O_METRICS },
	{ "config", required_argument, NULL, O_CONFIG },
	{ "no-gso", no_argument, NULL, O_NO_GSO },
	{ "no-gro", no_argument, NULL, O_NO_GRO },
	{ "version", no_argument, NULL, O_VERSION },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

struct args {
	char *sa_out, *sa_in, *msk, *xform;
	uint32_t spi_out, spi_in;
	int role; /* 1 initiator, 2 responder */
	bool esn, have_local, have_remote;
	unsigned path_mtu;
};

static struct tun_ctx ctx;

static int die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "twag-tunnel: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return 2;
}

static int parse_num(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* IP, IP:PORT, [IPv6] or [IPv6]:PORT. */
static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *port = NULL;
	unsigned p = TUN_ESP_PORT;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (e == NULL || (size_t)(e - s - 1) >= sizeof(host))
			return -1;
		memcpy(host, s + 1, (size_t)(e - s - 1));
		host[e - s - 1] = '\0';
		if (e[1] == ':')
			port = e + 2;
		else if (e[1] != '\0')
			return -1;
	} else {
		const char *c = strchr(s, ':');

		if (c != NULL && strchr(c + 1, ':') != NULL)
			c = NULL; /* a bare IPv6 address */
		if (strlen(s) >= sizeof(host))
			return -1;
		snprintf(host, sizeof(host), "%.*s", c != NULL ? (int)(c - s) : (int)strlen(s), s);
		if (c != NULL)
			port = c + 1;
	}
	if (port != NULL && parse_num(port, 1, 65535, &p) != 0)
		return -1;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		*len = sizeof(*a);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		*len = sizeof(*a);
		return 0;
	}
	return -1;
}

static int parse_hex32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (strncmp(s, "0x", 2) == 0)
		s += 2;
	v = strtoul(s, &end, 16);
	if (*s == '\0' || *end != '\0' || v == 0 || v > 0xffffffffUL)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* --config FILE: "name value" lines become "--name value" in front of the
 * command line's own options (which therefore win). */
static int read_config(const char *path, int *argc, char ***argv)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	char **nv;
	int n = 1, cap = 64;
	struct stat st;

	if (f == NULL)
		return die("--config %s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077) != 0)
		fprintf(stderr, "twag-tunnel: warning: %s is readable by others and may hold keys\n", path);
	nv = calloc((size_t)cap + (size_t)*argc, sizeof(*nv));
	if (nv == NULL) {
		fclose(f);
		return die("%s%s", "out of memory", "");
	}
	nv[0] = (*argv)[0];
	for (unsigned ln = 1; fgets(line, sizeof(line), f) != NULL; ln++) {
		char *p = line, *name, *val;
		size_t l;

		while (*p == ' ' || *p == '\t')
			p++;
		l = strlen(p);
		while (l > 0 && (p[l - 1] == '\n' || p[l - 1] == '\r' || p[l - 1] == ' '))
			p[--l] = '\0';
		if (*p == '\0' || *p == '#')
			continue;
		name = p;
		val = strpbrk(p, " \t");
		if (val != NULL) {
			*val++ = '\0';
			while (*val == ' ' || *val == '\t')
				val++;
		}
		if (n + 2 >= cap) {
			fclose(f);
			return die("--config %s: too many lines", path, "");
		}
		nv[n] = malloc(strlen(name) + 3);
		if (nv[n] == NULL) {
			fclose(f);
			return die("%s%s", "out of memory", "");
		}
		sprintf(nv[n++], "--%s", name);
		if (val != NULL && *val != '\0')
			nv[n++] = strdup(val);
	}
	fclose(f);
	tw_wipe(line, sizeof(line));
	for (int i = 1; i < *argc; i++)
		nv[n++] = (*argv)[i];
	*argc = n;
	*argv = nv;
	return 0;
}

static int parse(int argc, char **argv, struct args *a)
{
	struct tun_cfg *c = &ctx.cfg;
	int o;

	c->threads = 1;
	a->path_mtu = 1500;
	for (int i = 1; i < argc; i++) { /* --config first, wherever it is */
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
			int rc = read_config(argv[i + 1], &argc, &argv);

			if (rc != 0)
				return rc;
			break;
		}
	}
	optind = 1;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case O_TUN:
			if (strlen(optarg) == 0 || strlen(optarg) >= IFNAMSIZ)
				return die("--tun: a name of 1 to %s characters%s", "15", "");
			snprintf(c->tun_name, sizeof(c->tun_name), "%s", optarg);
			break;
		case O_ADDR: {
			char ip[32];
			const char *sl = strchr(optarg, '/');
			struct in_addr in;

			if (sl == NULL || (size_t)(sl - optarg) >= sizeof(ip) ||
			    parse_num(sl + 1, 1, 32, &c->prefix) != 0)
				return die("--addr %s: A.B.C.D/PREFIX%s", optarg, "");
			snprintf(ip, sizeof(ip), "%.*s", (int)(sl - optarg), optarg);
			if (inet_pton(AF_INET, ip, &in) != 1)
				return die("--addr %s: not an IPv4 address%s", optarg, "");
			c->addr4 = ntohl(in.s_addr);
			break;
		}
		case O_MTU:
			if (parse_num(optarg, 576, 65000, &c->mtu) != 0)
				return die("--mtu %s: 576..65000%s", optarg, "");
			break;
		case O_PATH_MTU:
			if (parse_num(optarg, 576, 65535, &a->path_mtu) != 0)
				return die("--path-mtu %s: 576..65535%s", optarg, "");
			break;
		case O_LOCAL:
		case O_REMOTE: {
			struct sockaddr_storage *ss = o == O_LOCAL ? &c->local : &c->remote;
			socklen_t len;

			if (parse_addr(optarg, ss, &len) != 0)
				return die("%s %s: IP, IP:PORT or [IPv6]:PORT", o == O_LOCAL ? "--local" : "--remote", optarg);
			c->addr_len = len;
			if (o == O_LOCAL)
				a->have_local = true;
			else
				a->have_remote = true;
			break;
		}
		case O_ENCAP:
			if (strcmp(optarg, "udp") == 0)
				c->encap = TUN_ENCAP_UDP;
			else if (strcmp(optarg, "ip") == 0)
				c->encap = TUN_ENCAP_IP;
			else
				return die("--encap %s: udp or ip%s", optarg, "");
			break;
		case O_SA_OUT:
			a->sa_out = optarg;
			break;
		case O_SA_IN:
			a->sa_in = optarg;
			break;
		case O_MSK:
			a->msk = optarg;
			break;
		case O_XFORM:
			a->xform = optarg;
			break;
		case O_SPI_OUT:
		case O_SPI_IN:
			if (parse_hex32(optarg, o == O_SPI_OUT ? &a->spi_out : &a->spi_in) != 0)
				return die("%s %s: 1 to 8 hex digits, not 0", o == O_SPI_OUT ? "--spi-out" : "--spi-in", optarg);
			break;
		case O_INIT:
			a->role = 1;
			break;
		case O_RESP:
			a->role = 2;
			break;
		case O_ESN:
			a->esn = true;
			break;
		case O_ALLOW_NULL:
			c->allow_null = true;
			break;
		case O_THREADS:
			if (parse_num(optarg, 1, TUN_MAX_THREADS, &c->threads) != 0)
				return die("--threads %s: 1..%s", optarg, "16");
			break;
		case O_METRICS:
			snprintf(c->metrics, sizeof(c->metrics), "%s", optarg);
			break;
		case O_CONFIG:
			break; /* read above */
		case O_NO_GSO:
			c->no_gso = true;
			break;
		case O_NO_GRO:
			c->no_gro = true;
			break;
		case O_VERSION:
			printf("twag-tunnel %s\n", tw_version());
			exit(0);
		case O_HELP:
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc)
		return die("unexpected argument '%s'%s", argv[optind], "");
	if (c->tun_name[0] == '\0' || !a->have_local || !a->have_remote)
		return die("--tun, --local and --remote are needed (--help)%s%s", "", "");
	if (c->local.ss_family != c->remote.ss_family)
		return die("--local and --remote: one address family%s%s", "", "");
	c->family = c->local.ss_family;
	return 0;
}

static int make_sas(struct args *a)
{
	struct tun_cfg *c = &ctx.cfg;
	char err[256];

	if (a->msk != NULL) {
		uint8_t msk[128];
		size_t msk_len = 0;
		int rc;

		if (a->sa_out != NULL || a->sa_in != NULL)
			return die("--msk or --sa-out/--sa-in, not both%s%s", "", "");
		if (a->xform == NULL || a->role == 0)
			return die("--msk needs --xform and --initiator or --responder%s%s", "", "");
		if (tw_hex_decode(msk, sizeof(msk), &msk_len, a->msk, strlen(a->msk)) != TW_OK ||
		    msk_len < 32)
			return die("--msk: hex, at least 32 octets (an EAP MSK is 64)%s%s", "", "");
		rc = tun_sa_from_msk(&ctx.out, &ctx.in, msk, msk_len, a->xform, a->spi_out,
				     a->spi_in, a->role == 1, a->esn, c->allow_null, err, sizeof(err));
		tw_wipe(msk, sizeof(msk));
		tw_wipe(a->msk, strlen(a->msk));
		if (rc != 0)
			return die("--msk: %s%s", err, "");
	} else {
		if (a->sa_out == NULL || a->sa_in == NULL)
			return die("--sa-out and --sa-in are needed (or --msk)%s%s", "", "");
		if (tun_sa_parse(&ctx.out, a->sa_out, c->allow_null, err, sizeof(err)) != 0)
			return die("--sa-out: %s%s", err, "");
		tw_wipe(a->sa_out, strlen(a->sa_out));
		if (tun_sa_parse(&ctx.in, a->sa_in, c->allow_null, err, sizeof(err)) != 0)
			return die("--sa-in: %s%s", err, "");
		tw_wipe(a->sa_in, strlen(a->sa_in));
	}
	if (ctx.out.ah != ctx.in.ah)
		return die("--sa-out and --sa-in: both ESP or both AH%s%s", "", "");
	if (ctx.out.ah && (c->encap != TUN_ENCAP_IP || c->family != AF_INET))
		return die("AH needs --encap ip over IPv4 (RFC 3948 carries ESP only)%s%s", "", "");
	ctx.raw_proto = ctx.out.ah ? TW_IPPROTO_AH : TW_IPPROTO_ESP;
	return 0;
}

static void sizes(struct args *a)
{
	struct tun_cfg *c = &ctx.cfg;
	size_t outer = c->family == AF_INET6 ? 40 : 20;

	if (c->encap == TUN_ENCAP_UDP)
		outer += 8;
	if (c->mtu == 0) {
		unsigned m = a->path_mtu;

		while (m > 576 && tun_sa_wire_len(&ctx.out, m, c->family, c->encap) > a->path_mtu)
			m--;
		ctx.mtu = m;
	} else {
		ctx.mtu = c->mtu;
	}
	/* what the peer's SA (our in SA) makes of a packet of the larger of
	 * our MTU and the path's: anything longer is oversized */
	ctx.wire_max = tun_sa_wire_len(&ctx.in, ctx.mtu > a->path_mtu ? ctx.mtu : a->path_mtu,
				       c->family, c->encap);
	if (!ctx.in.ah)
		ctx.wire_max -= outer;
}

static int open_tun(struct tun_worker *w)
{
	struct tun_cfg *c = &ctx.cfg;
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return die("/dev/net/tun: %s%s", strerror(errno), "");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", c->tun_name);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE;
	if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
		int e = errno;

		close(fd);
		return die("TUN %s: %s (CAP_NET_ADMIN is needed)", c->tun_name, strerror(e));
	}
	if (!c->no_gso && ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) != 0) {
		fprintf(stderr, "twag-tunnel: TUN offloads refused (%s): packets one by one\n",
			strerror(errno));
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
		close(fd);
		return die("TUN: %s%s", strerror(errno), "");
	}
	w->tun_fd = fd;
	return 0;
}

static int config_dev(void)
{
	struct tun_cfg *c = &ctx.cfg;
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = 0;

	if (s < 0)
		return die("socket: %s%s", strerror(errno), "");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", c->tun_name);
	ifr.ifr_mtu = (int)ctx.mtu;
	if (ioctl(s, SIOCSIFMTU, &ifr) != 0)
		rc = die("%s: MTU: %s", c->tun_name, strerror(errno));
	if (rc == 0 && c->addr4 != 0) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

		memset(&ifr.ifr_addr, 0, sizeof(ifr.ifr_addr));
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(c->addr4);
		if (ioctl(s, SIOCSIFADDR, &ifr) != 0)
			rc = die("%s: address: %s", c->tun_name, strerror(errno));
		sin->sin_addr.s_addr = htonl(c->prefix == 32 ? 0xffffffffu : ~(0xffffffffu >> c->prefix));
		if (rc == 0 && ioctl(s, SIOCSIFNETMASK, &ifr) != 0)
			rc = die("%s: netmask: %s", c->tun_name, strerror(errno));
	}
	if (rc == 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
			rc = die("%s: up: %s", c->tun_name, strerror(errno));
	}
	close(s);
	return rc;
}

static void sockbufs(int fd)
{
	int sz = 4 << 20;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

static void recv_fragsize(int fd)
{
	int one = 1;

	if (ctx.cfg.family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVFRAGSIZE, &one, sizeof(one));
	else
		(void)setsockopt(fd, IPPROTO_IP, IP_RECVFRAGSIZE, &one, sizeof(one));
}

/* A raw socket that only sends: every raw socket of a protocol gets a copy
 * of each packet, so the others drop theirs in a filter. */
static void drop_all(int fd)
{
	struct sock_filter f = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog p = { .len = 1, .filter = &f };

	(void)setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &p, sizeof(p));
}

static int open_net(struct tun_worker *w)
{
	struct tun_cfg *c = &ctx.cfg;
	int one = 1, fd;

	w->net_rx_fd = -1;
	if (c->encap == TUN_ENCAP_UDP) {
		fd = socket(c->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return die("UDP socket: %s%s", strerror(errno), "");
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&c->local, c->addr_len) != 0 ||
		    connect(fd, (struct sockaddr *)&c->remote, c->addr_len) != 0) {
			int e = errno;

			close(fd);
			return die("UDP: bind/connect: %s%s", strerror(e), "");
		}
		if (!c->no_gro)
			(void)setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one));
		recv_fragsize(fd);
		sockbufs(fd);
		w->net_fd = fd;
		w->net_rx_fd = fd;
		w->gso_on = !c->no_gso;
		return 0;
	}
	if (ctx.out.ah) {
		/* send: IPPROTO_RAW (IP_HDRINCL); receive: one AH socket */
		fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
		if (fd < 0 || connect(fd, (struct sockaddr *)&c->remote, c->addr_len) != 0)
			return die("raw socket: %s (CAP_NET_RAW is needed)%s", strerror(errno), "");
		sockbufs(fd);
		w->net_fd = fd;
		if (w->id == 0) {
			int r = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_AH);

			if (r < 0 || bind(r, (struct sockaddr *)&c->local, c->addr_len) != 0)
				return die("raw AH socket: %s%s", strerror(errno), "");
			recv_fragsize(r);
			sockbufs(r);
			w->net_rx_fd = r;
		}
		return 0;
	}
	fd = socket(c->family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ESP);
	if (fd < 0)
		return die("raw ESP socket: %s (CAP_NET_RAW is needed)%s", strerror(errno), "");
	{
		struct sockaddr_storage l = c->local, r = c->remote;

		((struct sockaddr_in *)&l)->sin_port = 0; /* raw: no ports */
		((struct sockaddr_in *)&r)->sin_port = 0;
		if (bind(fd, (struct sockaddr *)&l, c->addr_len) != 0 ||
		    connect(fd, (struct sockaddr *)&r, c->addr_len) != 0) {
			int e = errno;

			close(fd);
			return die("raw ESP socket: bind/connect: %s%s", strerror(e), "");
		}
	}
	sockbufs(fd);
	w->net_fd = fd;
	if (w->id == 0) {
		recv_fragsize(fd);
		w->net_rx_fd = fd;
	} else {
		drop_all(fd);
	}
	return 0;
}

static int alloc_worker(struct tun_worker *w)
{
	w->rbuf = malloc(TUN_READ_MAX);
	w->slots = aligned_alloc(64, (size_t)TUN_BATCH * TUN_SLOT);
	w->rxbufs = aligned_alloc(64, (size_t)TUN_RECV_MSGS * TUN_READ_MAX);
	if (w->rbuf == NULL || w->slots == NULL || w->rxbufs == NULL)
		return die("out of memory%s%s", "", "");
	memset(w->slots, 0, (size_t)TUN_BATCH * TUN_SLOT);
	return 0;
}

static void sa_stats(const char *dir, const struct tun_sa *sa)
{
	const struct tw_esp_stats *s = sa->ah ? &sa->ahsa.stats : &sa->esp.stats;

	fprintf(stderr, "twag-tunnel: %s SA %08x %s: ok %llu/%llu replayed %llu too-old %llu "
		"bad-icv %llu bad-length %llu bad-spi %llu\n", dir, sa->spi, sa->xform,
		(unsigned long long)s->out_ok, (unsigned long long)s->in_ok,
		(unsigned long long)s->replayed, (unsigned long long)s->too_old,
		(unsigned long long)s->bad_icv, (unsigned long long)s->bad_length,
		(unsigned long long)s->bad_spi);
}

int main(int argc, char **argv)
{
	struct tun_cfg *c = &ctx.cfg;
	struct args a;
	sigset_t set;
	int rc, sig;
	char ip[INET6_ADDRSTRLEN];

	memset(&a, 0, sizeof(a));
	if ((rc = parse(argc, argv, &a)) != 0 || (rc = make_sas(&a)) != 0)
		return rc;
	sizes(&a);
	for (unsigned i = 0; i < c->threads; i++) {
		struct tun_worker *w = &ctx.w[i];

		w->ctx = &ctx;
		w->id = i;
		w->tun_fd = w->net_fd = w->net_rx_fd = -1;
		if ((rc = alloc_worker(w)) != 0 || (rc = open_tun(w)) != 0 || (rc = open_net(w)) != 0)
			return rc;
	}
	if ((rc = config_dev()) != 0 || tun_metrics_start(&ctx) != 0)
		return rc != 0 ? rc : 2;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (unsigned i = 0; i < c->threads; i++) {
		if (pthread_create(&ctx.w[i].thr, NULL, tun_worker_main, &ctx.w[i]) != 0)
			return die("cannot start a worker thread%s%s", "", "");
	}
	if (c->family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&c->remote)->sin6_addr, ip, sizeof(ip));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&c->remote)->sin_addr, ip, sizeof(ip));
	fprintf(stderr, "twag-tunnel: ready tun=%s mtu=%u encap=%s peer=%s out=%08x/%s in=%08x/%s "
		"threads=%u offload=%s cpu=%s\n", c->tun_name, ctx.mtu,
		c->encap == TUN_ENCAP_UDP ? "udp" : ctx.out.ah ? "ip/ah" : "ip/esp", ip, ctx.out.spi,
		ctx.out.xform, ctx.in.spi, ctx.in.xform, c->threads, c->no_gso ? "off" : "on",
		tw_cpu_level_name());
	while (sigwait(&set, &sig) != 0)
		;
	__atomic_store_n(&ctx.stop, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < c->threads; i++)
		pthread_join(ctx.w[i].thr, NULL);
	tun_metrics_stop(&ctx);
	sa_stats("out", &ctx.out);
	sa_stats("in", &ctx.in);
	tun_sa_wipe(&ctx.out);
	tun_sa_wipe(&ctx.in);
	for (unsigned i = 0; i < c->threads; i++) {
		close(ctx.w[i].tun_fd);
		close(ctx.w[i].net_fd);
		if (ctx.w[i].net_rx_fd >= 0 && ctx.w[i].net_rx_fd != ctx.w[i].net_fd)
			close(ctx.w[i].net_rx_fd);
	}
	return 0;
}
