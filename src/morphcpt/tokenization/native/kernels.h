/* What morphcpt's compiled kernels share (stochastok.c, patok.c and patok_states.c): numpy's bitgen_t, error
 * codes, growable buffers, StochasTok's split table and its expansion, which Patok's last step reuses.
 *
 * Each kernel is an exact port of the Python reference it replaces (tokenization/expansions.py:
 * Expander.expand; tokenization/schemes/patok.py: PatokScheme.transform_many), drawing from the document's
 * numpy generator through numpy's public bitgen_t interface (numpy/random/bitgen.h), one `next_double` per
 * uniform, in the order the reference draws them: the outputs are the same ids, bit for bit, and the tests
 * compare the two on every scheme.
 *
 * Built on first use by tokenization/native/__init__.py (cc -O2, no fast-math, every .c file of this folder into
 * one library) and called through ctypes: no Python headers, so one build serves every Python version. Plain
 * C99; no global state.
 */
#ifndef MORPHCPT_KERNELS_H
#define MORPHCPT_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *);
    uint32_t (*next_uint32)(void *);
    double (*next_double)(void *);
    uint64_t (*next_raw)(void *);
} bitgen_t;

#define NEXT(rng) ((rng)->next_double((rng)->state))

enum { MC_OK = 0, MC_NOMEM = -1, MC_CALLBACK = -2, MC_BAD = -3, MC_UNSEEN = -4, MC_DISAGREE = -5 };

/* ---- growable buffers ---------------------------------------------------------------------------------- */

static inline int grow(void **buf, int64_t *cap, int64_t need, size_t item) {
    if (need <= *cap) return 0;
    int64_t n = *cap > 0 ? *cap : 256;
    while (n < need) n *= 2;
    void *p = realloc(*buf, (size_t)n * item);
    if (!p) return -1;
    *buf = p;
    *cap = n;
    return 0;
}

#define GROW(buf, cap, need) grow((void **)&(buf), &(cap), (need), sizeof(*(buf)))

/* ---- StochasTok's split table and expansion (stochastok.c) ----------------------------------------------- */

typedef struct {
    const int64_t *offsets; /* vocabulary size + 1: pairs of id i are [offsets[i], offsets[i+1]) */
    const int32_t *left, *right;
} split_table_t;

typedef struct {
    int32_t *tok;
    int64_t *nxt;
    int64_t cap_tok, cap_nxt;
} expand_work_t;

/* Expander.expand on one document (stochastok.c). */
int64_t expand_one(const int32_t *ids, int64_t n, int64_t attempts, bitgen_t *rng, const split_table_t *t,
                   const uint8_t *frozen, expand_work_t *w, int32_t *out);

#endif
