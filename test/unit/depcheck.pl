#!/usr/bin/perl
# depcheck.pl: no dependency circle between the extension's source files.
#
#   depcheck.pl SRCDIR        (run by `make -C test/unit check`)
#   depcheck.pl -v SRCDIR     also print every file's dependencies
#   depcheck.pl --layers SRCDIR
#                             print the layers (below)
#   depcheck.pl --readme README SRCDIR
#                             also check that README (src/README) lists
#                             the same layers and every source file, and
#                             who includes the kernels' headers
#   depcheck.pl --self-test   check that a made-up cycle is caught ($CC)
#
# For every SRCDIR/*.c it reads SRCDIR/*.o with nm: the global symbols the
# object defines and the ones it uses.  File A depends on file B when A
# uses a symbol B defines.  The check fails if that graph has a cycle --
# two files depending on each other directly, or through others (A -> B
# -> C -> A) -- and prints the files of each cycle and the symbols that
# make the edges.  Static inline functions in headers are not symbols and
# do not count.  The objects must be built first (`make` at the top).
#
# Without a cycle the files fall into layers: a file that depends on no
# other is in layer 0, any other one layer above the highest of the files
# it depends on, so that each layer calls only layers below it.  src/README
# ("Files") lists them as lines of the form "  <n>  <file> <file> ...",
# files without .c, in name order; --readme compares the two, checks that
# every *.c and *.h of SRCDIR is named in README's "Files" section, and
# that only spmsegscan.c includes the kernels' headers (spmtraverse.h,
# spmrange.h) and no server file the test-only spmtest.h.
use strict;
use warnings;

my $verbose = 0;
my $layers = 0;
my $readme;
if (@ARGV && $ARGV[0] eq '--self-test') { exit self_test(); }
if (@ARGV && $ARGV[0] eq '-v') { $verbose = 1; shift @ARGV; }
if (@ARGV && $ARGV[0] eq '--layers') { $layers = 1; shift @ARGV; }
if (@ARGV && $ARGV[0] eq '--readme') { shift @ARGV; $readme = shift @ARGV; }
my $dir = shift @ARGV or die "usage: depcheck.pl [-v | --layers | --readme README] SRCDIR\n";

my (%defines, %uses);			# file => { symbol => 1 }
my %definer;					# symbol => file
my @files;
for my $c (sort glob("$dir/*.c")) {
	(my $o = $c) =~ s/\.c$/.o/;
	(my $name = $c) =~ s{.*/}{};
	die "depcheck: $o is missing or older than $c: build first (make); is it in the Makefile's OBJS?\n"
		unless -f $o && -M $o <= -M $c;
	push @files, $name;
	open(my $nm, '-|', 'nm', '-P', '-g', $o) or die "depcheck: nm $o: $!\n";
	while (<$nm>) {
		my ($sym, $type) = split;
		next unless defined $type;
		if ($type eq 'U') {
			$uses{$name}{$sym} = 1;
		} elsif ($type =~ /^[TDBRCVW]$/) {
			$defines{$name}{$sym} = 1;
			die "depcheck: $sym defined in $definer{$sym} and $name\n"
				if exists $definer{$sym} && $definer{$sym} ne $name;
			$definer{$sym} = $name;
		}
	}
	close($nm) or die "depcheck: nm $o failed\n";
}
die "depcheck: no sources in $dir\n" unless @files;

# edges: file => { file => [symbols] }
my %dep;
for my $f (@files) {
	for my $sym (sort keys %{ $uses{$f} || {} }) {
		my $g = $definer{$sym};
		next unless defined $g && $g ne $f;
		push @{ $dep{$f}{$g} }, $sym;
	}
}

if ($verbose) {
	for my $f (@files) {
		printf "%-16s -> %s\n", $f, join(' ', sort keys %{ $dep{$f} || {} });
	}
}

# strongly connected components (Tarjan); any with more than one file is a
# cycle
my ($index, @stack, %idx, %low, %on, @sccs) = (0);
my $visit;
$visit = sub {
	my ($v) = @_;
	$idx{$v} = $low{$v} = $index++;
	push @stack, $v;
	$on{$v} = 1;
	for my $w (sort keys %{ $dep{$v} || {} }) {
		if (!exists $idx{$w}) {
			$visit->($w);
			$low{$v} = $low{$w} if $low{$w} < $low{$v};
		} elsif ($on{$w}) {
			$low{$v} = $idx{$w} if $idx{$w} < $low{$v};
		}
	}
	if ($low{$v} == $idx{$v}) {
		my @c;
		my $w;
		do { $w = pop @stack; $on{$w} = 0; push @c, $w; } while ($w ne $v);
		push @sccs, [sort @c] if @c > 1;
	}
};
for my $f (@files) { $visit->($f) unless exists $idx{$f}; }

my $nedges = 0;
$nedges += scalar keys %{ $dep{$_} || {} } for @files;
if (!@sccs) {
	my @lines = layer_lines();
	if ($layers) {
		print "$_\n" for @lines;
		exit 0;
	}
	printf "depcheck: %d files, %d dependencies, no cycle\n", scalar @files, $nedges;
	exit(defined $readme ? check_readme($readme, @lines) : 0);
}
for my $c (@sccs) {
	my %in = map { $_ => 1 } @$c;
	print "depcheck: FAIL: these files depend on each other in a cycle: @$c\n";
	for my $f (@$c) {
		for my $g (sort keys %{ $dep{$f} }) {
			next unless $in{$g};
			print "    $f -> $g: @{ $dep{$f}{$g} }\n";
		}
	}
}
exit 1;

# the layers, bottom up, as src/README lists them (no cycle: the graph is
# acyclic, so the recursion ends)
sub layer_lines {
	my %layer;
	my $of;
	$of = sub {
		my ($f) = @_;
		return $layer{$f} if exists $layer{$f};
		my $l = 0;
		for my $g (keys %{ $dep{$f} || {} }) {
			my $lg = $of->($g) + 1;
			$l = $lg if $lg > $l;
		}
		return $layer{$f} = $l;
	};
	my @by;
	for my $f (@files) {
		(my $stem = $f) =~ s/\.c$//;
		push @{ $by[$of->($f)] }, $stem;
	}
	my @lines;
	for my $l (0 .. $#by) {
		push @lines, sprintf("  %d  %s", $l, join(' ', sort @{ $by[$l] || [] }));
	}
	return @lines;
}

# README's "Files" section: the layer lines must be these, and every
# source file of $dir must be named
sub check_readme {
	my ($path, @want) = @_;
	open(my $fh, '<', $path) or die "depcheck: $path: $!\n";
	my $text = do { local $/; <$fh> };
	close($fh);
	my ($files) = $text =~ /\nFiles\n-----\n(.*?)\n[^\n]+\n-+\n/s
		or die "depcheck: $path has no \"Files\" section\n";
	my @have = grep { /^  \d+  \S/ } split /\n/, $files;
	my $ok = 1;
	if (join("\n", @have) ne join("\n", @want)) {
		print "depcheck: FAIL: the layers in $path are not those of the code.\n";
		print "  $path says:\n", map({ "  $_\n" } @have);
		print "  the code has:\n", map({ "  $_\n" } @want);
		$ok = 0;
	}
	for my $src (sort glob("$dir/*.c"), glob("$dir/*.h")) {
		(my $name = $src) =~ s{.*/}{};
		(my $stem = $name) =~ s/\.[ch]$//;
		next if $files =~ /(?<![\w.])\Q$name\E(?![\w])/ ||
			$files =~ /(?<![\w.])\Q$stem\E\.c\/\.h\b/;
		print "depcheck: FAIL: $path \"Files\" does not name $name\n";
		$ok = 0;
	}
	print "depcheck: $path lists these layers and every source file\n" if $ok;
	return (check_includes() && $ok) ? 0 : 1;
}

# who sees what (src/README "Files"): the kernels' headers only in
# spmsegscan.c (and in each other and their own files), spmtest.h in no
# server file
sub check_includes {
	my %allowed = (
		'spmtraverse.h' => { map { $_ => 1 } qw(spmsegscan.c spmtraverse.c) },
		'spmrange.h' => { map { $_ => 1 } qw(spmsegscan.c spmrange.c) },
		'spmtest.h' => { map { $_ => 1 } qw(spmtraverse.c spmrange.c) });
	my $ok = 1;
	for my $src (sort(glob("$dir/*.c"), glob("$dir/*.h"))) {
		(my $name = $src) =~ s{.*/}{};
		open(my $fh, '<', $src) or die "depcheck: $src: $!\n";
		while (<$fh>) {
			next unless /^#include "([^"]+)"/ && $allowed{$1};
			next if $allowed{$1}{$name};
			print "depcheck: FAIL: $name includes $1 (src/README \"Files\")\n";
			$ok = 0;
		}
		close($fh);
	}
	print "depcheck: only spmsegscan.c includes the kernels' headers\n" if $ok;
	return $ok;
}

# a.c -> b.c -> c.c -> a.c must fail (and name the three), the same files
# without the edge c.c -> a.c must pass
sub self_test {
	require File::Temp;
	my $cc = $ENV{CC} || 'cc';
	my $tmp = File::Temp::tempdir(CLEANUP => 1);
	my %src = (
		'a.c' => "int b(void);\nint a(void) { return b(); }\n",
		'b.c' => "int c(void);\nint b(void) { return c(); }\n",
		'c.c' => "int a(void);\nint c(void) { return a(); }\n");
	my $run = sub {
		for my $f (sort keys %src) {
			open(my $fh, '>', "$tmp/$f") or die "depcheck: $tmp/$f: $!\n";
			print $fh $src{$f};
			close($fh);
			(my $o = $f) =~ s/\.c$/.o/;
			system($cc, '-c', '-o', "$tmp/$o", "$tmp/$f") == 0
				or die "depcheck: $cc failed\n";
		}
		my $out = `"$^X" "$0" "$tmp" 2>&1`;
		return ($? >> 8, $out);
	};
	my ($rc, $out) = $run->();
	if ($rc != 1 || $out !~ /cycle: a\.c b\.c c\.c/ || $out !~ /c\.c -> a\.c: a/) {
		print "depcheck: self-test FAIL: a cycle was not reported:\n$out";
		return 1;
	}
	$src{'c.c'} = "int c(void) { return 0; }\n";
	($rc, $out) = $run->();
	if ($rc != 0) {
		print "depcheck: self-test FAIL: no cycle, yet:\n$out";
		return 1;
	}
	print "depcheck: self-test passed (a 3-file cycle is caught)\n";
	return 0;
}
