/*-------------------------------------------------------------------------
 *
 * spmblock.c
 *	  Posting-block encoding and decoding (see spmblock.h for the layout).
 *
 * Decoding validates everything it reads against what the caller knows
 * from the skip entry (count, last docid) and the bytes available, and
 * reports a mismatch instead of trusting the page: callers raise
 * ERRCODE_INDEX_CORRUPTED.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "sparsevec.h"
#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"
#include "spmblock.h"

static bool decode_block(const char *block, int avail, int count,
						 bool check_last, uint32 last_docid, bool lower,
						 uint32 *docids, float *weights, int16 *exp);

/*
 * Read one varbyte delta at *pp (not past end) and add it to *d.  Returns
 * false if the bytes are not a valid delta (empty, too long, zero, or
 * overflowing the docid).
 */
static inline bool
next_docid(const unsigned char **pp, const unsigned char *end, uint32 *d)
{
	const unsigned char *p = *pp;
	uint32		delta;
	int			shift = 7;

	if (p >= end)
		return false;
	delta = *p & 0x7F;
	while (*p++ & 0x80)
	{
		if (p >= end || shift > 28)
			return false;
		delta |= (uint32) (*p & 0x7F) << shift;
		shift += 7;
	}
	if (delta == 0 || *d > PG_UINT32_MAX - delta)
		return false;
	*d += delta;
	*pp = p;
	return true;
}

/* bits needed for v (0 for 0) */
static inline int
bit_width(uint32 v)
{
	return v ? pg_leftmost_one_pos32(v) + 1 : 0;
}

/* a little-endian 64-bit load from an unaligned address */
static inline uint64
load_le64(const unsigned char *p)
{
	uint64		x;

	memcpy(&x, p, sizeof(x));
#ifdef WORDS_BIGENDIAN
	x = pg_bswap64(x);
#endif
	return x;
}

/* packed value j (delta - 1) of a block's deltas at p, mask = 2^width - 1 */
static inline uint64
packed_value(const unsigned char *p, int j, int width, uint64 mask)
{
	uint32		bit = (uint32) j * width;

	return (load_le64(p + (bit >> 3)) >> (bit & 7)) & mask;
}

/*
 * The packed deltas of a block, width bits each at p, summed from r in 64
 * bits: returns the last sum.  r is docids[0] - base, so that each sum is
 * a docid minus base (modulo 2^64; the caller adds base back to compare
 * the last one with the skip entry's last docid, so that no docid can
 * have wrapped around).  Without acc, docid j + 1 goes to docids[j + 1]
 * (base 0); with it, pv[j + 1] is added to acc[(docid - base) & mask].
 *
 * Called with width a constant (unpack_deltas, unpack_accumulate): eight
 * values then take exactly width bytes, so within a group of eight every
 * load's offset, shift and mask is a constant: four instructions a value
 * (load, shift, mask, add) instead of nine (doc/decisions.md "Block
 * decoding with constant widths").  Loads of 8 bytes at any byte of the
 * deltas stay inside the block (see decode_block).
 */
static pg_attribute_always_inline uint64
unpack_width(const unsigned char *p, int nvals, const int width, uint64 r,
			 uint32 *docids, const double *pv, double *acc, uint32 mask)
{
	const uint64 vmask = (UINT64CONST(1) << width) - 1;
	const unsigned char *g = p;
	int			j = 0;

	/* the next docid (minus base), from value k of the group at g */
#define SPM_UNPACK_NEXT(k) \
	(r += ((load_le64(g + (((k) * width) >> 3)) >> (((k) * width) & 7)) & \
		   vmask) + 1)

	if (acc)
	{
		const double *pg = pv + 1;

#define SPM_UNPACK_ACC(k) \
		do { \
			double	   *a_ = &acc[(uint32) SPM_UNPACK_NEXT(k) & mask]; \
			*a_ = *a_ + pg[k]; \
		} while (0)
		for (; j + 8 <= nvals; j += 8, g += width, pg += 8)
		{
			SPM_UNPACK_ACC(0);
			SPM_UNPACK_ACC(1);
			SPM_UNPACK_ACC(2);
			SPM_UNPACK_ACC(3);
			SPM_UNPACK_ACC(4);
			SPM_UNPACK_ACC(5);
			SPM_UNPACK_ACC(6);
			SPM_UNPACK_ACC(7);
		}
#undef SPM_UNPACK_ACC
		for (; j < nvals; j++)
		{
			double	   *a;

			r += packed_value(p, j, width, vmask) + 1;
			a = &acc[(uint32) r & mask];
			*a = *a + pv[j + 1];
		}
	}
	else
	{
		uint32	   *dg = docids + 1;

		for (; j + 8 <= nvals; j += 8, g += width, dg += 8)
		{
			dg[0] = (uint32) SPM_UNPACK_NEXT(0);
			dg[1] = (uint32) SPM_UNPACK_NEXT(1);
			dg[2] = (uint32) SPM_UNPACK_NEXT(2);
			dg[3] = (uint32) SPM_UNPACK_NEXT(3);
			dg[4] = (uint32) SPM_UNPACK_NEXT(4);
			dg[5] = (uint32) SPM_UNPACK_NEXT(5);
			dg[6] = (uint32) SPM_UNPACK_NEXT(6);
			dg[7] = (uint32) SPM_UNPACK_NEXT(7);
		}
		for (; j < nvals; j++)
		{
			r += packed_value(p, j, width, vmask) + 1;
			docids[j + 1] = (uint32) r;
		}
	}
#undef SPM_UNPACK_NEXT
	return r;
}

#define SPM_UNPACK_CASES(call) \
	SPM_UNPACK_CASE(0, call); SPM_UNPACK_CASE(1, call); \
	SPM_UNPACK_CASE(2, call); SPM_UNPACK_CASE(3, call); \
	SPM_UNPACK_CASE(4, call); SPM_UNPACK_CASE(5, call); \
	SPM_UNPACK_CASE(6, call); SPM_UNPACK_CASE(7, call); \
	SPM_UNPACK_CASE(8, call); SPM_UNPACK_CASE(9, call); \
	SPM_UNPACK_CASE(10, call); SPM_UNPACK_CASE(11, call); \
	SPM_UNPACK_CASE(12, call); SPM_UNPACK_CASE(13, call); \
	SPM_UNPACK_CASE(14, call); SPM_UNPACK_CASE(15, call); \
	SPM_UNPACK_CASE(16, call); SPM_UNPACK_CASE(17, call); \
	SPM_UNPACK_CASE(18, call); SPM_UNPACK_CASE(19, call); \
	SPM_UNPACK_CASE(20, call); SPM_UNPACK_CASE(21, call); \
	SPM_UNPACK_CASE(22, call); SPM_UNPACK_CASE(23, call); \
	SPM_UNPACK_CASE(24, call); SPM_UNPACK_CASE(25, call); \
	SPM_UNPACK_CASE(26, call); SPM_UNPACK_CASE(27, call); \
	SPM_UNPACK_CASE(28, call); SPM_UNPACK_CASE(29, call); \
	SPM_UNPACK_CASE(30, call); SPM_UNPACK_CASE(31, call); \
	SPM_UNPACK_CASE(32, call)
#define SPM_UNPACK_CASE(w, call) case w: return call(w)

/* unpack_width into docids[1 .. nvals], width (0 .. 32) a constant */
static uint64
unpack_deltas(const unsigned char *p, int nvals, int width, uint64 d64,
			  uint32 *docids)
{
#define SPM_UNPACK_DOCIDS(w) \
	unpack_width(p, nvals, w, d64, docids, NULL, NULL, 0)
	switch (width)
	{
			SPM_UNPACK_CASES(SPM_UNPACK_DOCIDS);
	}
	/* spm_block_size refuses other widths: the general loop all the same */
	return SPM_UNPACK_DOCIDS(width);
#undef SPM_UNPACK_DOCIDS
}

/* unpack_width into acc, width (0 .. 32) a constant */
static uint64
unpack_accumulate(const unsigned char *p, int nvals, int width, uint64 r,
				  const double *pv, double *acc, uint32 mask)
{
#define SPM_UNPACK_ACC(w) unpack_width(p, nvals, w, r, NULL, pv, acc, mask)
	switch (width)
	{
			SPM_UNPACK_CASES(SPM_UNPACK_ACC);
	}
	return SPM_UNPACK_ACC(width);
#undef SPM_UNPACK_ACC
}
#undef SPM_UNPACK_CASE
#undef SPM_UNPACK_CASES

/*
 * The size in bytes of the docid deltas of count postings in either codec,
 * and the bit width the packed codec would use.
 */
static void
delta_sizes(const uint32 *docids, int count, int *varbyte, int *packed,
			int *width)
{
	uint32		maxv = 0;
	int			vb = 0;

	for (int i = 1; i < count; i++)
	{
		uint32		delta = docids[i] - docids[i - 1];

		Assert(docids[i] > docids[i - 1]);
		maxv |= delta - 1;
		vb += 1 + (delta >= (1U << 7)) + (delta >= (1U << 14)) +
			(delta >= (1U << 21)) + (delta >= (1U << 28));
	}
	*width = bit_width(maxv);
	*varbyte = vb;
	*packed = SPM_PACKED_BYTES(count, *width);
}

/*
 * Encode in the given codec; width is the packed codec's (delta_sizes).
 */
static int
encode_block(const uint32 *docids, const float *weights, int count,
			 int codec, int width, const SpmBlockQuant *quant,
			 const int *codes, char *out)
{
	SpmBlockHeader hdr;
	unsigned char *p;
	int			nids;
	int			size;

	Assert(count >= 1 && count <= SPM_BLOCK_POSTINGS);

	p = (unsigned char *) out + sizeof(SpmBlockHeader);
	if (codec == SPM_CODEC_PACKED)
	{
		uint64		acc = 0;
		int			nacc = 0;

		nids = SPM_PACKED_BYTES(count, width);
		/* values delta - 1, width bits each, least significant bit first */
		for (int i = 1; i < count; i++)
		{
			acc |= (uint64) (docids[i] - docids[i - 1] - 1) << nacc;
			nacc += width;
			while (nacc >= 8)
			{
				*p++ = (unsigned char) acc;
				acc >>= 8;
				nacc -= 8;
			}
		}
		if (nacc > 0)
			*p++ = (unsigned char) acc;
		Assert(p - ((unsigned char *) out + sizeof(SpmBlockHeader)) == nids);
		hdr.flags = (uint8) (SPM_BLOCK_PACKED | width);
	}
	else
	{
		for (int i = 1; i < count; i++)
		{
			uint32		delta = docids[i] - docids[i - 1];

			Assert(docids[i] > docids[i - 1]);
			while (delta >= 0x80)
			{
				*p++ = (unsigned char) (delta | 0x80);
				delta >>= 7;
			}
			*p++ = (unsigned char) delta;
		}
		nids = (int) (p - ((unsigned char *) out + sizeof(SpmBlockHeader)));
		hdr.flags = 0;
	}

	hdr.first_docid = docids[0];
	hdr.count = (uint8) count;
	hdr.nbytes_ids = (uint16) nids;
	if (quant)
		hdr.flags |= SPM_BLOCK_QUANT;
	memcpy(out, &hdr, sizeof(hdr));

	size = TYPEALIGN(4, sizeof(SpmBlockHeader) + nids);
	memset(out + sizeof(SpmBlockHeader) + nids, 0,
		   size - sizeof(SpmBlockHeader) - nids);
	if (quant)
	{
		unsigned char *c = (unsigned char *) out + size + sizeof(SpmBlockQuant);
		int			end = size + TYPEALIGN(4, sizeof(SpmBlockQuant) + count);

		memcpy(out + size, quant, sizeof(SpmBlockQuant));
		for (int i = 0; i < count; i++)
			c[i] = (unsigned char) (codes[i] & 0xFF);
		memset(c + count, 0, end - (size + sizeof(SpmBlockQuant) + count));
		size = end;
	}
	else
	{
		memcpy(out + size, weights, count * sizeof(float));
		size += count * sizeof(float);
	}

#ifdef USE_ASSERT_CHECKING
	{
		uint32		d[SPM_BLOCK_POSTINGS];
		float		hi[SPM_BLOCK_POSTINGS];
		float		lo[SPM_BLOCK_POSTINGS];
		int16		e;

		Assert(spm_block_size(out, size) == size);
		Assert(spm_block_decode_bounds(out, size, count, docids[count - 1],
									   false, d, hi, &e));
		Assert(spm_block_decode_bounds(out, size, count, docids[count - 1],
									   true, d, lo, &e));
		for (int i = 0; i < count; i++)
			Assert(d[i] == docids[i] &&
				   (quant ? (hi[i] >= weights[i] && lo[i] <= weights[i]) :
					(memcmp(&hi[i], &weights[i], sizeof(float)) == 0 &&
					 memcmp(&lo[i], &weights[i], sizeof(float)) == 0)));
	}
#endif

	return size;
}

/*
 * Encode count postings (docids strictly ascending) into out, which must
 * hold SPM_BLOCK_MAX_BYTES, in the codec whose deltas take fewer bytes
 * (the packed one on a tie: it decodes without branches), with raw
 * weights.  Returns the encoded size, a multiple of 4.
 */
int
spm_block_encode(const uint32 *docids, const float *weights, int count,
				 char *out)
{
	float		bmax;
	float		bmin;

	return spm_block_encode_bounds(docids, weights, NULL, count, false, out,
								   &bmax, &bmin);
}

/*
 * Quantize count weights (spmblock.h): the smallest exponent e, at least
 * SPM_QEXP_MIN and at least every exps[i] that is not SPM_QEXP_EXACT, at
 * which the cells ceil(w / 2^e) of the weights span at most 255 values
 * and stay below SPM_QBASE_LIMIT in magnitude; into *exp, *base (the cell
 * below the smallest weight's) and codes[] (ceil(w / 2^e) - base, 1..255).
 * exps == NULL means every weight is exact.  A weight with an exp is the
 * upper end of its cell at that exp, so its cell at e >= exp is the cell
 * of the coarser lattice that holds the whole finer one (ceil(n / 2^d) - 1
 * = floor((n - 1) / 2^d)).  Returns false when no exponent up to
 * SPM_QEXP_MAX fits.  Computed in double, exactly: w * 2^-e is a
 * power-of-two scaling of a float4.
 */
bool
spm_quantize(const float *weights, const int16 *exps, int count,
			 int16 *exp, int32 *base, int *codes)
{
	double		maxv = weights[0];
	double		minv = weights[0];
	int			emin = SPM_QEXP_MIN;
	int			x;
	int			e;
	double		b;

	for (int i = 0; i < count; i++)
	{
		double		v = weights[i];

		if (isnan(v) || isinf(v))
			return false;
		if (exps != NULL && exps[i] != SPM_QEXP_EXACT)
			emin = Max(emin, exps[i]);
		maxv = Max(maxv, v);
		minv = Min(minv, v);
	}
	/* a start below the answer: the spread, or |w| / 2^23 */
	(void) frexp(Max(maxv - minv, Max(fabs(maxv), fabs(minv)) / 8388608.0), &x);
	e = Max(emin, x - 9);
	for (;; e++)
	{
		double		hi;
		double		lo;

		if (e > SPM_QEXP_MAX)
			return false;
		hi = ceil(ldexp(maxv, -e));
		lo = ceil(ldexp(minv, -e)) - 1;
		if (hi - lo <= 255 && fabs(hi) < SPM_QBASE_LIMIT - 256 &&
			fabs(lo) < SPM_QBASE_LIMIT - 256)
		{
			b = lo;
			break;
		}
	}
	for (int i = 0; i < count; i++)
		codes[i] = (int) (ceil(ldexp((double) weights[i], -e)) - b);
	*exp = (int16) e;
	*base = (int32) b;
	return true;
}

/*
 * Encode count postings like spm_block_encode, with their weights
 * quantized when quantize is true and the block can be (spmblock.h; else
 * raw).  exps gives each weight's exponent, SPM_QEXP_EXACT for an exact
 * weight (NULL: all exact); an inexact weight in a block that stays raw
 * is an error of the caller's (returns -1).  *bmax and *bmin receive the
 * largest upper end and the smallest lower end the block decodes to: the
 * bounds for its skip entry.
 */
int
spm_block_encode_bounds(const uint32 *docids, const float *weights,
						const int16 *exps, int count, bool quantize,
						char *out, float *bmax, float *bmin)
{
	int			vb;
	int			packed;
	int			width;
	int			codec;
	int			codes[SPM_BLOCK_POSTINGS];
	SpmBlockQuant q;
	bool		any_inexact = false;

	if (exps)
		for (int i = 0; i < count; i++)
			any_inexact |= exps[i] != SPM_QEXP_EXACT;

	delta_sizes(docids, count, &vb, &packed, &width);

	/*
	 * Compared as the blocks' sizes, weights aligned: deltas one byte
	 * longer may cost nothing, and packed blocks decode without branches.
	 */
	codec = TYPEALIGN(4, sizeof(SpmBlockHeader) + packed) <=
		TYPEALIGN(4, sizeof(SpmBlockHeader) + vb) ?
		SPM_CODEC_PACKED : SPM_CODEC_VARBYTE;

	if ((quantize && count >= SPM_QUANT_MIN_POSTINGS) || any_inexact)
	{
		if (spm_quantize(weights, exps, count, &q.exp, &q.base, codes))
		{
			float		scale = ldexpf(1.0f, q.exp);

			q.reserved = 0;
			*bmax = (float) (q.base + codes[0]) * scale;
			*bmin = (float) (q.base + codes[0] - 1) * scale;
			for (int i = 1; i < count; i++)
			{
				*bmax = Max(*bmax, (float) (q.base + codes[i]) * scale);
				*bmin = Min(*bmin, (float) (q.base + codes[i] - 1) * scale);
			}
			return encode_block(docids, weights, count, codec, width, &q,
								codes, out);
		}
		if (any_inexact)
			return -1;
	}
	*bmax = *bmin = weights[0];
	for (int i = 1; i < count; i++)
	{
		*bmax = Max(*bmax, weights[i]);
		*bmin = Min(*bmin, weights[i]);
	}
	return encode_block(docids, weights, count, codec, width, NULL, NULL, out);
}

/*
 * The same in the given codec (SPM_CODEC_VARBYTE or SPM_CODEC_PACKED), for
 * tests that need blocks of one codec.
 */
int
spm_block_encode_codec(const uint32 *docids, const float *weights, int count,
					   int codec, char *out)
{
	int			vb;
	int			packed;
	int			width;

	delta_sizes(docids, count, &vb, &packed, &width);
	return encode_block(docids, weights, count, codec, width, NULL, NULL,
						out);
}

/*
 * Size of the encoded block at block, or -1 if its header is inconsistent
 * with the avail bytes that follow it.
 */
int
spm_block_size(const char *block, int avail)
{
	SpmBlockHeader hdr;
	int			size;
	int			codec;

	if (avail < (int) sizeof(SpmBlockHeader))
		return -1;
	memcpy(&hdr, block, sizeof(hdr));
	if (hdr.count < 1 || hdr.count > SPM_BLOCK_POSTINGS)
		return -1;
	codec = hdr.flags & ~SPM_BLOCK_QUANT;
	if (codec == 0)
	{
		if (hdr.nbytes_ids < hdr.count - 1 || hdr.nbytes_ids > (hdr.count - 1) * 5)
			return -1;
	}
	else if ((codec & ~SPM_BLOCK_WIDTH_MASK) != SPM_BLOCK_PACKED ||
			 (codec & SPM_BLOCK_WIDTH_MASK) > 32 ||
			 hdr.nbytes_ids != SPM_PACKED_BYTES(hdr.count, codec & SPM_BLOCK_WIDTH_MASK))
		return -1;
	size = TYPEALIGN(4, sizeof(SpmBlockHeader) + hdr.nbytes_ids);
	if (hdr.flags & SPM_BLOCK_QUANT)
	{
		SpmBlockQuant q;

		if (size + (int) sizeof(SpmBlockQuant) > avail)
			return -1;
		memcpy(&q, block + size, sizeof(q));
		if (q.exp < SPM_QEXP_MIN || q.exp > SPM_QEXP_MAX ||
			q.base <= -(SPM_QBASE_LIMIT - 256) || q.base >= SPM_QBASE_LIMIT - 256 ||
			q.reserved != 0)
			return -1;
		size += TYPEALIGN(4, sizeof(SpmBlockQuant) + hdr.count);
	}
	else
		size += hdr.count * sizeof(float);
	return size <= avail ? size : -1;
}

/*
 * The weights of a block that spm_block_size accepted, into w[]: raw
 * ones as stored, quantized ones as the upper (or, lower = true, the
 * lower) ends of their cells; *exp gets the block's exponent, or
 * SPM_QEXP_EXACT for raw weights.  (base + code) * 2^exp is exact in
 * float4: |base + code| < 2^24 and exp in [SPM_QEXP_MIN, SPM_QEXP_MAX].
 */
#if defined(__GNUC__) && !defined(__clang__)
/* -O2 does not vectorize the conversion loop below; it is 10% of a query */
__attribute__((optimize("tree-vectorize")))
#endif
static void
block_weights(const char *block, const SpmBlockHeader *hdr, bool lower,
			  float *w, int16 *exp)
{
	const char *wp = block + TYPEALIGN(4, sizeof(SpmBlockHeader) + hdr->nbytes_ids);
	int			count = hdr->count;

	if (hdr->flags & SPM_BLOCK_QUANT)
	{
		SpmBlockQuant q;
		const unsigned char *c = (const unsigned char *) wp + sizeof(SpmBlockQuant);
		float		scale;

		int32		b;

		float		bias;

		memcpy(&q, wp, sizeof(q));
		scale = spm_pow2f(q.exp);
		b = q.base - (lower ? 1 : 0);

		/*
		 * (b + c) * 2^e as b * 2^e + c * 2^e: both products and their sum
		 * are float4 values (|b + c| < 2^24), so the sum is exact; in this
		 * form the loop converts bytes to floats in vector registers.
		 */
		bias = (float) b * scale;
		for (int i = 0; i < count; i++)
			w[i] = bias + (float) c[i] * scale;
		*exp = q.exp;
	}
	else
	{
		memcpy(w, wp, count * sizeof(float));
		*exp = SPM_QEXP_EXACT;
	}
}

/*
 * Decode the block at block (at most avail bytes) into docids[] and
 * weights[].  count and last_docid come from the skip entry; the block must
 * agree with them.  Returns false if anything is inconsistent.
 */
bool
spm_block_decode(const char *block, int avail, int count, uint32 last_docid,
				 uint32 *docids, float *weights)
{
	int16		exp;

	return spm_block_decode_bounds(block, avail, count, last_docid, false,
								   docids, weights, &exp);
}

/*
 * The same, with quantized weights decoded as the lower ends of their
 * intervals when lower is true (for a negative query weight), and the
 * block's exponent in *exp (SPM_QEXP_EXACT: raw weights).
 */
bool
spm_block_decode_bounds(const char *block, int avail, int count,
						uint32 last_docid, bool lower, uint32 *docids,
						float *weights, int16 *exp)
{
	return decode_block(block, avail, count, true, last_docid, lower, docids,
						weights, exp);
}

/*
 * spm_block_decode_bounds, and with check_last false the same checks
 * except the comparison with last_docid (spm_block_last_docid).
 */
static bool
decode_block(const char *block, int avail, int count, bool check_last,
			 uint32 last_docid, bool lower, uint32 *docids, float *weights,
			 int16 *exp)
{
	SpmBlockHeader hdr;
	const unsigned char *p;
	const unsigned char *end;
	uint32		d;
	int			size;

	size = spm_block_size(block, avail);
	if (size < 0)
		return false;
	memcpy(&hdr, block, sizeof(hdr));
	if (hdr.count != count)
		return false;

	p = (const unsigned char *) block + sizeof(SpmBlockHeader);
	end = p + hdr.nbytes_ids;
	d = hdr.first_docid;
	docids[0] = d;

	if ((hdr.flags & ~SPM_BLOCK_QUANT) != 0)
	{
		/*
		 * Packed: no branch per posting.  The sum runs in 64 bits and must
		 * end at last_docid, so no docid can have wrapped around.  A load
		 * of 8 bytes at any byte of the deltas stays inside the block: the
		 * weights behind them take 8 bytes or more once count >= 2 (raw:
		 * 4 a posting; quantized: 4 + count, padded to 4).
		 */
		uint64		d64 = unpack_deltas(p, count - 1,
										hdr.flags & SPM_BLOCK_WIDTH_MASK,
										d, docids);

		if (check_last ? d64 != last_docid : d64 > PG_UINT32_MAX)
			return false;
	}
	/* fast path: every delta takes one byte (dense terms) */
	else if (hdr.nbytes_ids == count - 1 &&
		d <= PG_UINT32_MAX - 127 * SPM_BLOCK_POSTINGS)
	{
		unsigned char bad = 0;

		for (int i = 1; i < count; i++)
		{
			unsigned char delta = p[i - 1];

			bad |= (unsigned char) (delta - 1) | delta;	/* 0 or >= 0x80 */
			d += delta;
			docids[i] = d;
		}
		if ((bad & 0x80) || (check_last && d != last_docid))
			return false;
	}
	else
	{
		for (int i = 1; i < count; i++)
		{
			if (!next_docid(&p, end, &d))
				return false;
			docids[i] = d;
		}
		if (p != end || (check_last && d != last_docid))
			return false;
	}

	block_weights(block, &hdr, lower, weights, exp);
	return true;
}

/*
 * The last docid of a block of count postings, for a term whose only block
 * has no skip entry (SPM_DICT_INLINE): decoded, with every check but the
 * comparison with a known last docid.  False if the block is inconsistent.
 */
bool
spm_block_last_docid(const char *block, int avail, int count, uint32 *last)
{
	uint32		docids[SPM_BLOCK_POSTINGS];
	float		weights[SPM_BLOCK_POSTINGS];
	int16		exp;

	if (count < 1 || count > SPM_BLOCK_POSTINGS ||
		!decode_block(block, avail, count, false, 0, false, docids, weights,
					  &exp))
		return false;
	*last = docids[count - 1];
	return true;
}

/*
 * pv[i] = q * (double) w[i] for the weights w[] block_weights gives (the
 * upper ends of quantized cells, the lower ends when lower is true): the
 * products spv_score_add() makes, exact in double (sparsevec.h).  With
 * SSE2 (every x86-64 has it) four postings at a time, straight from the
 * stored codes or floats: the same IEEE operations on the same values as
 * the scalar loops (for quantized weights bias + c * scale in float, as
 * block_weights computes them), so the same bits.
 */
static void
block_products(const char *block, const SpmBlockHeader *hdr, bool lower,
			   double q, double *pv)
{
	const char *wp = block + TYPEALIGN(4, sizeof(SpmBlockHeader) +
									   hdr->nbytes_ids);
	int			count = hdr->count;
	int			i = 0;
#ifdef __SSE2__
	const __m128d qv = _mm_set1_pd(q);
#endif

	if (hdr->flags & SPM_BLOCK_QUANT)
	{
		SpmBlockQuant qt;
		const unsigned char *c = (const unsigned char *) wp + sizeof(SpmBlockQuant);
		float		scale;
		float		bias;

		memcpy(&qt, wp, sizeof(qt));
		scale = spm_pow2f(qt.exp);
		/* as in block_weights: exact in float4 */
		bias = (float) (qt.base - (lower ? 1 : 0)) * scale;
#ifdef __SSE2__
		{
			const __m128 sv = _mm_set1_ps(scale);
			const __m128 bv = _mm_set1_ps(bias);
			const __m128i zero = _mm_setzero_si128();

			for (; i + 8 <= count; i += 8)
			{
				__m128i		b8 = _mm_loadl_epi64((const __m128i *) (c + i));
				__m128i		b16 = _mm_unpacklo_epi8(b8, zero);
				__m128		c0 = _mm_cvtepi32_ps(_mm_unpacklo_epi16(b16, zero));
				__m128		c1 = _mm_cvtepi32_ps(_mm_unpackhi_epi16(b16, zero));
				__m128		w0 = _mm_add_ps(bv, _mm_mul_ps(c0, sv));
				__m128		w1 = _mm_add_ps(bv, _mm_mul_ps(c1, sv));

				_mm_storeu_pd(pv + i, _mm_mul_pd(qv, _mm_cvtps_pd(w0)));
				_mm_storeu_pd(pv + i + 2,
							  _mm_mul_pd(qv, _mm_cvtps_pd(_mm_movehl_ps(w0, w0))));
				_mm_storeu_pd(pv + i + 4, _mm_mul_pd(qv, _mm_cvtps_pd(w1)));
				_mm_storeu_pd(pv + i + 6,
							  _mm_mul_pd(qv, _mm_cvtps_pd(_mm_movehl_ps(w1, w1))));
			}
		}
#endif
		for (; i < count; i++)
			pv[i] = q * (double) (bias + (float) c[i] * scale);
	}
	else
	{
		const float *w = (const float *) wp;

#ifdef __SSE2__
		for (; i + 4 <= count; i += 4)
		{
			__m128		w4 = _mm_loadu_ps(w + i);

			_mm_storeu_pd(pv + i, _mm_mul_pd(qv, _mm_cvtps_pd(w4)));
			_mm_storeu_pd(pv + i + 2,
						  _mm_mul_pd(qv, _mm_cvtps_pd(_mm_movehl_ps(w4, w4))));
		}
#endif
		for (; i < count; i++)
		{
			float		x;

			memcpy(&x, w + i, sizeof(x));
			pv[i] = q * (double) x;
		}
	}
}

/*
 * Decode the block and add q * w of every posting to acc[docid - base]
 * (w the upper end of a quantized weight, the lower end when q < 0)
 * directly, for a block whose postings all lie in [base, base + mask]
 * (mask + 1 = the accumulator's size, a power of two; the caller checked
 * the range from the skip entry).  Same checks as spm_block_decode;
 * returns false if anything is inconsistent, and then acc holds garbage
 * (the caller raises an error).  Indexes are masked, so even corrupt data
 * cannot write outside acc.
 *
 * The products q * w come first, for the whole block (block_products),
 * then one pass decodes the docids and adds each product to its
 * document's sum: acc[d] + product is spv_score_add(acc[d], q, w), the
 * same product and the same addition in the same order, bit for bit
 * (doc/decisions.md "Block decoding with constant widths").
 */
bool
spm_block_accumulate(const char *block, int avail, int count,
					 uint32 last_docid, double q, double *acc, uint32 base,
					 uint32 mask)
{
	SpmBlockHeader hdr;
	const unsigned char *p;
	const unsigned char *end;
	double		pv[SPM_BLOCK_POSTINGS];
	uint32		d;
	int			size;

	size = spm_block_size(block, avail);
	if (size < 0)
		return false;
	memcpy(&hdr, block, sizeof(hdr));
	if (hdr.count != count || hdr.first_docid < base)
		return false;

	p = (const unsigned char *) block + sizeof(SpmBlockHeader);
	end = p + hdr.nbytes_ids;
	/* a negative q takes the lower ends: q * w is never below the exact */
	block_products(block, &hdr, q < 0, q, pv);
	d = hdr.first_docid;
	acc[(d - base) & mask] = acc[(d - base) & mask] + pv[0];

	if ((hdr.flags & ~SPM_BLOCK_QUANT) != 0)
	{
		/* packed: as in decode_block, the sums relative to base */
		uint64		r = unpack_accumulate(p, count - 1,
										  hdr.flags & SPM_BLOCK_WIDTH_MASK,
										  d - base, pv, acc, mask);

		return r + base == last_docid;
	}
	if (hdr.nbytes_ids == count - 1)
	{
		/*
		 * One byte per delta: the common case for dense terms.  The sum
		 * is kept in 64 bits, as spm_block_decode checks it: one that
		 * passes 2^32 must not end at last_docid by wrapping.
		 */
		unsigned char bad = 0;
		uint64		d64 = d;

		for (int i = 1; i < count; i++)
		{
			unsigned char delta = p[i - 1];
			double	   *a;

			bad |= (unsigned char) (delta - 1) | delta; /* 0 or >= 0x80 */
			d64 += delta;
			a = &acc[((uint32) d64 - base) & mask];
			*a = *a + pv[i];
		}
		return !(bad & 0x80) && d64 == last_docid;
	}

	for (int i = 1; i < count; i++)
	{
		double	   *a;

		if (!next_docid(&p, end, &d))
			return false;
		a = &acc[(d - base) & mask];
		*a = *a + pv[i];
	}
	return p == end && d == last_docid;
}

/* ----------------------------------------------------------------
 * Skip-entry summaries (spmblock.h)
 * ----------------------------------------------------------------
 */

/* bytes spm_term_summarize needs for a term of nblocks blocks */
Size
spm_term_summary_size(int nblocks)
{
	Size		ngroups = (nblocks + SPM_SKIP_GROUP - 1) / SPM_SKIP_GROUP;

	return MAXALIGN(sizeof(SpmTermSummary)) +
		ngroups * (2 * sizeof(float) + sizeof(uint32));
}

/*
 * Summarise a term's skip entries into mem (spm_term_summary_size bytes,
 * MAXALIGNed); returns it.  One pass over the entries.
 */
SpmTermSummary *
spm_term_summarize(void *mem, int nblocks, const float *max_w,
				   const float *min_w, const uint8 *count)
{
	SpmTermSummary *sum = (SpmTermSummary *) mem;
	char	   *p = (char *) mem + MAXALIGN(sizeof(SpmTermSummary));
	float		absmax = 0.0f;
	float		spread = 0.0f;

	sum->ngroups = (nblocks + SPM_SKIP_GROUP - 1) / SPM_SKIP_GROUP;
	sum->gmax_w = (float *) p;
	sum->gmin_w = sum->gmax_w + sum->ngroups;
	sum->gcount = (uint32 *) (sum->gmin_w + sum->ngroups);

	for (int b = 0; b < nblocks; b++)
	{
		int			g = b / SPM_SKIP_GROUP;

		if (b % SPM_SKIP_GROUP == 0)
		{
			sum->gmax_w[g] = max_w[b];
			sum->gmin_w[g] = min_w[b];
			sum->gcount[g] = 0;
		}
		sum->gmax_w[g] = Max(sum->gmax_w[g], max_w[b]);
		sum->gmin_w[g] = Min(sum->gmin_w[g], min_w[b]);
		sum->gcount[g] += count[b];
		absmax = Max(absmax, Max(fabsf(max_w[b]), fabsf(min_w[b])));
		/*
		 * a block of fewer than 3 postings is quantized only by a merge
		 * of quantized inputs, rarely; left out, as its max_w - min_w
		 * (a float4 pair's difference otherwise) says nothing of a cell
		 */
		if (count[b] >= 3)
			spread = Max(spread, max_w[b] - min_w[b]);
	}
	sum->absmax = absmax;
	sum->spread = spread;
	return sum;
}

/* ----------------------------------------------------------------
 * Range levels (src/README "Ranges")
 * ----------------------------------------------------------------
 */

/*
 * The smallest level L >= 1 whose bound L * max_w / 255 is not below m,
 * or 0 if m is not positive.  Computed in double; the last check is in
 * double too, so the bound may fall short of m by a few units in the
 * last place of a double, which the kernel's margin covers.
 */
uint8
spm_range_level(float m, float max_w)
{
	int			level;

	if (!(m > 0.0f) || !(max_w > 0.0f))
		return 0;
	if (m >= max_w)
		return 255;
	level = (int) ceil((double) m * 255.0 / (double) max_w);
	level = Max(1, Min(255, level));
	while (level < 255 && (double) level * (double) max_w / 255.0 < (double) m)
		level++;
	return (uint8) level;
}
