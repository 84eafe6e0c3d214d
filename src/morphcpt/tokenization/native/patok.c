/* Patok's per-document loops (tokenization/schemes/patok.py: PatokScheme.transform_many): word groups,
 * contraction draws, assembly, then StochasTok's expansion with affix tokens frozen. What stays in Python: the
 * analysis of a word group seen for the first time, for a whole batch before it runs (mc_patok_unseen lists the
 * groups, mc_patok_add_groups takes their analyses back), and the canonical encoding of a span that neither the
 * step cache nor the span cache answers (a callback). The tables are in patok_states.c; see patok.h and
 * kernels.h. */
#include "patok.h"

/* Whether any of tokens r .. e-1 is an affix token (Python: mask >> r & ((1 << (e - r)) - 1)). */
static int affix_in(uint64_t mask, int64_t r, int64_t e) {
    if (!mask || r >= 64 || e <= r) return 0;
    uint64_t bits = mask >> r;
    int64_t width = e - r;
    return (width >= 64 ? bits : bits & ((1ULL << width) - 1)) != 0;
}

/* The word groups of document ids[0..n) (n > 0) into g_start/g_end: a group starts at 0, at an opener, and
 * after a closer. Returns how many, or MC_NOMEM. */
static int64_t find_groups(patok_t *h, const int32_t *ids, int64_t n) {
    int64_t ng = 0;
    if (GROW(h->g_start, h->cap_g0, n) || GROW(h->g_end, h->cap_g1, n) || GROW(h->g_sid, h->cap_g2, n) ||
        GROW(h->g_cur, h->cap_g3, n))
        return MC_NOMEM;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || h->opens[ids[i]] || h->closes[ids[i - 1]]) {
            if (ng) h->g_end[ng - 1] = i;
            h->g_start[ng++] = i;
        }
    }
    h->g_end[ng - 1] = n;
    return ng;
}

static uint64_t unseen_slot(const patok_t *h, const int32_t *ids, const int32_t *group, int64_t len) {
    uint64_t m = (uint64_t)h->un_tcap - 1, i = pk_hash_ids(group, len) & m;
    for (;; i = (i + 1) & m) {
        int64_t k = h->un_tab[i];
        if (k < 0) return i;
        if (h->un_pairs[2 * k + 1] == len &&
            memcmp(ids + h->un_pairs[2 * k], group, (size_t)len * sizeof(int32_t)) == 0)
            return i;
    }
}

static int unseen_resize(patok_t *h, const int32_t *ids, int64_t count, int64_t cap) {
    if (cap > h->un_tcap) {
        int64_t *t = realloc(h->un_tab, (size_t)cap * sizeof(int64_t));
        if (!t) return -1;
        h->un_tab = t;
        h->un_tcap = cap;
    }
    for (int64_t i = 0; i < h->un_tcap; i++) h->un_tab[i] = -1;
    for (int64_t k = 0; k < count; k++)
        h->un_tab[unseen_slot(h, ids, ids + h->un_pairs[2 * k], h->un_pairs[2 * k + 1])] = k;
    return 0;
}

/* The word groups of a batch (documents as in mc_patok_batch) that have no state yet, each once, in the order
 * they first appear: (start in ids, length) pairs in an internal buffer (mc_patok_unseen_output). Python analyses
 * them and hands the analyses back with mc_patok_add_groups before the batch runs, in one crossing instead of a
 * callback per group. Returns how many, or a negative MC_ code. */
int64_t mc_patok_unseen(patok_t *h, const int32_t *ids, const int64_t *doc_off, int64_t ndocs) {
    int64_t count = 0, groups = 0;
    h->b_ids = NULL;
    if (unseen_resize(h, ids, 0, h->un_tcap ? h->un_tcap : 1024)) return MC_NOMEM;
    for (int64_t d = 0; d < ndocs; d++) {
        int64_t base = doc_off[d], n = doc_off[d + 1] - base;
        if (n == 0) continue;
        int64_t ng = find_groups(h, ids + base, n);
        if (ng < 0) return ng;
        if (GROW(h->b_sid, h->cap_bsid, groups + ng)) return MC_NOMEM;
        for (int64_t g = 0; g < ng; g++) {
            const int32_t *group = ids + base + h->g_start[g];
            int64_t len = h->g_end[g] - h->g_start[g];
            int64_t sid = pk_group_find(h, group, len);
            h->b_sid[groups++] = sid;
            if (sid >= 0) continue;
            if (2 * (count + 1) > h->un_tcap && unseen_resize(h, ids, count, 2 * h->un_tcap)) return MC_NOMEM;
            uint64_t slot = unseen_slot(h, ids, group, len);
            if (h->un_tab[slot] >= 0) continue; /* already listed */
            if (GROW(h->un_pairs, h->cap_un, 2 * (count + 1))) return MC_NOMEM;
            h->un_pairs[2 * count] = base + h->g_start[g];
            h->un_pairs[2 * count + 1] = len;
            h->un_tab[slot] = count++;
        }
    }
    h->b_ids = ids;
    h->b_ndocs = ndocs;
    return count;
}

const int64_t *mc_patok_unseen_output(const patok_t *h) { return h->un_pairs; }

/* One document: groups, contraction, assembly, expansion (PatokScheme.transform_many for one document).
 * Appends the result to h->out at *total. Every group must have a state (mc_patok_unseen); `known`, when not
 * NULL, holds the sids of the batch's groups as mc_patok_unseen found them (-1: looked up here), this
 * document's from *groups on, which moves past them. */
static int64_t patok_one(patok_t *h, const int32_t *ids, int64_t n, const int64_t *known, int64_t *groups,
                         bitgen_t *rng, int64_t *total) {
    if (n == 0) return 0;
    /* 1. Word groups and their states. */
    int64_t ng = find_groups(h, ids, n);
    if (ng < 0) return ng;
    if (known) known += *groups;
    *groups += ng;
    int64_t n_active = 0;
    for (int64_t g = 0; g < ng; g++) {
        int64_t sid = known ? known[g] : -1;
        if (sid < 0) sid = pk_group_find(h, ids + h->g_start[g], h->g_end[g] - h->g_start[g]);
        if (sid < 0) return MC_UNSEEN;
        h->g_sid[g] = h->g_cur[g] = sid;
        if (h->st_active[sid]) n_active += h->g_end[g] - h->g_start[g];
    }
    /* 2. Contraction (PatokScheme._contract / _draws / _run_draws). */
    int64_t attempts = (int64_t)(h->contract_prop * (double)n);
    if (n_active && attempts > 0) {
        if (GROW(h->slot_g, h->cap_s0, n_active) || GROW(h->slot_off, h->cap_s1, n_active)) return MC_NOMEM;
        int64_t s = 0;
        for (int64_t g = 0; g < ng; g++) {
            if (!h->st_active[h->g_sid[g]]) continue;
            for (int64_t o = 0; o < h->g_end[g] - h->g_start[g]; o++, s++) {
                h->slot_g[s] = g;
                h->slot_off[s] = o;
            }
        }
        int64_t by_factor = (int64_t)(h->max_attempts_factor * (double)n);
        int64_t budget = attempts > by_factor ? attempts : by_factor;
        int every = n_active == n;
        double log_miss = every ? 0.0 : log1p(-(double)n_active / (double)n);
        double aw = h->affix_awareness;
        int64_t rows = (int64_t)(1.2 * (double)attempts * (double)n_active / (double)n);
        if (rows < 8) rows = 8;
        if (GROW(h->u, h->cap_u, 5 * rows)) return MC_NOMEM;
        int64_t k = -1, rejected = 0;
        int finished = 0;
        while (!finished) {
            double *u = h->u;
            for (int64_t i = 0; i < 5 * rows; i++) u[i] = NEXT(rng); /* the chunk is drawn whole, as rng.random */
            for (int64_t row = 0; row < rows; row++, u += 5) {
                k += every ? 1 : 1 + (int64_t)(log1p(-u[0]) / log_miss);
                if (k >= budget || k - rejected >= attempts) {
                    finished = 1;
                    break;
                }
                int64_t slot = (int64_t)(u[1] * (double)n_active);
                if (slot >= n_active) slot = n_active - 1;
                int64_t g = h->slot_g[slot], offset = h->slot_off[slot];
                int64_t size_i = 0;
                while (size_i + 1 < h->nsizes && h->cdf[size_i] <= u[2]) size_i++;
                int64_t size = h->sizes[size_i];
                int reject = u[3] < aw, cut = u[4] < aw;
                int64_t sid = h->g_cur[g], length = h->st_len[sid];
                int64_t r = offset < length ? offset : length - 1;
                int64_t e = r + size < length ? r + size : length;
                if (reject && affix_in(h->st_mask[sid], r, e)) {
                    rejected++;
                    continue;
                }
                if (length > MAX_WORD_TOKENS) continue; /* a state grown past the limit never steps */
                int64_t key = (((sid << 7 | r) << 7 | e) << 1) | cut;
                int64_t next = pk_step_find(h, key);
                if (next == INT64_MIN) {
                    int64_t code = pk_take_step(h, sid, r, e, cut, &next);
                    if (code < 0) return code;
                    if (pk_step_put(h, key, next)) return MC_NOMEM;
                }
                if (next >= 0) h->g_cur[g] = next;
            }
        }
    }
    /* 3. Assembly: every group in its final state, its affix tokens frozen. */
    int64_t m = 0;
    for (int64_t g = 0; g < ng; g++) m += h->st_len[h->g_cur[g]];
    if (GROW(h->doc, h->cap_doc, m) || GROW(h->frozen, h->cap_fz, m)) return MC_NOMEM;
    int64_t at = 0, any_frozen = 0;
    for (int64_t g = 0; g < ng; g++) {
        int64_t sid = h->g_cur[g], len = h->st_len[sid];
        uint64_t mask = h->st_mask[sid];
        memcpy(h->doc + at, h->arena + h->st_off[sid], (size_t)len * sizeof(int32_t));
        for (int64_t i = 0; i < len; i++) h->frozen[at + i] = i < 64 ? (uint8_t)(mask >> i & 1) : 0;
        any_frozen |= mask != 0;
        at += len;
    }
    /* 4. Expansion, affix tokens frozen. */
    int64_t exp_attempts = (int64_t)((double)m * h->expand_prop);
    int64_t room = *total + m + (exp_attempts > 0 ? exp_attempts : 0);
    if (GROW(h->out, h->cap_out, room)) return MC_NOMEM;
    int64_t len = expand_one(h->doc, m, exp_attempts, rng, &h->table, any_frozen ? h->frozen : NULL, &h->ew,
                             h->out + *total);
    if (len < 0) return len;
    *total += len;
    return len;
}

/* PatokScheme over a batch: document d is ids[doc_off[d] .. doc_off[d+1]) with generator rngs[d] (shared
 * generators are drawn from in document order). Results go to an internal buffer (mc_patok_output), their
 * lengths to out_len. Returns the total length, or a negative MC_ code. */
int64_t mc_patok_batch(patok_t *h, const int32_t *ids, const int64_t *doc_off, int64_t ndocs, bitgen_t **rngs,
                       int64_t *out_len) {
    int64_t total = 0, groups = 0;
    const int64_t *known = h->b_ids == ids && h->b_ndocs == ndocs ? h->b_sid : NULL;
    h->b_ids = NULL; /* the sids found by mc_patok_unseen serve this batch only */
    for (int64_t d = 0; d < ndocs; d++) {
        int64_t len = patok_one(h, ids + doc_off[d], doc_off[d + 1] - doc_off[d], known, &groups, rngs[d], &total);
        if (len < 0) return len;
        out_len[d] = len;
    }
    return total;
}

const int32_t *mc_patok_output(const patok_t *h) { return h->out; }
