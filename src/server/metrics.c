/*
 * twag — twagd's metrics in the Prometheus text exposition format 0.0.4
 * ("# HELP name text", "# TYPE name counter|gauge", then "name{labels}
 * value" lines). The RADIUS counters follow RFC 4669 §4 (RADIUS
 * Authentication Server MIB for IPv6): radiusAuthServTotalAccessRequests,
 * ...Accepts, ...Rejects, ...Challenges, ...MalformedAccessRequests,
 * ...BadAuthenticators, ...PacketsDropped, ...DupAccessRequests,
 * ...InvalidRequests (unknown clients), ...UnknownTypes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "twag/server.h"
#include "textout.h"

void tw_srv_metrics_sum(struct tw_srv_metrics *m, struct tw_srv_counters *const *c,
			unsigned n)
{
	memset(m->v, 0, sizeof(m->v));
	memset(m->worker_requests, 0, sizeof(m->worker_requests));
	m->n_workers = n < TW_SRV_MAX_THREADS ? n : TW_SRV_MAX_THREADS;
	for (unsigned w = 0; w < n; w++)
		for (unsigned i = 0; i < TW_C_COUNT; i++) {
			uint64_t v = atomic_load_explicit(&c[w]->v[i], memory_order_relaxed);

			m->v[i] += v;
			if (i == TW_C_REQUESTS && w < TW_SRV_MAX_THREADS)
				m->worker_requests[w] = v;
		}
}

static void one(struct out *o, const char *name, const char *type, const char *help,
		uint64_t v)
{
	head(o, name, type, help);
	put(o, "%s %llu\n", name, (unsigned long long)v);
}

/* One sample per metric, with its HELP and TYPE lines. */
struct metric {
	const char *name, *type, *help;
	uint64_t v;
};

static void all(struct out *o, const struct metric *ms, size_t n)
{
	for (size_t i = 0; i < n; i++)
		one(o, ms[i].name, ms[i].type, ms[i].help, ms[i].v);
}

int tw_srv_metrics_format(const struct tw_srv_metrics *m, char *buf, size_t max,
			  size_t *len)
{
	const struct metric radius[] = {
		{ "twag_radius_access_requests_total", "counter",
		  "Access-Requests received from known clients (RFC 4669)", m->v[TW_C_REQUESTS] },
		{ "twag_radius_access_accepts_total", "counter", "Access-Accepts sent", m->v[TW_C_ACCEPTS] },
		{ "twag_radius_access_rejects_total", "counter", "Access-Rejects sent", m->v[TW_C_REJECTS] },
		{ "twag_radius_access_challenges_total", "counter", "Access-Challenges sent",
		  m->v[TW_C_CHALLENGES] },
		{ "twag_radius_malformed_packets_total", "counter",
		  "Malformed packets dropped (RFC 2865 section 3 decode rules)",
		  m->v[TW_C_MALFORMED] },
		{ "twag_radius_bad_authenticators_total", "counter",
		  "Requests dropped for a missing or invalid Message-Authenticator",
		  m->v[TW_C_BAD_AUTH] },
		{ "twag_radius_packets_dropped_total", "counter",
		  "Packets silently discarded for another reason", m->v[TW_C_DROPPED] },
		{ "twag_radius_duplicate_requests_total", "counter",
		  "Retransmitted requests (RFC 5080 section 2.2.2)", m->v[TW_C_DUPLICATES] },
		{ "twag_radius_unknown_clients_total", "counter",
		  "Packets from addresses that are not configured clients",
		  m->v[TW_C_UNKNOWN_CLIENTS] },
		{ "twag_radius_status_server_total", "counter", "Status-Server requests answered (RFC 5997)",
		  m->v[TW_C_STATUS_SERVER] },
		{ "twag_radius_unknown_types_total", "counter", "Packets of a code this server does not serve",
		  m->v[TW_C_UNKNOWN_TYPES] },
	};
	/* the other worker counters (and one gauge), in this order */
	const struct metric worker[] = {
		{ "twag_eap_naks_total", "counter", "EAP Nak responses that changed the method",
		  m->v[TW_C_NAKS] },
		{ "twag_resyncs_total", "counter",
		  "AUTS resynchronisations accepted (TS 33.102 section 6.3.5)", m->v[TW_C_RESYNCS] },
		{ "twag_resyncs_refused_total", "counter",
		  "AUTS resynchronisations refused (bad MAC-S or rate limit)",
		  m->v[TW_C_RESYNCS_REFUSED] },
		{ "twag_aka_batched_challenges_total", "counter",
		  "EAP-AKA' challenges whose keys and AT_MAC were computed in lanes with others of their receive batch",
		  m->v[TW_C_AKA_BATCHED] },
		{ "twag_rx_batches_total", "counter",
		  "Receive batches: system calls that returned datagrams (requests per batch: requests / batches)",
		  m->v[TW_C_RX_BATCHES] },
		{ "twag_rx_coalesce_waits_total", "counter",
		  "Waits of --rx-coalesce-us before a receive, taken because traffic was dense",
		  m->v[TW_C_RX_WAITS] },
		{ "twag_tx_gso_sends_total", "counter",
		  "UDP GSO sends: replies of one length to one client sent as one buffer (--no-udp-gso: none)",
		  m->v[TW_C_TX_GSO_SENDS] },
		{ "twag_tx_gso_replies_total", "counter", "Replies sent in UDP GSO sends",
		  m->v[TW_C_TX_GSO_REPLIES] },
		{ "twag_tx_gso_fallbacks_total", "counter",
		  "UDP GSO sends the kernel refused, their replies then sent one by one",
		  m->v[TW_C_TX_GSO_FALLBACKS] },
		{ "twag_rx_gro_datagrams_total", "counter",
		  "Requests that arrived coalesced by UDP GRO with others of their client (--no-udp-gro: none)",
		  m->v[TW_C_RX_GRO_DGRAMS] },
		{ "twag_udp_gso_workers", "gauge",
		  "Workers sending with UDP GSO (0 when the kernel or the path cannot)",
		  m->v[TW_C_UDP_GSO_ON] },
		{ "twag_store_vectors_total", "counter",
		  "Authentication vectors and triplet sets issued by the store",
		  m->v[TW_C_STORE_VECTORS] },
		{ "twag_store_errors_total", "counter",
		  "Store calls that failed (I/O: no durable SQN, no vector)", m->v[TW_C_STORE_ERRORS] },
	};
	struct out o = { buf, max, 0, false };

	if (buf == NULL || len == NULL || max == 0)
		return TW_ERR_INVAL;
	all(&o, radius, sizeof(radius) / sizeof(radius[0]));

	head(&o, "twag_attaches_total", "counter",
	     "Successful EAP authentications by method and kind");
	for (unsigned k = 0; k < 2; k++)
		for (unsigned me = 0; me < TW_SRV_N_METHODS; me++)
			put(&o, "twag_attaches_total{method=\"%s\",kind=\"%s\"} %llu\n",
			    tw_srv_method_name(me), k ? "reauth" : "full",
			    (unsigned long long)m->v[(k ? TW_C_ATTACH_REAUTH : TW_C_ATTACH_FULL) + me]);
	head(&o, "twag_auth_failures_total", "counter",
	     "EAP authentications that ended in EAP-Failure, by method");
	for (unsigned me = 0; me < TW_SRV_N_METHODS; me++)
		put(&o, "twag_auth_failures_total{method=\"%s\"} %llu\n", tw_srv_method_name(me),
		    (unsigned long long)m->v[TW_C_AUTH_FAIL + me]);
	all(&o, worker, sizeof(worker) / sizeof(worker[0]));
	head(&o, "twag_worker_requests_total", "counter",
	     "Access-Requests received by each worker thread (how the SO_REUSEPORT group spreads them)");
	for (unsigned w = 0; w < m->n_workers && w < TW_SRV_MAX_THREADS; w++)
		put(&o, "twag_worker_requests_total{worker=\"%u\"} %llu\n", w,
		    (unsigned long long)m->worker_requests[w]);
	head(&o, "twag_store_latency_seconds", "summary",
	     "Time spent in store calls on the authentication path");
	put(&o, "twag_store_latency_seconds_sum %.9f\n",
	    (double)m->v[TW_C_STORE_LAT_NS] / 1e9);
	put(&o, "twag_store_latency_seconds_count %llu\n",
	    (unsigned long long)m->v[TW_C_STORE_LAT_COUNT]);
	/* the store, the session table and the threads: counters and gauges,
	 * then the times kept in ns, shown in seconds */
	const struct metric rest[] = {
		{ "twag_store_reservations_total", "counter",
		  "Durable SQN high-water mark writes", m->store_reservations },
		{ "twag_store_subscribers_loaded", "gauge", "Subscribers held in memory",
		  m->store_loaded },
		{ "twag_store_subscribers_evicted_total", "counter",
		  "Subscribers dropped from memory to stay within --subscriber-cache",
		  m->store_evicted },
		{ "twag_store_records_reused_total", "counter",
		  "Subscriber records of dropped, deleted or replaced subscribers used again",
		  m->store_recycled },
		{ "twag_store_reservations_sync_total", "counter",
		  "SQN reservations made on the vector path (a worker waited for the fsync)",
		  m->store_reservations_sync },
		{ "twag_store_reservations_ahead_total", "counter",
		  "SQN reservations made ahead by the store's background thread",
		  m->store_reservations_ahead },
		{ "twag_store_reservations_batched_total", "counter",
		  "SQN reservations made for a batch's vectors in one commit (a worker waited)",
		  m->store_reservations_batched },
		{ "twag_store_reservation_batch_commits_total", "counter",
		  "Commits (fsyncs) of batched SQN reservations", m->store_reservation_batch_commits },
		{ "twag_store_identity_rows_written_total", "counter",
		  "Pseudonym and re-auth rows written behind to SQLite", m->store_ident_written },
		{ "twag_store_identity_row_writes_total", "counter",
		  "Writes of per-IMSI rows those took (a round writes each IMSI's entries at once)",
		  m->store_ident_row_writes },
		{ "twag_store_identity_table_full_total", "counter",
		  "Identity stores that found the in-memory table full and waited for a write round",
		  m->store_ident_full },
		{ "twag_store_identity_rounds_total", "counter",
		  "Identity write-behind rounds (partial ones included; a split round commits once per part)",
		  m->store_ident_rounds },
		{ "twag_store_identity_round_yields_total", "counter",
		  "Identity write-behind rounds split to let an SQN reservation or a store waiting for table room in",
		  m->store_ident_yields },
		{ "twag_sessions_active", "gauge", "EAP conversations in the session table",
		  m->sessions.active },
		{ "twag_sessions_max", "gauge", "Session table capacity (--max-sessions)",
		  m->sessions.max },
		{ "twag_sessions_evicted_total", "counter",
		  "Half-open sessions evicted because the table was full", m->sessions.evicted },
		{ "twag_sessions_expired_total", "counter", "Sessions ended by --session-timeout",
		  m->sessions.expired },
		{ "twag_sessions_replaced_total", "counter",
		  "Sessions ended by a new start from the same Calling-Station-Id",
		  m->sessions.replaced },
		{ "twag_sessions_refused_total", "counter",
		  "EAP starts rejected because every slot was a live conversation",
		  m->sessions.refused },
		{ "twag_worker_threads", "gauge", "Worker threads", m->threads },
	}, ns[] = {
		{ "twag_store_identity_write_seconds_total", "counter",
		  "Time in identity write-behind rounds, waits for the writing connection included",
		  m->store_ident_write_ns },
		{ "twag_store_identity_write_max_seconds", "gauge",
		  "The longest identity write-behind round so far", m->store_ident_write_max_ns },
		{ "twag_store_checkpoint_seconds_total", "counter",
		  "Time in SQLite WAL checkpoints (the write-behind thread's, no lock held)",
		  m->store_checkpoint_ns },
	};
	all(&o, rest, sizeof(rest) / sizeof(rest[0]));
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		head(&o, ns[i].name, ns[i].type, ns[i].help);
		put(&o, "%s %.9f\n", ns[i].name, (double)ns[i].v / 1e9);
	}
	if (o.overflow)
		return TW_ERR_OVERFLOW;
	*len = o.len;
	return TW_OK;
}
