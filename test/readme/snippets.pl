#!/usr/bin/perl
# test/readme/snippets.pl README.md: run every ```sql snippet of the README,
# in order, and check what the README says they return (issue 40: docs that
# cannot drift).  `test/run readme` runs it against a throwaway cluster;
# by hand: PGHOST=... PGPORT=... PGUSER=... test/readme/snippets.pl README.md
# (it creates and drops databases named readme_*; psql must be on PATH).
#
# The README's conventions (test/README.md "README snippets"):
#
#   -- returns: ROW
#   --          ROW...        the statement just before (or on the same line,
#                             after its ";") returns exactly these rows, as
#                             psql prints them unaligned: columns separated
#                             by "|", NULL as "NULL", one row a line (rows
#                             after the first on lines of "--" and spaces up
#                             to the column where the first row starts)
#   -- returns: no rows       ... returns no row
#   <!-- readme-test: skip: REASON -->
#                             on the line before a fence: the snippet is not
#                             run (REASON is printed)
#   <!-- readme-test: database NAME -->
#                             this snippet and the ones after it run in
#                             database NAME, new and empty when first named
#                             (the first snippets run in "main")
#   <!-- readme-test: setup: SQL -->
#                             SQL runs (unchecked, printed) before the snippet
#
# Every ```sql snippet runs in one psql session per database, statement by
# statement, with ON_ERROR_STOP: a failing statement, a WARNING, or rows
# other than the README's fail the test.  Snippets in other languages
# (```sh, ```python, ```js, ...) are listed as not run, by language.
use strict;
use warnings;
use File::Temp qw(tempdir);

my $readme = shift @ARGV or die "usage: $0 README.md\n";
open(my $fh, '<', $readme) or die "$readme: $!\n";
my @lines = <$fh>;
close $fh;
chomp @lines;

# ------------------------------------------------------------ the snippets
my @snippets;                   # {line, lang, text lines [ [lineno, text] ], directives}
my @pending_directives;
for (my $i = 0; $i < @lines; $i++)
{
	my $l = $lines[$i];
	if ($l =~ /^<!--\s*readme-test:\s*(.*?)\s*-->\s*$/)
	{
		push @pending_directives, [ $i + 1, $1 ];
		next;
	}
	if ($l =~ /^```\s*(\S*)\s*$/)
	{
		my $lang = $1 eq '' ? '(none)' : $1;
		my $start = $i + 1;
		my @body;
		$i++;
		while ($i < @lines && $lines[$i] !~ /^```\s*$/)
		{
			push @body, [ $i + 1, $lines[$i] ];
			$i++;
		}
		die "$readme:$start: fence not closed\n" if $i >= @lines;
		push @snippets,
		  { line => $start, lang => $lang, body => \@body, directives => [@pending_directives] };
		@pending_directives = ();
		next;
	}
	if (@pending_directives && $l !~ /^\s*$/)
	{
		my ($dl, $d) = @{ $pending_directives[0] };
		die "$readme:$dl: readme-test directive \"$d\" is not followed by a fenced snippet\n";
	}
}
die "$readme: readme-test directive at the end, before no snippet\n" if @pending_directives;

# Split a snippet into statements: [ first README line, text, expected rows
# or undef ].  A statement ends at a ";" outside quotes and comments; a
# psql meta-command (a line starting with "\") is one statement.
sub split_statements
{
	my ($snippet) = @_;
	my @stmts;
	my ($cur, $cur_line, $in_quote, $dollar, $in_block) = ('', undef, '', undef, 0);
	my $last;                   # the statement that ended last, for "-- returns:"
	my $ret_col;                # where the rows of an open "-- returns:" start
	for my $bl (@{ $snippet->{body} })
	{
		my ($ln, $text) = @$bl;
		if ($cur eq '' && !$in_block && defined $ret_col
			&& $text =~ /^--( +)(\S.*)$/ && length($1) + 2 == $ret_col)
		{
			push @{ $last->{expect} }, $2;
			next;
		}
		undef $ret_col;
		if ($cur eq '' && !$in_block && $text =~ /^\s*--\s*returns:\s*(.*)$/)
		{
			die "$readme:$ln: \"-- returns:\" follows no statement\n" unless $last && !$last->{expect};
			$last->{expect} = [];
			if ($1 ne 'no rows')
			{
				push @{ $last->{expect} }, $1;
				$ret_col = $-[1];
			}
			next;
		}
		if ($cur eq '' && $text =~ /^\s*\\/)
		{
			$last = { line => $ln, text => $text };
			push @stmts, $last;
			next;
		}
		my $pos = 0;
		my $len = length $text;
		my $ended_at;
		while ($pos < $len)
		{
			my $c = substr($text, $pos, 1);
			if ($in_block)
			{
				if (substr($text, $pos, 2) eq '*/') { $in_block = 0; $pos += 2; next; }
			}
			elsif (defined $dollar)
			{
				if (substr($text, $pos, length $dollar) eq $dollar) { $pos += length $dollar; undef $dollar; next; }
			}
			elsif ($in_quote ne '')
			{
				$in_quote = '' if $c eq $in_quote;
			}
			elsif (substr($text, $pos, 2) eq '--')
			{
				last;
			}
			elsif (substr($text, $pos, 2) eq '/*')
			{
				$in_block = 1;
				$pos += 2;
				next;
			}
			elsif ($c eq "'" || $c eq '"')
			{
				$in_quote = $c;
			}
			elsif (substr($text, $pos) =~ /^(\$[A-Za-z_]*\$)/)
			{
				$dollar = $1;
				$pos += length $dollar;
				next;
			}
			elsif ($c eq ';')
			{
				$ended_at = $pos;
				last;
			}
			$pos++;
		}
		$cur_line //= $ln if $text =~ /\S/;
		if (defined $ended_at)
		{
			$cur .= substr($text, 0, $ended_at + 1) . "\n";
			$last = { line => $cur_line, text => $cur };
			push @stmts, $last;
			($cur, $cur_line) = ('', undef);
			my $rest = substr($text, $ended_at + 1);
			if ($rest =~ /^\s*--\s*returns:\s*(.*)$/)
			{
				$last->{expect} = [];
				if ($1 ne 'no rows')
				{
					push @{ $last->{expect} }, $1;
					$ret_col = $ended_at + 1 + $-[1];
				}
			}
			elsif ($rest =~ /\S/ && $rest !~ /^\s*--/)
			{
				die "$readme:$ln: text after a statement's \";\" on the same line\n";
			}
		}
		else
		{
			$cur .= "$text\n";
		}
	}
	die "$readme:$snippet->{line}: a statement without \";\" at the end of the snippet\n"
	  if $cur =~ /\S/ && $cur !~ /^(\s*--[^\n]*\n)*\s*$/;
	return @stmts;
}

# ------------------------------------------------------------ the script
my $dir = tempdir(CLEANUP => 1);
my $script = "$dir/readme.sql";
my @map;                        # script line -> what it is
my @script;
my %dbs;
my @stmts_all;
my (%other, @skipped, @setups);
my ($nsql, $nran, $nchecked) = (0, 0, 0);

sub emit
{
	my ($text, $what) = @_;
	for my $l (split /\n/, $text, -1)
	{
		push @script, $l;
		$map[ scalar @script ] = $what;
	}
}

sub use_db
{
	my ($name) = @_;
	die "$readme: database name \"$name\" is not a plain word\n" unless $name =~ /^[a-z0-9_]+$/;
	if (!$dbs{$name}++)
	{
		emit("\\c postgres", "runner");
		emit("DROP DATABASE IF EXISTS readme_$name;", "runner");
		emit("CREATE DATABASE readme_$name;", "runner");
	}
	emit("\\c readme_$name", "runner");
	emit("\\pset format unaligned", "runner");
	emit("\\pset tuples_only on", "runner");
	emit("\\pset null NULL", "runner");
}

emit("\\set ON_ERROR_STOP 1", "runner");
emit("\\set VERBOSITY default", "runner");
use_db('main');
for my $s (@snippets)
{
	if ($s->{lang} ne 'sql')
	{
		$other{ $s->{lang} }++;
		print "not run: $readme:$s->{line}: a ```$s->{lang} snippet (not SQL)\n";
		next;
	}
	$nsql++;
	my ($skip, $setup);
	for my $d (@{ $s->{directives} })
	{
		my ($dl, $text) = @$d;
		if ($text =~ /^skip:\s*(\S.*)$/) { $skip = $1; }
		elsif ($text =~ /^database\s+(\S+)$/) { use_db($1); }
		elsif ($text =~ /^setup:\s*(\S.*)$/) { $setup .= "$1\n"; }
		else { die "$readme:$dl: unknown readme-test directive \"$text\"\n"; }
	}
	my @stmts = split_statements($s);
	if (defined $skip)
	{
		push @skipped, "$readme:$s->{line}: $skip";
		print "skip: $readme:$s->{line}: $skip\n";
		next;
	}
	if (defined $setup)
	{
		print "setup before $readme:$s->{line}: $setup";
		# its output is not a statement's
		emit("\\echo '\@\@readme setup'", "runner");
		emit($setup, { setup => $s->{line} });
	}
	$nran++;
	for my $st (@stmts)
	{
		$st->{snippet} = $s->{line};
		$st->{id} = scalar @stmts_all;
		push @stmts_all, $st;
		emit("\\echo '\@\@readme $st->{id}'", "runner");
		emit($st->{text}, $st);
		# a meta-command's output has no terminating ";"
		emit("", "runner");
	}
}
emit("\\c postgres", "runner");
emit("DROP DATABASE readme_$_;", "runner") for sort keys %dbs;
open(my $out, '>', $script) or die "$script: $!\n";
print $out "$_\n" for @script;
close $out;

# ------------------------------------------------------------ run it
# from the README's directory: a setup may \i a file relative to it
my $readme_dir = ($readme =~ m{^(.*)/[^/]*$}) ? $1 : '.';
chdir $readme_dir or die "$readme_dir: $!\n";
my $rc = system("psql -X -q -d postgres -f '$script' >'$dir/out' 2>'$dir/err'") >> 8;
my %output;
my $curid;
open(my $o, '<', "$dir/out") or die;
while (my $l = <$o>)
{
	chomp $l;
	if ($l eq '@@readme setup') { undef $curid; next; }
	if ($l =~ /^\@\@readme (\d+)$/) { $curid = $1; $output{$curid} = []; next; }
	push @{ $output{$curid} }, $l if defined $curid;
}
close $o;

my @failures;
open(my $e, '<', "$dir/err") or die;
while (my $l = <$e>)
{
	chomp $l;
	my $where = '';
	if ($l =~ /^psql:\Q$script\E:(\d+):\s*(\w+):\s*(.*)$/)
	{
		my ($sl, $level, $msg) = ($1, $2, $3);
		my $w = $map[$sl];
		$where = ref $w && $w->{line} ? "$readme:$w->{line}" : ref $w ? "setup before $readme:$w->{setup}" : "the runner";
		if ($level eq 'NOTICE' || $level eq 'INFO')
		{
			print "  ($where: $level: $msg)\n" unless $where eq 'the runner';
			next;
		}
		push @failures, "$where: $level: $msg";
		next;
	}
	# DETAIL, HINT, the statement's text
	if (@failures) { $failures[-1] .= "\n  $l"; }
	else { print "  $l\n"; }
}
close $e;
push @failures, "psql exited with $rc" if $rc != 0 && !@failures;

for my $st (@stmts_all)
{
	next unless $st->{expect};
	my $got = $output{ $st->{id} };
	next unless defined $got;   # not reached: psql stopped before
	$nchecked++;
	my $want = join("\n", @{ $st->{expect} });
	my $have = join("\n", @$got);
	if ($want ne $have)
	{
		push @failures,
		  "$readme:$st->{line}: returns other rows than the README says\n"
		  . "  README:\n" . join('', map { "    $_\n" } @{ $st->{expect} } ? @{ $st->{expect} } : ('(no rows)'))
		  . "  got:\n" . join('', map { "    $_\n" } @$got ? @$got : ('(no rows)'));
	}
}
my $with_expect = grep { $_->{expect} } @stmts_all;
print "README snippets: $nsql sql, $nran run (" . scalar(@stmts_all)
  . " statements, $nchecked of $with_expect results checked), "
  . scalar(@skipped) . " marked skip; not SQL, not run: "
  . (join(', ', map { "$other{$_} $_" } sort keys %other) || 'none') . "\n";
if (@failures)
{
	print "FAIL: $_\n" for @failures;
	exit 1;
}
if ($nran == 0 || $nchecked != $with_expect)
{
	print "FAIL: " . ($nran == 0 ? "no snippet ran" : "not every result was checked") . "\n";
	exit 1;
}
print "ok: every snippet ran, every stated result matched\n";
exit 0;
