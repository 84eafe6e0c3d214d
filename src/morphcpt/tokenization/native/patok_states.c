/* Patok's native tables (see patok.h): word states by sid and by ids, contraction steps by key, and the span
 * cache, which lets states share the steps of their common spans. Word groups come from Python with their
 * analyses (mc_patok_add_groups); the states a step makes are added here. Read by the loops in patok.c. */
#include "patok.h"

static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

uint64_t pk_hash_ids(const int32_t *ids, int64_t n) {
    uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ULL;
    for (int64_t i = 0; i < n; i++) h = mix64(h ^ (uint32_t)ids[i]);
    return h;
}

static int same_ids(const patok_t *h, int64_t sid, const int32_t *ids, int64_t n) {
    return h->st_len[sid] == n && memcmp(h->arena + h->st_off[sid], ids, (size_t)n * sizeof(int32_t)) == 0;
}

/* ---- word states ---------------------------------------------------------------------------------------- */

/* A group table slot: the state's sid, with 31 bits of its ids' hash above it, so that a probe passing other
 * states rarely reads their ids. */
static int64_t group_slot(uint64_t hash, int64_t sid) { return (int64_t)(hash >> 33) << 32 | sid; }

int64_t pk_group_find(const patok_t *h, const int32_t *ids, int64_t n) {
    if (n == 1) return h->single[ids[0]];
    if (h->gcap == 0) return -1;
    uint64_t m = (uint64_t)h->gcap - 1, hash = pk_hash_ids(ids, n);
    int64_t mark = group_slot(hash, 0);
    for (uint64_t i = hash & m;; i = (i + 1) & m) {
        int64_t slot = h->gtab[i];
        if (slot < 0) return -1;
        int64_t sid = slot & 0xffffffffLL;
        if ((slot & ~0xffffffffLL) == mark && same_ids(h, sid, ids, n)) return sid;
    }
}

static void group_put(patok_t *h, int64_t sid) {
    uint64_t m = (uint64_t)h->gcap - 1;
    uint64_t hash = pk_hash_ids(h->arena + h->st_off[sid], h->st_len[sid]), i = hash & m;
    while (h->gtab[i] >= 0) i = (i + 1) & m;
    h->gtab[i] = group_slot(hash, sid);
}

static int group_rehash(patok_t *h, int64_t cap) {
    int64_t *t = malloc((size_t)cap * sizeof(int64_t));
    if (!t) return -1;
    for (int64_t i = 0; i < cap; i++) t[i] = -1;
    free(h->gtab);
    h->gtab = t;
    h->gcap = cap;
    for (int64_t sid = 0; sid < h->n_states; sid++) group_put(h, sid);
    return 0;
}

/* The character offsets of the boundaries of `n` ids (n <= MAX_WORD_TOKENS) into off[0..n]: 0, after the
 * first, ..., the text's length. */
static void token_offsets(const patok_t *h, const int32_t *ids, int64_t n, int64_t *off) {
    off[0] = 0;
    for (int64_t i = 0; i < n; i++) off[i + 1] = off[i] + h->char_len[ids[i]];
}

/* Whether character offset `c` falls strictly inside one of the `n` tokens whose boundaries are off[0..n]: it is
 * not a boundary between two of them. */
static int inside_a_token(const int64_t *off, int64_t n, int64_t c) {
    for (int64_t at = 1; at < n; at++)
        if (off[at] == c) return 0;
    return 1;
}

/* The affix mask (bit i: token i spans an affix extent exactly) and the active flag (a cut falls strictly inside
 * a token) of `n` ids (n <= MAX_WORD_TOKENS) with morpheme cuts `cuts` and affix extents `ext` (`next` pairs) in
 * their text: WordStates._respelled. */
static void state_flags(const patok_t *h, const int32_t *ids, int64_t n, const int32_t *cuts, int64_t ncut,
                        const int32_t *ext, int64_t next, uint64_t *mask, uint8_t *active) {
    int64_t off[MAX_WORD_TOKENS + 1];
    token_offsets(h, ids, n, off);
    *mask = 0;
    for (int64_t j = 0; j < next; j++)
        for (int64_t i = 0; i < n; i++)
            if (ext[2 * j] == off[i] && ext[2 * j + 1] == off[i + 1]) *mask |= 1ULL << i;
    *active = 0;
    for (int64_t c = 0; c < ncut && !*active; c++) *active = (uint8_t)inside_a_token(off, n, cuts[c]);
}

/* Append a state with its ids, flags, and its analysis at `coff` in cut_arena (`ncut` cuts; -1: none) and at
 * `eoff` in ext_arena (`next` extents). Returns its sid or MC_NOMEM. */
static int64_t add_state(patok_t *h, const int32_t *ids, int64_t n, uint64_t mask, uint8_t active, int64_t coff,
                         int64_t ncut, int64_t eoff, int64_t next) {
    int64_t sid = h->n_states, k = sid + 1;
    if (sid >= INT32_MAX) return MC_NOMEM; /* sids fit in 32 bits (group_slot) */
    if (GROW(h->st_off, h->cap_off, k) || GROW(h->st_len, h->cap_len, k) || GROW(h->st_mask, h->cap_mask, k) ||
        GROW(h->st_active, h->cap_act, k) || GROW(h->arena, h->cap_arena, h->arena_len + n) ||
        GROW(h->st_coff, h->cap_coff, k) || GROW(h->st_ncut, h->cap_ncut, k) ||
        GROW(h->st_eoff, h->cap_eoff, k) || GROW(h->st_next, h->cap_next, k))
        return MC_NOMEM;
    h->st_off[sid] = h->arena_len;
    h->st_len[sid] = (int32_t)n;
    h->st_mask[sid] = mask;
    h->st_active[sid] = active;
    memcpy(h->arena + h->arena_len, ids, (size_t)n * sizeof(int32_t));
    h->arena_len += n;
    h->st_coff[sid] = coff;
    h->st_ncut[sid] = (int32_t)ncut;
    h->st_eoff[sid] = eoff;
    h->st_next[sid] = (int32_t)next;
    h->n_states = k;
    if (n == 1 && h->single[ids[0]] < 0) h->single[ids[0]] = (int32_t)sid;
    if (2 * h->n_states > h->gcap) {
        if (group_rehash(h, h->gcap ? 2 * h->gcap : 4096)) return MC_NOMEM;
    } else {
        group_put(h, sid);
    }
    return sid;
}

/* Add the word groups ids[pairs[2k] ..][:pairs[2k+1]] (k < count; the groups mc_patok_unseen listed) as states,
 * with their analyses: ncuts[k] morpheme cuts (-1: a group left alone) from `cuts` and nextents[k] affix extents
 * (pairs) from `extents`, each group's after the one before. A group already known is skipped. */
int64_t mc_patok_add_groups(patok_t *h, const int32_t *ids, const int64_t *pairs, int64_t count,
                            const int32_t *cuts, const int64_t *ncuts, const int32_t *extents,
                            const int64_t *nextents) {
    for (int64_t k = 0; k < count; cuts += ncuts[k] > 0 ? ncuts[k] : 0, extents += 2 * nextents[k], k++) {
        const int32_t *group = ids + pairs[2 * k];
        int64_t n = pairs[2 * k + 1], ncut = ncuts[k], next = nextents[k];
        if (n < 1 || next < 0 || (ncut >= 0 && n > MAX_WORD_TOKENS) || (ncut < 0 && next)) return MC_BAD;
        if (pk_group_find(h, group, n) >= 0) continue;
        for (int64_t i = 0; i < n; i++)
            if (group[i] < 0 || group[i] >= h->size) return MC_BAD;
        uint64_t mask = 0;
        uint8_t active = 0;
        if (ncut >= 0) state_flags(h, group, n, cuts, ncut, extents, next, &mask, &active);
        int64_t stored = ncut > 0 ? ncut : 0;
        if (GROW(h->cut_arena, h->cap_cut, h->cut_len + stored) ||
            GROW(h->ext_arena, h->cap_ext, h->ext_len + 2 * next))
            return MC_NOMEM;
        memcpy(h->cut_arena + h->cut_len, cuts, (size_t)stored * sizeof(int32_t));
        memcpy(h->ext_arena + h->ext_len, extents, (size_t)(2 * next) * sizeof(int32_t));
        int64_t sid = add_state(h, group, n, mask, active, h->cut_len, ncut, h->ext_len, next);
        if (sid < 0) return sid;
        h->cut_len += stored;
        h->ext_len += 2 * next;
    }
    return MC_OK;
}

/* The state `ids` (m of them) that a contraction step made from state `parent`: the same text, so the same
 * analysis, shared; past MAX_WORD_TOKENS it is left alone. Returns its sid or MC_NOMEM. */
static int64_t add_derived(patok_t *h, int64_t parent, const int32_t *ids, int64_t m) {
    if (m > MAX_WORD_TOKENS) return add_state(h, ids, m, 0, 0, 0, -1, 0, 0);
    int64_t coff = h->st_coff[parent], ncut = h->st_ncut[parent], eoff = h->st_eoff[parent],
            next = h->st_next[parent];
    uint64_t mask;
    uint8_t active;
    state_flags(h, ids, m, h->cut_arena + coff, ncut, h->ext_arena + eoff, next, &mask, &active);
    return add_state(h, ids, m, mask, active, coff, ncut, eoff, next);
}

/* State `sid`: [length, affix mask (its bits), active, number of cuts (-1: no analysis)] into `info`; its ids and
 * cuts at mc_patok_state_ids / mc_patok_state_cuts. Returns MC_OK, or MC_BAD for an unknown sid. */
int64_t mc_patok_state(const patok_t *h, int64_t sid, int64_t *info) {
    if (sid < 0 || sid >= h->n_states) return MC_BAD;
    info[0] = h->st_len[sid];
    info[1] = (int64_t)h->st_mask[sid];
    info[2] = h->st_active[sid];
    info[3] = h->st_ncut[sid];
    return MC_OK;
}

const int32_t *mc_patok_state_ids(const patok_t *h, int64_t sid) { return h->arena + h->st_off[sid]; }

const int32_t *mc_patok_state_cuts(const patok_t *h, int64_t sid) { return h->cut_arena + h->st_coff[sid]; }

int64_t mc_patok_num_states(const patok_t *h) { return h->n_states; }

/* ---- contraction steps: (sid, span, cut) -> sid ----------------------------------------------------------- */

int64_t pk_step_find(const patok_t *h, int64_t key) {
    if (h->scap == 0) return INT64_MIN;
    uint64_t m = (uint64_t)h->scap - 1;
    for (uint64_t i = mix64((uint64_t)key) & m;; i = (i + 1) & m) {
        const int64_t *slot = h->steps + 2 * i;
        if (slot[0] == key) return slot[1];
        if (slot[0] < 0) return INT64_MIN;
    }
}

/* Put (key, value) in a table of `cap` pairs; returns whether the key is new there. */
static int step_slot_put(int64_t *steps, int64_t cap, int64_t key, int64_t value) {
    uint64_t m = (uint64_t)cap - 1, i = mix64((uint64_t)key) & m;
    while (steps[2 * i] >= 0 && steps[2 * i] != key) i = (i + 1) & m;
    int added = steps[2 * i] < 0;
    steps[2 * i] = key;
    steps[2 * i + 1] = value;
    return added;
}

int pk_step_put(patok_t *h, int64_t key, int64_t value) {
    if (2 * (h->scount + 1) > h->scap) {
        int64_t cap = h->scap ? 2 * h->scap : 1024;
        int64_t *t = malloc((size_t)cap * 2 * sizeof(int64_t));
        if (!t) return -1;
        for (int64_t i = 0; i < cap; i++) t[2 * i] = -1;
        for (int64_t i = 0; i < h->scap; i++)
            if (h->steps[2 * i] >= 0) step_slot_put(t, cap, h->steps[2 * i], h->steps[2 * i + 1]);
        free(h->steps);
        h->steps = t;
        h->scap = cap;
    }
    h->scount += step_slot_put(h->steps, h->scap, key, value);
    return 0;
}

/* ---- the span cache ----------------------------------------------------------------------------------------
 * What a step does to span r..e of a state depends only on the span: its ids, and the morpheme cuts strictly
 * inside it (relative to its first character) when the step cuts (WordStates.span_step: the span's text is
 * re-encoded, cut there or whole, and kept when it is new and short enough). So the result, "no step" or the ids
 * that replace the span, is cached by the span, and serves every state holding it, " kumain" and " kumain,"
 * alike; only a span never seen asks Python for its encoding (h->encode), and the new state is made here, with
 * the analysis of the state it came from. */

static int64_t span_entry_len(const int32_t *entry) { return 2 + (int64_t)entry[0] + entry[1]; }

static int64_t span_entry_size(const int32_t *entry) {
    int64_t klen = span_entry_len(entry);
    return klen + 1 + (entry[klen] > 0 ? entry[klen] : 0);
}

/* The key of span r..e of `sid` into h->key: [n, ncuts, ids.., cuts..]; its length, 0 when the state has no
 * analysis (not shared), or MC_NOMEM. */
static int64_t span_key(patok_t *h, int64_t sid, int64_t r, int64_t e, int cut) {
    int32_t ncut = h->st_ncut[sid];
    if (ncut < 0) return 0;
    const int32_t *ids = h->arena + h->st_off[sid], *cuts = h->cut_arena + h->st_coff[sid];
    int64_t n = e - r;
    if (GROW(h->key, h->cap_key, 2 + n + ncut)) return MC_NOMEM;
    int64_t cs = 0;
    for (int64_t i = 0; i < r; i++) cs += h->char_len[ids[i]];
    int64_t ce = cs;
    for (int64_t i = r; i < e; i++) ce += h->char_len[ids[i]];
    int32_t *key = h->key, inside = 0;
    memcpy(key + 2, ids + r, (size_t)n * sizeof(int32_t));
    if (cut)
        for (int32_t c = 0; c < ncut; c++)
            if (cuts[c] > cs && cuts[c] < ce) key[2 + n + inside++] = (int32_t)(cuts[c] - cs);
    key[0] = (int32_t)n;
    key[1] = inside;
    return 2 + n + inside;
}

static int64_t span_find(const patok_t *h, const int32_t *key, int64_t klen) {
    if (h->sp_cap == 0) return -1;
    uint64_t m = (uint64_t)h->sp_cap - 1;
    for (uint64_t i = pk_hash_ids(key, klen) & m;; i = (i + 1) & m) {
        int64_t at = h->sp_tab[i];
        if (at < 0) return -1;
        const int32_t *entry = h->sp_arena + at;
        if (span_entry_len(entry) == klen && memcmp(entry, key, (size_t)klen * sizeof(int32_t)) == 0) return at;
    }
}

static void span_slot_put(patok_t *h, int64_t at) {
    const int32_t *entry = h->sp_arena + at;
    uint64_t m = (uint64_t)h->sp_cap - 1, i = pk_hash_ids(entry, span_entry_len(entry)) & m;
    while (h->sp_tab[i] >= 0) i = (i + 1) & m;
    h->sp_tab[i] = at;
}

/* Record that the span h->key (klen ints) becomes `result` (rlen ids), or stays (rlen -1). */
static int span_put(patok_t *h, int64_t klen, const int32_t *result, int64_t rlen) {
    int64_t stored = rlen > 0 ? rlen : 0;
    if (GROW(h->sp_arena, h->cap_sp, h->sp_len + klen + 1 + stored)) return -1;
    int64_t at = h->sp_len;
    memcpy(h->sp_arena + at, h->key, (size_t)klen * sizeof(int32_t));
    h->sp_arena[at + klen] = (int32_t)rlen;
    if (stored) memcpy(h->sp_arena + at + klen + 1, result, (size_t)stored * sizeof(int32_t));
    h->sp_len += klen + 1 + stored;
    if (2 * (h->sp_count + 1) > h->sp_cap) {
        int64_t cap = h->sp_cap ? 2 * h->sp_cap : 4096;
        int64_t *t = realloc(h->sp_tab, (size_t)cap * sizeof(int64_t));
        if (!t) return -1;
        h->sp_tab = t;
        h->sp_cap = cap;
        for (int64_t i = 0; i < cap; i++) t[i] = -1;
        for (int64_t e = 0; e < at; e += span_entry_size(h->sp_arena + e)) span_slot_put(h, e);
    }
    span_slot_put(h, at);
    h->sp_count++;
    return 0;
}

/* Whether `rlen` ids in h->enc, Python's encoding of the span in h->key, replace the span: not when they are
 * the span's own ids, nor when they are longer than the span plus one token per morpheme boundary that the cut
 * introduces (a cut inside a token; WordStates.span_step). Returns rlen or -1 (no step); MC_CALLBACK when an id
 * is out of range, MC_DISAGREE when they do not spell as many characters as the span. */
static int64_t span_verdict(const patok_t *h, int64_t rlen) {
    const int32_t *key = h->key, *span = h->key + 2, *cuts = h->key + 2 + h->key[0];
    int64_t n = key[0], inside = key[1], chars = 0, off[MAX_WORD_TOKENS + 1];
    for (int64_t i = 0; i < rlen; i++) {
        if (h->enc[i] < 0 || h->enc[i] >= h->size) return MC_CALLBACK;
        chars += h->char_len[h->enc[i]];
    }
    token_offsets(h, span, n, off); /* a span of a state: n <= MAX_WORD_TOKENS */
    if (rlen >= 0 && chars != off[n]) return MC_DISAGREE;
    if (rlen < 0 || (rlen == n && memcmp(h->enc, span, (size_t)n * sizeof(int32_t)) == 0)) return -1;
    int64_t introduced = 0;
    for (int64_t c = 0; c < inside; c++) introduced += inside_a_token(off, n, cuts[c]);
    return rlen > n + introduced ? -1 : rlen;
}

/* The step (sid, r..e, cut) -> *next (a sid, or -1: no step), from the span cache when it knows the span, else
 * from Python's encoding (h->encode), whose verdict then goes into the span cache. A new state is added here.
 * Returns MC_OK or a negative MC_ code. */
int64_t pk_take_step(patok_t *h, int64_t sid, int64_t r, int64_t e, int cut, int64_t *next) {
    *next = -1;
    int64_t klen = span_key(h, sid, r, e, cut);
    if (klen <= 0) return klen; /* 0: a state without an analysis, which never steps */
    h->counts[0]++;
    int64_t at = span_find(h, h->key, klen);
    if (at >= 0) {
        h->counts[1]++;
    } else {
        h->counts[2]++;
        int64_t cap = h->key[0] + h->key[1]; /* a longer encoding is never kept */
        if (GROW(h->enc, h->cap_enc, cap)) return MC_NOMEM;
        int64_t rlen = h->encode(h->key, klen, h->enc, cap);
        if (rlen < -1 || rlen > cap) return MC_CALLBACK;
        rlen = span_verdict(h, rlen);
        if (rlen < -1) return rlen;
        at = h->sp_len;
        if (span_put(h, klen, h->enc, rlen)) return MC_NOMEM;
    }
    int32_t rlen = h->sp_arena[at + klen];
    if (rlen < 0) return MC_OK;
    /* The new state: the state with the span replaced. */
    int64_t len = h->st_len[sid], m = len - (e - r) + rlen;
    if (GROW(h->nst, h->cap_nst, m)) return MC_NOMEM;
    const int32_t *ids = h->arena + h->st_off[sid];
    memcpy(h->nst, ids, (size_t)r * sizeof(int32_t));
    memcpy(h->nst + r, h->sp_arena + at + klen + 1, (size_t)rlen * sizeof(int32_t));
    memcpy(h->nst + r + rlen, ids + e, (size_t)(len - e) * sizeof(int32_t));
    int64_t found = pk_group_find(h, h->nst, m);
    if (found < 0) found = add_derived(h, sid, h->nst, m);
    if (found < 0) return found;
    *next = found;
    return MC_OK;
}

/* Steps taken without the step cache, how many of them the span cache served, and how many called Python. */
void mc_patok_counts(const patok_t *h, int64_t *out) {
    for (int i = 0; i < 3; i++) out[i] = h->counts[i];
}

/* ---- life cycle ------------------------------------------------------------------------------------------ */

patok_t *mc_patok_new(int64_t size, const uint8_t *opens, const uint8_t *closes, const int32_t *char_len,
                      const int64_t *offsets, const int32_t *left, const int32_t *right, double contract_prop,
                      double max_attempts_factor, double affix_awareness, double expand_prop, int64_t nsizes,
                      const int64_t *sizes, const double *cdf, encode_fn encode) {
    if (nsizes < 1 || nsizes > MAX_SIZES) return NULL;
    patok_t *h = calloc(1, sizeof(patok_t));
    if (!h) return NULL;
    h->single = malloc((size_t)(size > 0 ? size : 1) * sizeof(int32_t));
    if (!h->single) {
        free(h);
        return NULL;
    }
    for (int64_t i = 0; i < size; i++) h->single[i] = -1;
    h->size = size;
    h->opens = opens;
    h->closes = closes;
    h->char_len = char_len;
    h->table = (split_table_t){offsets, left, right};
    h->contract_prop = contract_prop;
    h->max_attempts_factor = max_attempts_factor;
    h->affix_awareness = affix_awareness;
    h->expand_prop = expand_prop;
    h->nsizes = nsizes;
    for (int64_t i = 0; i < nsizes; i++) h->sizes[i] = sizes[i];
    for (int64_t i = 0; i + 1 < nsizes; i++) h->cdf[i] = cdf[i];
    h->encode = encode;
    return h;
}

/* Forget every state and step (WordStates.reset). */
void mc_patok_reset(patok_t *h) {
    h->b_ids = NULL;
    h->n_states = 0;
    h->arena_len = 0;
    h->cut_len = 0;
    h->ext_len = 0;
    h->scount = 0;
    h->sp_len = 0;
    h->sp_count = 0;
    for (int64_t i = 0; i < h->gcap; i++) h->gtab[i] = -1;
    for (int64_t i = 0; i < h->size; i++) h->single[i] = -1;
    for (int64_t i = 0; i < h->scap; i++) h->steps[2 * i] = -1;
    for (int64_t i = 0; i < h->sp_cap; i++) h->sp_tab[i] = -1;
}

void mc_patok_free(patok_t *h) {
    if (!h) return;
    void *bufs[] = {h->st_off, h->st_len, h->st_mask, h->st_active, h->arena, h->st_coff, h->st_ncut,
                    h->cut_arena, h->st_eoff, h->st_next, h->ext_arena, h->gtab, h->single, h->steps,
                    h->sp_arena, h->sp_tab, h->key, h->nst, h->enc,
                    h->g_start, h->g_end, h->g_sid, h->g_cur, h->slot_g, h->slot_off, h->u, h->doc,
                    h->frozen, h->out, h->ew.tok, h->ew.nxt, h->un_pairs, h->un_tab, h->b_sid};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) free(bufs[i]);
    free(h);
}
