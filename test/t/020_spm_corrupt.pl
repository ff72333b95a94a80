# sparse_maxscore on damaged pages.
#
# For each case the cluster is stopped, bytes of one page of the index file
# are overwritten (metapage, segment header, directory, dictionary, skip
# entries, posting blocks, docmap, bitsets, pending pages, page headers and
# special space), and the cluster restarted.  Then, in this order:
#
#  * a scan reading every term (a query on all 40 dimensions, no LIMIT) and
#    the standard queries (spmw_exact): each either raises index_corrupted
#    (XX002) or -- only where the case says the scan cannot notice (for
#    example a bit of the alive bitset) -- answers exactly like a seq scan;
#  * sparse_maxscore_verify: always XX002, with a message naming what is
#    wrong (the case's pattern);
#  * an INSERT and DELETE + VACUUM: succeed or raise XX002;
#  * no statement may hit statement_timeout (a loop on bad links), the
#    server must still be up and its log must show no crash, failed
#    assertion or PANIC;
#  * REINDEX repairs: verify passes and scans are exact again.
#
# The byte offsets below follow src/spm.h (structs after the 24-byte page
# header); each case first checks that the page holds what it expects, so
# a layout change fails the test instead of testing nothing.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SpmwTest;

my $BLCKSZ = 8192;
my $HDR = 24;    # MAXALIGN(SizeOfPageHeaderData): first content byte
my %TYPE = (meta => 1, pending => 2, seghdr => 3, segdir => 4, dict => 5,
	skip => 6, posting => 7, docmap => 8, alive => 9, nullmap => 10,
	forward => 12, rangeidx => 13, rangemax => 14);

my $node = spmw_node('spm_corrupt', no_data_checksums => 1);
is($node->safe_psql('postgres', 'SHOW data_checksums'), 'off',
	'no data checksums: the index itself must notice');

# 40 dimensions: NULL rows, empty vectors, negative weights, dead rows
# (alive bits cleared), and a pending list of 61 documents
my $row = q{(SELECT ('{' || string_agg(t || ':' || ((i * t) % 7 - 3 + 0.5), ',') || '}/40')::sparsevec
	FROM (SELECT DISTINCT 1 + (i * j * 7) % 40 AS t FROM generate_series(1, 1 + i % 5) j) s)};

my $allq = "'{" . join(',', map { "$_:" . ($_ % 3 == 0 ? -1 : 1) * (1 + $_ % 4) } 1 .. 40) . "}/40'";

# a fresh index: one segment, dead rows, then a pending list
sub fresh_index
{
	$node->safe_psql('postgres', qq{
DROP TABLE IF EXISTS t;
CREATE TABLE t (id int, v sparsevec(40));
INSERT INTO t SELECT i, CASE WHEN i % 17 = 0 THEN NULL WHEN i % 23 = 0 THEN '{}/40' ELSE $row END
	FROM generate_series(1, 400) i;
-- term 1 in 150 more rows: a term of two blocks, which has skip entries
-- (a term of one block keeps its entry in the dictionary); no id % 31 = 0
INSERT INTO t SELECT 5001 + 31 * i, ('{1:' || (1 + i % 5) || '}/40')::sparsevec
	FROM generate_series(0, 149) i;
CREATE INDEX t_idx ON t USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = 4096);
DELETE FROM t WHERE id % 31 = 0;
VACUUM (INDEX_CLEANUP ON) t;
INSERT INTO t SELECT i, ('{' || (i % 40 + 1) || ':1.25,' || ((i + 7) % 40 + 1) || ':-2}/40')::sparsevec
	FROM generate_series(401, 460) i;
INSERT INTO t SELECT 461, (SELECT ('{' || string_agg(k || ':' || k, ',') || '}/40') FROM generate_series(1, 40) k)::sparsevec;
CHECKPOINT;
});
	die 'the alive bits were not cleared'
	  unless $node->safe_psql('postgres', "SELECT dead_documents FROM sparse_maxscore_info('t_idx')") == 12;
	return $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('t_idx')");
}

# ---- the index file ----

sub read_page
{
	my ($file, $blk) = @_;
	open(my $fh, '<:raw', $file) or die "open $file: $!";
	seek($fh, $blk * $BLCKSZ, 0) or die;
	read($fh, my $page, $BLCKSZ) == $BLCKSZ or die "short read of block $blk";
	close($fh);
	return $page;
}

sub write_bytes
{
	my ($file, $blk, $off, $bytes) = @_;
	open(my $fh, '+<:raw', $file) or die "open $file: $!";
	seek($fh, $blk * $BLCKSZ + $off, 0) or die;
	print $fh $bytes;
	close($fh);
}

sub nblocks { return (-s $_[0]) / $BLCKSZ; }

# SpmPageOpaqueData, the last 24 bytes: next, segment_id, xid, type, flags, _, page_id
sub opaque
{
	my ($page) = @_;
	my ($next, $seg, $xid, $type, $flags, $u, $id) =
	  unpack('V V Q< v v v v', substr($page, $BLCKSZ - 24, 24));
	return { next => $next, segment => $seg, type => $type, flags => $flags, page_id => $id };
}

sub pd_lower { return unpack('v', substr($_[0], 12, 2)); }

# the live pages of a type, in block order
sub pages_of
{
	my ($file, $type) = @_;
	my @b;
	for my $blk (0 .. nblocks($file) - 1)
	{
		my $o = opaque(read_page($file, $blk));
		push @b, $blk
		  if $o->{page_id} == 0xFF8A && $o->{type} == $TYPE{$type} && !($o->{flags} & 1);
	}
	die "no $type page" unless @b;
	return @b;
}

sub u32 { my ($page, $off) = @_; return unpack('V', substr($page, $off, 4)); }

# a posting block with at least 3 postings, at least 2 bytes of docid deltas
# and a first delta byte that is not 0xFF, from the skip entries {last_docid,
# max_w, min_w, blkno, off, count, flags}; $want_flags: 'packed' or
# 'varbyte' for a block of that codec, undef for any
sub a_block
{
	my ($file, $want) = @_;
	for my $sb (pages_of($file, 'skip'))
	{
		my $p = read_page($file, $sb);
		for (my $o = $HDR; $o + 20 <= pd_lower($p); $o += 20)
		{
			my ($last, $maxw, $minw, $blkno, $off, $count) = unpack('V f< f< V v C', substr($p, $o, 20));
			next unless $count >= 3;
			my $bp = read_page($file, $blkno);
			my ($first, $c, $fl, $nbytes) = unpack('V C C v', substr($bp, $off, 8));
			die "skip entry and block disagree" unless $c == $count;
			next unless $nbytes >= 2 && substr($bp, $off + 8, 1) ne "\xFF";
			next if defined $want && ($want eq 'packed') != (($fl & 0x40) != 0);
			return ($blkno, $off, $sb, $o, $fl);
		}
	}
	die 'no posting block to damage';
}

# ---- the cases: [name, page finder, damage, verify pattern, scan may pass] ----
# page finder: sub($file) -> (block, offset, bytes)

sub meta_field { my ($off, $bytes) = @_; return sub { return (0, $off, $bytes) }; }

my @cases = (
	[ 'metapage magic', meta_field(24, pack('V', 0xDEADBEEF)), qr/is not a sparse_maxscore index/ ],
	[ 'metapage segment count', meta_field(56, pack('V', 1000)), qr/corrupted metapage: segment count/ ],
	[ 'metapage: segment header beyond the end', meta_field(68, pack('V', 0x7FFFFF00)), qr/header beyond the end/ ],
	[ 'metapage: segment header is a docmap page',
		sub { return (0, 68, pack('V', (pages_of($_[0], 'docmap'))[0])) }, qr/unexpected page/ ],
	[ 'metapage: segment docid range', meta_field(80, pack('Q<', 100000)), qr/corrupted metapage: pending docid range/ ],
	[ 'metapage: pending head beyond the end', meta_field(1600, pack('V', 0x7FFFFF00)), qr/pending-list page/ ],
	[ 'metapage: pending head is a posting page',
		sub { return (0, 1600, pack('V', (pages_of($_[0], 'posting'))[0])) }, qr/unexpected page/ ],
	[ 'metapage: next_docid', meta_field(48, pack('Q<', 5000)), qr/corrupted metapage: pending docid range/ ],
	[ 'metapage page type', meta_field($BLCKSZ - 8, pack('v', 7)), qr/unexpected page at block 0/ ],
	[ 'segment header magic', sub { return ((pages_of($_[0], 'seghdr'))[0], $HDR, pack('V', 0)) },
		qr/inconsistent header in segment/ ],
	[ 'segment header page counts', sub { return ((pages_of($_[0], 'seghdr'))[0], $HDR + 56, pack('V', 0x40000000) x 3) },
		qr/inconsistent header in segment/ ],
	[ 'segment header: directory beyond the end', sub { return ((pages_of($_[0], 'seghdr'))[0], $HDR + 72, pack('V', 0x7FFFFF00)) },
		qr/broken directory chain/ ],
	[ 'directory: docmap page beyond the end', sub { return ((pages_of($_[0], 'segdir'))[0], $HDR, pack('V', 0x7FFFFF00)) },
		qr/directory lists a page outside the index/ ],
	[ 'directory: docmap page is a posting page',
		sub { return ((pages_of($_[0], 'segdir'))[0], $HDR, pack('V', (pages_of($_[0], 'posting'))[0])) },
		qr/unexpected page|reached twice/ ],
	[ 'directory: first term of the dictionary page',
		sub {
			my $f = shift;
			my $dir = read_page($f, (pages_of($f, 'segdir'))[0]);
			my $seghdr = read_page($f, (pages_of($f, 'seghdr'))[0]);
			my ($ndocmap, $nalive, $nnull) = unpack('V V V', substr($seghdr, $HDR + 44, 12));
			return ((pages_of($f, 'segdir'))[0], $HDR + 4 * ($ndocmap + $nalive + $nnull), pack('V', 7));
		},
		qr/dictionary page 0 starts with term|dictionary/ ],
	[ 'dictionary: document frequency', sub { return ((pages_of($_[0], 'dict'))[0], $HDR + 24 * 3 + 4, pack('V', 0x7FFFFFFF)) },
		qr/invalid dictionary entry|broken skip chain/ ],
	[ 'dictionary: document frequency off by one',
		sub {
			my $f = shift;
			my $b = (pages_of($f, 'dict'))[0];
			my $df = u32(read_page($f, $b), $HDR + 24 * 5 + 4);
			return ($b, $HDR + 24 * 5 + 4, pack('V', $df + 1));
		},
		qr/posting count does not match the dictionary|invalid skip entry/ ],
	[ 'dictionary: skip page beyond the end', sub { return ((pages_of($_[0], 'dict'))[0], $HDR + 24 * 2 + 16, pack('V', 0x7FFFFF00)) },
		qr/broken skip chain|the block of a one-block term is beyond the end/ ],
	[ 'dictionary: terms out of order', sub { return ((pages_of($_[0], 'dict'))[0], $HDR + 24 * 4, pack('V', 1)) },
		qr/dictionary is not sorted|dictionary page out of order/ ],
	[ 'skip entry: block count', sub { my ($b, $o, $sb, $so) = a_block($_[0]); return ($sb, $so + 18, pack('C', 200)) },
		qr/invalid skip entry/ ],
	[ 'skip entry: last docid', sub { my ($b, $o, $sb, $so) = a_block($_[0]); return ($sb, $so, pack('V', u32(read_page($_[0], $sb), $so) + 1)) },
		qr/invalid skip entry|corrupted posting block|docids out of order|postings/ ],
	[ 'skip entry: block offset', sub { my ($b, $o, $sb, $so) = a_block($_[0]); return ($sb, $so + 16, pack('v', 8000)) },
		qr/corrupted posting block/ ],
	[ 'skip entry: posting page beyond the end', sub { my ($b, $o, $sb, $so) = a_block($_[0]); return ($sb, $so + 12, pack('V', 0x7FFFFF00)) },
		qr/invalid skip entry/ ],
	# every bit of the first delta byte is part of a delta, and at least one
	# was 0: setting them all moves the block's last docid
	[ 'posting block: deltas past the last docid', sub { my ($b, $o) = a_block($_[0]); return ($b, $o + 8, "\xFF") },
		qr/corrupted posting block/ ],
	[ 'posting block: packed width wider than its bytes',
		sub { my ($b, $o, $sb, $so, $fl) = a_block($_[0], 'packed'); return ($b, $o + 5, pack('C', $fl + 1)) },
		qr/corrupted posting block/ ],
	[ 'posting block: packed width above 32',
		sub { my ($b, $o) = a_block($_[0], 'packed'); return ($b, $o + 5, pack('C', 0x40 | 33)) },
		qr/corrupted posting block/ ],
	[ 'posting block: header count', sub { my ($b, $o) = a_block($_[0]); return ($b, $o + 4, pack('C', 1)) },
		qr/corrupted posting block/ ],
	[ 'posting block: codec flags', sub { my ($b, $o) = a_block($_[0]); return ($b, $o + 5, pack('C', 9)) },
		qr/corrupted posting block/ ],
	[ 'posting page: pd_lower', sub { my $b = (pages_of($_[0], 'posting'))[0]; return ($b, 12, pack('v', 30)) },
		qr/corrupted posting block/ ],
	[ 'posting page: page id', sub { my $b = (pages_of($_[0], 'posting'))[0]; return ($b, $BLCKSZ - 2, pack('v', 0x1234)) },
		qr/(invalid|unexpected) page at block/ ],
	[ 'docmap: an invalid heap TID', sub { return ((pages_of($_[0], 'docmap'))[0], $HDR, "\0" x 6) },
		qr/invalid heap TID in docmap/ ],
	[ 'docmap page: pd_lower', sub { return ((pages_of($_[0], 'docmap'))[0], 12, pack('v', $HDR + 12)) },
		qr/short docmap page/ ],
	[ 'alive bitset: a dead row comes back', sub { return ((pages_of($_[0], 'alive'))[0], $HDR + 3, "\xFF") },
		qr/dead documents, the metapage says|fewer dead documents than the metapage/ ],
	[ 'alive bitset page type', sub { my $b = (pages_of($_[0], 'alive'))[0]; return ($b, $BLCKSZ - 8, pack('v', 8)) },
		qr/unexpected page/ ],
	[ 'null bitset: a NULL row is lost', sub { return ((pages_of($_[0], 'nullmap'))[0], $HDR + 2, "\0") },
		qr/NULL counts disagree|NULL-row bitset/ ],
	# range data (format 3, src/README "Ranges"): this index has negative
	# weights, so its scans do not use the range maxima and the forward
	# copy, and may pass; verify checks both against the posting lists
	[ 'segment header: range count', sub { my $b = (pages_of($_[0], 'seghdr'))[0];
			return ($b, $HDR + 80, pack('V', u32(read_page($_[0], $b), $HDR + 80) + 1)) },
		qr/inconsistent range data in the header/ ],
	[ 'range maxima: a level changed',
		sub {
			my $b = (pages_of($_[0], 'rangemax'))[0];
			my $byte = unpack('C', substr(read_page($_[0], $b), $HDR, 1));
			return ($b, $HDR, pack('C', $byte ^ 1));
		},
		qr/range 0: (level|range maxima entry)/, 'scan may pass' ],
	[ 'range index: a range offset', sub { return ((pages_of($_[0], 'rangeidx'))[0], $HDR + 8, pack('Q<', 6)) },
		qr/invalid range offset|range 1 does not start/, 'scan may pass' ],
	[ 'range index: a term descriptor',
		sub {
			# 550 documents: 18 ranges, 19 offsets (152 bytes), descriptors from
			# byte 160 (aligned to their 16 bytes)
			my $b = (pages_of($_[0], 'rangeidx'))[0];
			die 'unexpected range index' unless unpack('Q<', substr(read_page($_[0], $b), $HDR + 144, 8)) > 0;
			return ($b, $HDR + 160 + 8, pack('V', 0));
		},
		qr/invalid range descriptor/ ],
	[ 'forward copy: elements out of order',
		sub {
			my $b = (pages_of($_[0], 'forward'))[0];
			die 'the first document has fewer than 2 elements' unless u32(read_page($_[0], $b), $HDR) >= 2;
			return ($b, $HDR + 4, pack('V', 39));
		},
		qr/forward copy is not canonical/, 'scan may pass' ],
	# dims 40: 16-bit terms (format 4), then a code byte each (format 6)
	[ 'forward copy: a code changed',
		sub {
			my $b = (pages_of($_[0], 'forward'))[0];
			my $page = read_page($_[0], $b);
			my $nnz = u32($page, $HDR);
			die 'the first document has no elements' unless $nnz >= 1;
			my $off = $HDR + 4 + 4 * int(($nnz + 1) / 2);
			my $c = unpack('C', substr($page, $off, 1));
			return ($b, $off, pack('C', $c == 255 ? 254 : $c + 1));
		},
		qr/does not hold the same postings/, 'scan may pass' ],
	[ 'forward copy: a code of 0',
		sub {
			my $b = (pages_of($_[0], 'forward'))[0];
			my $nnz = u32(read_page($_[0], $b), $HDR);
			die 'the first document has no elements' unless $nnz >= 1;
			return ($b, $HDR + 4 + 4 * int(($nnz + 1) / 2), pack('C', 0));
		},
		qr/invalid code in the forward copy/, 'scan may pass' ],
	[ 'pending tuple: docid', sub { return ((pages_of($_[0], 'pending'))[0], $HDR, pack('Q<', 12345678)) },
		qr/corrupted pending-list page/ ],
	[ 'pending tuple: element count', sub { return ((pages_of($_[0], 'pending'))[0], $HDR + 24, pack('l<', 100000)) },
		qr/corrupted pending-list page/ ],
	[ 'pending tuple: a continuation chunk first', sub { return ((pages_of($_[0], 'pending'))[0], $HDR + 14, pack('v', 8)) },
		qr/corrupted pending-list page/ ],
	[ 'pending tuple: an index beyond the dimensions', sub { return ((pages_of($_[0], 'pending'))[0], $HDR + 32, pack('l<', 5000)) },
		qr/pending/ ],
	[ 'pending tuple: indices out of order', sub { return ((pages_of($_[0], 'pending'))[0], $HDR + 32, pack('l<', 39)) },
		qr/pending/ ],
	[ 'pending page: links to itself',
		sub { my $b = (pages_of($_[0], 'pending'))[-1]; return ($b, $BLCKSZ - 24, pack('V', $b)) },
		qr/reached twice|corrupted pending-list page/, 'scan may pass' ],
	[ 'pending page: pd_lower', sub { return ((pages_of($_[0], 'pending'))[0], 12, pack('v', $HDR + 40)) },
		qr/corrupted pending-list page/ ],
);

# ---- running statements ----

# run $sql (after SET statement_timeout); returns ('ok', stdout) or
# (sqlstate, message)
sub run_sql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	$node->psql('postgres', "\\set VERBOSITY verbose\nSET statement_timeout = '120s';\n$sql",
		stdout => \$out, stderr => \$err, on_error_stop => 1);
	if ($err =~ /ERROR:\s+([0-9A-Z]{5}):\s+(.*)/)
	{
		return ($1, $2);
	}
	return ('ok', $out);
}

# the all-terms query through the index and by a seq scan: same rows,
# same distances, no LIMIT (so ties cannot choose)
sub scan_all
{
	my $q = "SELECT id, v <#> $allq FROM t ORDER BY v <#> $allq";
	my ($c1, $idx) = run_sql("SET enable_seqscan = off; SET enable_bitmapscan = off;\n$q");
	return ($c1, $idx) if $c1 ne 'ok';
	my ($c2, $seq) = run_sql("SET enable_indexscan = off;\n$q");
	die "seq scan failed: $seq" if $c2 ne 'ok';
	my @a = split /\n/, $idx;
	my @b = split /\n/, $seq;
	my @da = map { (split /\|/)[1] // '' } @a;
	my @db = map { (split /\|/)[1] // '' } @b;
	return ('wrong', "distances differ") unless "@da" eq "@db";
	return ('wrong', "rows differ") unless join(',', sort @a) eq join(',', sort @b);
	return ('ok', scalar(@a) . ' rows');
}

sub crashed_since
{
	my ($pos) = @_;
	my $log = slurp_file($node->logfile, $pos);
	return $log =~ /(terminated by signal|TRAP:|PANIC:|server process .* was terminated)/ ? $1 : '';
}

fresh_index();
my $scan_plan = $node->safe_psql('postgres',
	"SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT id FROM t ORDER BY v <#> $allq");
like($scan_plan, qr/Index Scan using t_idx/, 'the all-terms query scans the index');

for my $case (@cases)
{
	my ($name, $find, $pattern, $scan_may_pass) = @$case;
	my $file = fresh_index();
	my ($blk, $off, $bytes) = $find->($file);
	my $orig = read_page($file, $blk);
	die "$name: offset $off beyond the page" if $off + length($bytes) > $BLCKSZ;
	die "$name: block $blk is not an index page" unless opaque($orig)->{page_id} == 0xFF8A;

	$node->stop;
	write_bytes($file, $blk, $off, $bytes);
	my $logpos = -s $node->logfile;
	$node->start;

	# scans
	my ($code, $msg) = scan_all();
	if ($scan_may_pass)
	{
		ok($code eq 'ok' || $code eq 'XX002', "$name: the all-terms scan is exact or reports corruption")
		  or diag("$code: $msg");
	}
	else
	{
		is($code, 'XX002', "$name: the all-terms scan reports corruption") or diag($msg);
	}
	($code, $msg) = run_sql("SELECT spmw_exact('t', 40)");
	ok($code eq 'XX002' || ($code eq 'ok' && $msg =~ /^ok: 36 comparisons/),
		"$name: the standard queries are exact or report corruption") or diag("$code: $msg");

	# verify names it
	($code, $msg) = run_sql("SELECT sparse_maxscore_verify('t_idx')");
	is($code, 'XX002', "$name: verify reports corruption") or diag($msg);
	like($msg, $pattern, "$name: the message says what is wrong") if $code eq 'XX002';
	like($msg, qr/"t_idx"/, "$name: the message names the index") if $code eq 'XX002';

	# writes
	($code, $msg) = run_sql("INSERT INTO t VALUES (100000, '{1:1,40:-1}/40')");
	ok($code eq 'ok' || $code eq 'XX002', "$name: INSERT succeeds or reports corruption") or diag("$code: $msg");
	($code, $msg) = run_sql("DELETE FROM t WHERE id % 97 = 0; VACUUM t");
	ok($code eq 'ok' || $code eq 'XX002', "$name: VACUUM succeeds or reports corruption") or diag("$code: $msg");

	# the server survived
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$name: the server is up");
	is(crashed_since($logpos), '', "$name: no crash in the log");

	# REINDEX repairs
	$node->safe_psql('postgres', 'DELETE FROM t WHERE id = 100000; REINDEX INDEX t_idx');
	($code, $msg) = run_sql("SELECT sparse_maxscore_verify('t_idx')");
	is($code, 'ok', "$name: verify passes after REINDEX") or diag($msg);
	($code, $msg) = scan_all();
	is($code, 'ok', "$name: the all-terms scan is exact after REINDEX") or diag($msg);
}

# and the index still answers everything after the last REINDEX
spmw_exact_ok($node, 't', 40, 'after the last REINDEX');

# ---- the format version (metapage offset 28) ----
# Version 1 (varbyte blocks only) is still read; a writer that adds a
# segment raises it to 6, the version of quantized range data (2: packed
# blocks, 3: range data, 4: 16-bit terms in the forward copy, 5: quantized
# weights).  A later version
# than the library's is refused with a hint to REINDEX, and REINDEX works.
{
	my $file = fresh_index();
	is(u32(read_page($file, 0), 28), 6, 'a new index has format version 6');

	$node->stop;
	write_bytes($file, 0, 28, pack('V', 1));
	$node->start;
	my ($code, $msg) = scan_all();
	is($code, 'ok', 'a version-1 metapage is read') or diag($msg);
	($code, $msg) = run_sql("SELECT sparse_maxscore_verify('t_idx')");
	is($code, 'ok', 'verify accepts a version-1 metapage') or diag($msg);
	$node->safe_psql('postgres', q{INSERT INTO t SELECT 1000 + i, '{1:1,2:2}/40' FROM generate_series(1, 300) i;
		SELECT sparse_maxscore_flush('t_idx'); CHECKPOINT});
	is(u32(read_page($file, 0), 28), 6, 'a flush that writes a segment raises the version to 6');
	spmw_exact_ok($node, 't', 40, 'after the flush into a version-1 index');
	$node->safe_psql('postgres', 'DELETE FROM t WHERE id > 1000');

	$node->stop;
	write_bytes($file, 0, 28, pack('V', 7));
	$node->start;
	($code, $msg) = run_sql("SET enable_seqscan = off; SELECT id FROM t ORDER BY v <#> '{1:1}/40' LIMIT 1");
	is($code, '55000', 'a later format version is refused');
	like($msg, qr/has format version 7, this library reads versions 1 to 6/, 'the message gives both versions');
	my $stderr = '';
	$node->psql('postgres', "SET enable_seqscan = off; SELECT id FROM t ORDER BY v <#> '{1:1}/40' LIMIT 1",
		stderr => \$stderr);
	like($stderr, qr/HINT:\s+REINDEX the index\./, 'the error names REINDEX (doc/versions.md)');
	$node->safe_psql('postgres', 'REINDEX INDEX t_idx');
	($code, $msg) = run_sql("SELECT sparse_maxscore_verify('t_idx')");
	is($code, 'ok', 'REINDEX replaces a later format version') or diag($msg);
}

# ---- range pruning reads damaged range data ----
# An index of positive weights, queried with positive weights, is scanned
# by range pruning (sparse_maxscore.algorithm = ranges: auto finds MaxScore
# cheaper on 300 documents): damage to the forward copy or the range
# offsets is reported by the scan itself.
{
	my $q = "SET enable_seqscan = off; SET sparse_maxscore.algorithm = ranges; SELECT id FROM p ORDER BY v <#> '{1:1,2:0.5,3:2}/40' LIMIT 5";
	my $pfile = sub {
		$node->safe_psql('postgres', q{
DROP TABLE IF EXISTS p;
CREATE TABLE p (id int, v sparsevec(40));
INSERT INTO p SELECT i, ('{' || (1 + i % 3) || ':' || (1 + i % 5) || ',' || (4 + i % 30) || ':0.5}/40')::sparsevec
	FROM generate_series(1, 300) i;
CREATE INDEX p_idx ON p USING sparse_maxscore (v) WITH (ranges = on);
CHECKPOINT;
});
		return $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('p_idx')");
	};
	my @pcases = (
		[ 'forward copy: elements out of order (range pruning)',
			sub {
				my $b = (pages_of($_[0], 'forward'))[0];
				die 'unexpected first document' unless u32(read_page($_[0], $b), $HDR) == 2;
				return ($b, $HDR + 4, pack('V', 39));
			},
			qr/forward copy is not in ascending term order/ ],
		[ 'forward copy: an element count (range pruning)',
			sub { return ((pages_of($_[0], 'forward'))[0], $HDR, pack('V', 1000)) },
			qr/invalid document in the forward copy/ ],
		[ 'range index: a range offset (range pruning)',
			sub { return ((pages_of($_[0], 'rangeidx'))[0], $HDR + 8, pack('Q<', 0x7FFFFFF0)) },
			qr/invalid range offset/ ],
	);
	my $file = $pfile->();
	my $plan = $node->safe_psql('postgres', "SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT id FROM p ORDER BY v <#> '{1:1,2:0.5,3:2}/40' LIMIT 5");
	like($plan, qr/Index Scan using p_idx/, 'the positive query scans the index');
	my $counters = $node->safe_psql('postgres', "$q; SELECT windows > 0 AND blocks_decoded = 0 FROM sparse_maxscore_last_scan()");
	like($counters, qr/t$/, 'the positive query is answered by range pruning');
	for my $case (@pcases)
	{
		my ($name, $find, $pattern) = @$case;
		$file = $pfile->();
		my ($blk, $off, $bytes) = $find->($file);
		$node->stop;
		write_bytes($file, $blk, $off, $bytes);
		my $logpos = -s $node->logfile;
		$node->start;
		my ($code, $msg) = run_sql($q);
		is($code, 'XX002', "$name: the scan reports corruption") or diag("$code: $msg");
		like($msg, $pattern, "$name: the message says what is wrong") if $code eq 'XX002';
		like($msg, qr/"p_idx"/, "$name: the message names the index") if $code eq 'XX002';
		($code, $msg) = run_sql("SELECT sparse_maxscore_verify('p_idx')");
		is($code, 'XX002', "$name: verify reports corruption") or diag($msg);
		is(crashed_since($logpos), '', "$name: no crash in the log");
	}
	$node->safe_psql('postgres', 'DROP TABLE p');
}

$node->stop;
done_testing();
