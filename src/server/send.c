/*
 * twag — twagd: a worker's replies out (twag/udp_gso.h): the replies of a
 * batch that have one length and go to one client address, from one local
 * address, leave as one UDP GSO send unless --no-udp-gso. The worker's
 * counters follow the sender's; a reply the kernel refuses is lost, as on
 * the wire (the NAS retransmits and gets it from the duplicate cache).
 */
#define _GNU_SOURCE /* struct mmsghdr */
#include "srv.h"

_Static_assert((int)TW_SRV_BATCH <= (int)TW_UDP_GSO_MAX_MSGS, "a batch's replies in one call");

void tw_srv_send_replies(struct tw_srv_worker *w, struct mmsghdr *tx, int m)
{
	struct tw_udp_gso *g = &w->txg;
	bool was_on = g->on;
	uint64_t lost = g->lost;

	if (m <= 0)
		return;
	(void)tw_udp_gso_send(g, w->fd, tx, (unsigned)m, 0);
	atomic_store_explicit(&w->ctr.v[TW_C_TX_GSO_SENDS], g->sends, memory_order_relaxed);
	atomic_store_explicit(&w->ctr.v[TW_C_TX_GSO_REPLIES], g->segs, memory_order_relaxed);
	atomic_store_explicit(&w->ctr.v[TW_C_TX_GSO_FALLBACKS], g->fallbacks,
			      memory_order_relaxed);
	if (g->lost != lost)
		tw_logf(&w->log, TW_LOG_DEBUG, "socket-error", "op=sendmmsg errno=%d lost=%llu",
			g->last_errno, (unsigned long long)(g->lost - lost));
	if (was_on && !g->on) {
		atomic_store_explicit(&w->ctr.v[TW_C_UDP_GSO_ON], 0, memory_order_relaxed);
		tw_logf(&w->log, TW_LOG_INFO, "udp-gso-off", "worker=%u errno=%d", w->idx,
			g->off_errno);
	}
}
