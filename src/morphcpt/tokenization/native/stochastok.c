/* StochasTok's expansion: split attempts on int32 token arrays (tokenization/expansions.py: Expander.expand),
 * per batch of documents. See kernels.h. */
#include "kernels.h"

/* Expander.expand: `attempts` split attempts on ids[0..n), each drawing (position, pair); frozen[j] != 0 marks
 * input positions never split (NULL: none). Tokens live in slots with a `next` link (a split keeps its left half
 * in the slot and appends the right half), so an attempt is O(1); the links give the output order. Writes the
 * result to out (room for n + attempts) and returns its length, or MC_NOMEM. */
int64_t expand_one(const int32_t *ids, int64_t n, int64_t attempts, bitgen_t *rng, const split_table_t *t,
                   const uint8_t *frozen, expand_work_t *w, int32_t *out) {
    if (n == 0 || attempts <= 0) {
        memcpy(out, ids, (size_t)n * sizeof(int32_t));
        return n;
    }
    if (GROW(w->tok, w->cap_tok, n + attempts) || GROW(w->nxt, w->cap_nxt, n + attempts)) return MC_NOMEM;
    int32_t *tok = w->tok;
    int64_t *nxt = w->nxt;
    memcpy(tok, ids, (size_t)n * sizeof(int32_t));
    for (int64_t i = 0; i < n; i++) nxt[i] = i + 1;
    nxt[n - 1] = -1;
    int64_t size = n;
    for (int64_t a = 0; a < attempts; a++) {
        double u_pos = NEXT(rng), u_pair = NEXT(rng);
        int64_t j = (int64_t)(u_pos * (double)size);
        if (j >= size) j = size - 1; /* u * size rounds up to size only for u within 2**-53 of 1 */
        int32_t id = tok[j];
        int64_t lo = t->offsets[id], count = t->offsets[id + 1] - lo;
        if (count == 0 || (frozen && j < n && frozen[j])) continue;
        int64_t p = lo + (int64_t)(u_pair * (double)count);
        if (p >= lo + count) p = lo + count - 1;
        tok[j] = t->left[p];
        nxt[size] = nxt[j];
        nxt[j] = size;
        tok[size] = t->right[p];
        size++;
    }
    int64_t k = 0;
    for (int64_t j = 0; j != -1; j = nxt[j]) out[k++] = tok[j];
    return k;
}

/* StochastokScheme over a batch: document d is ids[doc_off[d] .. doc_off[d+1]) with generator rngs[d] (documents
 * sharing a generator draw from it in order) and int(length * expand_prop) attempts. out has room for
 * doc_off[ndocs] + sum of attempts; out_len[d] receives each result's length. Returns the total, or MC_NOMEM. */
int64_t mc_stochastok_batch(const int32_t *ids, const int64_t *doc_off, int64_t ndocs, bitgen_t **rngs,
                            double expand_prop, const int64_t *offsets, const int32_t *left,
                            const int32_t *right, int32_t *out, int64_t *out_len) {
    split_table_t t = {offsets, left, right};
    expand_work_t w = {NULL, NULL, 0, 0};
    int64_t total = 0;
    for (int64_t d = 0; d < ndocs; d++) {
        int64_t n = doc_off[d + 1] - doc_off[d];
        int64_t attempts = (int64_t)((double)n * expand_prop);
        int64_t k = expand_one(ids + doc_off[d], n, attempts, rngs[d], &t, NULL, &w, out + total);
        if (k < 0) {
            total = k;
            break;
        }
        out_len[d] = k;
        total += k;
    }
    free(w.tok);
    free(w.nxt);
    return total;
}
