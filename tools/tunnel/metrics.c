/*
 * twag-tunnel — GET /metrics (Prometheus text format 0.0.4) on one
 * listening socket served by one thread: each worker's counters summed
 * (read relaxed; each has one writer) and both SAs' RFC 4303 §3.4 drop
 * counters (read under the SA's lock). Requests are bounded: 1 s to send
 * the request line, 4 KiB read, one response, close.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tunnel.h"

static size_t render(struct tun_ctx *x, char *out, size_t max)
{
	struct tun_counters s;
	struct tw_esp_stats so, si;
	size_t n = 0;

	memset(&s, 0, sizeof(s));
	for (unsigned i = 0; i < x->cfg.threads; i++) {
		const uint64_t *src = (const uint64_t *)&x->w[i].c;
		uint64_t *dst = (uint64_t *)&s;

		for (size_t k = 0; k < sizeof(s) / sizeof(uint64_t); k++)
			dst[k] += __atomic_load_n(&src[k], __ATOMIC_RELAXED);
	}
	pthread_mutex_lock(&x->out.lock);
	so = x->out.ah ? x->out.ahsa.stats : x->out.esp.stats;
	pthread_mutex_unlock(&x->out.lock);
	pthread_mutex_lock(&x->in.lock);
	si = x->in.ah ? x->in.ahsa.stats : x->in.esp.stats;
	pthread_mutex_unlock(&x->in.lock);

#define P(...) (n += (size_t)snprintf(out + n, n < max ? max - n : 0, __VA_ARGS__))
#define C(name, help, v)                                                       \
	P("# HELP twag_tunnel_" name " " help "\n# TYPE twag_tunnel_" name        \
	  " counter\ntwag_tunnel_" name " %llu\n", (unsigned long long)(v))
	C("tun_rx_packets_total", "Inner packets read from the TUN device (after segmentation).", s.tun_rx_pkts);
	C("tun_rx_bytes_total", "Octets of them.", s.tun_rx_bytes);
	C("tun_tx_packets_total", "Inner packets written to the TUN device.", s.tun_tx_pkts);
	C("tun_tx_bytes_total", "Octets of them.", s.tun_tx_bytes);
	C("tun_tx_writes_total", "Writes to the TUN device (a joined GSO packet counts once).", s.tun_tx_writes);
	C("net_tx_packets_total", "ESP/AH packets sent to the peer.", s.net_tx_pkts);
	C("net_tx_bytes_total", "Octets of them (ESP/AH, without outer IP/UDP headers).", s.net_tx_bytes);
	C("net_rx_packets_total", "Packets received from the peer's address.", s.net_rx_pkts);
	C("net_rx_bytes_total", "Octets of them.", s.net_rx_bytes);
	P("# HELP twag_tunnel_drops_total Packets dropped, by reason.\n"
	  "# TYPE twag_tunnel_drops_total counter\n");
#define D(reason, v) P("twag_tunnel_drops_total{reason=\"%s\"} %llu\n", reason, (unsigned long long)(v))
	D("replayed", si.replayed);
	D("too_old", si.too_old);
	D("bad_icv", si.bad_icv);
	D("bad_spi", si.bad_spi);
	D("bad_length", si.bad_length);
	D("bad_padding", si.bad_padding);
	D("bad_next_header", si.bad_next_header);
	D("bad_inner", s.drop_bad_inner);
	D("non_esp", s.drop_non_esp);
	D("bad_outer", s.drop_bad_outer);
	D("fragmented", s.drop_fragmented);
	D("oversized", s.drop_oversized);
	D("dummy", s.drop_dummy);
	D("too_big", s.drop_too_big);
	D("seq_exhausted", s.drop_seq_exhausted);
	D("send_error", s.send_errors);
	D("tun_write_error", s.tun_write_errors);
	C("sa_in_packets_total", "Packets the in SA verified and decrypted.", si.in_ok);
	C("sa_out_packets_total", "Packets the out SA protected.", so.out_ok);
	P("# HELP twag_tunnel_sa_info The SAs (SPI, transform).\n# TYPE twag_tunnel_sa_info gauge\n"
	  "twag_tunnel_sa_info{dir=\"out\",spi=\"%08x\",xform=\"%s\"} 1\n"
	  "twag_tunnel_sa_info{dir=\"in\",spi=\"%08x\",xform=\"%s\"} 1\n",
	  x->out.spi, x->out.xform, x->in.spi, x->in.xform);
#undef D
#undef C
#undef P
	return n < max ? n : max - 1;
}

static void serve(struct tun_ctx *x, int fd)
{
	static char body[16384];
	char req[4096], head[256];
	size_t got = 0, blen;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int hl;

	while (got < sizeof(req) - 1 && memchr(req, '\n', got) == NULL) {
		ssize_t r;

		if (poll(&p, 1, 1000) <= 0)
			return;
		r = read(fd, req + got, sizeof(req) - 1 - got);
		if (r <= 0)
			return;
		got += (size_t)r;
	}
	req[got] = '\0';
	if (strncmp(req, "GET /metrics", 12) != 0 || (req[12] != ' ' && req[12] != '?' && req[12] != '\r')) {
		static const char nf[] = "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

		(void)!write(fd, nf, sizeof(nf) - 1);
		return;
	}
	blen = render(x, body, sizeof(body));
	hl = snprintf(head, sizeof(head), "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
		      "Content-Length: %zu\r\nConnection: close\r\n\r\n", blen);
	if (write(fd, head, (size_t)hl) == hl)
		(void)!write(fd, body, blen);
}

static void *metrics_main(void *arg)
{
	struct tun_ctx *x = arg;
	struct pollfd p = { .fd = x->metrics_fd, .events = POLLIN };

	while (!__atomic_load_n(&x->stop, __ATOMIC_RELAXED)) {
		int c;

		if (poll(&p, 1, 250) <= 0)
			continue;
		c = accept(x->metrics_fd, NULL, NULL);
		if (c < 0)
			continue;
		serve(x, c);
		close(c);
	}
	return NULL;
}

int tun_metrics_start(struct tun_ctx *x)
{
	char host[sizeof(x->cfg.metrics)], *colon;
	struct addrinfo hints, *ai = NULL;
	int one = 1, rc;

	x->metrics_fd = -1;
	if (x->cfg.metrics[0] == '\0')
		return 0;
	snprintf(host, sizeof(host), "%s", x->cfg.metrics);
	colon = strrchr(host, ':');
	if (colon == NULL) {
		fprintf(stderr, "twag-tunnel: --metrics HOST:PORT\n");
		return -1;
	}
	*colon = '\0';
	if (host[0] == '[' && colon > host + 1 && colon[-1] == ']') {
		colon[-1] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	rc = getaddrinfo(host, colon + 1, &hints, &ai);
	if (rc != 0) {
		fprintf(stderr, "twag-tunnel: --metrics %s: %s\n", x->cfg.metrics, gai_strerror(rc));
		return -1;
	}
	x->metrics_fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (x->metrics_fd < 0 ||
	    setsockopt(x->metrics_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(x->metrics_fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(x->metrics_fd, 16) != 0) {
		fprintf(stderr, "twag-tunnel: --metrics %s: %s\n", x->cfg.metrics, strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	if (pthread_create(&x->metrics_thr, NULL, metrics_main, x) != 0) {
		fprintf(stderr, "twag-tunnel: metrics thread: cannot start\n");
		return -1;
	}
	return 0;
}

void tun_metrics_stop(struct tun_ctx *x)
{
	if (x->metrics_fd < 0)
		return;
	pthread_join(x->metrics_thr, NULL);
	close(x->metrics_fd);
	x->metrics_fd = -1;
}
