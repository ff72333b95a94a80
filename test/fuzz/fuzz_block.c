/*
 * fuzz_block: the posting-block codec (src/spmblock.c) on arbitrary bytes.
 *
 * Input: count (1 byte), last docid (4 bytes, little-endian), window base
 * (4 bytes), then the block.  spm_block_decode and spm_block_accumulate
 * must agree on whether the block is valid for (count, last docid) -- the
 * skip entry's view -- and, where it is, on every docid and product; a
 * valid block's docids ascend strictly and end at the last docid, and
 * re-encoding them decodes to the same postings.  Neither may read
 * outside the block's bytes (AddressSanitizer: the block is copied to an
 * allocation of exactly its size).
 */
#include "fuzzpg.h"

#include <math.h>

#include "spmblock.h"

#define WINDOW 16384			/* accumulator size (SPM_WINDOW) */

extern int	LLVMFuzzerTestOneInput(const uint8 *data, size_t size);

static double acc[WINDOW];
static double ref[WINDOW];

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	int			count;
	uint32		last;
	uint32		base;
	char	   *block;
	int			avail;
	uint32		docids[SPM_BLOCK_POSTINGS];
	float		weights[SPM_BLOCK_POSTINGS];
	float		lows[SPM_BLOCK_POSTINGS];
	int16		exp = SPM_QEXP_EXACT;
	bool		ok;
	bool		ok2;
	int			size_ok;

	if (size < 9 || size > 9 + 2 * SPM_BLOCK_MAX_BYTES)
		return -1;
	count = data[0];
	memcpy(&last, data + 1, 4);
	memcpy(&base, data + 5, 4);
	avail = (int) size - 9;
	block = malloc(Max(avail, 1));
	memcpy(block, data + 9, avail);

	size_ok = spm_block_size(block, avail);
	if (size_ok > avail || (size_ok >= 0 && size_ok % 4 != 0))
		fuzz_fail("spm_block_size %d of %d bytes", size_ok, avail);

	ok = spm_block_decode(block, avail, count, last, docids, weights);
	if (ok)
	{
		char		re[SPM_BLOCK_MAX_BYTES];
		uint32		d2[SPM_BLOCK_POSTINGS];
		float		w2[SPM_BLOCK_POSTINGS];
		int			n;

		if (size_ok < 0 || count < 1 || count > SPM_BLOCK_POSTINGS)
			fuzz_fail("decoded a block spm_block_size rejects");
		for (int i = 1; i < count; i++)
			if (docids[i] <= docids[i - 1])
				fuzz_fail("docids not ascending at %d", i);
		if (docids[count - 1] != last)
			fuzz_fail("last docid %u, skip entry says %u",
					  docids[count - 1], last);
		if (spm_block_decode_bounds(block, avail, count, last, true, d2, lows, &exp) &&
			exp != SPM_QEXP_EXACT)
		{
			/*
			 * Quantized: re-encoding the upper ends at the block's exponent
			 * (as a merge does) gives cells that hold the old ones, or is
			 * refused.
			 */
			float		lo2[SPM_BLOCK_POSTINGS];
			int16		exps[SPM_BLOCK_POSTINGS];
			float		bmax,
						bmin;
			int16		e2;

			for (int i = 0; i < count; i++)
			{
				exps[i] = exp;
				if (!(lows[i] <= weights[i]) || !isfinite(weights[i]) || !isfinite(lows[i]))
					fuzz_fail("quantized posting %d decodes to [%g, %g]", i, lows[i], weights[i]);
			}
			n = spm_block_encode_bounds(docids, weights, exps, count, true, re, &bmax, &bmin);
			if (n > size_ok)
				fuzz_fail("re-encoding takes %d bytes, the block %d", n, size_ok);
			if (n > 0)
			{
				if (!spm_block_decode_bounds(re, n, count, last, false, d2, w2, &e2) ||
					!spm_block_decode_bounds(re, n, count, last, true, d2, lo2, &e2) ||
					e2 < exp)
					fuzz_fail("re-encoded quantized block does not decode");
				for (int i = 0; i < count; i++)
					if (!(lo2[i] <= lows[i] && weights[i] <= w2[i]))
						fuzz_fail("re-encoded posting %d: [%g, %g] does not hold [%g, %g]",
								  i, lo2[i], w2[i], lows[i], weights[i]);
			}
		}
		else
		{
			n = spm_block_encode(docids, weights, count, re);
			if (n > size_ok)
				fuzz_fail("re-encoding takes %d bytes, the block %d", n, size_ok);
			if (!spm_block_decode(re, n, count, last, d2, w2) ||
				memcmp(d2, docids, count * sizeof(uint32)) != 0 ||
				memcmp(w2, weights, count * sizeof(float)) != 0)
				fuzz_fail("re-encoded block decodes differently");
		}
	}

	/* the accumulating decoder, for a block starting in the window */
	memset(acc, 0, sizeof(acc));
	ok2 = spm_block_accumulate(block, avail, count, last, 0.5, acc, base,
							   WINDOW - 1);
	if (ok && ok2 != (docids[0] >= base))
		fuzz_fail("decode accepts, accumulate %s (first %u base %u)",
				  ok2 ? "accepts" : "rejects", docids[0], base);
	if (!ok && ok2)
		fuzz_fail("accumulate accepts a block decode rejects");
	if (ok && ok2)
	{
		memset(ref, 0, sizeof(ref));
		for (int i = 0; i < count; i++)
			ref[(docids[i] - base) & (WINDOW - 1)] += 0.5 * (double) weights[i];
		for (int i = 0; i < WINDOW; i++)
			if (memcmp(&acc[i], &ref[i], sizeof(double)) != 0 &&
				!(isnan(acc[i]) && isnan(ref[i])))
				fuzz_fail("accumulator slot %d: %g, decode says %g", i,
						  acc[i], ref[i]);
		/* a negative query weight takes the lower ends */
		if (spm_block_decode_bounds(block, avail, count, last, true, docids, lows, &exp))
		{
			memset(acc, 0, sizeof(acc));
			memset(ref, 0, sizeof(ref));
			if (!spm_block_accumulate(block, avail, count, last, -0.5, acc, base, WINDOW - 1))
				fuzz_fail("accumulate rejects with a negative weight");
			for (int i = 0; i < count; i++)
				ref[(docids[i] - base) & (WINDOW - 1)] += -0.5 * (double) lows[i];
			for (int i = 0; i < WINDOW; i++)
				if (memcmp(&acc[i], &ref[i], sizeof(double)) != 0 &&
					!(isnan(acc[i]) && isnan(ref[i])))
					fuzz_fail("accumulator slot %d: %g, lower ends say %g", i,
							  acc[i], ref[i]);
		}
	}
	free(block);
	return 0;
}
