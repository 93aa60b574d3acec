/* SPDX-License-Identifier: MIT */
/* Literals and runs as a zlib stream, one deflate block per byte plane: no match search. */
#include "rle.h"

#include <libdeflate.h>
#include <string.h>

#define NLITLEN	 286 /* literals, end of block, 29 length codes */
#define NCLEN	 19  /* the code lengths' own alphabet */
#define END	 256
#define MAX_BITS 15
#define RUN_MIN	 3
#define RUN_MAX	 258

struct bits {
	uint64_t acc;
	int n;
	unsigned char *p, *end;
	int full;
};

static inline void put(struct bits *b, uint64_t v, int n)
{
	b->acc |= v << b->n;
	b->n += n;
	if (b->n < 32)
		return;
	if (b->end - b->p < 4) {
		b->full = 1;
		b->p = b->end - 4; /* keeps writing in bounds; the stream is refused */
	}
	b->p[0] = (unsigned char)b->acc;
	b->p[1] = (unsigned char)(b->acc >> 8);
	b->p[2] = (unsigned char)(b->acc >> 16);
	b->p[3] = (unsigned char)(b->acc >> 24);
	b->p += 4;
	b->acc >>= 32;
	b->n -= 32;
}

/* The bits left, padded with zeros to a whole byte. */
static void flush(struct bits *b)
{
	for (; b->n > 0; b->n -= 8, b->acc >>= 8) {
		if (b->p == b->end) {
			b->full = 1;
			return;
		}
		*b->p++ = (unsigned char)b->acc;
	}
	b->n = 0;
	b->acc = 0;
}

/* RFC 1951 3.2.5: the length codes' base lengths and extra bits. */
static const uint16_t len_base[29] = {3,  4,  5,  6,   7,   8,	 9,   10,  11, 13,
				      15, 17, 19, 23,  27,  31,	 35,  43,  51, 59,
				      67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
				      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

/* The index of the length code for len (3 to 258): past 10, each code
 * with e extra bits covers len - 3 in [2^(e + 2), 2^(e + 3)). */
static inline int len_code(unsigned len)
{
	unsigned l = len - 3;
	int e;

	if (len >= RUN_MAX)
		return 28;
	if (l < 8)
		return (int)l;
	e = 31 - __builtin_clz(l) - 2;
	return 4 * (e + 1) + (int)(l >> e) - 4;
}

/* The used symbols of freq (a second one of weight 1 when only one is:
 * inflate refuses an incomplete code) in sym, their weights in w, by
 * weight ascending (insertion sort: at most 286); returns how many. */
static int by_weight(const uint32_t *freq, int n, int *sym, uint32_t *w)
{
	int m = 0;

	for (int s = 0; s < n; s++)
		if (freq[s])
			sym[m++] = s;
	for (int s = 0; m < 2 && s < n; s++)
		if (!freq[s])
			sym[m++] = s;
	for (int i = 0; i < m; i++) {
		int ts = sym[i];
		uint32_t tw = freq[ts] ? freq[ts] : 1;
		int k = i;
		for (; k > 0 && w[k - 1] > tw; k--)
			w[k] = w[k - 1], sym[k] = sym[k - 1];
		w[k] = tw, sym[k] = ts;
	}
	return m;
}

/* The Huffman tree of the m weights w (ascending) by the two-queue method:
 * leaves [0, m), inner nodes from m on, made in order of weight; the
 * leaves' depths counted by length in count, lengths past limit at limit. */
static void count_depths(uint32_t *w, int m, int limit, int *count)
{
	int parent[2 * NLITLEN], depth[2 * NLITLEN];
	int leaf = 0, inner = m, next = m;

	while (next < 2 * m - 1) {
		int pick[2];
		for (int k = 0; k < 2; k++)
			pick[k] = leaf < m && (inner == next || w[leaf] <= w[inner]) ? leaf++
										     : inner++;
		w[next] = w[pick[0]] + w[pick[1]];
		parent[pick[0]] = parent[pick[1]] = next++;
	}
	depth[next - 1] = 0;
	for (int i = next - 2; i >= 0; i--)
		depth[i] = depth[parent[i]] + 1;
	for (int i = 0; i < m; i++)
		count[depth[i] > limit ? limit : depth[i]]++;
}

/*
 * Huffman code lengths for the n symbols of freq, none longer than limit,
 * the code complete. Lengths past the limit are folded back as zlib and
 * miniz do, keeping the Kraft sum at one; the lightest symbols then take
 * the longest codes.
 */
static void code_lengths(const uint32_t *freq, int n, int limit, uint8_t *len)
{
	uint32_t w[2 * NLITLEN], total = 0;
	int sym[NLITLEN], count[MAX_BITS + 2] = {0};
	int m = by_weight(freq, n, sym, w);

	memset(len, 0, (size_t)n);
	count_depths(w, m, limit, count);
	for (int b = limit; b > 0; b--)
		total += (uint32_t)count[b] << (limit - b);
	while (total > (1u << limit)) {
		count[limit]--;
		for (int b = limit - 1; b > 0; b--)
			if (count[b]) {
				count[b]--;
				count[b + 1] += 2;
				break;
			}
		total--;
	}
	for (int b = limit, i = 0; b > 0; b--)
		for (int k = 0; k < count[b]; k++)
			len[sym[i++]] = (uint8_t)b;
}

/* Canonical codes for lengths len (RFC 1951 3.2.2), bit-reversed: the
 * stream is read from the low bit up. */
static void codes_of(const uint8_t *len, int n, uint16_t *code)
{
	int count[MAX_BITS + 1] = {0}, next[MAX_BITS + 1];
	int c = 0;

	for (int s = 0; s < n; s++)
		count[len[s]]++;
	count[0] = 0;
	for (int b = 1; b <= MAX_BITS; b++) {
		c = (c + count[b - 1]) << 1;
		next[b] = c;
	}
	for (int s = 0; s < n; s++) {
		unsigned v = len[s] ? (unsigned)next[len[s]]++ : 0, r = 0;
		for (int b = 0; b < len[s]; b++, v >>= 1)
			r = r << 1 | (v & 1);
		code[s] = (uint16_t)r;
	}
}

/* How many of p[0, n) equal b before one does not: a word at a time,
 * since the upper planes are runs of zeros 64 KiB long. */
static size_t run_of(const unsigned char *p, size_t n, unsigned char b)
{
	uint64_t all = b * UINT64_C(0x0101010101010101), w;
	size_t r = 0;

	for (; r + 8 <= n; r += 8) {
		memcpy(&w, p + r, 8);
		if (w != all)
			break;
	}
	while (r < n && p[r] == b)
		r++;
	return r;
}

/* A plane as tokens: literals (< 256) and runs of the byte before them
 * (256 + length); the literal/length symbols counted in freq. */
static size_t tokenize(const unsigned char *p, size_t n, uint16_t *tok, uint32_t *freq)
{
	size_t i = 0, nt = 0;

	while (i < n) {
		unsigned char b = p[i++];
		size_t r = 0;
		tok[nt++] = b;
		freq[b]++;
		if (i < n && p[i] == b)
			r = run_of(p + i, n - i, b);
		while (r >= RUN_MIN) {
			unsigned l = r > RUN_MAX ? RUN_MAX : (unsigned)r;
			tok[nt++] = (uint16_t)(256 + l);
			freq[257 + len_code(l)]++;
			i += l;
			r -= l;
		}
	}
	freq[END]++;
	return nt;
}

/* One code-length symbol with its extra bits' value, counted in freq. */
static inline void clen_sym(uint16_t *out, int *k, uint32_t *freq, int sym, int extra)
{
	freq[sym]++;
	out[(*k)++] = (uint16_t)(sym | extra << 5);
}

/* The literal/length and distance code lengths, run-length coded with the
 * code-length alphabet (16: repeat 3-6, 17: 3-10 zeros, 18: 11-138 zeros):
 * symbol in the low 5 bits, its extra bits' value above. */
static int rle_lengths(const uint8_t *seq, int n, uint16_t *out, uint32_t *freq)
{
	int k = 0;

	for (int i = 0; i < n;) {
		uint8_t v = seq[i];
		int r = 1, l;
		while (i + r < n && seq[i + r] == v)
			r++;
		i += r;
		if (v == 0) {
			for (; r >= 11; r -= l)
				clen_sym(out, &k, freq, 18, (l = r > 138 ? 138 : r) - 11);
			if (r >= 3)
				clen_sym(out, &k, freq, 17, r - 3), r = 0;
		} else {
			clen_sym(out, &k, freq, v, 0), r--;
			for (; r >= 3; r -= l)
				clen_sym(out, &k, freq, 16, (l = r > 6 ? 6 : r) - 3);
		}
		for (; r > 0; r--)
			clen_sym(out, &k, freq, v, 0);
	}
	return k;
}

static const uint8_t clen_order[NCLEN] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
					  11, 4,  12, 3, 13, 2, 14, 1, 15};

/* The block header: its kind, then the code lengths (RFC 1951 3.2.7). */
static void put_header(struct bits *b, int final, const uint8_t *litlen_len, int hlit)
{
	uint8_t seq[NLITLEN + 2], clen_len[NCLEN];
	uint16_t rle[NLITLEN + 2], clen_code[NCLEN];
	uint32_t freq[NCLEN] = {0};
	int hclen = NCLEN, nrle;

	memcpy(seq, litlen_len, (size_t)hlit);
	seq[hlit] = seq[hlit + 1] = 1; /* distance codes 0 and 1: distance 1 is code 0 */
	nrle = rle_lengths(seq, hlit + 2, rle, freq);
	code_lengths(freq, NCLEN, 7, clen_len);
	codes_of(clen_len, NCLEN, clen_code);
	while (hclen > 4 && !clen_len[clen_order[hclen - 1]])
		hclen--;
	put(b, (uint64_t) final | 2u << 1, 3);
	put(b, (uint64_t)(hlit - 257) | (uint64_t)(2 - 1) << 5 | (uint64_t)(hclen - 4) << 10, 14);
	for (int i = 0; i < hclen; i++)
		put(b, clen_len[clen_order[i]], 3);
	for (int i = 0; i < nrle; i++) {
		int s = rle[i] & 31, x = rle[i] >> 5;
		put(b, clen_code[s], clen_len[s]);
		if (s >= 16)
			put(b, (uint64_t)x, s == 16 ? 2 : s == 17 ? 3 : 7);
	}
}

static void put_plane(struct bits *b, const unsigned char *p, size_t n, uint16_t *tok, int final)
{
	uint32_t freq[NLITLEN] = {0};
	uint8_t len[NLITLEN];
	uint16_t code[NLITLEN];
	size_t nt = tokenize(p, n, tok, freq);
	int hlit = NLITLEN;

	code_lengths(freq, NLITLEN, MAX_BITS, len);
	codes_of(len, NLITLEN, code);
	while (hlit > 257 && !len[hlit - 1])
		hlit--;
	put_header(b, final, len, hlit);
	for (size_t i = 0; i < nt && !b->full; i++) {
		unsigned t = tok[i];
		if (t < 256) {
			put(b, code[t], len[t]);
		} else {
			int k = len_code(t - 256), s = 257 + k;
			/* the length, its extra bits, then distance code 0 (one bit, 0) */
			put(b, code[s] | (uint64_t)(t - 256 - len_base[k]) << len[s],
			    len[s] + len_extra[k] + 1);
		}
	}
	put(b, code[END], len[END]);
}

size_t rle_zlib(const unsigned char *in, size_t plane, int nplanes, uint16_t *tokens,
		unsigned char *out, size_t cap)
{
	struct bits b = {.p = out + 2, .end = out + cap};
	uint32_t adler;

	if (cap < 16 || nplanes < 1 || plane == 0)
		return 0;
	out[0] = 0x78; /* deflate, 32 KiB window */
	out[1] = 0x01; /* no dictionary; (0x78 << 8 | 0x01) % 31 == 0 */
	for (int k = 0; k < nplanes && !b.full; k++)
		put_plane(&b, in + (size_t)k * plane, plane, tokens, k == nplanes - 1);
	flush(&b);
	if (b.full || b.end - b.p < 4)
		return 0;
	adler = libdeflate_adler32(1, in, plane * (size_t)nplanes);
	for (int k = 3; k >= 0; k--)
		*b.p++ = (unsigned char)(adler >> (8 * k));
	return (size_t)(b.p - out);
}
