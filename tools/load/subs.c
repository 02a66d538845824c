/*
 * twag-load — the phones: the subscriber CSV that `twag subscriber import`
 * reads (so one file provisions the server and drives the load), random
 * subscribers, and the USIMs' SQN arrays (3GPP TS 33.102 V17.0.0 Annex C.2)
 * saved between runs.
 *
 * CSV (twagd_iface.md): a header line "imsi,algo,ki,opc,op,amf,sqn", then
 * one subscriber per line; op or opc may be empty; TUAK uses the ki and
 * opc/op columns for K and TOPc/TOP; COMP128 leaves opc/op/amf/sqn empty.
 * sqn is the SQN last used (48 bits, SEQ || IND): the phone has seen it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load.h"
#include "twag/bytes.h"
#include "twag/hex.h"
#include "twag/milenage.h"
#include "twag/tuak.h"

enum { COL_IMSI, COL_ALGO, COL_KI, COL_OPC, COL_OP, COL_AMF, COL_SQN, COL_N };
static const char *const col_names[COL_N] = { "imsi", "algo", "ki", "opc", "op", "amf", "sqn" };

/* Splits line (modified in place) at commas; trims spaces and CR. */
static int split(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *c = strchr(p, ',');
		if (c)
			*c = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t l = strlen(p);
		while (l > 0 && (p[l - 1] == ' ' || p[l - 1] == '\t' || p[l - 1] == '\r' ||
				 p[l - 1] == '\n'))
			p[--l] = 0;
		if (n == max)
			return -1;
		f[n++] = p;
		if (!c)
			return n;
		p = c + 1;
	}
}

static int hex_field(const char *s, uint8_t *out, size_t want)
{
	size_t got;

	if (strlen(s) != 2 * want || tw_hex_decode(out, want, &got, s, strlen(s)) != TW_OK)
		return -1;
	return 0;
}

static bool digits_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < TW_IMSI_MIN_LEN || n > TW_IMSI_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* One CSV row -> a phone. Returns 0 or -1 (message printed). */
static int row_to_phone(const char *path, int lineno, char **f, const int *col,
			struct load_phone *ph)
{
	const char *imsi = f[col[COL_IMSI]], *algo = f[col[COL_ALGO]];
	const char *ki = f[col[COL_KI]];
	const char *opc = col[COL_OPC] >= 0 ? f[col[COL_OPC]] : "";
	const char *op = col[COL_OP] >= 0 ? f[col[COL_OP]] : "";
	const char *sqn_s = col[COL_SQN] >= 0 ? f[col[COL_SQN]] : "";
	struct tw_sub_keys kk;
	uint8_t k[32], o[32], sqn[6] = { 0 };
	int rc = -1;

	memset(&kk, 0, sizeof(kk));
	if (!digits_ok(imsi)) {
		fprintf(stderr, "twag-load: %s:%d: bad imsi\n", path, lineno);
		goto out;
	}
	if (strcmp(algo, "milenage") == 0) {
		if (hex_field(ki, k, 16) != 0) {
			fprintf(stderr, "twag-load: %s:%d: bad ki\n", path, lineno);
			goto out;
		}
		if (*opc) {
			if (hex_field(opc, o, 16) != 0) {
				fprintf(stderr, "twag-load: %s:%d: bad opc\n", path, lineno);
				goto out;
			}
		} else if (hex_field(op, o, 16) != 0 || tw_milenage_opc(o, k, o) != TW_OK) {
			fprintf(stderr, "twag-load: %s:%d: bad op\n", path, lineno);
			goto out;
		}
		if (tw_sub_keys_milenage(&kk, k, o, NULL) != TW_OK)
			goto out;
	} else if (strcmp(algo, "tuak") == 0) {
		/* TS 35.231 §5.1 sizes of `twag subscriber add --algo tuak`'s
		 * defaults: MAC 64, RES 64, CK/IK 128 bits, one iteration */
		struct tw_tuak_params tp = { .mac_bits = 64, .res_bits = 64, .ck_bits = 128,
					     .ik_bits = 128, .iterations = 1 };
		size_t kl = strlen(ki) / 2;
		if ((kl != 16 && kl != 32) || hex_field(ki, tp.k, kl) != 0) {
			fprintf(stderr, "twag-load: %s:%d: bad ki\n", path, lineno);
			goto out;
		}
		tp.k_len = (uint8_t)kl;
		if (*opc) {
			if (hex_field(opc, tp.topc, 32) != 0) {
				fprintf(stderr, "twag-load: %s:%d: bad opc\n", path, lineno);
				goto out;
			}
		} else if (hex_field(op, o, 32) != 0 ||
			   tw_tuak_topc(tp.topc, o, tp.k, kl, tp.iterations) != TW_OK) {
			fprintf(stderr, "twag-load: %s:%d: bad op\n", path, lineno);
			goto out;
		}
		rc = tw_sub_keys_tuak(&kk, &tp);
		tw_wipe(&tp, sizeof(tp));
		if (rc != TW_OK) {
			rc = -1;
			fprintf(stderr, "twag-load: %s:%d: TUAK parameters refused\n", path, lineno);
			goto out;
		}
		rc = -1;
	} else if (strncmp(algo, "comp128v", 8) == 0 && algo[8] >= '1' && algo[8] <= '3' &&
		   algo[9] == 0) {
		if (hex_field(ki, k, 16) != 0 ||
		    tw_sub_keys_comp128(&kk, (unsigned)(algo[8] - '0'), k) != TW_OK) {
			fprintf(stderr, "twag-load: %s:%d: bad ki\n", path, lineno);
			goto out;
		}
	} else {
		fprintf(stderr, "twag-load: %s:%d: unknown algo '%s'\n", path, lineno, algo);
		goto out;
	}
	if (*sqn_s && hex_field(sqn_s, sqn, 6) != 0) {
		fprintf(stderr, "twag-load: %s:%d: bad sqn\n", path, lineno);
		goto out;
	}
	if (tw_usim_init(&ph->usim, imsi, &kk) != TW_OK)
		goto out;
	/* Annex C.2: the phone has accepted the SQN last used: SEQ_MS(IND) = SEQ */
	uint64_t s = tw_load_be48(sqn);
	unsigned ib = ph->usim.sqn.ind_bits;
	if (s != 0)
		ph->usim.sqn.seq_ms[s & ((1u << ib) - 1)] = s >> ib;
	rc = 0;
out:
	tw_wipe(&kk, sizeof(kk));
	tw_wipe(k, sizeof(k));
	tw_wipe(o, sizeof(o));
	return rc;
}

int load_read_csv(const char *path, struct load_phone **phones, size_t *n_out)
{
	FILE *fp = fopen(path, "r");
	char line[1024];
	char *f[16];
	int col[COL_N];
	bool have_header = false;
	struct load_phone *ph = NULL;
	size_t n = 0, cap = 0;
	int lineno = 0, rc = -1;

	if (!fp) {
		fprintf(stderr, "twag-load: --subscribers: %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* default column order when the file has no header */
	for (int i = 0; i < COL_N; i++)
		col[i] = i;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n' || line[0] == '\r')
			continue;
		int nf = split(line, f, 16);
		if (nf < 0) {
			fprintf(stderr, "twag-load: %s:%d: too many fields\n", path, lineno);
			goto out;
		}
		if (!have_header && strcmp(f[0], "imsi") == 0) {
			for (int i = 0; i < COL_N; i++) {
				col[i] = -1;
				for (int j = 0; j < nf; j++)
					if (strcmp(f[j], col_names[i]) == 0)
						col[i] = j;
			}
			if (col[COL_IMSI] < 0 || col[COL_ALGO] < 0 || col[COL_KI] < 0) {
				fprintf(stderr, "twag-load: %s: header needs imsi,algo,ki\n", path);
				goto out;
			}
			have_header = true;
			continue;
		}
		have_header = true;
		int lc[COL_N];
		for (int i = 0; i < COL_N; i++) {
			lc[i] = col[i] < nf ? col[i] : -1;
			if (i <= COL_KI && lc[i] < 0) {
				fprintf(stderr, "twag-load: %s:%d: missing fields\n", path,
					lineno);
				goto out;
			}
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			struct load_phone *np = realloc(ph, nc * sizeof(*ph));
			if (!np) {
				fprintf(stderr, "twag-load: out of memory\n");
				goto out;
			}
			ph = np;
			cap = nc;
		}
		memset(&ph[n], 0, sizeof(ph[n]));
		if (row_to_phone(path, lineno, f, lc, &ph[n]) != 0)
			goto out;
		ph[n].index = (uint32_t)n;
		/* the MAC from the IMSI, not the row: two twag-load runs on
		 * other subscribers from one address are other stations */
		uint64_t id = strtoull(ph[n].usim.imsi, NULL, 10);
		snprintf(ph[n].station, sizeof(ph[n].station), "02-00-%02X-%02X-%02X-%02X",
			 (unsigned)(id >> 24) & 0xff, (unsigned)(id >> 16) & 0xff,
			 (unsigned)(id >> 8) & 0xff, (unsigned)id & 0xff);
		n++;
	}
	if (n == 0) {
		fprintf(stderr, "twag-load: %s: no subscribers\n", path);
		goto out;
	}
	*phones = ph;
	*n_out = n;
	ph = NULL;
	rc = 0;
out:
	if (ph) {
		tw_wipe(ph, cap * sizeof(*ph));
		free(ph);
	}
	tw_wipe(line, sizeof(line));
	fclose(fp);
	return rc;
}

int load_gen_csv(const char *path, size_t n, const char *alg, uint64_t imsi_base)
{
	char tmp[4096];
	FILE *fp;
	bool comp128 = strncmp(alg, "comp128v", 8) == 0;
	int rc = -1;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	/* keys inside: readable by the owner only */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || !(fp = fdopen(fd, "w"))) {
		fprintf(stderr, "twag-load: --gen-csv: %s: %s\n", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(fp, "imsi,algo,ki,opc,op,amf,sqn\n");
	for (size_t i = 0; i < n; i++) {
		uint8_t k[16], opc[16], r[2];
		char kh[33], oh[33];

		load_random(k, 16);
		load_random(opc, 16);
		load_random(r, 2);
		tw_hex_encode(kh, k, 16);
		tw_hex_encode(oh, opc, 16);
		if (comp128) {
			fprintf(fp, "%015llu,%s,%s,,,,\n",
				(unsigned long long)(imsi_base + i), alg, kh);
		} else {
			/* a random SQN last used: SEQ 1..65536, IND 0 (5-bit IND,
			 * the store's default slot) */
			uint64_t seq = 1 + (uint64_t)tw_load_be16(r);
			fprintf(fp, "%015llu,milenage,%s,%s,,8000,%012llx\n",
				(unsigned long long)(imsi_base + i), kh, oh,
				(unsigned long long)(seq << 5));
		}
		tw_wipe(k, sizeof(k));
		tw_wipe(opc, sizeof(opc));
		tw_wipe(kh, sizeof(kh));
		tw_wipe(oh, sizeof(oh));
	}
	if (fflush(fp) != 0 || fsync(fileno(fp)) != 0) {
		fprintf(stderr, "twag-load: --gen-csv: %s: %s\n", tmp, strerror(errno));
		fclose(fp);
		goto out;
	}
	if (fclose(fp) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "twag-load: --gen-csv: %s: %s\n", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		unlink(tmp);
	return rc;
}

/* ---- USIM state ------------------------------------------------------- */

static int cmp_phone_imsi(const void *a, const void *b)
{
	const struct load_phone *x = *(const struct load_phone *const *)a;
	const struct load_phone *y = *(const struct load_phone *const *)b;
	return strcmp(x->usim.imsi, y->usim.imsi);
}

int load_usim_state_read(const char *path, struct load_phone *phones, size_t n)
{
	FILE *fp = fopen(path, "r");
	struct load_phone **idx = NULL;
	char line[4096];
	int lineno = 0, rc = -1;
	size_t unknown = 0;

	if (!fp) {
		if (errno == ENOENT)
			return 0; /* first run: the CSV's SQNs */
		fprintf(stderr, "twag-load: --usim-state: %s: %s\n", path, strerror(errno));
		return -1;
	}
	idx = malloc(n * sizeof(*idx));
	if (!idx)
		goto out;
	for (size_t i = 0; i < n; i++)
		idx[i] = &phones[i];
	qsort(idx, n, sizeof(*idx), cmp_phone_imsi);
	while (fgets(line, sizeof(line), fp)) {
		char *save = NULL, *tok;
		struct load_phone key, *kp = &key, **hit;
		unsigned ib;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		tok = strtok_r(line, " \n", &save);
		if (!tok || strlen(tok) > TW_IMSI_MAX_LEN)
			goto bad;
		strcpy(key.usim.imsi, tok);
		hit = bsearch(&kp, idx, n, sizeof(*idx), cmp_phone_imsi);
		tok = strtok_r(NULL, " \n", &save);
		if (!tok || sscanf(tok, "%u", &ib) != 1 || ib > TW_SQN_IND_BITS_MAX)
			goto bad;
		if (!hit) {
			unknown++;
			continue;
		}
		struct tw_sqn_ms *ms = &(*hit)->usim.sqn;
		if (tw_sqn_ms_init(ms, ib, TW_SQN_DELTA_DEFAULT, TW_SQN_L_NONE) != TW_OK)
			goto bad;
		while ((tok = strtok_r(NULL, " \n", &save)) != NULL) {
			unsigned ind;
			unsigned long long seq;
			if (sscanf(tok, "%u:%llx", &ind, &seq) != 2 || ind >= (1u << ib) ||
			    seq >> (48 - ib) != 0)
				goto bad;
			ms->seq_ms[ind] = seq;
		}
	}
	if (unknown)
		fprintf(stderr, "twag-load: note: %s: %zu IMSIs not in the subscriber file\n",
			path, unknown);
	rc = 0;
	goto out;
bad:
	fprintf(stderr, "twag-load: --usim-state: %s:%d: malformed line\n", path, lineno);
out:
	free(idx);
	fclose(fp);
	return rc;
}

int load_usim_state_write(const char *path, const struct load_phone *phones, size_t n)
{
	char tmp[4096];
	FILE *fp;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	fp = fopen(tmp, "w");
	if (!fp) {
		fprintf(stderr, "twag-load: --usim-state: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	fprintf(fp, "# twag-load USIM state: IMSI IND_BITS IND:SEQ_MS(IND) (hex), "
		    "TS 33.102 Annex C.2\n");
	for (size_t i = 0; i < n; i++) {
		const struct tw_sqn_ms *ms = &phones[i].usim.sqn;
		fprintf(fp, "%s %u", phones[i].usim.imsi, ms->ind_bits);
		for (unsigned j = 0; j < (1u << ms->ind_bits); j++)
			if (ms->seq_ms[j])
				fprintf(fp, " %u:%llx", j, (unsigned long long)ms->seq_ms[j]);
		fputc('\n', fp);
	}
	/* durable before it replaces the previous state: a USIM that forgot
	 * an accepted SQN would hide a reuse */
	if (fflush(fp) != 0 || fsync(fileno(fp)) != 0 || fclose(fp) != 0 ||
	    rename(tmp, path) != 0) {
		fprintf(stderr, "twag-load: --usim-state: %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
