# bench/text.sh: the real-text tier of bench/run (--shape text), sourced by
# it (uses its sql, log, note, die, ROOT, WORK, SEED, NQ).  See
# bench/README.md "The real-text tier".
#
# text_prepare builds (or finds in the cache) a corpus of BM25 vectors from
# the English text of the Debian packages pinned in bench/text-packages.txt,
# and two query sets, and leaves them where bench/corpus.sh takes over:
#   TEXT_DOCS             the whole corpus, "id<TAB>{i:v,...}/dims", ids 1..N
#   TEXT_QUERIES[set]     keyword and expansion query files
# Steps, each cached under TEXT_CACHE (outside the checkout, reused when
# present; delete the directory to start over):
#   1. apt-get download NAME=VERSION of every pinned package, dpkg -x;
#   2. paragraphs: dictionary entries (blank-line separated; WordNet per
#      sense), manual pages (roff source, man and mdoc, cut at blank lines and
#      paragraph, list and section macros, macros and escapes dropped),
#      fortunes; HTML manuals (the directories listed in text_paragraphs:
#      head, script, style, nav, header, footer, comments, <pre> blocks and
#      Javadoc signatures dropped, cut at block elements (p, li, dd, dt,
#      headings, div, table cells, ...), a piece with fewer than five words
#      outside <code> skipped as code, tags dropped, entities decoded; GNOME's
#      Mallard help pages the same way, their <info> blocks dropped); info
#      manuals (a manual split into parts read as one, nodes at \x1f, node
#      header lines and menus dropped, blank-line paragraphs, examples (every
#      line indented 5 or more) and underlines dropped).  At least five words each, invalid UTF-8 replaced; exact
#      duplicates (after whitespace is collapsed: boilerplate such as
#      Javadoc's "Description copied from ...", and fortunes that both
#      fortunes and fortunes-min ship) are kept once, the first in the
#      order above; files are read in sorted order, so the output is the
#      same on every run;
#   3. in the bench's cluster, with the project's BM25 functions: the
#      tokenizer is to_tsvector('english', ...) as in examples/bm25/recipe.sql;
#      paragraphs with fewer than 3 lexemes are dropped; 3 x NQ paragraphs of
#      40 or more lexemes, chosen by a seeded hash, are held out (never in
#      the corpus); the rest, in the order of the same hash (so a prefix of
#      the corpus is a random sample of it), get ids 1..N.  The vocabulary is
#      the corpus's lexemes, dims 1..V in byte order, with their document
#      frequencies.  A document's weight for a lexeme is its full BM25 term
#      score, bm25_document's tf part (k1 1.2, b 0.75, the corpus's avgdl)
#      times bm25_idf(N, df): an impact vector, so that a query of weight 1
#      per term scores documents by BM25.
#   4. queries, NQ of each kind, from the held-out paragraphs:
#        keyword    2 to 8 of a paragraph's lexemes that are in the
#                   vocabulary (chosen by the seeded hash), weight 1;
#        expansion  the 40 to 120 highest-weighted lexemes of a paragraph's
#                   own BM25 impact vector (as a document of this corpus,
#                   its lexemes outside the vocabulary dropped first), with
#                   those weights: the shape of a SPLADE query.
# Deterministic: the same packages, seed and NQ give the same files.

TEXT_CACHE=${TEXT_CACHE:-/var/tmp/sparsevec-text}
TEXT_PACKAGES=$ROOT/bench/text-packages.txt
declare -A TEXT_QUERIES

# the pinned NAME=VERSION lines
text_specs() { sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$TEXT_PACKAGES"; }

# 1. the packages, downloaded and unpacked into DIR (once)
text_fetch() {	# text_fetch DIR
	local dir=$1 spec name ver deb updated=0
	mkdir -p "$TEXT_CACHE/debs" "$dir"
	# apt-get download runs as _apt where it can
	chown _apt "$TEXT_CACHE/debs" 2>/dev/null || true
	for spec in $(text_specs); do
		name=${spec%%=*} ver=${spec#*=}
		[ -f "$dir/.unpacked-$name" ] && continue
		deb=$(compgen -G "$TEXT_CACHE/debs/${name}_${ver//:/%3a}_*.deb" | head -n 1 || true)
		if [ -z "$deb" ]; then
			note "apt-get download $spec"
			if ! (cd "$TEXT_CACHE/debs" && apt-get download -q "$spec" >/dev/null 2>"$WORK/apt.err"); then
				if [ $updated = 0 ]; then
					apt-get update -qq >/dev/null 2>&1 || true
					updated=1
				fi
				(cd "$TEXT_CACHE/debs" && apt-get download -q "$spec" >/dev/null 2>"$WORK/apt.err") ||
					die "apt-get download $spec failed: $(grep -m1 '^E:' "$WORK/apt.err" || tail -n 1 "$WORK/apt.err")
  (the version pinned in bench/text-packages.txt may no longer be served: see apt-cache policy $name)"
			fi
			deb=$(compgen -G "$TEXT_CACHE/debs/${name}_${ver//:/%3a}_*.deb" | head -n 1 || true)
			[ -n "$deb" ] || die "apt-get download $spec left no ${name}_${ver//:/%3a}_*.deb in $TEXT_CACHE/debs"
		fi
		dpkg -x "$deb" "$dir" || die "dpkg -x $deb failed"
		touch "$dir/.unpacked-$name"
	done
}

# 2. paragraphs of the unpacked packages: "n<TAB>source<TAB>text" (COPY text)
text_paragraphs() {	# text_paragraphs ROOTDIR OUT
	perl -MEncode -MDigest::MD5 -e '
	use strict; use warnings;
	my $root = shift;
	binmode STDOUT, ":utf8";
	my $n = 0;
	my %seen;	# exact duplicates (boilerplate, the same text in two packages) once
	sub emit {
		my ($src, $t) = @_;
		return unless defined $t;
		$t = Encode::decode("UTF-8", $t, Encode::FB_DEFAULT) unless utf8::is_utf8($t);
		$t =~ s/[\x00-\x1f\x7f]+/ /g; $t =~ s/\s+/ /g; $t =~ s/^ //; $t =~ s/ $//;
		my @w = ($t =~ /[A-Za-z]{2,}/g);
		return if @w < 5;
		return if $seen{Digest::MD5::md5(Encode::encode("UTF-8", $t))}++;
		$t =~ s/\\/\\\\/g;
		$n++;
		print "$n\t$src\t$t\n";
	}
	sub slurp_gz { my $f = shift; open(my $h, "-|", "gzip", "-dc", $f) or die "$f: $!"; local $/; my $t = <$h>; close $h; return $t // "" }
	sub slurp { my $f = shift; open(my $h, "<", $f) or die "$f: $!"; local $/; my $t = <$h>; close $h; return $t // "" }
	# dictd dictionaries: entries and senses at blank lines; WordNet by sense
	for my $d (qw(gcide foldoc jargon devil vera)) {
		my $f = "$root/usr/share/dictd/$d.dict.dz";
		next unless -f $f;
		emit($d, $_) for split /\n[ \t]*\n/, slurp_gz($f);
	}
	{
		my $f = "$root/usr/share/dictd/wn.dict.dz";
		if (-f $f) {
			my ($head, $cur) = ("", undef);
			for my $l (split /\n/, slurp_gz($f)) {
				if ($l =~ /^\S/) { emit("wn", $cur); $cur = undef; $head = $l; next }
				if ($l =~ /^\s+(?:(?:n|v|adj|adv)\s+)?\d+:\s*(.*)$/) { emit("wn", $cur); $cur = "$head: $1"; next }
				$cur .= " $l" if defined $cur;
			}
			emit("wn", $cur);
		}
	}
	# manual pages: roff source, cut at blank lines and paragraph or section
	# macros; comments and other requests dropped, font macros keep their text
	for my $f (sort glob("$root/usr/share/man/man*/*.gz")) {
		my $t = slurp_gz($f);
		my $cur = "";
		for my $l (split /\n/, $t) {
			next if $l =~ /^[.\x27]\\"/;
			if ($l =~ /^\s*$/ || $l =~ /^\.(PP|LP|P|SH|SS|TP|IP|HP|TH|RS|RE|nf|fi|EX|EE|in|sp|br|TQ|ad|na|ft|ne|so|Pp|Sh|Ss|Bl|El|It|Bd|Ed|Dd|Dt|Os)\b(.*)$/) {
				emit("man", $cur);
				$cur = "";
				my ($m, $rest) = ($1 // "", $2 // "");
				$cur = $rest if $m =~ /^(SH|SS|IP|Sh|Ss|It)$/;
				next;
			}
			if ($l =~ /^\.[A-Za-z]{1,2}\s+(.*)$/) { $l = $1 } elsif ($l =~ /^\./) { next }
			$l =~ s/\\f(?:\[[^\]]*\]|\(..|.)//g;	# font changes
			$l =~ s/\\\(..|\\\[[^\]]*\]|\\[-e&|^~ ]//g;	# special characters, escapes
			$l =~ s/"//g;
			$cur .= " $l";
		}
		emit("man", $cur);
	}
	# fortunes: entries between lines of %
	for my $f (sort glob("$root/usr/share/games/fortunes/*")) {
		next if $f =~ /\.(dat|u8)$/ || -l $f || !-f $f;
		emit("fortunes", $_) for split /\n%\n/, slurp($f);
	}
	# HTML manuals: head, script, style, nav, header, footer, comments and
	# <pre> blocks dropped; cut at block elements; a piece with fewer than
	# five words outside <code> is not prose; tags dropped, entities decoded
	my %ent = (amp => "&", lt => "<", gt => ">", quot => "\"", apos => "\x27", nbsp => " ",
		ndash => "\x{2013}", mdash => "\x{2014}", lsquo => "\x{2018}", rsquo => "\x{2019}",
		ldquo => "\x{201c}", rdquo => "\x{201d}", hellip => "\x{2026}", copy => "\x{a9}",
		reg => "\x{ae}", trade => "\x{2122}", para => "\x{b6}", sect => "\x{a7}", times => "\x{d7}",
		laquo => "\x{ab}", raquo => "\x{bb}", middot => "\x{b7}", bull => "\x{2022}", shy => "");
	sub entities {
		my $t = shift;
		$t =~ s/&#[xX]([0-9a-fA-F]{1,6});/my $c = hex $1; ($c > 0 && $c < 0x110000 && ($c < 0xd800 || $c > 0xdfff)) ? chr($c) : " "/ge;
		$t =~ s/&#([0-9]{1,7});/my $c = $1; ($c > 0 && $c < 0x110000 && ($c < 0xd800 || $c > 0xdfff)) ? chr($c) : " "/ge;
		$t =~ s/&([A-Za-z]+);/exists $ent{$1} ? $ent{$1} : " "/ge;
		return $t;
	}
	# the regular files under DIR whose names match RE, sorted, no symbolic links
	sub files {
		my ($d, $re) = @_;
		opendir(my $h, $d) or return ();
		my @e = sort grep { !/^\.\.?$/ } readdir $h;
		closedir $h;
		my @out;
		for my $e (@e) {
			my $p = "$d/$e";
			next if -l $p;
			if (-d $p) { push @out, files($p, $re) } elsif (-f $p && $e =~ $re) { push @out, $p }
		}
		return @out;
	}
	my @html = (
		["python", "usr/share/doc/python3.11/html"],
		["postgresql", "usr/share/doc/postgresql-doc-15/html"],
		["linux", "usr/share/doc/linux-doc-6.1/html"],
		["javadoc", "usr/share/doc/openjdk-17-jre-headless/api"],
		["debian-reference", "usr/share/debian-reference"],
		["developers-reference", "usr/share/developers-reference"],
		["debian-policy", "usr/share/doc/debian-policy"],
		["rust", "usr/share/doc/rust-doc/html"],
		["erlang", "usr/share/doc/erlang-doc"],
		["qt", "usr/share/qt5/doc"],
		["pandas", "usr/share/doc/python-pandas-doc/html"],
		["scipy", "usr/share/doc/python-scipy-doc/html"],
		["gimp", "usr/share/gimp/2.0/help/en"],
		["debian-handbook", "usr/share/doc/debian-handbook/html/en-US"],
		["django", "usr/share/doc/python-django-doc/html"],
		["nodejs", "usr/share/doc/nodejs/api"],
		["lilypond", "usr/share/doc/lilypond/html/Documentation"],
		["libreoffice", "usr/share/libreoffice/help/en-US"],
		["git", "usr/share/doc/git-doc"],
		["sphinx", "usr/share/doc/sphinx-doc/html"],
		["debian-faq", "usr/share/doc/debian/FAQ"],
		["maint-guide", "usr/share/doc/maint-guide/html"],
		["debmake", "usr/share/doc/debmake-doc/html"],
		["sqlalchemy", "usr/share/doc/python-sqlalchemy-doc/html"],
		["gnome", "usr/share/help/C", qr/\.page$/],	# Mallard pages: XML with <p>, <title>, ...
		["apache", "usr/share/doc/apache2-doc/manual/en"],
		["sympy", "usr/share/doc/python-sympy-doc/html"],
		["sklearn", "usr/share/doc/python-sklearn-doc/html"],
		["astropy", "usr/share/doc/python-astropy-doc/html"],
		["statsmodels", "usr/share/doc/python-statsmodels-doc/html"],
		["sagemath", "usr/share/doc/sagemath/html/en"],
		["gnucash", "usr/share/doc/gnucash-docs/gnucash-guide-en"],
		["gnucash", "usr/share/doc/gnucash-docs/gnucash-help-en"],
		["skimage", "usr/share/doc/python-skimage-doc/html"],
		["grass", "usr/share/doc/grass-doc/html"],
		["kicad", "usr/share/doc/kicad/help/en"],
		["cppreference", "usr/share/cppreference/doc/html/en"],
		["sqlite", "usr/share/doc/sqlite3"],
		["ghc", "usr/share/doc/ghc-doc/html"],
		["racket", "usr/share/doc/racket"],
		["llvm", "usr/share/doc/llvm-14-doc/html"],
		["clang", "usr/share/doc/clang-14/html"],
		["cmake", "usr/share/doc/cmake-data/html"],
		["gap", "usr/share/gap/doc"],
		["doxygen", "usr/share/doc/doxygen/html"],
		["wireshark", "usr/share/doc/wireshark"],
		["imagemagick", "usr/share/doc/imagemagick-6-common/html"],
		["zsh", "usr/share/doc/zsh-common/html"],
		["octave", "usr/share/doc/octave/octave.html"],
		["maxima", "usr/share/doc/maxima-doc/html"],
		["texinfo", "usr/share/doc/texinfo/html"],
		["r", "usr/share/R/doc/manual"],
		["boost", "usr/share/doc/libboost1.81-doc"],
		["gtk-doc", "usr/share/gtk-doc/html"],
	);
	my $block = qr{</?(?:p|li|dd|dt|h[1-6]|div|table|tr|td|th|caption|blockquote|ul|ol|dl|br|hr|section|article|aside|main|title|figure|figcaption|summary|details|form|center)\b[^>]*>}i;
	for my $h (@html) {
		my ($src, $d, $re) = @$h;
		for my $f (files("$root/$d", $re // qr/\.html?$/)) {
			my $t = Encode::decode("UTF-8", slurp($f), Encode::FB_DEFAULT);
			$t =~ s/<!--.*?-->//gs;
			$t =~ s{<(head|script|style|nav|header|footer|pre|noscript|svg|math|info)\b.*?</\1\s*>}{<p>}gis;
			$t =~ s{<div class="member-signature">.*?</div>}{<p>}gis;	# Javadoc signatures
			for my $p (split /$block/, $t) {
				next unless $p =~ /[A-Za-z]/;
				(my $prose = $p) =~ s{<code\b.*?</code\s*>}{ }gis;
				$prose =~ s/<[^>]*>/ /g;
				my @w = ($prose =~ /[A-Za-z]{2,}/g);
				next if @w < 5;
				$p =~ s/<[^>]*>//g;
				emit($src, entities($p));
			}
		}
	}
	# info manuals: nodes between \x1f; the node header line, menus, indented
	# examples (every line indented 5 or more) and underlines dropped;
	# paragraphs at blank lines
	my @info = (["bash", "usr/share/info/bash"], ["gnu-standards", "usr/share/info/standards"], ["gnu-standards", "usr/share/info/maintain"],
		["coreutils", "usr/share/info/coreutils"], ["guile", "usr/share/info/guile-3.0/guile"], ["autoconf", "usr/share/info/autoconf"]);
	for my $i (@info) {
		my ($src, $name) = @$i;
		my $t = "";
		# a manual split into NAME.info-1.gz, NAME.info-2.gz, ...: the parts in order
		for my $f (sort { ($a =~ /-(\d+)\.gz$/ ? $1 : 0) <=> ($b =~ /-(\d+)\.gz$/ ? $1 : 0) || $a cmp $b }
				grep { -f $_ && !-l $_ } glob("$root/$name.info.gz $root/$name.info-*.gz")) {
			$t .= "\x1f\n" . slurp_gz($f);
		}
		next if $t eq "";
		$t = Encode::decode("UTF-8", $t, Encode::FB_DEFAULT);
		for my $node (split /\x1f\n?/, $t) {
			next unless $node =~ s/^File: [^\n]*\n//;	# the preamble and tag tables are not nodes
			$node =~ s/\n\* Menu:.*//s;
			for my $p (split /\n[ \t]*\n/, $node) {
				my @l = grep { !/^\s*[=*\-.]{3,}\s*$/ } split /\n/, $p;
				next unless @l;
				next unless grep { !/^ {5}/ } @l;
				emit($src, join(" ", @l));
			}
		}
	}
	print STDERR "$n\n";
	' "$1" >"$2" 2>"$2.count" || die "extracting the paragraphs failed: $(tail -n 3 "$2.count")"
}

# 3 and 4: vectors and queries, in the bench's cluster
text_vectors() {	# text_vectors DIR
	local dir=$1
	# \copy takes no psql variables: the file names go in with sed
	sed "s|@DIR@|$dir|g" <<-'EOSQL' | sql -v seed="$SEED" -v nq="$NQ"
	SET client_min_messages = warning;
	DROP TABLE IF EXISTS text_para, text_tsv, text_held, text_docs, text_vocab, text_stats, text_qexp, text_qkw CASCADE;
	CREATE TABLE text_para (n bigint, src text, body text);
	\copy text_para FROM '@DIR@/paragraphs.tsv'
	-- the tokenizer of examples/bm25/recipe.sql; a seeded hash orders everything
	CREATE TABLE text_tsv AS
		SELECT n, src, to_tsvector('english', body) AS tsv, md5(:'seed' || ':' || n) AS h FROM text_para;
	DELETE FROM text_tsv WHERE length(tsv) < 3;
	CREATE TABLE text_held AS
		SELECT row_number() OVER (ORDER BY h, n) AS k, n, tsv FROM text_tsv
		WHERE length(tsv) >= 40 ORDER BY h, n LIMIT 3 * :nq;
	CREATE INDEX text_held_n ON text_held (n);
	CREATE TABLE text_docs AS
		SELECT row_number() OVER (ORDER BY h, n) AS id, tsv FROM text_tsv t
		WHERE NOT EXISTS (SELECT FROM text_held x WHERE x.n = t.n);
	CREATE TABLE text_stats AS
		SELECT count(*) AS n_docs, avg(bm25_doclen(tsv)) AS avgdl FROM text_docs;
	CREATE TABLE text_vocab AS
		SELECT lexeme, (row_number() OVER (ORDER BY lexeme COLLATE "C"))::int AS dim, df,
			bm25_idf((SELECT n_docs FROM text_stats), df) AS idf
		FROM (SELECT lexeme, count(*) AS df FROM text_docs, unnest(tsv) GROUP BY lexeme) s;
	ALTER TABLE text_vocab ADD PRIMARY KEY (lexeme);
	CREATE UNIQUE INDEX text_vocab_dim ON text_vocab (dim);
	ALTER TABLE text_stats ADD COLUMN dims int;
	UPDATE text_stats SET dims = (SELECT count(*) FROM text_vocab);
	ANALYZE text_vocab;
	-- held-out paragraphs: only the lexemes of the vocabulary (bm25_document
	-- refuses others)
	UPDATE text_held h SET tsv = ts_delete(h.tsv, ARRAY(SELECT l FROM unnest(tsvector_to_array(h.tsv)) l
		WHERE NOT EXISTS (SELECT FROM text_vocab v WHERE v.lexeme = l)));
	-- a sparsevec's elements (its text form: {i:v,...}/dims; v read as real)
	CREATE FUNCTION pg_temp.elems(v sparsevec) RETURNS TABLE (dim int, w float8)
		LANGUAGE sql IMMUTABLE STRICT AS $$
		SELECT split_part(x, ':', 1)::int, split_part(x, ':', 2)::real::float8
		FROM unnest(string_to_array(substr(split_part(v::text, '}', 1), 2), ',')) x $$;
	-- BM25 impacts of a tsvector as a document of this corpus: bm25_document's
	-- tf part (k1 1.2, b 0.75) times the lexeme's idf
	CREATE FUNCTION pg_temp.impacts(t tsvector) RETURNS TABLE (dim int, w real)
		LANGUAGE sql STABLE AS $$
		SELECT e.dim, (e.w * v.idf)::real
		FROM text_stats s, pg_temp.elems(bm25_document(t, 'text_vocab', s.dims, s.avgdl, 1.2, 0.75)) e
		JOIN text_vocab v ON v.dim = e.dim $$;
	\copy (SELECT d.id, (SELECT to_sparsevec(array_agg(i.dim ORDER BY i.dim), array_agg(i.w ORDER BY i.dim), s.dims) FROM pg_temp.impacts(d.tsv) i) FROM text_docs d, text_stats s ORDER BY d.id) TO '@DIR@/docs.tsv.tmp'
	-- expansion: the top 40-120 impacts of the first held-out paragraphs that have 40
	CREATE TABLE text_qexp AS
		SELECT row_number() OVER (ORDER BY k) AS qid, v FROM (
			SELECT h.k, (SELECT to_sparsevec(array_agg(dim ORDER BY dim), array_agg(w ORDER BY dim), s.dims)
					FROM (SELECT i.dim, i.w FROM pg_temp.impacts(h.tsv) i ORDER BY i.w DESC, i.dim LIMIT 120) top) AS v,
				(SELECT count(*) FROM pg_temp.impacts(h.tsv)) AS nterms
			FROM text_held h, text_stats s WHERE h.k <= 2 * :nq) x
		WHERE nterms >= 40 ORDER BY k LIMIT :nq;
	-- keyword: 2 to 8 of a held-out paragraph's lexemes, weight 1
	CREATE TABLE text_qkw AS
		SELECT h.k - 2 * :nq AS qid,
			(SELECT to_sparsevec(array_agg(dim ORDER BY dim), array_agg(1::real ORDER BY dim), s.dims)
			 FROM (SELECT v.dim FROM unnest(h.tsv) u JOIN text_vocab v ON v.lexeme = u.lexeme
				ORDER BY md5(:'seed' || ':' || h.k || ':' || u.lexeme) LIMIT 2 + h.k % 7) kw) AS v
		FROM text_held h, text_stats s WHERE h.k > 2 * :nq;
	\copy (SELECT qid, v FROM text_qexp ORDER BY qid) TO '@DIR@/q_expansion.tsv.tmp'
	\copy (SELECT qid, v FROM text_qkw ORDER BY qid) TO '@DIR@/q_keyword.tsv.tmp'
	\copy (SELECT format('paragraphs=%s held_out=%s docs=%s dims=%s avgdl=%s sources=%s', (SELECT count(*) FROM text_para), (SELECT count(*) FROM text_held), n_docs, dims, round(avgdl::numeric, 2), (SELECT string_agg(src || ':' || c, ',' ORDER BY src) FROM (SELECT src, count(*) c FROM text_para GROUP BY src) x)) FROM text_stats) TO '@DIR@/info.tmp'
	DROP TABLE text_para, text_tsv, text_held, text_docs, text_vocab, text_stats, text_qexp, text_qkw;
	EOSQL
}

text_prepare() {
	local key dir t0 root
	key=$( { text_specs; cat "$ROOT/bench/text.sh"; echo "seed=$SEED nq=$NQ"; } | sha1sum | cut -c1-12)
	dir=$TEXT_CACHE/$key
	TEXT_DOCS=$dir/docs.tsv
	TEXT_QUERIES=([keyword]=$dir/q_keyword.tsv [expansion]=$dir/q_expansion.tsv)
	log "real-text corpus ($(text_specs | wc -l) pinned packages, bench/text-packages.txt; cache $dir)"
	if [ -f "$dir/done" ]; then
		note "from the cache: $(cat "$dir/info")"
		return 0
	fi
	mkdir -p "$dir"
	t0=$(now)
	# the unpacked packages depend on the pinned list only
	root=$TEXT_CACHE/root-$(text_specs | sha1sum | cut -c1-12)
	text_fetch "$root"
	note "packages unpacked in $(elapsed "$t0") s"
	t0=$(now)
	text_paragraphs "$root" "$dir/paragraphs.tsv"
	note "$(cat "$dir/paragraphs.tsv.count") paragraphs in $(elapsed "$t0") s"
	t0=$(now)
	text_vectors "$dir" || die "building the BM25 vectors failed"
	for f in docs.tsv q_keyword.tsv q_expansion.tsv info; do mv "$dir/$f.tmp" "$dir/$f"; done
	rm -f "$dir/paragraphs.tsv"
	touch "$dir/done"
	note "BM25 vectors and queries in $(elapsed "$t0") s: $(cat "$dir/info")"
}
