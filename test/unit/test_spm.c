/*
 * test_spm.c: unit tests of the score, the block codec, the segment
 * traversal and range pruning.
 *
 * The score: spv_dot and spv_dot_continue (a document in random pieces,
 * as the pending list scores it) against the definition written out,
 * bit for bit, on data where the order of the additions matters.
 *
 * The traversal is checked against a brute force that scores every
 * document with spv_dot (the operator's own function) on random segments:
 * many windows, ties (weights from a small set), negative weights in
 * documents and queries, dead documents, query terms absent from the
 * segment, resumption after a cursor (deepening rounds), the negative
 * phase, and two segments feeding one heap.  Every comparison is exact.
 *
 * Range pruning (spmrange.c) is checked the same way, against the score
 * written out, on random segments whose range maxima are laid out as the
 * writer lays them out; and spm_range_level against its definition.
 *
 * The policy (spmpolicy.c): under auto, each query class learns MaxScore's
 * share apart, so a class where MaxScore skips much keeps it while another
 * class of the same segment, where it skips nothing, goes to the
 * exhaustive kernel and retries MaxScore after 1, 3, 7 .. 63 queries.
 *
 * Docid reordering (spmreorder.c) must return a permutation, the same one
 * every time, and find the clusters of a corpus made of them.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparsevec.h"
#include "spmblock.h"
#include "spmpolicy.h"
#include "spmrange.h"
#include "spmreorder.h"
#include "spmtest.h"
#include "spmtraverse.h"
#include "unitrange.h"
#include "unitseg.h"

static int	failures = 0;
static int	checks = 0;

#define CHECK(cond, ...) \
	do { \
		checks++; \
		if (!(cond)) \
		{ \
			failures++; \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, "\n"); \
			if (failures > 20) exit(1); \
		} \
	} while (0)

/* splitmix64 */
static uint64 rng_state;

static uint64
rnd(void)
{
	uint64		z = (rng_state += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static uint32
rnd_below(uint32 n)
{
	return (uint32) (rnd() % n);
}

static double
rnd_unit(void)
{
	return (rnd() >> 11) * (1.0 / 9007199254740992.0);
}

/* ----------------------------------------------------------------
 * The score (sparsevec.h): spv_dot, and spv_dot_continue over pieces
 * ----------------------------------------------------------------
 */

/* a random canonical vector over [0, universe): ascending, nonzero */
static int
rnd_vector(int universe, double density, int32 *idx, float *val)
{
	int			n = 0;

	for (int i = 0; i < universe; i++)
	{
		if (rnd_unit() >= density)
			continue;
		idx[n] = i;
		/* mixed magnitudes and signs, so that the order of additions shows */
		val[n] = (float) ((rnd_unit() - 0.3) * pow(10.0, (int) rnd_below(9) - 4));
		if (val[n] == 0.0f)
			val[n] = 1.0f;
		n++;
	}
	return n;
}

static bool
same_bits(double x, double y)
{
	return memcmp(&x, &y, sizeof(double)) == 0;
}

static void
test_scoring(void)
{
	int32		ai[512],
				bi[512];
	float		av[512],
				bv[512];
	int			ndiffer = 0;
	int			ncollide = 0;
	static uint64 filter[SPV_FILTER_WORDS];

	for (int iter = 0; iter < 20000; iter++)
	{
		int			universe = 1 + (int) rnd_below(500);
		int			an = rnd_vector(universe, rnd_unit(), ai, av);
		int			bn = rnd_vector(universe, rnd_unit(), bi, bv);
		/* spread: 16384 makes indices 4 apart share a filter bit */
		int32		spread = iter % 3 == 0 ? 1 : iter % 3 == 1 ? 16384 : 131;
		double		want = 0.0;
		double		backwards = 0.0;
		double		dot;
		double		pieces = 0.0;
		int			j = 0;

		for (int x = 0; x < an; x++)
			ai[x] *= spread;
		for (int y = 0; y < bn; y++)
			bi[y] *= spread;

		/* the definition, written out: common indices, ascending, from +0.0 */
		for (int x = 0, y = 0; x < an && y < bn;)
		{
			if (ai[x] < bi[y])
				x++;
			else if (ai[x] > bi[y])
				y++;
			else
			{
				want += (double) av[x] * (double) bv[y];
				x++, y++;
			}
		}
		for (int x = an - 1, y = bn - 1; x >= 0 && y >= 0;)
		{
			if (ai[x] > bi[y])
				x--;
			else if (ai[x] < bi[y])
				y--;
			else
			{
				backwards += (double) av[x] * (double) bv[y];
				x--, y--;
			}
		}
		if (!same_bits(want, backwards))
			ndiffer++;

		dot = spv_dot(ai, av, an, bi, bv, bn);
		CHECK(same_bits(dot, want), "spv_dot %.17g, expected %.17g (an %d bn %d)",
			  dot, want, an, bn);
		CHECK(same_bits(spv_dot(bi, bv, bn, ai, av, an), want),
			  "spv_dot is not symmetric");

		/* a in random pieces, as the pending list delivers a long document */
		for (int start = 0; start < an;)
		{
			int			len = 1 + (int) rnd_below(40);

			len = Min(len, an - start);

			pieces = spv_dot_continue(ai + start, av + start, len, bi, bv, bn,
									  &j, pieces);
			start += len;
		}
		CHECK(same_bits(pieces, want), "spv_dot_continue in pieces %.17g, expected %.17g",
			  pieces, want);
		CHECK(j <= bn, "spv_dot_continue position %d beyond %d", j, bn);

		/* one side prepared (the operator's cache), either side */
		spv_filter_build(filter, bi, bn);
		dot = spv_dot_filtered(filter, bi, bv, bn, ai, av, an);
		CHECK(same_bits(dot, want), "spv_dot_filtered (b prepared) %.17g, expected %.17g (an %d bn %d spread %d)",
			  dot, want, an, bn, spread);
		for (int x = 0, y = 0; x < an; x++)
		{
			uint32		t = (uint32) ai[x] % SPV_FILTER_BITS;

			while (y < bn && bi[y] < ai[x])
				y++;
			if ((filter[t / 64] >> (t % 64) & 1) && (y == bn || bi[y] != ai[x]))
			{
				ncollide++;
				break;
			}
		}
		spv_filter_build(filter, ai, an);
		dot = spv_dot_filtered(filter, ai, av, an, bi, bv, bn);
		CHECK(same_bits(dot, want), "spv_dot_filtered (a prepared) %.17g, expected %.17g (an %d bn %d spread %d)",
			  dot, want, an, bn, spread);
	}
	/* the filter's shared bits must have been taken, and rejected */
	CHECK(ncollide > 1000, "only %d of 20000 pairs had a filter bit set by another index", ncollide);
	/* the data must be able to tell the order of additions apart */
	CHECK(ndiffer > 100, "only %d of 20000 sums depend on the order", ndiffer);
}

/* ----------------------------------------------------------------
 * Block codec
 * ----------------------------------------------------------------
 */
static void
test_codec(void)
{
	char		buf[SPM_BLOCK_MAX_BYTES + 64];
	uint32		docs[SPM_BLOCK_POSTINGS];
	float		w[SPM_BLOCK_POSTINGS];
	uint32		d2[SPM_BLOCK_POSTINGS];
	float		w2[SPM_BLOCK_POSTINGS];

	for (int iter = 0; iter < 20000; iter++)
	{
		int			count = 1 + rnd_below(SPM_BLOCK_POSTINGS);
		int			gapkind = rnd_below(4);
		uint32		d = rnd_below(1000);
		int			size;
		bool		ok;

		for (int i = 0; i < count; i++)
		{
			uint32		gap;

			if (i > 0)
			{
				switch (gapkind)
				{
					case 0:
						gap = 1;
						break;
					case 1:
						gap = 1 + rnd_below(200);
						break;
					case 2:
						gap = 1 + rnd_below(1 << 20);
						break;
					default:
						gap = 1 + rnd_below((PG_UINT32_MAX - d) / (count - i + 1) + 1);
						break;
				}
				d += gap;
			}
			docs[i] = d;
			w[i] = (float) ((rnd_unit() - 0.3) * 10.0);
		}
		/* each codec, then the encoder's choice: the smaller, packed on a tie */
		{
			int			sizes[2];

			for (int codec = 0; codec < 3; codec++)
			{
				double		acc[4096];
				SpmBlockHeader hdr;

				size = codec < 2
					? spm_block_encode_codec(docs, w, count, codec, buf)
					: spm_block_encode(docs, w, count, buf);
				memcpy(&hdr, buf, sizeof(hdr));
				if (codec < 2)
				{
					sizes[codec] = size;
					CHECK(((hdr.flags & SPM_BLOCK_PACKED) != 0) == (codec == SPM_CODEC_PACKED),
						  "codec %d wrote flags %d", codec, hdr.flags);
				}
				else
					CHECK(size == Min(sizes[0], sizes[1]) &&
						  ((hdr.flags & SPM_BLOCK_PACKED) != 0) == (sizes[1] <= sizes[0]),
						  "the encoder chose %d bytes (flags %d) of %d varbyte, %d packed",
						  size, hdr.flags, sizes[0], sizes[1]);
				CHECK(size % 4 == 0 && size <= (int) SPM_BLOCK_MAX_BYTES, "size %d", size);
				CHECK(spm_block_size(buf, size) == size, "block size");
				ok = spm_block_decode(buf, size, count, docs[count - 1], d2, w2);
				CHECK(ok, "decode");
				for (int i = 0; ok && i < count; i++)
					CHECK(d2[i] == docs[i] && memcmp(&w2[i], &w[i], sizeof(float)) == 0,
						  "posting %d differs", i);
				/* the accumulating decoder, where the block fits the window */
				if (docs[count - 1] - docs[0] < 4096)
				{
					memset(acc, 0, sizeof(acc));
					CHECK(spm_block_accumulate(buf, size, count, docs[count - 1], 2.0,
											   acc, docs[0], 4095),
						  "accumulate (codec %d)", codec);
					for (int i = 0; i < count; i++)
						CHECK(acc[docs[i] - docs[0]] == 2.0 * (double) w[i],
							  "accumulated posting %d (codec %d)", i, codec);
				}
				/* inconsistencies are reported, not trusted */
				CHECK(!spm_block_decode(buf, size - 1, count, docs[count - 1], d2, w2),
					  "truncated block accepted");
				CHECK(!spm_block_decode(buf, size, count, docs[count - 1] + 1, d2, w2),
					  "wrong last docid accepted");
				if (count > 1)
					CHECK(!spm_block_decode(buf, size, count - 1, docs[count - 1], d2, w2),
						  "wrong count accepted");
			}
		}
	}
	/* a dense varbyte block (one-byte deltas) with a zero or a high-bit delta */
	{
		int			size;

		for (int i = 0; i < 100; i++)
		{
			docs[i] = 1000 + 2 * i;
			w[i] = 1.0f;
		}
		size = spm_block_encode_codec(docs, w, 100, SPM_CODEC_VARBYTE, buf);
		CHECK(spm_block_decode(buf, size, 100, docs[99], d2, w2), "dense block");
		buf[sizeof(SpmBlockHeader) + 5] = 0;
		CHECK(!spm_block_decode(buf, size, 100, docs[99] - 2, d2, w2), "zero delta accepted");
		buf[sizeof(SpmBlockHeader) + 5] = (char) 0x82;
		CHECK(!spm_block_decode(buf, size, 100, docs[99] + 128, d2, w2), "high-bit delta accepted");
		buf[sizeof(SpmBlockHeader) + 5] = (char) 0x80;
		CHECK(!spm_block_decode(buf, size, 100, docs[99] + 126, d2, w2), "0x80 delta accepted");
		{
			double		acc[4096];

			memset(acc, 0, sizeof(acc));
			CHECK(!spm_block_accumulate(buf, size, 100, docs[99] + 126, 1.0, acc, 0, 4095),
				  "0x80 delta accepted by accumulate");
			buf[sizeof(SpmBlockHeader) + 5] = 0;
			CHECK(!spm_block_accumulate(buf, size, 100, docs[99] - 2, 1.0, acc, 0, 4095),
				  "zero delta accepted by accumulate");
			buf[sizeof(SpmBlockHeader) + 5] = 2;
			memset(acc, 0, sizeof(acc));
			CHECK(spm_block_accumulate(buf, size, 100, docs[99], 1.0, acc, 0, 4095),
				  "dense block accumulate");
			for (int i = 0; i < 100; i++)
				CHECK(acc[docs[i]] == 1.0, "accumulated weight at %u", docs[i]);
		}
	}
	/* a header with absurd fields */
	memset(buf, 0xFF, sizeof(buf));
	CHECK(spm_block_size(buf, sizeof(buf)) == -1, "garbage header accepted");
}

/*
 * The docid deltas as the layout defines them, one byte at a time (the
 * 7-bit groups of a fifth byte beyond bit 31 are dropped, as the decoder
 * does): true if the count - 1 deltas use exactly the n bytes, none is
 * zero and the docids stay below 2^32.  *parsed tells whether the bytes
 * make count - 1 deltas at all, and then *end_docid is where they lead
 * (wrapping past 2^32), so that a test can hand the decoder a last docid
 * that only the zero and overflow rules can refuse.
 */
static bool
ref_decode_ids(const unsigned char *p, int n, uint32 first, int count,
			   uint32 *out, bool *parsed, uint32 *end_docid)
{
	const unsigned char *end = p + n;
	uint32		d = first;
	bool		ok = true;

	*parsed = false;
	out[0] = d;
	for (int i = 1; i < count; i++)
	{
		uint32		delta = 0;
		int			nb = 0;
		bool		more;

		do
		{
			if (p >= end || nb == 5)
				return false;
			delta |= (uint32) (*p & 0x7F) << (7 * nb);
			more = (*p & 0x80) != 0;
			p++;
			nb++;
		} while (more);
		if (delta == 0 || d > PG_UINT32_MAX - delta)
			ok = false;
		d += delta;
		out[i] = d;
	}
	if (p != end)
		return false;
	*parsed = true;
	*end_docid = d;
	return ok;
}

/*
 * The decoders against ref_decode_ids on delta streams of every length
 * (1 to 5 bytes, canonical or not), some of them damaged: each must
 * accept exactly the streams the reference accepts, with the same docids.
 */
static void
test_codec_streams(void)
{
	char		buf[SPM_BLOCK_MAX_BYTES + 64];
	uint32		ref[SPM_BLOCK_POSTINGS];
	uint32		d2[SPM_BLOCK_POSTINGS];
	float		w2[SPM_BLOCK_POSTINGS];
	double		acc[4096];
	int			accepted = 0;

	for (int iter = 0; iter < 200000; iter++)
	{
		int			count = 1 + rnd_below(SPM_BLOCK_POSTINGS);
		unsigned char *ids = (unsigned char *) buf + sizeof(SpmBlockHeader);
		int			maxlen = 1 + rnd_below(5);
		int			n = 0;
		SpmBlockHeader hdr;
		uint32		first = rnd_below(4) == 0 ? PG_UINT32_MAX - rnd_below(1 << 20) : rnd_below(1 << 20);
		uint32		last;
		int			size;
		bool		ok;
		bool		parsed;

		for (int i = 1; i < count; i++)
		{
			int			len = 1 + rnd_below(maxlen);

			for (int b = 0; b < len; b++)
			{
				unsigned char byte = (unsigned char) rnd_below(128);

				/* small values too, and zero groups (non-canonical) */
				if (rnd_below(4) == 0)
					byte = (unsigned char) rnd_below(2);
				ids[n++] = byte | (b < len - 1 ? 0x80 : 0);
			}
		}
		/* damage: flip a high bit, or end the stream early or late */
		if (n > 0 && rnd_below(3) == 0)
		{
			switch (rnd_below(3))
			{
				case 0:
					ids[rnd_below(n)] ^= 0x80;
					break;
				case 1:
					n--;
					break;
				default:
					if (n < (count - 1) * 5)
						ids[n++] = (unsigned char) rnd_below(256);
					break;
			}
		}
		hdr.first_docid = first;
		hdr.count = (uint8) count;
		hdr.flags = 0;
		hdr.nbytes_ids = (uint16) n;
		memcpy(buf, &hdr, sizeof(hdr));
		size = TYPEALIGN(4, sizeof(SpmBlockHeader) + n);
		memset(buf + sizeof(SpmBlockHeader) + n, 0, size - sizeof(SpmBlockHeader) - n);
		memset(buf + size, 0, count * sizeof(float));
		size += count * sizeof(float);

		ok = ref_decode_ids(ids, n, first, count, ref, &parsed, &last);
		if (!parsed)
			last = rnd_below(1 << 20);
		/* a wrong last docid must fail anyway; so must a size the header rules out */
		if (n < count - 1 || n > (count - 1) * 5)
			ok = false;
		accepted += ok;
		CHECK(spm_block_decode(buf, size, count, last, d2, w2) == ok,
			  "decode %s a stream the reference %s (count %d, %d bytes)",
			  ok ? "rejects" : "accepts", ok ? "accepts" : "rejects", count, n);
		for (int i = 0; ok && i < count; i++)
			CHECK(d2[i] == ref[i], "docid %d: %u, reference %u", i, d2[i], ref[i]);
		CHECK(spm_block_accumulate(buf, size, count, last, 1.0, acc, 0, 4095) == ok,
			  "accumulate %s a stream the reference %s (count %d, %d bytes)",
			  ok ? "rejects" : "accepts", ok ? "accepts" : "rejects", count, n);
	}
	/* the streams must exercise both outcomes */
	CHECK(accepted > 10000 && accepted < 190000, "accepted %d of 200000", accepted);
}

/*
 * Packed deltas as the layout defines them, one bit at a time: value j is
 * bits [j*width, j*width + width) of the little-endian bit string at p, and
 * docid i is first + sum over j < i of (value j + 1), in 64 bits.
 */
static uint64
ref_packed_docids(const unsigned char *p, int width, uint32 first, int count,
				  uint64 *out)
{
	uint64		d = first;

	out[0] = d;
	for (int i = 1; i < count; i++)
	{
		uint64		v = 0;

		for (int b = 0; b < width; b++)
		{
			uint64		bit = (uint64) (i - 1) * width + b;

			v |= (uint64) ((p[bit / 8] >> (bit % 8)) & 1) << b;
		}
		d += v + 1;
		out[i] = d;
	}
	return d;
}

/*
 * The decoders against ref_packed_docids on random packed blocks: random
 * bits, widths 0 to 63 (33 and up are invalid), byte counts right or off
 * by one, first docids near 2^32 so that sums overflow, and a last docid
 * that is the reference's end or near it.  Each decoder must accept
 * exactly the blocks whose flags and size the layout allows and whose sum
 * ends at the last docid without passing 2^32, with the reference's docids.
 */
static void
test_codec_packed(void)
{
	char		buf[SPM_BLOCK_MAX_BYTES + 64];
	uint64		ref[SPM_BLOCK_POSTINGS];
	uint32		d2[SPM_BLOCK_POSTINGS];
	float		w2[SPM_BLOCK_POSTINGS];
	double		acc[4096];
	int			accepted = 0;
	int			overflowed = 0;

	for (int iter = 0; iter < 100000; iter++)
	{
		int			count = 1 + rnd_below(SPM_BLOCK_POSTINGS);
		int			width = rnd_below(8) == 0 ? 33 + rnd_below(31) : rnd_below(33);
		unsigned char *ids = (unsigned char *) buf + sizeof(SpmBlockHeader);
		int			n = SPM_PACKED_BYTES(count, Min(width, 32));
		SpmBlockHeader hdr;
		uint32		first = rnd_below(4) == 0 ? PG_UINT32_MAX - rnd_below(1 << 24) : rnd_below(1 << 20);
		uint64		end;
		uint32		last;
		int			size;
		bool		ok;

		if (rnd_below(10) == 0)
			n = Max(0, n + (rnd_below(2) ? 1 : -1));
		/* random bits, often small values (sparse high bits) */
		for (int i = 0; i < n; i++)
			ids[i] = (unsigned char) (rnd_below(3) == 0 ? rnd_below(256) : rnd_below(4));
		hdr.first_docid = first;
		hdr.count = (uint8) count;
		hdr.flags = (uint8) (SPM_BLOCK_PACKED | width);
		hdr.nbytes_ids = (uint16) n;
		memcpy(buf, &hdr, sizeof(hdr));
		size = TYPEALIGN(4, sizeof(SpmBlockHeader) + n);
		memset(buf + sizeof(SpmBlockHeader) + n, 0, size - sizeof(SpmBlockHeader) - n);
		for (int i = 0; i < count; i++)
		{
			float		one = 1.0f;

			memcpy(buf + size + i * sizeof(float), &one, sizeof(float));
		}
		size += count * sizeof(float);

		end = width <= 32 && n == SPM_PACKED_BYTES(count, width)
			? ref_packed_docids(ids, width, first, count, ref) : 0;
		switch (rnd_below(4))
		{
			case 0:
				last = (uint32) end + 1;
				break;
			case 1:
				last = rnd_below(1 << 20);
				break;
			default:
				last = (uint32) end;	/* may have wrapped */
				break;
		}
		ok = width <= 32 && n == SPM_PACKED_BYTES(count, width) && end == last;
		accepted += ok;
		overflowed += end > PG_UINT32_MAX && (uint32) end == last;
		CHECK(spm_block_size(buf, size) == ((width <= 32 && n == SPM_PACKED_BYTES(count, width)) ? size : -1),
			  "size of a block with width %d, %d bytes", width, n);
		CHECK(spm_block_decode(buf, size, count, last, d2, w2) == ok,
			  "decode %s a block the reference %s (count %d, width %d, %d bytes)",
			  ok ? "rejects" : "accepts", ok ? "accepts" : "rejects", count, width, n);
		for (int i = 0; ok && i < count; i++)
			CHECK(d2[i] == ref[i], "docid %d: %u, reference %llu", i, d2[i],
				  (unsigned long long) ref[i]);
		CHECK(spm_block_accumulate(buf, size, count, last, 1.0, acc, 0, 4095) == ok,
			  "accumulate %s a block the reference %s (count %d, width %d)",
			  ok ? "rejects" : "accepts", ok ? "accepts" : "rejects", count, width);
	}
	/* both outcomes, and sums past 2^32 whose low bits match the last docid */
	CHECK(accepted > 10000 && accepted < 90000, "accepted %d of 100000", accepted);
	CHECK(overflowed > 100, "only %d wrapped sums", overflowed);
}

/* ----------------------------------------------------------------
 * A segment in memory
 * ----------------------------------------------------------------
 */
typedef struct TestDoc
{
	int			nnz;
	int32	   *idx;
	float	   *val;
	float	   *vhi;			/* quantized segments: val's upper ends */
	float	   *vlo;			/* and lower ends, as the blocks decode */
	bool		alive;
} TestDoc;

typedef struct TestSeg
{
	uint64		docid_lo;
	int			ndocs;
	int			nterms;			/* vocabulary */
	TestDoc    *docs;
	UnitTerm   *terms;
	UnitBlocks	blocks;			/* encoded posting blocks */
} TestSeg;

static const float tie_weights[] = {0.5f, 1.0f, 1.5f, 2.0f, -1.0f, 0.25f};

static float
random_weight(int style)
{
	switch (style)
	{
		case 0:					/* ties everywhere */
			return tie_weights[rnd_below(lengthof(tie_weights))];
		case 1:					/* positive, continuous */
			return (float) (0.01 + 3.0 * rnd_unit());
		default:				/* mixed sign */
			{
				float		v = (float) ((rnd_unit() - 0.35) * 4.0);

				return v == 0.0f ? 1.0f : v;
			}
	}
}

static void index_segment(TestSeg *s);

/* segments built from now on have quantized blocks */
static bool quantize_segments = false;

/*
 * and, when set, the shape of an L2 index: the last term of the vocabulary
 * is each document's norm posting -|d|^2 / 2 (none for empty documents);
 * 2: no empty document either (every docid has a norm posting, so the
 * norm term's blocks cover every window: signed_window runs)
 */
static int	l2_segments = 0;

/* traversals are told the query's last term is the norm term (L2) */
static bool unit_norm_last = false;

static void
build_segment(TestSeg *s, int ndocs, int nterms, int style, double deadfrac,
			  uint64 docid_lo)
{
	memset(s, 0, sizeof(*s));
	s->docid_lo = docid_lo;
	s->ndocs = ndocs;
	s->nterms = nterms;
	s->docs = palloc0(sizeof(TestDoc) * ndocs);
	s->terms = palloc0(sizeof(UnitTerm) * nterms);

	/* term t has probability p_t of appearing in a document (Zipf-ish) */
	for (int d = 0; d < ndocs; d++)
	{
		TestDoc    *doc = &s->docs[d];

		doc->idx = palloc(sizeof(int32) * nterms);
		doc->val = palloc(sizeof(float) * nterms);
		doc->alive = rnd_unit() >= deadfrac;
		if (rnd_below(20) == 0 && l2_segments != 2)
			continue;			/* empty document */
		for (int t = 0; t < nterms; t++)
		{
			double		p = 0.5 / (1.0 + t * 0.7);

			if (rnd_unit() < p)
			{
				doc->idx[doc->nnz] = t;
				doc->val[doc->nnz] = random_weight(style);
				doc->nnz++;
			}
		}
		if (l2_segments)
		{
			double		sq = 0.0;

			if (doc->nnz > 0 && doc->idx[doc->nnz - 1] == nterms - 1)
				doc->nnz--;
			if (doc->nnz == 0 && l2_segments == 2)
			{
				doc->idx[0] = rnd_below(nterms - 1);
				doc->val[0] = random_weight(style);
				doc->nnz = 1;
			}
			if (doc->nnz == 0)
				continue;
			for (int i = 0; i < doc->nnz; i++)
				sq += (double) doc->val[i] * doc->val[i];
			doc->idx[doc->nnz] = nterms - 1;
			doc->val[doc->nnz] = (float) (-sq / 2.0);
			doc->nnz++;
		}
	}
	index_segment(s);
}

/* s->terms from s->docs (terms ascending in each document) */
static void
index_segment(TestSeg *s)
{
	int		   *pos = palloc0(sizeof(int) * s->nterms);

	for (int d = 0; d < s->ndocs; d++)
		for (int i = 0; i < s->docs[d].nnz; i++)
			s->terms[s->docs[d].idx[i]].df++;
	for (int t = 0; t < s->nterms; t++)
	{
		s->terms[t].docs = palloc(sizeof(uint32) * (s->terms[t].df + 1));
		s->terms[t].w = palloc(sizeof(float) * (s->terms[t].df + 1));
	}
	for (int d = 0; d < s->ndocs; d++)
	{
		TestDoc    *doc = &s->docs[d];

		for (int i = 0; i < doc->nnz; i++)
		{
			UnitTerm   *tt = &s->terms[doc->idx[i]];

			tt->docs[pos[doc->idx[i]]] = d;
			tt->w[pos[doc->idx[i]]] = doc->val[i];
			pos[doc->idx[i]]++;
		}
	}

	s->blocks.quantize = quantize_segments;
	for (int t = 0; t < s->nterms; t++)
		unit_encode_term(&s->terms[t], &s->blocks);

	/*
	 * With quantized blocks the kernel's scores are those of the decoded
	 * weights: the brute force takes them from the blocks, and checks that
	 * each interval holds the exact weight.
	 */
	if (quantize_segments)
	{
		memset(pos, 0, sizeof(int) * s->nterms);
		for (int d = 0; d < s->ndocs; d++)
		{
			s->docs[d].vhi = palloc(sizeof(float) * (s->docs[d].nnz + 1));
			s->docs[d].vlo = palloc(sizeof(float) * (s->docs[d].nnz + 1));
		}
		for (int t = 0; t < s->nterms; t++)
		{
			UnitTerm   *tt = &s->terms[t];
			float	   *hi = palloc(sizeof(float) * (tt->df + 1));
			float	   *lo = palloc(sizeof(float) * (tt->df + 1));

			for (int b = 0; b < tt->nblocks; b++)
			{
				uint32		d[SPM_BLOCK_POSTINGS];
				int16		e;
				int			first = b * SPM_BLOCK_POSTINGS;

				CHECK(spm_block_decode_bounds(s->blocks.enc[tt->blkno[b]], SPM_BLOCK_MAX_BYTES,
											  tt->count[b], tt->last[b], false, d,
											  hi + first, &e) &&
					  spm_block_decode_bounds(s->blocks.enc[tt->blkno[b]], SPM_BLOCK_MAX_BYTES,
											  tt->count[b], tt->last[b], true, d,
											  lo + first, &e), "quantized block decodes");
			}
			for (int i = 0; i < tt->df; i++)
			{
				TestDoc    *doc = &s->docs[tt->docs[i]];
				int			j = 0;

				while (doc->idx[j] != t)
					j++;
				CHECK(lo[i] <= doc->val[j] && doc->val[j] <= hi[i],
					  "quantized interval holds the weight");
				doc->vhi[j] = hi[i];
				doc->vlo[j] = lo[i];
			}
			pfree(hi);
			pfree(lo);
		}
	}
	pfree(pos);
}

static void
free_segment(TestSeg *s)
{
	for (int d = 0; d < s->ndocs; d++)
	{
		pfree(s->docs[d].idx);
		pfree(s->docs[d].val);
		if (s->docs[d].vhi)
		{
			pfree(s->docs[d].vhi);
			pfree(s->docs[d].vlo);
		}
	}
	for (int t = 0; t < s->nterms; t++)
		unit_free_term(&s->terms[t]);
	unit_free_blocks(&s->blocks);
	pfree(s->docs);
	pfree(s->terms);
}

static void
read_block(void *arg, const SpmQueryTerm *term, int b,
		   uint32 *docids, float *weights)
{
	unit_read_block(&((TestSeg *) arg)->blocks, term, b, docids, weights);
}

static void
accumulate_block(void *arg, const SpmQueryTerm *term, int b,
				 double q, double *acc, uint32 base)
{
	unit_accumulate_block(&((TestSeg *) arg)->blocks, term, b, q, acc, base);
}

static bool
is_alive(void *arg, uint32 local)
{
	TestSeg    *s = arg;

	return s->docs[local].alive;
}

/* a query: ascending term ids */
typedef struct TestQuery
{
	int			n;
	int32		idx[64];
	float		val[64];
} TestQuery;

static void
random_query(TestQuery *q, int nterms, int style, bool negative)
{
	q->n = 0;
	for (int t = 0; t < nterms + 5 && q->n < 64; t++)
	{
		if (rnd_below(3) == 0)
		{
			float		v;

			if (style == 0)
				v = tie_weights[rnd_below(4)];
			else
				v = (float) exp((rnd_unit() - 0.5) * 2.4);
			if (negative && rnd_below(4) == 0)
				v = -v;
			q->idx[q->n] = t;	/* t >= nterms: absent from the segment */
			q->val[q->n] = v;
			q->n++;
		}
	}
}

/* the query terms present in s, in terms[] (room for q->n) */
static int
make_terms(TestSeg *s, TestQuery *q, SpmQueryTerm *terms)
{
	int			n = 0;

	for (int i = 0; i < q->n; i++)
	{
		if (q->idx[i] >= s->nterms || s->terms[q->idx[i]].df == 0)
			continue;
		unit_query_term(&s->terms[q->idx[i]], q->val[i], &terms[n++]);
	}
	return n;
}

/* brute-force canonical score, through the operator's own function */
static double
brute_score(TestSeg *s, int d, TestQuery *q)
{
	TestDoc    *doc = &s->docs[d];
	double		sum = 0.0;
	int			i = 0;
	int			j = 0;

	if (doc->vhi == NULL)
		return spv_dot(doc->idx, doc->val, doc->nnz, q->idx, q->val, q->n);

	/*
	 * Quantized: the same canonical sum over the decoded weights, upper
	 * ends for positive query weights and lower ends for negative ones;
	 * never below the exact score.
	 */
	while (i < doc->nnz && j < q->n)
	{
		if (doc->idx[i] < q->idx[j])
			i++;
		else if (doc->idx[i] > q->idx[j])
			j++;
		else
		{
			sum = spv_score_add(sum, q->val[j],
								q->val[j] < 0 ? doc->vlo[i] : doc->vhi[i]);
			i++;
			j++;
		}
	}
	CHECK(sum >= spv_dot(doc->idx, doc->val, doc->nnz, q->idx, q->val, q->n),
		  "quantized score below the exact one");
	return sum;
}

typedef struct Ref
{
	double		score;
	uint64		docid;
} Ref;

static int
ref_cmp(const void *a, const void *b)
{
	const Ref  *x = a;
	const Ref  *y = b;

	if (spm_hit_before(x->score, x->docid, y->score, y->docid))
		return -1;
	if (spm_hit_before(y->score, y->docid, x->score, x->docid))
		return 1;
	return 0;
}

/*
 * every alive document of the segments whose score the phase admits: for
 * SPM_PHASE_ANY every one, empty documents (score 0) included
 */
static int
reference(TestSeg **segs, int nseg, TestQuery *q, SpmPhase phase, Ref *out)
{
	int			n = 0;

	for (int k = 0; k < nseg; k++)
	{
		TestSeg    *s = segs[k];

		for (int d = 0; d < s->ndocs; d++)
		{
			double		sc = brute_score(s, d, q);

			if (!s->docs[d].alive)
				continue;
			if (spm_phase_admits(phase, sc))
			{
				out[n].score = sc;
				out[n].docid = s->docid_lo + d;
				n++;
			}
		}
	}
	qsort(out, n, sizeof(Ref), ref_cmp);
	return n;
}

/*
 * Every other traversal runs on work memory kept from an earlier one; half
 * of those find it filled with garbage first, as after an error halfway
 * through a query (the scratch then says its accumulator is dirty, as
 * spm_traverse_begin leaves it until spm_traverse_topk ends), the other
 * half find it as the last traversal left it, which must have cleared
 * what spm_traverse_begin does not (Assert-checked there); the others
 * allocate their own.
 */
static int	traverse_checks;	/* calls of kept_traverse_scratch */

static SpmTraverseScratch *
kept_traverse_scratch(void)
{
	static SpmTraverseScratch kept;

	if (++traverse_checks % 2 == 0)
		return NULL;
	if (traverse_checks % 4 == 3)
		return &kept;
	kept.acc_dirty = SPM_WINDOW;
	if (kept.pool)
		memset(kept.pool, 0xA5, kept.poolcap);
	if (kept.wdocs)
	{
		memset(kept.wdocs, 0xA5, kept.wcap * sizeof(uint16));
		memset(kept.wvals, 0xA5, kept.wcap * sizeof(float));
	}
	return &kept;
}

/*
 * The next run_round's heap is elastic when round_want > 0 (spmtopk.h:
 * sure of the round_want best, the gap round_gap, k > round_want); the
 * call resets it.  round_full: whether the last round's heap was full.
 */
static int	round_want;
static double round_gap;
static bool round_full;

/*
 * One round: top-k after `after` over the segments, with or without
 * pruning.  Returns the number of hits, sorted, in hits[].
 */
static int
run_round(TestSeg **segs, int nseg, TestQuery *q, SpmPhase phase,
		  bool exhaustive, const SpmAfter *after, int k, SpmHit *hits,
		  SpmCounters *counters)
{
	SpmTopK		topk;
	double		best[1024];

	if (round_want > 0)
	{
		Assert(round_want < k && round_want <= (int) lengthof(best));
		spm_topk_init_elastic(&topk, k, hits, round_want, round_gap, best);
	}
	else
		spm_topk_init(&topk, k, hits);
	round_want = 0;
	for (int i = 0; i < nseg; i++)
	{
		SpmQueryTerm terms[64];
		SpmTraverse t;

		memset(&t, 0, sizeof(t));
		t.nterms = make_terms(segs[i], q, terms);
		t.terms = terms;
		t.docid_lo = segs[i]->docid_lo;
		t.ndocs = segs[i]->ndocs;
		t.exhaustive = exhaustive;
		t.phase = phase;
		t.norm_last = unit_norm_last && phase == SPM_PHASE_ANY && q->n > 0 &&
			q->idx[q->n - 1] == segs[i]->nterms - 1 &&
			segs[i]->terms[segs[i]->nterms - 1].df > 0;
		t.after = *after;
		t.topk = &topk;
		t.read_block = read_block;
		t.accumulate_block = accumulate_block;
		t.is_alive = is_alive;
		t.arg = segs[i];
		t.counters = counters;
		t.scratch = kept_traverse_scratch();
		spm_traverse_begin(&t);
		/* the traversal keeps its own copy of the term descriptions */
		memset(terms, 0x7f, sizeof(terms));
		spm_traverse_topk(&t);
		spm_traverse_end(&t);
	}
	spm_topk_sort(&topk);
	round_full = spm_topk_full(&topk);
	return topk.n;
}

/*
 * The rows an elastic heap of capacity k, sure of the want best, with the
 * gap, keeps of all offered rows (sorted, n of them): every row of score
 * at least the want-th best's minus the gap, and the best row below, at
 * most k.
 */
static int
elastic_keeps(const Ref *all, int n, int k, int want, double gap)
{
	double		theta;
	int			ge = 0;

	if (n < want)
		return Min(n, k);
	theta = all[want - 1].score - gap;
	while (ge < n && !(all[ge].score < theta))
		ge++;
	return Min(k, ge + (ge < n ? 1 : 0));
}

/* a random gap for an elastic heap over scores up to top: none to wide */
static double
random_gap(double top)
{
	static const double f[] = {0.0, 1e-9, 0.001, 0.05, 0.5, 4.0};

	return fabs(top) * f[rnd_below(lengthof(f))];
}

/*
 * With stream_elastic, check_stream's first round is elastic, sure of
 * k0 rows, of a random capacity and gap, as an inner product scan's
 * first round over quantized segments is.
 */
static bool stream_elastic;

/*
 * Deepen like the scan does: rounds of k, 2k, 4k ... each resuming after
 * the last hit, until a round's heap is not full (it dropped nothing).  The concatenation must
 * equal the reference exactly.
 */
static void
check_stream(TestSeg **segs, int nseg, TestQuery *q, SpmPhase phase,
			 bool exhaustive, int k0, const char *what)
{
	int			total = 0;

	for (int k = 0; k < nseg; k++)
		total += segs[k]->ndocs;

	{
		Ref		   *ref = palloc(sizeof(Ref) * (total + 1));
		int			nref = reference(segs, nseg, q, phase, ref);
		SpmAfter	after = {false, 0, 0};
		int			got = 0;
		int			k = k0;
		SpmCounters counters;
		bool		first = true;

		memset(&counters, 0, sizeof(counters));
		for (;;)
		{
			SpmHit	   *hits;
			int			n;
			int			cap = k;

			if (first && stream_elastic)
			{
				cap = k0 + 1 + rnd_below(3 * k0 + 8);
				round_want = k0;
				round_gap = random_gap(nref > 0 ? ref[0].score : 1.0);
			}
			hits = palloc(sizeof(SpmHit) * cap);
			n = run_round(segs, nseg, q, phase, exhaustive, &after, cap, hits,
						  &counters);
			if (first && stream_elastic)
				CHECK(n == elastic_keeps(ref, nref, cap, k0, round_gap),
					  "%s: an elastic first round (want %d, capacity %d, gap %g) kept %d rows, want %d",
					  what, k0, cap, round_gap, n,
					  elastic_keeps(ref, nref, cap, k0, round_gap));
			first = false;

			for (int i = 0; i < n; i++)
			{
				CHECK(got + i < nref, "%s: extra hit", what);
				if (got + i >= nref)
					break;
				CHECK(hits[i].docid == ref[got + i].docid &&
					  hits[i].score == ref[got + i].score,
					  "%s: hit %d is (%.17g, %llu), want (%.17g, %llu)", what,
					  got + i, hits[i].score, (unsigned long long) hits[i].docid,
					  ref[got + i].score, (unsigned long long) ref[got + i].docid);
			}
			got += n;
			if (n > 0)
			{
				after.active = true;
				after.score = hits[n - 1].score;
				after.docid = hits[n - 1].docid;
			}
			pfree(hits);
			if (!round_full)
				break;
			k *= 2;
		}
		CHECK(got == nref, "%s: got %d hits, want %d", what, got, nref);
		pfree(ref);
	}
}

static void
check_window_scores(TestSeg *s, TestQuery *q)
{
	SpmQueryTerm terms[64];
	SpmCounters counters;
	SpmTraverse t;
	SpmTopK		topk;
	SpmHit		dummy;

	memset(&counters, 0, sizeof(counters));
	memset(&t, 0, sizeof(t));
	spm_topk_init(&topk, 1, &dummy);
	t.nterms = make_terms(s, q, terms);
	t.terms = terms;
	t.docid_lo = s->docid_lo;
	t.ndocs = s->ndocs;
	t.exhaustive = true;
	t.topk = &topk;
	t.read_block = read_block;
	t.accumulate_block = accumulate_block;
	t.arg = s;
	t.counters = &counters;
	t.scratch = kept_traverse_scratch();
	spm_traverse_begin(&t);
	/* uneven windows, some docids skipped between them */
	for (uint32 a = rnd_below(50); a < (uint32) s->ndocs;)
	{
		uint32		len = 1 + rnd_below(SPM_WINDOW);
		uint32		b = Min((uint32) s->ndocs, a + len);
		const double *acc = spm_window_scores(&t, a, b);

		for (uint32 d = a; d < b; d++)
		{
			double		want = brute_score(s, d, q);

			CHECK(acc[d - a] == want, "window score of %u: %.17g, want %.17g",
				  d, acc[d - a], want);
		}
		a = b + rnd_below(3);
	}
	spm_traverse_end(&t);
}

static void
test_traversal(void)
{
	static const int sizes[] = {1, 7, 300, 4096, 16384, 16385, 40000};

	for (int si = 0; si < (int) lengthof(sizes); si++)
	{
		for (int style = 0; style < 3; style++)
		{
			TestSeg		seg;
			TestSeg		seg2;
			TestSeg    *one[1];
			TestSeg    *two[2];
			int			nterms = 5 + rnd_below(30);

			build_segment(&seg, sizes[si], nterms, style, style == 1 ? 0.0 : 0.2, 0);
			build_segment(&seg2, 1 + rnd_below(5000), nterms, style, 0.1,
						  (uint64) sizes[si] + 17);
			one[0] = &seg;
			two[0] = &seg;
			two[1] = &seg2;
			for (int qi = 0; qi < 6; qi++)
			{
				TestQuery	q;
				char		what[128];
				bool		neg = style == 2 || qi % 3 == 0;
				int			k0 = (int[]) {1, 3, 10, 100} [rnd_below(4)];

				random_query(&q, nterms, style, neg);
				snprintf(what, sizeof(what), "size %d style %d q%d k0 %d",
						 sizes[si], style, qi, k0);
				check_stream(one, 1, &q, SPM_PHASE_POSITIVE, false, k0, what);
				check_stream(one, 1, &q, SPM_PHASE_POSITIVE, true, k0, what);
				check_stream(two, 2, &q, SPM_PHASE_POSITIVE, false, k0, what);
				/* an elastic first round, as over quantized segments */
				stream_elastic = true;
				check_stream(one, 1, &q, SPM_PHASE_POSITIVE, false, k0, what);
				check_stream(two, 2, &q, SPM_PHASE_POSITIVE, qi % 2 == 0, k0, what);
				stream_elastic = false;
				/* the MaxScore path in every window it applies to */
				spm_test_always_maxscore(true);
				check_stream(one, 1, &q, SPM_PHASE_POSITIVE, false, k0, what);
				check_stream(two, 2, &q, SPM_PHASE_POSITIVE, false, k0, what);
				stream_elastic = true;
				check_stream(two, 2, &q, SPM_PHASE_POSITIVE, false, k0, what);
				stream_elastic = false;
				spm_test_always_maxscore(false);
				check_stream(one, 1, &q, SPM_PHASE_NEGATIVE, false, k0, what);
				check_stream(two, 2, &q, SPM_PHASE_NEGATIVE, true, k0, what);
				/* every sign at once (L2), pruned once the heap is above 0 */
				check_stream(one, 1, &q, SPM_PHASE_ANY, false, k0, what);
				check_stream(two, 2, &q, SPM_PHASE_ANY, true, k0, what);
				check_stream(two, 2, &q, SPM_PHASE_ANY, false, k0, what);
				spm_test_always_maxscore(true);
				check_stream(one, 1, &q, SPM_PHASE_ANY, false, k0, what);
				spm_test_always_maxscore(false);
				check_window_scores(&seg, &q);
			}
			free_segment(&seg);
			free_segment(&seg2);
		}
	}
}

/*
 * The shape of an L2 index: the last term of the vocabulary is a norm
 * posting -|d|^2 / 2 on every document with elements (empty ones have
 * none), and queries give it weight 1, so most scores are negative and a
 * document without a query term still ranks by its norm.  The phase of
 * every sign must give every alive document in order, whether the heap's
 * worst row ends above 0 (queries near some documents: pruning starts
 * mid-segment) or below it.
 */
static void
test_any_sign_l2(void)
{
	static const int sizes[] = {1, 300, 16385, 40000};

	for (int si = 0; si < (int) lengthof(sizes); si++)
	{
		for (int style = 0; style < 3; style++)
		{
			TestSeg		seg;
			TestSeg    *one[1];
			int			nterms = 6 + rnd_below(20);
			int			norm = nterms - 1;

			/* with empty documents, then every docid with a norm posting */
			l2_segments = 1 + (style + si) % 2;
			build_segment(&seg, sizes[si], nterms, style, 0.1, 0);
			l2_segments = 0;
			one[0] = &seg;
			for (int qi = 0; qi < 6; qi++)
			{
				TestQuery	q;
				char		what[128];
				int			k0 = (int[]) {1, 3, 10, 100} [rnd_below(4)];

				if (qi < 3)
				{
					/* near a document: its terms, scaled up */
					TestDoc    *doc = &seg.docs[rnd_below(seg.ndocs)];

					q.n = 0;
					for (int i = 0; i < doc->nnz && doc->idx[i] != norm; i++)
					{
						q.idx[q.n] = doc->idx[i];
						q.val[q.n] = doc->val[i] * (float) (1 + qi);
						q.n++;
					}
				}
				else
				{
					random_query(&q, norm, style, qi == 5);
					while (q.n > 0 && q.idx[q.n - 1] >= norm)
						q.n--;
				}
				q.idx[q.n] = norm;
				q.val[q.n] = 1.0f;
				q.n++;
				snprintf(what, sizeof(what), "l2 size %d style %d q%d k0 %d",
						 sizes[si], style, qi, k0);
				check_stream(one, 1, &q, SPM_PHASE_ANY, false, k0, what);
				check_stream(one, 1, &q, SPM_PHASE_ANY, true, k0, what);
				spm_test_always_maxscore(true);
				check_stream(one, 1, &q, SPM_PHASE_ANY, false, k0, what);
				spm_test_always_maxscore(false);
				/* the norm term's blocks by their signed bounds */
				unit_norm_last = true;
				check_stream(one, 1, &q, SPM_PHASE_ANY, false, k0, what);
				spm_test_always_maxscore(true);
				check_stream(one, 1, &q, SPM_PHASE_ANY, false, k0, what);
				spm_test_always_maxscore(false);
				unit_norm_last = false;
			}
			free_segment(&seg);
		}
	}
}

/*
 * On an L2-shaped segment whose every docid has a norm posting, a LIMIT
 * round far from every document must leave most norm blocks undecoded
 * (signed_window), and give what the round without it gives.
 */
static void
test_l2_signed_prunes(void)
{
	TestSeg		seg;
	TestSeg    *one[1];
	TestQuery	q;
	SpmHit		h1[10];
	SpmHit		h2[10];
	SpmAfter	after = {false, 0, 0};
	SpmCounters c1;
	SpmCounters c2;
	int			n1;
	int			n2;

	bool		quantized = quantize_segments;

	/* norm postings are never quantized (src/README "Cosine and L2") */
	quantize_segments = false;
	l2_segments = 2;
	build_segment(&seg, 50000, 30, 1, 0.05, 0);
	l2_segments = 0;
	quantize_segments = quantized;
	one[0] = &seg;
	random_query(&q, 29, 1, false);
	while (q.n > 0 && q.idx[q.n - 1] >= 29)
		q.n--;
	/* far from every document: every score below 0 */
	for (int i = 0; i < q.n; i++)
		q.val[i] *= 1e-6f;
	q.idx[q.n] = 29;
	q.val[q.n] = 1.0f;
	q.n++;
	memset(&c1, 0, sizeof(c1));
	memset(&c2, 0, sizeof(c2));
	n1 = run_round(one, 1, &q, SPM_PHASE_ANY, false, &after, 10, h1, &c1);
	unit_norm_last = true;
	n2 = run_round(one, 1, &q, SPM_PHASE_ANY, false, &after, 10, h2, &c2);
	unit_norm_last = false;
	printf("l2 signed: %lld postings decoded (%lld blocks skipped), without %lld\n",
		   (long long) c2.postings_decoded, (long long) c2.blocks_skipped,
		   (long long) c1.postings_decoded);
	CHECK(n1 == 10 && n2 == 10, "l2 signed: %d and %d hits", n1, n2);
	for (int i = 0; i < 10 && i < n1 && i < n2; i++)
		CHECK(h1[i].docid == h2[i].docid && h1[i].score == h2[i].score,
			  "l2 signed: hit %d differs", i);
	/* more than half of the 50,000 norm postings left undecoded */
	CHECK(c1.postings_decoded - c2.postings_decoded > 25000,
		  "l2 signed: %lld postings decoded, without %lld",
		  (long long) c2.postings_decoded, (long long) c1.postings_decoded);
	free_segment(&seg);
}

/*
 * With a few dominant query terms, pruning must actually happen (the
 * point of MaxScore), and still agree with the exhaustive answer.
 */
static void
test_pruning_happens(void)
{
	TestSeg		seg;
	TestSeg    *one[1];
	TestQuery	q;
	SpmHit		hits[10];
	SpmAfter	after = {false, 0, 0};
	SpmCounters c1;
	SpmCounters c2;

	build_segment(&seg, 50000, 40, 1, 0.0, 0);
	one[0] = &seg;
	q.n = 0;
	for (int t = 0; t < 40; t++)
	{
		q.idx[q.n] = t;
		q.val[q.n] = t >= 37 ? 5.0f : 0.001f;	/* rare terms dominate */
		q.n++;
	}
	memset(&c1, 0, sizeof(c1));
	memset(&c2, 0, sizeof(c2));
	run_round(one, 1, &q, SPM_PHASE_POSITIVE, false, &after, 10, hits, &c1);
	run_round(one, 1, &q, SPM_PHASE_POSITIVE, true, &after, 10, hits, &c2);
	CHECK(c1.postings_decoded * 10 < c2.postings_decoded * 8,
		  "maxscore decoded %lld postings, exhaustive %lld",
		  (long long) c1.postings_decoded, (long long) c2.postings_decoded);
	CHECK(c1.blocks_skipped > 0, "no block skipped");
	printf("pruning: maxscore decoded %lld postings (%lld blocks skipped), exhaustive %lld\n",
		   (long long) c1.postings_decoded, (long long) c1.blocks_skipped,
		   (long long) c2.postings_decoded);
	check_stream(one, 1, &q, SPM_PHASE_POSITIVE, false, 10, "dominant terms");
	free_segment(&seg);
}

/*
 * The skip-entry summary against a pass over the entries, and window
 * bounds taken a group of blocks at a time: a term in every document with
 * tiny weights, except one weight far above everything else in a block
 * that does not start its group.  A group bound that missed that block
 * would make the term non-essential, and the document (which has no other
 * query term) would never be scored.  Both signs of the query weight, so
 * both the groups' maxima and their minima are relied on.
 */
static void
test_group_bounds(void)
{
	static const int where[] = {
		16384 + 2048 * 3 + 128 * 7 + 11,	/* window 1, group 11, block 7 of it */
		2048 * 2 + 128 * 15 + 127,	/* window 0, last block of group 2 */
		39999,					/* the last, partial group */
	};

	for (int r = 0; r < 200; r++)
	{
		int			nb = rnd_below(100);
		float		maxw[100];
		float		minw[100];
		uint8		count[100];
		SpmTermSummary *sum = palloc(spm_term_summary_size(nb));
		float		absmax = 0.0f;

		for (int b = 0; b < nb; b++)
		{
			minw[b] = random_weight(2);
			maxw[b] = minw[b] + (float) rnd_unit();
			count[b] = 1 + rnd_below(SPM_BLOCK_POSTINGS);
			absmax = Max(absmax, Max(fabsf(maxw[b]), fabsf(minw[b])));
		}
		CHECK(spm_term_summarize(sum, nb, maxw, minw, count) == sum, "summary address");
		CHECK(sum->ngroups == (nb + SPM_SKIP_GROUP - 1) / SPM_SKIP_GROUP, "ngroups %d", sum->ngroups);
		CHECK(sum->absmax == absmax, "absmax %g, want %g", sum->absmax, absmax);
		for (int g = 0; g < sum->ngroups; g++)
		{
			float		gmax = -INFINITY;
			float		gmin = INFINITY;
			uint32		gcount = 0;

			for (int b = g * SPM_SKIP_GROUP; b < Min(nb, (g + 1) * SPM_SKIP_GROUP); b++)
			{
				gmax = Max(gmax, maxw[b]);
				gmin = Min(gmin, minw[b]);
				gcount += count[b];
			}
			CHECK(sum->gmax_w[g] == gmax && sum->gmin_w[g] == gmin &&
				  sum->gcount[g] == gcount,
				  "group %d of %d blocks: [%g, %g] %u postings, want [%g, %g] %u",
				  g, nb, sum->gmin_w[g], sum->gmax_w[g], sum->gcount[g],
				  gmin, gmax, gcount);
		}
		pfree(sum);
	}

	for (int sign = -1; sign <= 1; sign += 2)
	{
		for (int wi = 0; wi < (int) lengthof(where); wi++)
		{
			TestSeg		seg;
			TestSeg    *one[1];
			TestQuery	q;
			char		what[64];

			memset(&seg, 0, sizeof(seg));
			seg.ndocs = 40000;
			seg.nterms = 3;
			seg.docs = palloc0(sizeof(TestDoc) * seg.ndocs);
			seg.terms = palloc0(sizeof(UnitTerm) * seg.nterms);
			for (int d = 0; d < seg.ndocs; d++)
			{
				TestDoc    *doc = &seg.docs[d];

				doc->idx = palloc(sizeof(int32) * 3);
				doc->val = palloc(sizeof(float) * 3);
				doc->alive = true;
				doc->idx[doc->nnz] = 0;
				/* q * w is -0.001 everywhere, 100 at the one document */
				doc->val[doc->nnz++] = d == where[wi] ? 100.0f * sign : -0.001f * sign;
				if (d != where[wi] && d % 50 == 0)
				{
					doc->idx[doc->nnz] = 1;
					doc->val[doc->nnz++] = 1.0f;
				}
				if (d != where[wi] && d % 7 == 0)
				{
					doc->idx[doc->nnz] = 2;
					doc->val[doc->nnz++] = 0.5f;
				}
			}
			index_segment(&seg);
			one[0] = &seg;
			q.n = 3;
			q.idx[0] = 0;
			q.val[0] = (float) sign;
			q.idx[1] = 1;
			q.val[1] = 1.0f;
			q.idx[2] = 2;
			q.val[2] = 0.5f;
			snprintf(what, sizeof(what), "group bounds: sign %d, document %d",
					 sign, where[wi]);
			check_stream(one, 1, &q, SPM_PHASE_POSITIVE, false, 1, what);
			check_stream(one, 1, &q, SPM_PHASE_POSITIVE, false, 10, what);
			spm_test_always_maxscore(true);
			check_stream(one, 1, &q, SPM_PHASE_POSITIVE, false, 1, what);
			spm_test_always_maxscore(false);
			free_segment(&seg);
		}
	}
}

static void
test_topk_heap(void)
{
	SpmHit		store[50];
	SpmTopK		topk;
	Ref			all[1000];

	for (int iter = 0; iter < 200; iter++)
	{
		int			k = 1 + rnd_below(50);
		int			n = rnd_below(1000);

		spm_topk_init(&topk, k, store);
		for (int i = 0; i < n; i++)
		{
			all[i].score = (double) rnd_below(20);	/* many ties */
			all[i].docid = rnd_below(1 << 30) * UINT64CONST(1000) + i;
			spm_topk_push(&topk, all[i].score, all[i].docid, NULL);
		}
		qsort(all, n, sizeof(Ref), ref_cmp);
		spm_topk_sort(&topk);
		CHECK(topk.n == Min(k, n), "heap size");
		for (int i = 0; i < topk.n; i++)
			CHECK(store[i].score == all[i].score && store[i].docid == all[i].docid,
				  "heap order at %d", i);
	}

	/*
	 * Elastic: rows offered as a kernel offers them, only those the heap
	 * admits (spm_topk_admits), scores with many ties and of both signs;
	 * the heap must end as the prefix elastic_keeps says, and full if it
	 * dropped a row (a scan takes a heap that is not full for all rows).
	 */
	for (int iter = 0; iter < 2000; iter++)
	{
		int			want = 1 + rnd_below(20);
		int			k = want + 1 + rnd_below(50 - want - 1 + 1);
		int			n = rnd_below(iter % 10 == 0 ? 30 : 1000);
		double		best[20];
		double		gap = random_gap(20.0);
		int			keeps;

		k = Min(k, (int) lengthof(store));
		if (k <= want)
			continue;
		spm_topk_init_elastic(&topk, k, store, want, gap, best);
		for (int i = 0; i < n; i++)
		{
			all[i].score = (double) rnd_below(40) - 10.0 +
				(iter % 3 == 0 ? rnd_unit() : 0.0);
			all[i].docid = rnd_below(1 << 30) * UINT64CONST(1000) + i;
			if (spm_topk_admits(&topk, all[i].score, all[i].docid))
				spm_topk_push(&topk, all[i].score, all[i].docid, NULL);
		}
		qsort(all, n, sizeof(Ref), ref_cmp);
		keeps = elastic_keeps(all, n, k, want, gap);
		CHECK(spm_topk_full(&topk) || keeps == n,
			  "elastic heap: full %d, keeps %d of %d", spm_topk_full(&topk), keeps, n);
		spm_topk_sort(&topk);
		CHECK(topk.n == keeps, "elastic heap: %d rows, want %d (want %d, k %d, gap %g)",
			  topk.n, keeps, want, k, gap);
		for (int i = 0; i < Min(topk.n, keeps); i++)
			CHECK(store[i].score == all[i].score && store[i].docid == all[i].docid,
				  "elastic heap order at %d", i);
	}
}

/* ----------------------------------------------------------------
 * Range pruning (spmrange.c) against brute force
 *
 * Random segments in memory (unitrange.h): the forward copy, and the
 * range maxima written as the segment writer writes them, handed to the
 * kernel in chunks of random sizes.  Each scan's heap must equal the
 * brute-force top-k (score desc, docid asc) of the live documents with a
 * positive score after the cursor, bit for bit, whatever the corpus:
 * topical or not, ties everywhere, one huge weight, tiny weights, powers
 * of two, near ties (a weight one float below its term's largest), empty
 * documents; short scans (ndocs below the segment's), dead documents, a
 * cursor taken from the ranking (often on a tie), and a heap that other
 * sources filled first.
 * ----------------------------------------------------------------
 */
typedef enum RangeWeights
{
	RW_CONT,					/* 0.01 .. 3 */
	RW_ONES,					/* every weight 1: ties everywhere */
	RW_HUGE,					/* RW_CONT with one weight 1e6 */
	RW_TINY,					/* around 1e-20 */
	RW_POW2,					/* 2^-10 .. 2^10 */
	RW_NEARTIE,					/* a term's weight, or one float below it */
	RW_SMALLSET,				/* a few values */
	RW_MIXMAG,					/* each term its own magnitude, 1e-20 .. 1e6 */
	RW_NSTYLES
} RangeWeights;

static const char *const rw_names[] = {
	"cont", "ones", "huge", "tiny", "pow2", "neartie", "smallset", "mixmag"
};

static float
range_weight(int style, uint32 term, const float *base)
{
	switch (style)
	{
		case RW_ONES:
			return 1.0f;
		case RW_TINY:
			return (float) (1e-20 * (0.5 + rnd_unit()));
		case RW_POW2:
			return (float) ldexp(1.0, (int) rnd_below(21) - 10);
		case RW_NEARTIE:
			return rnd_below(3) ? base[term] : nextafterf(base[term], 0.0f);
		case RW_SMALLSET:
			return tie_weights[rnd_below(4)];
		case RW_MIXMAG:
			return (float) ((0.01 + 3.0 * rnd_unit()) * base[term]);
		default:
			return (float) (0.01 + 3.0 * rnd_unit());
	}
}

/*
 * ndocs documents over terms [0, vocab): 0 to 30 terms each (some empty,
 * half of those with no element array at all); topical: blocks of
 * consecutive documents draw mostly from their block's few terms, so that
 * the ranges' bounds differ and pruning has something to skip.
 */
static SpmRangeDoc *
range_corpus(uint32 ndocs, uint32 vocab, int style, bool topical)
{
	SpmRangeDoc *docs = palloc0(sizeof(SpmRangeDoc) * Max(ndocs, 1));
	float	   *base = palloc(sizeof(float) * vocab);
	uint8	   *mark = palloc0(vocab);
	uint32	   *topic = palloc(sizeof(uint32) * vocab);
	uint32		ntopic = 0;
	uint32		block_left = 0;
	int			maxnnz = 1 + (int) rnd_below(30);
	double		p_topic = style == RW_NEARTIE ? 0.95 : 0.3 + 0.6 * rnd_unit();
	uint64		nelems = 0;

	for (uint32 t = 0; t < vocab; t++)
	{
		static const double mags[] = {1e-20, 1e-10, 1e-3, 1.0, 1e3, 1e6};

		base[t] = style == RW_MIXMAG ? (float) mags[rnd_below(lengthof(mags))]
			: (float) (0.01 + 3.0 * rnd_unit());
	}
	for (uint32 d = 0; d < ndocs; d++)
	{
		SpmFwdElem *e;
		int			n = 0;
		int			want;

		if (topical && block_left-- == 0)
		{
			ntopic = 2 + rnd_below(10);
			ntopic = Min(vocab, ntopic);
			for (uint32 i = 0; i < ntopic; i++)
				topic[i] = rnd_below(vocab);
			block_left = 8 + rnd_below(200);
		}
		if (rnd_below(15) == 0)
		{
			/* an empty document; with or without an element array */
			if (rnd_below(2))
				docs[d].elems = palloc(sizeof(SpmFwdElem));
			continue;
		}
		want = (int) rnd_below(maxnnz + 1);
		want = Min(want, (int) vocab);
		e = palloc(sizeof(SpmFwdElem) * (Max(want, 1) + (topical ? ntopic : 0)));
		if (topical)
		{
			int			stray = rnd_below(4);

			for (uint32 i = 0; i < ntopic; i++)
			{
				if (!mark[topic[i]] && rnd_unit() < p_topic)
				{
					mark[topic[i]] = 1;
					e[n++].term = topic[i];
				}
			}
			want = Min(want, stray);	/* a few stray terms */
		}
		for (int i = 0; i < want; i++)
		{
			/* skewed towards the low terms */
			double		u = rnd_unit();
			uint32		t = Min(vocab - 1, (uint32) (u * u * vocab));

			if (!mark[t])
			{
				mark[t] = 1;
				e[n++].term = t;
			}
		}
		/* ascending (insertion sort), then the weights */
		for (int i = 1; i < n; i++)
		{
			uint32		t = e[i].term;
			int			x = i;

			for (; x > 0 && e[x - 1].term > t; x--)
				e[x].term = e[x - 1].term;
			e[x].term = t;
		}
		for (int i = 0; i < n; i++)
		{
			mark[e[i].term] = 0;
			e[i].w = range_weight(style, e[i].term, base);
		}
		docs[d].nnz = n;
		docs[d].elems = e;
		nelems += n;
	}
	if (style == RW_HUGE && nelems > 0)
	{
		/* one weight far above every other */
		for (;;)
		{
			uint32		d = rnd_below(ndocs);

			if (docs[d].nnz > 0)
			{
				((SpmFwdElem *) docs[d].elems)[rnd_below(docs[d].nnz)].w = 1e6f;
				break;
			}
		}
	}
	pfree(base);
	pfree(mark);
	pfree(topic);
	return docs;
}

/* the score by its definition: q * w, ascending term order, from +0.0 */
static double
range_brute_score(const SpmRangeDoc *doc, const SpmRangeTerm *terms, int n)
{
	double		sc = 0.0;

	for (int i = 0, j = 0; i < doc->nnz && j < n;)
	{
		if (doc->elems[i].term < terms[j].term)
			i++;
		else if (doc->elems[i].term > terms[j].term)
			j++;
		else
		{
			sc += terms[j].q * (double) doc->elems[i].w;
			i++;
			j++;
		}
	}
	return sc;
}

/* the live documents below ndocs with a positive score, ranked */
static int
range_reference(const UnitRangeSeg *seg, const SpmRangeTerm *terms, int n,
				uint64 lo, uint32 ndocs, const uint8 *alive, Ref *out)
{
	int			nref = 0;

	for (uint32 d = 0; d < ndocs; d++)
	{
		double		sc;

		if (alive && !alive[d])
			continue;
		sc = range_brute_score(&seg->docs[d], terms, n);
		if (sc > 0)
		{
			out[nref].score = sc;
			out[nref].docid = lo + d;
			nref++;
		}
	}
	qsort(out, nref, sizeof(Ref), ref_cmp);
	return nref;
}

/*
 * One scan of seg by the kernel, checked.  ref[nref] is the ranking of
 * range_reference; ext[next] are hits from other sources (docids outside
 * the segment, after the cursor), pushed into the heap first.  fallback
 * is the scan's fallback_cost (0: never give up).  Returns whether the
 * kernel finished (else it gave up, and must have left the heap as it
 * was), with its counters in *c.
 */
static int	range_checks;		/* calls of range_check */
static int	elastic_checks;		/* the same, for the elastic heaps */

static bool
range_check(UnitRangeSeg *seg, const SpmRangeTerm *terms, int n, uint64 lo,
			uint32 ndocs, const uint8 *alive, int k, const SpmAfter *after,
			const Ref *ref, int nref, const Ref *ext, int next,
			double fallback, SpmCounters *c, const char *what)
{
	SpmHit	   *hits = palloc(sizeof(SpmHit) * k);
	SpmHit	   *before = palloc(sizeof(SpmHit) * k);
	Ref		   *want = palloc(sizeof(Ref) * (nref + next + 1));
	int			nwant = 0;
	int			nbefore;
	SpmTopK		topk;
	SpmTopK		topk0;
	double		best[64];
	double		best0[64];
	SpmRangeScan s;
	int64		windows = 0;
	int64		elems = 0;
	bool		done;

	for (int i = 0; i < nref; i++)
		if (spm_is_after(after, ref[i].score, ref[i].docid))
			want[nwant++] = ref[i];
	for (int i = 0; i < next; i++)
		want[nwant++] = ext[i];
	qsort(want, nwant, sizeof(Ref), ref_cmp);

	/*
	 * Every third check's heap is elastic (spmtopk.h), sure of fewer rows
	 * than it holds: the kernel scores into a copy of it and gives it
	 * back, best scores and threshold with the entries
	 */
	memset(hits, 0, sizeof(SpmHit) * k);
	if (++elastic_checks % 3 == 0 && k >= 2)
	{
		int			ew = 1 + rnd_below(Min(k - 1, (int) lengthof(best)));
		double		gap = random_gap(nwant > 0 ? want[0].score : 1.0);

		nwant = elastic_keeps(want, nwant, k, ew, gap);
		spm_topk_init_elastic(&topk, k, hits, ew, gap, best);
	}
	else
	{
		nwant = Min(nwant, k);
		spm_topk_init(&topk, k, hits);
	}
	for (int i = 0; i < next; i++)
		spm_topk_push(&topk, ext[i].score, ext[i].docid, NULL);
	nbefore = topk.n;
	memcpy(before, hits, sizeof(SpmHit) * k);
	spm_topk_copy(&topk0, &topk, before, best0);
	CHECK(spm_range_usable(terms, n), "%s: query not usable", what);
	memset(c, 0, sizeof(*c));
	unit_range_scan(seg, &s, terms, n, ndocs, alive);
	for (uint32 d = 0; d < seg->ndocs; d++)
		elems += seg->docs[d].nnz;
	s.docid_lo = lo;
	s.after = *after;
	s.topk = &topk;
	s.fallback_cost = fallback;
	s.elems_per_doc = (double) elems / Max(seg->ndocs, 1);
	s.relname = "unit";
	s.counters = c;

	/*
	 * Every other check runs on work arrays kept from the last one (the
	 * kernel grows them: SpmRangeScratch), filled with garbage first, as
	 * a backend's are after any earlier query (or an error halfway through
	 * one); now and then they are dropped, so that the kernel allocates
	 * them again, or they start too large.
	 */
	if (++range_checks % 2 == 0)
	{
		static SpmRangeScratch kept;

		if (range_checks % 14 == 0)
		{
			free(kept.ub);
			free(kept.bucket);
			free(kept.order);
			kept.ub = NULL;
			kept.bucket = NULL;
			kept.order = NULL;
			kept.cap = 0;
		}
		if (kept.cap > 0)
		{
			memset(kept.ub, 0xA5, (Size) kept.cap * sizeof(float));
			memset(kept.bucket, 0xA5, (Size) kept.cap * sizeof(uint16));
			memset(kept.order, 0xA5, (Size) kept.cap * sizeof(uint32));
		}
		if (kept.filter)
		{
			memset(kept.filter, 0xFF, SPM_RANGE_FILTER_BITS / 8);
			memset(kept.qidx, 0x07, SPM_RANGE_FILTER_BITS);
		}
		s.scratch = &kept;
	}
	/* the visit order filled in one band, or in many (bands of 1 or 7+) */
	spm_test_range_band_min(range_checks % 3 == 0 ? 1 :
							range_checks % 3 == 1 ? 7 : 4096);
	done = spm_range_topk(&s);
	spm_test_range_band_min(4096);
	unit_range_scan_done(seg);

	CHECK(seg->nerrors == 0, "%s: callback protocol: %s (%d breaches)", what,
		  seg->error, seg->nerrors);
	CHECK(done || fallback > 0, "%s: gave up without a fallback cost", what);
	CHECK(c->candidates == seg->docs_scored,
		  "%s: %lld candidates, %lld documents scored", what,
		  (long long) c->candidates, (long long) seg->docs_scored);
	if (!done)
	{
		/* the heap as it was, entry for entry */
		CHECK(topk.n == nbefore && memcmp(hits, before, sizeof(SpmHit) * k) == 0,
			  "%s: gave up, but the heap changed (%d entries, were %d)", what,
			  topk.n, nbefore);
		CHECK(topk.full == topk0.full && topk.nbest == topk0.nbest &&
			  same_bits(topk.theta, topk0.theta) &&
			  memcmp(best, best0, topk.nbest * sizeof(double)) == 0,
			  "%s: gave up, but the elastic heap's state changed", what);
		pfree(hits);
		pfree(before);
		pfree(want);
		return false;
	}
	spm_topk_sort(&topk);
	CHECK(topk.n == nwant, "%s: %d hits, want %d", what, topk.n, nwant);
	for (int i = 0; i < Min(topk.n, nwant); i++)
		CHECK(hits[i].docid == want[i].docid && same_bits(hits[i].score, want[i].score),
			  "%s: hit %d is (%.17g, %llu), want (%.17g, %llu)", what, i,
			  hits[i].score, (unsigned long long) hits[i].docid,
			  want[i].score, (unsigned long long) want[i].docid);

	/* the counters: ranges with a bound, those not read, documents scored */
	for (uint32 r = 0; (uint64) r * SPM_RANGE_DOCS < ndocs; r++)
		windows += seg->qrange[r];
	CHECK(c->windows == (n > 0 ? windows : 0) &&
		  c->windows_skipped == c->windows - seg->ranges_read,
		  "%s: counters windows %lld skipped %lld, want %lld %lld",
		  what, (long long) c->windows, (long long) c->windows_skipped,
		  (long long) windows, (long long) (windows - seg->ranges_read));
	pfree(hits);
	pfree(before);
	pfree(want);
	return true;
}

/*
 * A query over vocabulary positions [0, vocab + 10): the terms the segment
 * has, in terms[]
 */
static int
range_query(const UnitRangeSeg *seg, SpmRangeTerm *terms)
{
	int			nwant = 1 + rnd_below(40);
	uint32		universe = seg->nterms + 10;
	uint8	   *pick = palloc0(universe);
	int			qstyle = rnd_below(5);
	float		same = (float) (0.1 + 5 * rnd_unit());
	int			n = 0;

	/* often the terms of one document, so that the query is topical */
	if (rnd_below(2) && seg->ndocs > 0)
	{
		const SpmRangeDoc *d = &seg->docs[rnd_below(seg->ndocs)];

		for (int i = 0; i < d->nnz && i < nwant; i++)
			pick[unit_range_index(seg, d->elems[i].term)] = 1;
	}
	for (int i = 0; i < nwant; i++)
		pick[rnd_below(universe)] = 1;
	for (uint32 t = 0; t < universe; t++)
	{
		double		q;

		if (!pick[t] || t >= seg->nterms || seg->df[t] == 0)
			continue;
		switch (qstyle)
		{
			case 0:
				q = 1.0;
				break;
			case 1:
				q = same;
				break;
			case 2:
				q = tie_weights[rnd_below(4)];
				break;
			case 3:
				/* not a float: the kernel takes a double */
				q = 0.01 + 4.0 * rnd_unit();
				break;
			default:
				q = (float) exp((rnd_unit() - 0.5) * 4.0);
				break;
		}
		unit_range_term(seg, t, q, n, &terms[n]);
		n++;
	}
	pfree(pick);
	return n;
}

static void
test_range_trials(void)
{
	static const uint32 sizes[] = {1, 2, 31, 32, 33, 63, 64, 65, 95, 96, 97,
	1000, 1024, 2047, 2048, 2049, 3000};
	int64		nscans = 0;
	int64		windows = 0;
	int64		skipped = 0;
	int			gave_up = 0;
	int			finished = 0;

	for (int ci = 0; ci < 1200; ci++)
	{
		uint32		ndocs = ci < (int) lengthof(sizes) * 3 ? sizes[ci % lengthof(sizes)]
			: 1 + rnd_below(3000);
		uint32		vocab = 5 + rnd_below(196);
		int			style = ci % RW_NSTYLES;
		bool		topical = rnd_below(3) != 0;
		UnitRangeSeg seg;
		Ref		   *ref = palloc(sizeof(Ref) * (ndocs + 1));
		uint8	   *alive = palloc(ndocs + 1);
		SpmRangeTerm terms[256];
		uint32		ids[200];
		int			idstyle = (ci / RW_NSTYLES) % 4;
		SpmRangeDoc *docs = range_corpus(ndocs, vocab, style, topical);

		/*
		 * Term ids: 0 .. vocab - 1; every one on the same bit of the
		 * kernel's query filter (multiples of 65536); random gaps; near
		 * 2^31, a step of 65536 or 65537 (half the pairs collide).
		 */
		for (uint32 t = 0; t < vocab; t++)
		{
			switch (idstyle)
			{
				case 0:
					ids[t] = t;
					break;
				case 1:
					ids[t] = t * 65536 + 7;
					break;
				case 2:
					ids[t] = (t ? ids[t - 1] + 1 : 0) + rnd_below(1 << 20);
					break;
				default:
					ids[t] = t ? ids[t - 1] + 65536 + rnd_below(2)
						: PG_INT32_MAX - vocab * 65537;
					break;
			}
		}
		for (uint32 d = 0; d < ndocs; d++)
			for (int i = 0; i < docs[d].nnz; i++)
				((SpmFwdElem *) docs[d].elems)[i].term = ids[docs[d].elems[i].term];
		unit_range_build(&seg, ndocs, vocab, ids, docs);
		for (int qi = 0; qi < 10; qi++)
		{
			int			n = range_query(&seg, terms);
			uint64		lo = rnd_below(2) ? 0 : (uint64) rnd_below(1 << 30) * 1000 + 5000;
			uint32		sndocs = rnd_below(4) ? ndocs : rnd_below(ndocs + 1);
			bool		use_alive = rnd_below(5) < 2;
			int			k = rnd_below(8) ? 1 + (int) rnd_below(50) : (int) ndocs + 1 + (int) rnd_below(10);
			SpmAfter	after = {false, 0, 0};
			Ref			ext[64];
			int			next = 0;
			int			nref;
			SpmCounters c;
			char		what[160];
			double		fallback = 0;
			int64		postings = 0;

			if (use_alive)
			{
				double		dead = (double[]) {0.0, 0.1, 0.5, 0.95} [rnd_below(4)];

				for (uint32 d = 0; d < ndocs; d++)
					alive[d] = rnd_unit() >= dead;
			}
			nref = range_reference(&seg, terms, n, lo, sndocs,
								   use_alive ? alive : NULL, ref);

			/* a cursor from the ranking, on a tie when there is one */
			if (rnd_below(3) == 0)
			{
				after.active = true;
				if (nref == 0)
				{
					after.score = rnd_unit();
					after.docid = lo + rnd_below(ndocs);
				}
				else
				{
					int			p = rnd_below(nref);

					for (int tries = 0; rnd_below(2) && tries < 20; tries++)
					{
						int			x = rnd_below(nref);

						if (x + 1 < nref && ref[x].score == ref[x + 1].score)
						{
							p = x;
							break;
						}
					}
					after.score = ref[p].score;
					after.docid = ref[p].docid;
				}
			}

			/* hits of other sources, ties with the segment's included */
			if (rnd_below(4) == 0)
			{
				int			m = rnd_below(Min(k + 5, (int) lengthof(ext)));

				for (int i = 0; i < m; i++)
				{
					Ref			h;

					h.score = nref > 0 && rnd_below(2) ? ref[rnd_below(nref)].score
						: (nref > 0 ? ref[0].score : 1.0) * 1.2 * rnd_unit();
					h.docid = (i % 2 == 0 || lo < 1000) ? lo + ndocs + i : lo - 1 - i;
					if (h.score > 0 && spm_is_after(&after, h.score, h.docid))
						ext[next++] = h;
				}
			}

			/* chunks of the range maxima */
			seg.max_chunk = rnd_below(4) == 0 ? 0 : 1 + rnd_below(rnd_below(2) ? 16 : 300);
			seg.overlong = rnd_below(3) == 0;
			seg.chunk_rng = rnd();
			/* half the segments whose terms fit hold them in 16 bits */
			seg.fwd16 = ids[vocab - 1] < 65536 && rnd_below(2);

			/* sometimes a fallback: the query terms' postings, scaled */
			if (rnd_below(4) == 0)
			{
				for (int i = 0; i < n; i++)
					postings += seg.df[unit_range_index(&seg, terms[i].term)];
				fallback = postings * (rnd_below(2) ? 0.05 + rnd_unit() : 1.0 + 4 * rnd_unit());
			}

			snprintf(what, sizeof(what),
					 "range corpus %d (%u docs, scan %u, vocab %u, %s%s, ids %d%s) query %d (%d terms) k %d%s%s%s",
					 ci, ndocs, sndocs, vocab, rw_names[style],
					 topical ? " topical" : "", idstyle, seg.fwd16 ? " fwd16" : "", qi, n, k,
					 after.active ? " after" : "", use_alive ? " alive" : "",
					 fallback > 0 ? " fallback" : "");
			if (range_check(&seg, terms, n, lo, sndocs, use_alive ? alive : NULL,
							k, &after, ref, nref, ext, next, fallback, &c, what))
			{
				finished += fallback > 0;
				windows += c.windows;
				skipped += c.windows_skipped;
			}
			else
				gave_up++;
			nscans++;
		}
		unit_range_free(&seg);
		pfree(ref);
		pfree(alive);
	}
	spm_test_range_avx2(true);
	printf("range pruning: %lld scans, %lld of %lld ranges skipped; with a fallback, %d gave up, %d finished\n",
		   (long long) nscans, (long long) skipped, (long long) windows,
		   gave_up, finished);
	CHECK(skipped > 0, "no range ever skipped");
	CHECK(gave_up > 0 && finished > 0, "with a fallback, %d gave up, %d finished",
		  gave_up, finished);
}

/*
 * Near ties that only the margin separates: a document with every query
 * term at its largest weight, and in an earlier range one with the same
 * terms but one weight a float below.  Their ranges have the same levels,
 * so the same bound, which the float sums may put just below the larger
 * score; k = 1 and the earlier range is read first.  Without the margin
 * the later range, holding the answer, is skipped.
 */
static void
test_range_near_ties(void)
{
	for (int iter = 0; iter < 3000; iter++)
	{
		int			n = 1 + rnd_below(40);
		uint32		ndocs = 64 + rnd_below(64);
		SpmRangeDoc *docs = palloc0(sizeof(SpmRangeDoc) * ndocs);
		uint32		da = rnd_below(32);
		uint32		db = 32 + rnd_below(32);
		int			j = rnd_below(n);
		float		base[40];
		SpmRangeTerm terms[40];
		UnitRangeSeg seg;
		Ref			ref[130];
		int			nref;
		SpmAfter	after = {false, 0, 0};
		SpmCounters c;
		char		what[64];

		for (int t = 0; t < n; t++)
			base[t] = (float) (0.01 + 3.0 * rnd_unit());
		for (int x = 0; x < 2; x++)
		{
			uint32		d = x == 0 ? da : db;
			SpmFwdElem *e = palloc(sizeof(SpmFwdElem) * n);

			for (int t = 0; t < n; t++)
			{
				e[t].term = t;
				e[t].w = base[t];
			}
			if (x == 0)
				e[j].w = nextafterf(base[j], 0.0f);
			docs[d].nnz = n;
			docs[d].elems = e;
		}
		unit_range_build(&seg, ndocs, n, NULL, docs);
		for (int t = 0; t < n; t++)
			unit_range_term(&seg, t, (float) exp((rnd_unit() - 0.5) * 4.0), t,
							&terms[t]);
		seg.max_chunk = 0;
		seg.overlong = false;
		nref = range_reference(&seg, terms, n, 0, ndocs, NULL, ref);
		CHECK(nref == 2 && ref[0].docid == db, "near ties: reference");
		snprintf(what, sizeof(what), "near ties %d (%d terms)", iter, n);
		range_check(&seg, terms, n, 0, ndocs, NULL, 1, &after, ref, nref,
					NULL, 0, 0, &c, what);
		unit_range_free(&seg);
	}
}

/*
 * Pruning must happen: on a topical corpus, a query of one topic's terms
 * with k = 10 reads a fraction of the ranges.  (A kernel that scores every
 * range passes the trials above.)
 */
static void
test_range_pruning_happens(void)
{
	uint32		ndocs = 20000;
	uint32		vocab = 200;
	SpmRangeDoc *docs = palloc0(sizeof(SpmRangeDoc) * ndocs);
	UnitRangeSeg seg;
	Ref		   *ref = palloc(sizeof(Ref) * ndocs);
	int64		windows = 0;
	int64		skipped = 0;
	int			pruned = 0;

	/*
	 * Blocks of 100 to 400 documents, each of 8 of the 200 terms, with
	 * weights of a scale of the block's.
	 */
	for (uint32 d = 0; d < ndocs;)
	{
		uint32		len = 100 + rnd_below(300);
		uint32		first = rnd_below(vocab - 8);
		double		scale = 0.1 + rnd_unit();

		len = Min(len, ndocs - d);
		for (uint32 i = 0; i < len; i++, d++)
		{
			SpmFwdElem *e = palloc(sizeof(SpmFwdElem) * 8);
			int			n = 0;

			for (uint32 t = first; t < first + 8; t++)
			{
				if (rnd_below(2))
				{
					e[n].term = t;
					e[n].w = (float) ((0.01 + 3.0 * rnd_unit()) * scale);
					n++;
				}
			}
			docs[d].nnz = n;
			docs[d].elems = e;
		}
	}
	unit_range_build(&seg, ndocs, vocab, NULL, docs);
	for (int qi = 0; qi < 20; qi++)
	{
		SpmRangeTerm terms[8];
		uint32		first = rnd_below(vocab - 8);
		int			n = 0;
		int			nref;
		SpmAfter	after = {false, 0, 0};
		SpmCounters c;

		for (uint32 t = first; t < first + 8; t += 1 + rnd_below(3))
		{
			if (seg.df[t] > 0)
			{
				unit_range_term(&seg, t, (float) (0.5 + rnd_unit()), n, &terms[n]);
				n++;
			}
		}
		nref = range_reference(&seg, terms, n, 0, ndocs, NULL, ref);
		seg.max_chunk = 1 + rnd_below(100);
		seg.overlong = false;
		seg.chunk_rng = rnd();
		range_check(&seg, terms, n, 0, ndocs, NULL, 10, &after, ref, nref,
					NULL, 0, 0, &c, "pruning");
		pruned += c.windows_skipped > 0;
		windows += c.windows;
		skipped += c.windows_skipped;
	}
	CHECK(skipped * 2 > windows && pruned >= 15,
		  "skipped only %lld of %lld ranges, in %d queries of 20",
		  (long long) skipped, (long long) windows, pruned);
	printf("range pruning happens: %lld of %lld ranges skipped, in %d of 20 topical queries (k 10)\n",
		   (long long) skipped, (long long) windows, pruned);
	unit_range_free(&seg);
	pfree(ref);
}

/*
 * spm_range_level: level * max_w / 255 >= m, and the level below is not
 * (in double and exactly: the products of floats by levels are exact in
 * double), for random and edge floats.
 */
static void
check_level(float m, float max_w)
{
	uint8		l = spm_range_level(m, max_w);

	if (!(m > 0.0f) || !(max_w > 0.0f))
	{
		CHECK(l == 0, "level(%.9g, %.9g) = %d, want 0", m, max_w, l);
		return;
	}
	if (m >= max_w)
	{
		CHECK(l == 255, "level(%.9g, %.9g) = %d, want 255", m, max_w, l);
		return;
	}
	CHECK(l >= 1, "level(%.9g, %.9g) = %d", m, max_w, l);
	CHECK((double) l * (double) max_w / 255.0 >= (double) m &&
		  (double) l * (double) max_w >= (double) m * 255.0,
		  "level(%.9g, %.9g) = %d: bound below m", m, max_w, l);
	CHECK(l <= 1 || ((double) (l - 1) * (double) max_w / 255.0 < (double) m &&
					 (double) (l - 1) * (double) max_w < (double) m * 255.0),
		  "level(%.9g, %.9g) = %d: not the smallest", m, max_w, l);
}

static void
test_range_level(void)
{
	static const float edges[] = {
		FLT_MIN, FLT_TRUE_MIN, FLT_MAX, 1.0f, 255.0f, 1.0f / 255.0f,
		1e-20f, 1e6f, 0.5f, 3.0f, 1e-38f, 1e38f
	};

	check_level(0.0f, 1.0f);
	check_level(-0.0f, 1.0f);
	check_level(-1.0f, 1.0f);
	check_level(NAN, 1.0f);
	check_level(1.0f, 0.0f);
	check_level(1.0f, -1.0f);
	check_level(1.0f, NAN);
	for (int i = 0; i < (int) lengthof(edges); i++)
	{
		float		mx = edges[i];

		check_level(mx, mx);
		check_level(nextafterf(mx, 0.0f), mx);
		check_level(FLT_TRUE_MIN, mx);
		check_level(FLT_MIN, mx);
		for (int j = 0; j < (int) lengthof(edges); j++)
			if (edges[j] < mx)
				check_level(edges[j], mx);
		/* the level boundaries and their float neighbours */
		for (int l = 1; l < 255; l++)
		{
			float		b = (float) ((double) l * mx / 255.0);

			check_level(b, mx);
			check_level(nextafterf(b, 0.0f), mx);
			check_level(nextafterf(b, INFINITY), mx);
		}
	}
	for (int iter = 0; iter < 200000; iter++)
	{
		float		mx;
		float		m;

		/* any magnitude, subnormals included */
		mx = (float) (0.5 + 0.5 * rnd_unit());
		mx = (float) ldexp(mx, (int) rnd_below(270) - 148);
		if (mx == 0.0f || isinf(mx))
			mx = 1.0f;
		switch (rnd_below(4))
		{
			case 0:
				m = (float) (mx * rnd_unit());
				break;
			case 1:
				/* near a level boundary */
				m = (float) ((double) (1 + rnd_below(254)) * mx / 255.0);
				m = rnd_below(2) ? nextafterf(m, 0.0f) : nextafterf(m, INFINITY);
				break;
			case 2:
				m = (float) (mx * rnd_unit());
				m = (float) ldexp(m, -(int) rnd_below(40));
				break;
			default:
				/* one float below the largest, or another small count */
				m = mx;
				for (int s = rnd_below(4); s >= 0; s--)
					m = nextafterf(m, 0.0f);
				break;
		}
		check_level(m, mx);
	}
}

/* spm_range_usable: positive q and max_w, level units of normal size */
static void
test_range_usable(void)
{
	SpmRangeTerm t[3];

	for (int i = 0; i < 3; i++)
	{
		memset(&t[i], 0, sizeof(t[i]));
		t[i].term = i;
		t[i].q = 1.0;
		t[i].max_w = 2.0f;
		t[i].nr = 1;
	}
	CHECK(spm_range_usable(t, 3), "plain terms unusable");
	CHECK(spm_range_usable(t, 0), "no term unusable");
	t[1].q = 1e-20;
	t[1].max_w = 1e-20f;		/* unit 4e-43 */
	CHECK(!spm_range_usable(t, 3), "a unit below 1e-30 accepted");
	t[1].q = 1e-5;				/* unit 8e-28 */
	CHECK(spm_range_usable(t, 3), "a unit of 8e-28 refused");
	t[1].q = 1e30;
	t[1].max_w = 1e10f;			/* unit 4e37 */
	CHECK(!spm_range_usable(t, 3), "a unit of 4e37 accepted");
	t[1].max_w = 1e6f;
	t[1].q = 1e6;				/* a huge weight with a large q: 4e9 */
	CHECK(spm_range_usable(t, 3), "a unit of 4e9 refused");
	t[1].q = 0.0;
	CHECK(!spm_range_usable(t, 3), "q 0 accepted");
	t[1].q = -1.0;
	CHECK(!spm_range_usable(t, 3), "q < 0 accepted");
	t[1].q = NAN;
	CHECK(!spm_range_usable(t, 3), "q NaN accepted");
	t[1].q = 1.0;
	t[1].max_w = 0.0f;
	CHECK(!spm_range_usable(t, 3), "max_w 0 accepted");
	t[1].max_w = -2.0f;
	CHECK(!spm_range_usable(t, 3), "max_w < 0 accepted");
	t[1].max_w = NAN;
	CHECK(!spm_range_usable(t, 3), "max_w NaN accepted");
	t[1].max_w = 2.0f;
	t[2].q = 1e-40;
	CHECK(!spm_range_usable(t, 3), "the last term not checked");
}

/*
 * spm_range_add_dense, with and without AVX2 (where the CPU has it),
 * against the scalar loop bit for bit: random lengths (past the vector
 * widths), unaligned starts, scales and starting bounds; nothing written
 * outside [0, n).
 */
static void
test_range_add_dense(void)
{
	float		ub[300];
	float		want[300];
	uint8		d[300];

	for (int avx2 = 0; avx2 <= 1; avx2++)
	{
		spm_test_range_avx2(avx2 == 1);
		for (int trial = 0; trial < 2000; trial++)
		{
			uint32		off = rnd_below(8);
			uint32		n = rnd_below(260);
			float		scale = (float) ldexp(rnd_unit() + 0.5, (int) rnd_below(60) - 40);

			for (int i = 0; i < 300; i++)
			{
				d[i] = (uint8) rnd_below(256);
				ub[i] = rnd_below(4) == 0 ? 0.0f :
					(float) ldexp(rnd_unit(), (int) rnd_below(60) - 40);
				want[i] = ub[i];
			}
			for (uint32 r = 0; r < n; r++)
				want[off + r] += scale * d[off + r];
			spm_range_add_dense(ub + off, d + off, scale, n);
			CHECK(memcmp(ub, want, sizeof(ub)) == 0,
				  "add_dense (avx2 %d) n %u off %u differs from the scalar loop",
				  avx2, n, off);
		}
	}
	spm_test_range_avx2(true);
}

/*
 * The scoring of 16-bit forward-copy documents, with and without AVX2
 * (where the CPU has it), with qidx and by binary search, against a
 * brute force: the same score bit for bit (the matching products added in
 * ascending term order from +0.0) and the same verdict on the order.
 * Documents of 0 to 80 elements (past the vector width and its tails),
 * query terms from 1 to 400 (past qidx's 255) over a narrow or the whole
 * 16-bit vocabulary, weights with ties and mixed magnitudes, and now and
 * then one element out of order or repeated, at any position.
 */
static void
test_range_score16(void)
{
	SpmRangeTerm *terms = palloc(sizeof(SpmRangeTerm) * 400);
	uint16		t16[96];
	float		w16[96];
	uint8		c16[96];
	uint8	   *isq = palloc(65536);
	double	   *qw = palloc(sizeof(double) * 65536);
	int32	   *qb = palloc(sizeof(int32) * 65536);
	int16	   *qe = palloc(sizeof(int16) * 65536);

	for (int trial = 0; trial < 20000; trial++)
	{
		/* format 6: codes whose weights are (qbase + code) * 2^e */
		bool		coded = rnd_below(2) == 0;
		uint32		vocab = rnd_below(2) ? 30 + rnd_below(200) : 65536;
		int			nq = 1 + (int) rnd_below(rnd_below(4) == 0 ? 400 : 40);
		int32		nnz = (int32) rnd_below(81);
		int			nt = 0;
		int			flaw = rnd_below(4) == 0 ? (int) rnd_below(2) + 1 : 0;
		int32		at = 0;
		bool		want_ordered = true;
		double		want = 0.0;

		memset(isq, 0, 65536);
		nnz = Min(nnz, (int32) vocab);
		nq = Min(nq, (int) vocab);
		/* query terms: distinct, then ascending */
		while (nt < nq)
		{
			uint32		t = rnd_below(vocab);

			if (isq[t])
				continue;
			isq[t] = 1;
			nt++;
		}
		nt = 0;
		for (uint32 t = 0; t < vocab; t++)
			if (isq[t])
			{
				terms[nt].term = t;
				terms[nt].q = rnd_below(4) == 0 ? 1.0 : exp((rnd_unit() - 0.5) * 8.0);
				terms[nt].max_w = 1.0f;
				terms[nt].dense = false;
				terms[nt].nr = 0;
				terms[nt].id = nt;
				qw[t] = terms[nt].q;
				/* exponents and bases from the whole range, ends included */
				qe[t] = rnd_below(8) == 0 ? (rnd_below(2) ? SPM_QEXP_MIN : SPM_QEXP_MAX - 1) :
					(int16) (SPM_QEXP_MIN + (int) rnd_below(SPM_QEXP_MAX - SPM_QEXP_MIN));
				qb[t] = rnd_below(4) == 0 ?
					(rnd_below(2) ? 1 : -1) * (SPM_QBASE_LIMIT - 257) :
					(int32) rnd_below(100000) - 50000;
				terms[nt].qbase = qb[t];
				terms[nt].qscale = ldexpf(1.0f, qe[t]);
				nt++;
			}

		/* a document: ascending distinct terms, a third of them query terms */
		{
			uint32		t = rnd_below(Max(vocab / Max(nnz, 1), 1));

			for (int32 i = 0; i < nnz; i++)
			{
				if (t >= vocab)
				{
					nnz = i;
					break;
				}
				if (rnd_below(3) == 0 && nt > 0)
				{
					/* the next query term at or after t, if any */
					for (int j = 0; j < nt; j++)
						if (terms[j].term >= t)
						{
							t = terms[j].term;
							break;
						}
				}
				t16[i] = (uint16) t;
				w16[i] = rnd_below(4) == 0 ? 0.5f :
					(float) ldexp(rnd_unit() + 0.25, (int) rnd_below(40) - 20);
				c16[i] = (uint8) (1 + rnd_below(255));
				t += 1 + rnd_below(rnd_below(2) ? 3 : Max(vocab / Max(nnz, 1), 2));
			}
		}
		/* a flaw: an element repeated, or one moved below its predecessor */
		if (flaw && nnz >= 2)
		{
			at = 1 + (int32) rnd_below(nnz - 1);
			t16[at] = flaw == 1 ? t16[at - 1] : (uint16) rnd_below((uint32) t16[at - 1] + 1);
		}
		for (int32 i = 0; i < nnz; i++)
		{
			if (i > 0 && t16[i] <= t16[i - 1])
				want_ordered = false;
			if (isq[t16[i]])
			{
				/* the upper end the block decoder gives a code, computed apart */
				float		w = coded ?
					(float) ldexp((double) (qb[t16[i]] + c16[i]), qe[t16[i]]) : w16[i];

				want = spv_score_add(want, qw[t16[i]], w);
			}
		}

		for (int avx2 = 0; avx2 <= 1; avx2++)
			for (int use_qidx = 0; use_qidx <= 1; use_qidx++)
			{
				bool		ordered = !want_ordered;
				double		got;

				if (use_qidx && nt > 255)
					continue;
				spm_test_range_avx2(avx2 == 1);
				got = spm_test_range_score16(terms, nt, use_qidx == 1, t16,
											 coded ? NULL : w16, c16, nnz,
											 &ordered);
				CHECK(ordered == want_ordered,
					  "score16 (avx2 %d qidx %d) nnz %d flaw %d at %d: ordered %d, want %d",
					  avx2, use_qidx, nnz, flaw, at, ordered, want_ordered);
				/* a document out of order is an error: its score does not matter */
				if (want_ordered)
					CHECK(memcmp(&got, &want, sizeof(double)) == 0,
						  "score16 (avx2 %d qidx %d) nnz %d nq %d: %.17g, want %.17g",
						  avx2, use_qidx, nnz, nt, got, want);
			}
	}
	spm_test_range_avx2(true);
	pfree(qw);
	pfree(qb);
	pfree(qe);
	pfree(isq);
	pfree(terms);
}

static void
test_range_pruning(void)
{
	test_range_add_dense();
	test_range_score16();
	test_range_level();
	test_range_usable();
	test_range_trials();
	test_range_near_ties();
	test_range_pruning_happens();
}

/* ---------------------------------------------------------------- reorder */

/*
 * How well an order clusters: the number of (term, block) pairs where a
 * block is leaf consecutive positions of perm (from position 0) and at
 * least one of its documents has the term, i.e. what range maxima with
 * leaf documents per range would store.  perm NULL: the identity.
 */
static uint64
reorder_pairs(uint32 ndocs, const uint32 *off, const uint32 *terms,
			  uint32 nterms, uint32 leaf, const uint32 *perm)
{
	uint32	   *seen = palloc((Size) nterms * sizeof(uint32));
	uint64		pairs = 0;

	/* seen[t] = 1 + the block that last had t */
	memset(seen, 0, (Size) nterms * sizeof(uint32));
	for (uint32 i = 0; i < ndocs; i++)
	{
		uint32		d = perm ? perm[i] : i;
		uint32		block = i / Max(leaf, 1);

		for (uint32 j = off[d]; j < off[d + 1]; j++)
			if (seen[terms[j]] != block + 1)
			{
				seen[terms[j]] = block + 1;
				pairs++;
			}
	}
	pfree(seen);
	return pairs;
}


static bool
is_permutation(const uint32 *perm, uint32 n)
{
	uint8	   *seen = calloc(Max(n, 1), 1);
	bool		ok = true;

	for (uint32 i = 0; i < n && ok; i++)
	{
		ok = perm[i] < n && !seen[perm[i]];
		if (ok)
			seen[perm[i]] = 1;
	}
	free(seen);
	return ok;
}

/*
 * spm_reorder_bisect on planted clusters: every document draws 8 distinct
 * terms from the 40 of its cluster (one of 16, at random, so the input
 * order is a shuffle) and 2 from 200 terms all clusters share.  Ordered by
 * cluster, blocks of 32 documents hold about 40 + 55 distinct terms; in
 * the input order about three times as many.  Bisection must come within
 * 10% of the clusters' own order (moves that ignore the gains, or swaps
 * without the test of their gains, do not; a gain of the wrong sign does,
 * since exchanging all of both halves but the pairs worth moving is the
 * same split), return a permutation, and return the same one when run
 * again.  Then the edge cases: no documents, one, documents
 * without terms, a leaf larger than the corpus, a single term.
 */
static void
test_reorder(void)
{
	const uint32 nclust = 16;
	const uint32 cterms = 40;
	const uint32 gterms = 200;
	const uint32 ndocs = 4096;
	const uint32 nterms = nclust * cterms + gterms;
	uint32	   *off = malloc((ndocs + 1) * sizeof(uint32));
	uint32	   *terms = malloc(ndocs * 10 * sizeof(uint32));
	uint32	   *clust = malloc(ndocs * sizeof(uint32));
	uint32	   *oracle = malloc(ndocs * sizeof(uint32));
	uint32	   *perm = malloc(ndocs * sizeof(uint32));
	uint32	   *perm2 = malloc(ndocs * sizeof(uint32));
	uint64		p_input;
	uint64		p_oracle;
	uint64		p_bp;
	uint32		k = 0;

	off[0] = 0;
	for (uint32 d = 0; d < ndocs; d++)
	{
		uint32		n = 0;

		clust[d] = rnd_below(nclust);
		while (n < 10)
		{
			uint32		t = n < 8 ? clust[d] * cterms + rnd_below(cterms) :
				nclust * cterms + rnd_below(gterms);
			bool		dup = false;

			for (uint32 j = off[d]; j < off[d] + n; j++)
				dup |= terms[j] == t;
			if (!dup)
				terms[off[d] + n++] = t;
		}
		off[d + 1] = off[d] + n;
	}
	for (uint32 c = 0; c < nclust; c++)
		for (uint32 d = 0; d < ndocs; d++)
			if (clust[d] == c)
				oracle[k++] = d;

	spm_reorder_bisect(ndocs, off, terms, nterms, 32, SPM_REORDER_ITERS, perm);
	CHECK(is_permutation(perm, ndocs), "reorder: not a permutation");
	p_input = reorder_pairs(ndocs, off, terms, nterms, 32, NULL);
	p_oracle = reorder_pairs(ndocs, off, terms, nterms, 32, oracle);
	p_bp = reorder_pairs(ndocs, off, terms, nterms, 32, perm);
	printf("reorder: (term, block of 32) pairs: input %llu, by cluster %llu, bisection %llu\n",
		   (unsigned long long) p_input, (unsigned long long) p_oracle,
		   (unsigned long long) p_bp);
	CHECK(p_input > 2 * p_oracle, "reorder: the corpus is not clustered (%llu, %llu)",
		  (unsigned long long) p_input, (unsigned long long) p_oracle);
	CHECK(p_bp <= p_oracle * 1.10, "reorder: bisection found %llu pairs, the clusters %llu",
		  (unsigned long long) p_bp, (unsigned long long) p_oracle);
	spm_reorder_bisect(ndocs, off, terms, nterms, 32, SPM_REORDER_ITERS, perm2);
	CHECK(memcmp(perm, perm2, ndocs * sizeof(uint32)) == 0, "reorder: not deterministic");

	/* the pair count itself, on a hand-made case: blocks of 2 */
	{
		const uint32 hoff[] = {0, 2, 3, 5, 5, 6};
		const uint32 hterms[] = {0, 1, 1, 0, 2, 2};
		const uint32 hperm[] = {4, 1, 0, 3, 2};

		/* identity: {0,1}+{1} = 2, {0,2}+{} = 2, {2} = 1 */
		CHECK(reorder_pairs(5, hoff, hterms, 3, 2, NULL) == 5, "reorder: pairs, identity");
		/* {2}+{1}, {0,1}+{}, {0,2} */
		CHECK(reorder_pairs(5, hoff, hterms, 3, 2, hperm) == 6, "reorder: pairs, permuted");
	}

	/* edge cases: each must give a permutation */
	spm_reorder_bisect(0, off, terms, nterms, 32, SPM_REORDER_ITERS, perm);
	spm_reorder_bisect(1, off, terms, nterms, 32, SPM_REORDER_ITERS, perm);
	CHECK(perm[0] == 0, "reorder: one document");
	spm_reorder_bisect(100, off, terms, nterms, 128, SPM_REORDER_ITERS, perm);
	for (uint32 i = 0; i < 100; i++)
		CHECK(perm[i] == i, "reorder: a leaf larger than the corpus must keep the order");
	for (uint32 leaf = 1; leaf <= 64; leaf *= 4)
	{
		uint32		n = 1000 + leaf;

		spm_reorder_bisect(n, off, terms, nterms, leaf, 2, perm);
		CHECK(is_permutation(perm, n), "reorder: not a permutation, leaf %u", leaf);
	}
	{
		uint32	   *zoff = calloc(301, sizeof(uint32));
		uint32	   *one = malloc(301 * sizeof(uint32));

		spm_reorder_bisect(300, zoff, terms, nterms, 8, SPM_REORDER_ITERS, perm);
		CHECK(is_permutation(perm, 300), "reorder: documents without terms");
		for (uint32 d = 0; d <= 300; d++)
		{
			zoff[d] = d;
			one[d] = 0;
		}
		spm_reorder_bisect(300, zoff, one, 1, 8, SPM_REORDER_ITERS, perm);
		CHECK(is_permutation(perm, 300), "reorder: a single term");
		free(one);
		free(zoff);
	}
	free(perm2);
	free(perm);
	free(oracle);
	free(clust);
	free(terms);
	free(off);
}

/*
 * Quantized weights (spmblock.h): every posting's interval holds its
 * exact weight, on adversarial blocks (one huge weight, all equal,
 * denormals, negatives, the float4 extremes); the exponent is the
 * smallest that fits; merges re-encode intervals into intervals that hold
 * them; blocks no exponent can hold, and blocks of 1-2 postings, stay raw.
 */
static float
adversarial_weight(int style, int i)
{
	switch (style)
	{
		case 0:					/* one huge weight among small ones */
			return i == 3 ? 1e30f : (float) (1e-3 * (1 + rnd_below(1000)));
		case 1:					/* all equal */
			return 0.7f;
		case 2:					/* denormals and the smallest normals */
			return (float) ((1 + rnd_below(1000)) * 1e-45) + (rnd_below(3) ? 0.0f : FLT_MIN);
		case 3:					/* mixed signs */
			return (float) ((rnd_unit() - 0.5) * 10.0) + (i % 7 == 0 ? -1e-30f : 0.0f);
		case 4:					/* all negative, one tiny */
			return i == 5 ? -1e-38f : (float) (-rnd_unit() * 3.0 - 1e-3);
		case 5:					/* the largest floats: no exponent fits */
			return i % 2 ? FLT_MAX : -FLT_MAX / 3;
		case 6:					/* powers of two exactly on the grid */
			return ldexpf(1.0f, (int) rnd_below(20) - 10);
		default:				/* random magnitudes */
			return (float) exp((rnd_unit() - 0.5) * 30.0) * (rnd_below(5) ? 1 : -1);
	}
}

static void
check_block_intervals(const char *enc, int size, const uint32 *docs,
					  int count, const float *lo_in, const float *hi_in,
					  float bmax, float bmin, const char *what)
{
	uint32		d[SPM_BLOCK_POSTINGS];
	float		hi[SPM_BLOCK_POSTINGS];
	float		lo[SPM_BLOCK_POSTINGS];
	int16		e1,
				e2;
	float		mx = -INFINITY,
				mn = INFINITY;

	CHECK(spm_block_size(enc, size) == size, "%s: size", what);
	CHECK(spm_block_decode_bounds(enc, size, count, docs[count - 1], false, d, hi, &e1) &&
		  spm_block_decode_bounds(enc, size, count, docs[count - 1], true, d, lo, &e2) &&
		  e1 == e2, "%s: decodes", what);
	for (int i = 0; i < count; i++)
	{
		CHECK(lo[i] <= lo_in[i] && hi_in[i] <= hi[i] && isfinite(lo[i]) && isfinite(hi[i]),
			  "%s: posting %d interval [%g, %g] does not hold [%g, %g]",
			  what, i, lo[i], hi[i], lo_in[i], hi_in[i]);
		if (e1 == SPM_QEXP_EXACT)
			CHECK(lo[i] == hi[i], "%s: raw weight", what);
		else
			CHECK((double) hi[i] - (double) lo[i] == ldexp(1.0, e1),
				  "%s: interval is one cell", what);
		mx = Max(mx, hi[i]);
		mn = Min(mn, lo[i]);
	}
	CHECK(mx == bmax && mn == bmin, "%s: block bounds %g/%g, decoded %g/%g",
		  what, bmax, bmin, mx, mn);
}

static void
test_quantize(void)
{
	for (int trial = 0; trial < 4000; trial++)
	{
		int			style = trial % 8;
		int			count = trial % 50 == 0 ? 1 + rnd_below(2) : 1 + rnd_below(SPM_BLOCK_POSTINGS);
		uint32		docs[SPM_BLOCK_POSTINGS];
		float		w[SPM_BLOCK_POSTINGS];
		char		enc[SPM_BLOCK_MAX_BYTES];
		float		bmax,
					bmin;
		int			size;
		char		what[64];
		SpmBlockHeader hdr;
		double		mx = -INFINITY,
					mn = INFINITY;

		snprintf(what, sizeof(what), "quantize trial %d style %d count %d", trial, style, count);
		docs[0] = rnd_below(1000);
		for (int i = 0; i < count; i++)
		{
			if (i > 0)
				docs[i] = docs[i - 1] + 1 + rnd_below(i % 9 == 0 ? 100000 : 4);
			w[i] = adversarial_weight(style, i);
			if (w[i] == 0.0f)
				w[i] = 1.0f;
			mx = Max(mx, w[i]);
			mn = Min(mn, w[i]);
		}
		size = spm_block_encode_bounds(docs, w, NULL, count, true, enc, &bmax, &bmin);
		memcpy(&hdr, enc, sizeof(hdr));
		CHECK(size > 0 && size <= (int) SPM_BLOCK_MAX_BYTES && size % 4 == 0, "%s: size", what);
		check_block_intervals(enc, size, docs, count, w, w, bmax, bmin, what);
		/* raw exactly where it must be */
		CHECK(((hdr.flags & SPM_BLOCK_QUANT) == 0) ==
			  (count < SPM_QUANT_MIN_POSTINGS || style == 5), "%s: raw or quantized", what);
		if (hdr.flags & SPM_BLOCK_QUANT)
		{
			SpmBlockQuant q;
			int			e;
			double		lim = SPM_QBASE_LIMIT - 256;
			double		h1,
						l1;

			memcpy(&q, enc + TYPEALIGN(4, sizeof(SpmBlockHeader) + hdr.nbytes_ids), sizeof(q));
			e = q.exp;
			/* the smallest exponent that fits: at e - 1 the cells do not */
			h1 = ceil(ldexp(mx, -(e - 1)));
			l1 = ceil(ldexp(mn, -(e - 1))) - 1;
			CHECK(e == SPM_QEXP_MIN || h1 - l1 > 255 || fabs(h1) >= lim || fabs(l1) >= lim,
				  "%s: exponent %d is not the smallest", what, e);
			/* so a cell is at most 1/127 of the spread, or 2^-22 of |w| */
			CHECK(e == SPM_QEXP_MIN || ldexp(1.0, e) <= (mx - mn) / 127.0 ||
				  ldexp(1.0, e) <= Max(fabs(mx), fabs(mn)) / 4194304.0,
				  "%s: cell too coarse", what);
			/* smaller than raw */
			CHECK(size < (int) (TYPEALIGN(4, sizeof(SpmBlockHeader) + hdr.nbytes_ids) +
								count * sizeof(float)) || count < 4, "%s: not smaller", what);
		}

		/*
		 * Merges: the block's upper ends and exponent, mixed with another
		 * block's, re-encoded again and again: the intervals only ever
		 * hold the previous ones (hence the exact weights).
		 */
		if (style != 5)
		{
			float		lo[SPM_BLOCK_POSTINGS];
			float		hi[SPM_BLOCK_POSTINGS];
			int16		exps[SPM_BLOCK_POSTINGS];
			uint32		d[SPM_BLOCK_POSTINGS];
			int16		e;

			spm_block_decode_bounds(enc, size, count, docs[count - 1], true, d, lo, &e);
			spm_block_decode_bounds(enc, size, count, docs[count - 1], false, d, hi, &e);
			for (int round = 0; round < 4; round++)
			{
				float		lo2[SPM_BLOCK_POSTINGS];
				float		hi2[SPM_BLOCK_POSTINGS];
				int16		e2;

				float		big = 0.0f;

				for (int i = 0; i < count; i++)
					big = Max(big, fabsf(hi[i]));
				for (int i = 0; i < count; i++)
				{
					exps[i] = e;
					/* half the postings come exact from another segment */
					if (e != SPM_QEXP_EXACT && round % 2 == 1 && i % 2 == 1 &&
						lo[i] <= w[i] && w[i] <= hi[i])
					{
						exps[i] = SPM_QEXP_EXACT;
						hi[i] = lo[i] = w[i];
					}
				}

				/*
				 * Round 2 keeps only the small weights (the others are
				 * dead): the new block's largest weight is far below the
				 * old one's, and its grid must still not be finer.
				 */
				if (round == 2)
				{
					int			n = 0;

					for (int i = 0; i < count; i++)
						if (fabsf(hi[i]) <= big / 8)
						{
							docs[n] = docs[i];
							hi[n] = hi[i];
							lo[n] = lo[i];
							w[n] = w[i];
							exps[n] = exps[i];
							n++;
						}
					if (n == 0)
						continue;
					count = n;
				}
				size = spm_block_encode_bounds(docs, hi, exps, count, true, enc, &bmax, &bmin);
				CHECK(size > 0, "%s: re-encodes", what);
				if (size <= 0)
					break;
				check_block_intervals(enc, size, docs, count, lo, hi, bmax, bmin, what);
				spm_block_decode_bounds(enc, size, count, docs[count - 1], true, d, lo2, &e2);
				spm_block_decode_bounds(enc, size, count, docs[count - 1], false, d, hi2, &e2);
				for (int i = 0; i < count; i++)
					CHECK(lo2[i] <= w[i] && w[i] <= hi2[i], "%s: merge %d lost weight %d",
						  what, round, i);
				CHECK(e == SPM_QEXP_EXACT || e2 == SPM_QEXP_EXACT || e2 >= e,
					  "%s: exponent went down", what);
				memcpy(lo, lo2, sizeof(lo));
				memcpy(hi, hi2, sizeof(hi));
				e = e2;
			}
		}
	}

	/* a quantized block whose header is damaged is rejected, not decoded */
	{
		uint32		docs[8] = {1, 2, 3, 5, 8, 13, 21, 34};
		float		w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
		char		enc[SPM_BLOCK_MAX_BYTES];
		float		bmax,
					bmin;
		int			size = spm_block_encode_bounds(docs, w, NULL, 8, true, enc, &bmax, &bmin);
		SpmBlockHeader hdr;
		int			qoff;
		SpmBlockQuant q;
		uint32		d[8];
		float		ww[8];

		memcpy(&hdr, enc, sizeof(hdr));
		qoff = TYPEALIGN(4, sizeof(SpmBlockHeader) + hdr.nbytes_ids);
		memcpy(&q, enc + qoff, sizeof(q));
		CHECK(spm_block_decode(enc, size, 8, 34, d, ww), "good quantized block");
		CHECK(!spm_block_decode(enc, size - 4, 8, 34, d, ww), "short quantized block accepted");
		for (int bad = 0; bad < 4; bad++)
		{
			SpmBlockQuant b = q;

			if (bad == 0)
				b.exp = SPM_QEXP_MAX + 1;
			else if (bad == 1)
				b.exp = SPM_QEXP_MIN - 1;
			else if (bad == 2)
				b.reserved = 1;
			else
				b.base = SPM_QBASE_LIMIT;
			memcpy(enc + qoff, &b, sizeof(b));
			CHECK(!spm_block_decode(enc, size, 8, 34, d, ww), "bad quantized header %d accepted", bad);
		}
	}
}

/* ----------------------------------------------------------------
 * The policy
 * ----------------------------------------------------------------
 */

/* one query of a class through the policy; returns what it ran */
static SpmRun
policy_query(SpmBackoff *b, int algorithm, int nterms, double postings,
			 double share)
{
	SpmPolicy	p;

	memset(&p, 0, sizeof(p));
	p.algorithm = algorithm;
	p.nterms = nterms;
	p.ndocs = 500000;
	p.postings = postings;
	p.backoff = b;
	spm_policy_choose(&p);
	CHECK(p.estimate >= 0 && p.estimate <= postings,
		  "estimate %g of %g postings", p.estimate, postings);
	if (p.run == SPM_RUN_EXHAUSTIVE)
		CHECK(p.estimate == postings, "exhaustive estimate %g of %g",
			  p.estimate, postings);
	if (p.run == SPM_RUN_MAXSCORE)
		spm_policy_maxscore_done(&p, share * postings);
	return p.run;
}

/*
 * One round of a segment with range data under algorithm; the kernel
 * gives up if gives_up.  Returns what the policy ran.
 */
static SpmRun
policy_range_round(SpmBackoff *b, int algorithm, bool gives_up)
{
	SpmPolicy	p;

	memset(&p, 0, sizeof(p));
	p.algorithm = algorithm;
	p.nterms = 40;
	p.ndocs = 1000000;
	p.nranges = 31250;
	p.postings = 2000000;
	p.ranges_data = p.ranges_usable = true;
	p.backoff = b;
	if (spm_policy_choose(&p) == SPM_RUN_RANGES)
	{
		CHECK(p.estimate == p.postings, "ranges estimate %g", p.estimate);
		CHECK(algorithm != SPM_ALG_AUTO || p.fallback_cost > 0,
			  "auto gave range pruning no price to give up at");
		CHECK(algorithm == SPM_ALG_AUTO || p.fallback_cost == 0,
			  "forced ranges may give up");
		spm_policy_ranges_done(&p, !gives_up);
	}
	return p.run;
}

/*
 * Range pruning's backoff (spm_policy_ranges_done): one give-up skips
 * nothing; 2, 3 .. 7 give-ups in a row skip the next 1, 3 .. 63 rounds;
 * a round that finishes starts the count afresh; forced ranges never
 * skips.
 */
static void
test_policy_range_backoff(void)
{
	SpmBackoff	b;
	int			tried;

	memset(&b, 0, sizeof(b));

	/* give-ups far apart: every round tries range pruning */
	for (int i = 0; i < 100; i++)
		CHECK(policy_range_round(&b, SPM_ALG_AUTO, i % 2 == 0) == SPM_RUN_RANGES,
			  "round %d after a single give-up skipped range pruning", i);

	/* give-ups in a row: tries at 1, 2, 4, 8, 16, 32, 64, 128, 192 .. */
	memset(&b, 0, sizeof(b));
	for (int round = 1, next = 1, g = 0; round <= 400; round++)
	{
		SpmRun		r = policy_range_round(&b, SPM_ALG_AUTO, true);

		CHECK((r == SPM_RUN_RANGES) == (round == next),
			  "round %d: ran %d, range pruning expected at round %d",
			  round, (int) r, next);
		if (r == SPM_RUN_RANGES)
		{
			g = Min(g + 1, 7);
			next = round + (1 << (g - 1));
		}
	}

	/* one round that finishes resets it: the next give-up skips nothing */
	memset(&b, 0, sizeof(b));
	tried = 0;
	for (int i = 0; i < 64; i++)
		tried += policy_range_round(&b, SPM_ALG_AUTO, true) == SPM_RUN_RANGES;
	CHECK(tried == 7, "64 rounds that all give up tried range pruning %d times",
		  tried);
	while (policy_range_round(&b, SPM_ALG_AUTO, false) != SPM_RUN_RANGES)
		;
	CHECK(policy_range_round(&b, SPM_ALG_AUTO, true) == SPM_RUN_RANGES &&
		  policy_range_round(&b, SPM_ALG_AUTO, true) == SPM_RUN_RANGES &&
		  policy_range_round(&b, SPM_ALG_AUTO, true) != SPM_RUN_RANGES,
		  "after a finished round, a skip came before the second give-up in a row");

	/* algorithm = ranges runs it on every round, whatever it did before */
	for (int i = 0; i < 20; i++)
		CHECK(policy_range_round(&b, SPM_ALG_RANGES, true) == SPM_RUN_RANGES,
			  "algorithm ranges skipped range pruning");
}

static void
test_policy(void)
{
	SpmBackoff	b;
	int			ms_keyword = 0,
				ms_expansion = 0,
				ms_expected = 0;

	memset(&b, 0, sizeof(b));

	/*
	 * Interleaved in one segment: keyword-like queries (4 terms, 200k
	 * postings) where MaxScore decodes 40%, expansion-like (60 terms, 200k
	 * postings) where it decodes everything.
	 */
	for (int i = 0; i < 200; i++)
	{
		SpmRun		k = policy_query(&b, SPM_ALG_AUTO, 4, 200000 + i, 0.4);
		SpmRun		e = policy_query(&b, SPM_ALG_AUTO, 60, 200000 + i, 1.0);

		CHECK(k == SPM_RUN_MAXSCORE, "keyword query %d ran %d", i, (int) k);
		CHECK(e != SPM_RUN_RANGES, "expansion query %d ran ranges", i);
		ms_keyword += k == SPM_RUN_MAXSCORE;
		ms_expansion += e == SPM_RUN_MAXSCORE;
	}

	/*
	 * The expansion class ran MaxScore on the 1st query (never measured),
	 * then after 1, 3, 7, 15, 31, 63, 63 .. exhaustive ones: at queries 1,
	 * 3, 7, 15, 31, 63, 127, 191 (numbered from 1, each MaxScore run
	 * followed by its skip).
	 */
	for (int q = 1, skip = 0, fails = 0; q <= 200; q += skip + 1)
	{
		ms_expected++;
		fails = Min(fails + 1, 6);
		skip = (1 << fails) - 1;
	}
	CHECK(ms_keyword == 200, "keyword class: %d of 200 by MaxScore", ms_keyword);
	CHECK(ms_expansion == ms_expected,
		  "expansion class: %d of 200 by MaxScore, expected %d",
		  ms_expansion, ms_expected);

	/*
	 * A class whose share falls gets MaxScore back: each retry (at most 63
	 * queries apart) moves the average a quarter of the way.
	 */
	for (int i = 0; i < 400; i++)
		policy_query(&b, SPM_ALG_AUTO, 60, 200000, 0.0);
	for (int i = 0; i < 10; i++)
		CHECK(policy_query(&b, SPM_ALG_AUTO, 60, 200000, 0.0) == SPM_RUN_MAXSCORE,
			  "expansion class with share 0 still exhaustive");

	/* small queries are not learnt; maxscore and exhaustive never switch */
	memset(&b, 0, sizeof(b));
	for (int i = 0; i < 20; i++)
	{
		CHECK(policy_query(&b, SPM_ALG_AUTO, 60, 4000, 1.0) == SPM_RUN_MAXSCORE,
			  "a query of 4000 postings went exhaustive");
		CHECK(policy_query(&b, SPM_ALG_MAXSCORE, 60, 200000, 1.0) == SPM_RUN_MAXSCORE,
			  "algorithm maxscore switched");
		CHECK(policy_query(&b, SPM_ALG_EXHAUSTIVE, 4, 200000, 0.1) == SPM_RUN_EXHAUSTIVE,
			  "algorithm exhaustive switched");
	}

	test_policy_range_backoff();
}

int
main(int argc, char **argv)
{
	rng_state = argc > 1 ? strtoull(argv[1], NULL, 10) : 20261130;
	printf("seed %llu\n", (unsigned long long) rng_state);
	test_codec();
	test_codec_streams();
	test_codec_packed();
	test_topk_heap();
	test_quantize();
	test_traversal();
	test_any_sign_l2();
	test_pruning_happens();
	/* the same kernels over quantized blocks, against their own bounds */
	quantize_segments = true;
	test_traversal();
	test_any_sign_l2();
	test_l2_signed_prunes();
	test_pruning_happens();
	quantize_segments = false;
	test_group_bounds();
	test_scoring();
	test_range_pruning();
	test_reorder();
	test_policy();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
