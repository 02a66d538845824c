/* twagd's receive side (src/server/worker.c): a receive slot cut into
 * the datagrams it holds (tw_srv_next_datagrams, tw_srv_count_datagrams),
 * one per slot, or with UDP GRO those of its UDP_GRO segment size, the last
 * one shorter; batches of at most 32; slots the kernel cut (data or
 * control messages); datagrams longer than RFC 2865 allows; empty ones.
 * The same over real sockets: tests/integration/security.py (gro_case,
 * wildcard_case). */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "../../src/server/srv.h"

static struct tw_srv_worker *w;

/* One receive slot as recvmmsg leaves it: total octets, flags, and with
 * seg > 0 a UDP_GRO control message of that segment size. */
static void slot(int i, uint32_t total, int flags, int seg)
{
	static uint8_t cm[TW_SRV_BATCH][64] __attribute__((aligned(8)));
	struct msghdr *h = &w->rx[i].msg_hdr;

	memset(h, 0, sizeof(*h));
	w->rx[i].msg_len = total;
	h->msg_flags = flags;
	if (seg > 0) {
		struct msghdr m = { .msg_control = cm[i], .msg_controllen = sizeof(cm[i]) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		memset(cm[i], 0, sizeof(cm[i]));
		c->cmsg_level = IPPROTO_UDP;
		c->cmsg_type = UDP_GRO;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &seg, sizeof(seg));
		h->msg_control = cm[i];
		h->msg_controllen = CMSG_SPACE(sizeof(int));
	}
}

static void test_cut(void)
{
	void *mem = NULL;
	struct tw_srv_rx_cursor cur = { 0, 0, 0 };
	bool ok = true;

	if (!CHECK(posix_memalign(&mem, 64, sizeof(*w)) == 0))
		return;
	w = memset(mem, 0, sizeof(*w));
	w->gro = true;
	w->rx_slot = TW_SRV_RX_LEN;
	w->rx_mem = calloc(TW_SRV_BATCH, TW_SRV_RX_LEN);
	if (!CHECK(w->rx_mem != NULL))
		goto out;

	/* 10 of 100 and a last one of 40; a single datagram of 300 (no
	 * control message); an empty one */
	slot(0, 1040, 0, 100);
	slot(1, 300, 0, 0);
	slot(2, 0, 0, 0);
	CHECK(tw_srv_count_datagrams(w, 3) == 13);
	CHECK(tw_srv_next_datagrams(w, 3, &cur) == 13);
	for (int i = 0; i < 11; i++)
		ok &= w->dg[i].slot == 0 && w->dg[i].len == (i < 10 ? 100u : 40u) &&
		      w->dg[i].p == w->rx_mem + 100 * i && !w->dg[i].bad;
	ok &= w->dg[11].slot == 1 && w->dg[11].len == 300 &&
	      w->dg[11].p == w->rx_mem + TW_SRV_RX_LEN && !w->dg[11].bad;
	ok &= w->dg[12].slot == 2 && w->dg[12].len == 0;
	CHECK(ok);
	CHECK(tw_srv_next_datagrams(w, 3, &cur) == 0);

	/* 33 of 50 in one slot: a batch of 32, then 1 */
	cur = (struct tw_srv_rx_cursor){ 0, 0, 0 };
	slot(0, 33 * 50, 0, 50);
	CHECK(tw_srv_count_datagrams(w, 1) == 33);
	CHECK(tw_srv_next_datagrams(w, 1, &cur) == 32);
	CHECK(w->dg[31].p == w->rx_mem + 31 * 50);
	CHECK(tw_srv_next_datagrams(w, 1, &cur) == 1);
	CHECK(w->dg[0].p == w->rx_mem + 32 * 50 && w->dg[0].len == 50);
	CHECK(tw_srv_next_datagrams(w, 1, &cur) == 0);

	/* cut by the kernel: only the last one is incomplete */
	cur = (struct tw_srv_rx_cursor){ 0, 0, 0 };
	slot(0, 1000, MSG_TRUNC, 100);
	CHECK(tw_srv_next_datagrams(w, 1, &cur) == 10);
	ok = true;
	for (int i = 0; i < 10; i++)
		ok &= w->dg[i].bad == (i == 9);
	CHECK(ok);

	/* control messages cut: the boundaries are unknown, the slot is
	 * dropped whole */
	cur = (struct tw_srv_rx_cursor){ 0, 0, 0 };
	slot(0, 1000, MSG_CTRUNC, 0);
	CHECK(tw_srv_next_datagrams(w, 1, &cur) == 1);
	CHECK(w->dg[0].bad && w->dg[0].len == 1000);

	/* longer than RFC 2865's 4096 octets */
	cur = (struct tw_srv_rx_cursor){ 0, 0, 0 };
	slot(0, 2 * 4097, 0, 4097);
	CHECK(tw_srv_next_datagrams(w, 1, &cur) == 2);
	CHECK(w->dg[0].bad && w->dg[1].bad);

	/* without GRO a slot is one datagram whatever it carries */
	cur = (struct tw_srv_rx_cursor){ 0, 0, 0 };
	w->gro = false;
	slot(0, 1000, 0, 100);
	CHECK(tw_srv_count_datagrams(w, 1) == 1);
	CHECK(tw_srv_next_datagrams(w, 1, &cur) == 1 && w->dg[0].len == 1000);
out:
	free(w->rx_mem);
	free(w);
}

void test_main(void)
{
	test_cut();
}
