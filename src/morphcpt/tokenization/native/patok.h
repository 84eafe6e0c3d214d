/* Patok's native state, shared by patok_states.c (the tables: word states, steps, the span cache) and patok.c (the
 * per-document loops). Private to those two files; what every kernel shares is in kernels.h. */
#ifndef MORPHCPT_PATOK_H
#define MORPHCPT_PATOK_H

#include "kernels.h"

#define MAX_WORD_TOKENS 64
#define MAX_SIZES 64

/* Python's canonical encoding of a span's text cut at the morpheme boundaries inside it: `key` is the span key
 * [n, ncuts, ids.., cuts..] (klen ints); the ids go to `out` (at most `cap`). Returns their count, -1 when the
 * encoding is not kept (not plain pieces, or longer than `cap`), or MC_CALLBACK when the Python raised. */
typedef int64_t (*encode_fn)(const int32_t *key, int64_t klen, int32_t *out, int64_t cap);

/* Patok's word states and steps plus the scheme's settings. Python owns the analyses: a word group's morpheme
 * cuts and affix-morph extents come from WordStates.intern_groups (mc_patok_add_groups); the states are kept here,
 * each with its ids, the affix mask and active flag computed from them (state_flags), and the analysis, which a
 * state derived by a contraction step shares with the state it came from (the same text). */
typedef struct {
    /* states: sid -> ids (in the arena), length, affix mask (bit i: token i), active, cuts (in cut_arena) and
     * affix extents ((start, end) character offsets, in ext_arena) */
    int64_t n_states, cap_off, cap_len, cap_mask, cap_act, arena_len, cap_arena;
    int64_t *st_off;
    int32_t *st_len;
    uint64_t *st_mask;
    uint8_t *st_active;
    int32_t *arena;
    int64_t cap_coff, cap_ncut, cut_len, cap_cut;
    int64_t *st_coff;
    int32_t *st_ncut; /* -1: a state without an analysis (left alone): it never steps */
    int32_t *cut_arena;
    int64_t cap_eoff, cap_next, ext_len, cap_ext;
    int64_t *st_eoff;
    int32_t *st_next; /* extents: pairs of ints */
    int32_t *ext_arena;
    /* groups: open addressing over the states' ids -> 31 bits of their hash << 32 | sid (-1: empty); one-token
     * groups by their id in `single` (-1: none) */
    int64_t *gtab;
    int64_t gcap;
    int32_t *single;
    /* steps: open addressing over (key, sid) pairs, side by side (key -1: empty) */
    int64_t *steps;
    int64_t scap, scount;
    /* the span cache (pk_take_step): entries [n, ncuts, ids.., cuts.., result length or -1, result ids..] in
     * sp_arena, found by open addressing over their offsets (-1: empty) */
    int32_t *sp_arena;
    int64_t sp_len, cap_sp;
    int64_t *sp_tab;
    int64_t sp_cap, sp_count;
    int32_t *key, *nst, *enc; /* scratch: the span key being looked up, a state being built, an encoding */
    int64_t cap_key, cap_nst, cap_enc;
    int64_t counts[3]; /* steps taken without the step cache, of which served by the span cache; callbacks */
    /* the vocabulary: its size, group openers and closers, characters per piece, the split table */
    int64_t size;
    const uint8_t *opens, *closes;
    const int32_t *char_len;
    split_table_t table;
    /* settings */
    double contract_prop, max_attempts_factor, affix_awareness, expand_prop;
    int64_t nsizes;
    int64_t sizes[MAX_SIZES];
    double cdf[MAX_SIZES];
    encode_fn encode;
    /* the groups of a batch without a state (mc_patok_unseen): (start, length) pairs, and a set over them */
    int64_t *un_pairs, *un_tab;
    int64_t cap_un, un_tcap;
    /* the sid of every group of that batch, in order (-1: listed as unseen), for mc_patok_batch to reuse */
    int64_t *b_sid;
    int64_t cap_bsid;
    const int32_t *b_ids; /* the batch they belong to: mc_patok_batch reuses them only for the same ids */
    int64_t b_ndocs;
    /* per-document work */
    int64_t cap_g0, cap_g1, cap_g2, cap_g3, cap_s0, cap_s1, cap_u, cap_doc, cap_fz, cap_out;
    int64_t *g_start, *g_end, *g_sid, *g_cur, *slot_g, *slot_off;
    double *u;
    int32_t *doc;
    uint8_t *frozen;
    int32_t *out;
    expand_work_t ew;
} patok_t;

uint64_t pk_hash_ids(const int32_t *ids, int64_t n);
int64_t pk_group_find(const patok_t *h, const int32_t *ids, int64_t n);
int64_t pk_step_find(const patok_t *h, int64_t key);
int pk_step_put(patok_t *h, int64_t key, int64_t value);
int64_t pk_take_step(patok_t *h, int64_t sid, int64_t r, int64_t e, int cut, int64_t *next);

#endif
