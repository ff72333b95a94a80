# bench/lib/common.sh: helpers every stage of bench/run uses (sourced by it):
# messages, time, background jobs, psql, latency percentiles.  No state of
# its own but the list of background jobs (BG_PIDS).

log() { printf '\n==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
die() { echo "bench/run: $*" >&2; exit 1; }

# shell_quote ARG...: the arguments as one line a shell reads back as the
# same words (single quotes around any argument with other characters than
# these safe ones; an embedded ' as '\'')
shell_quote() {
	local a out=
	for a; do
		if [[ $a =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then
			out+="${out:+ }$a"
		else
			out+="${out:+ }'${a//\'/\'\\\'\'}'"
		fi
	done
	printf '%s\n' "$out"
}

# the value of NAME=... in a "key=value key=value" line
field() { sed -n "s|.* $1=\([^ ]*\).*|\1|p" <<<" $2"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# psql on the bench database; arms add their settings to PGOPTIONS
sql() { psql -X -q -v ON_ERROR_STOP=1 -At -F $'\t' -d "$DSN" "$@"; }

poll() {	# poll SECONDS SQL: print SQL's rows every SECONDS (progress)
	while sleep "$1"; do
		sql -c "$2" 2>/dev/null | sed 's/^/    progress: /' || true
	done
}
# after a failure: wait (up to a minute) until the server answers again,
# in case it crashed and is recovering
server_ready() {
	local i
	for i in $(seq 60); do
		sql -c "SELECT 1" >/dev/null 2>&1 && return 0
		sleep 1
	done
	die "the server does not answer any more"
}

# Background jobs we start ourselves.  cleanup stops those still listed; a
# job leaves the list as soon as it has been waited for, so a recycled PID
# is never signalled.
BG_PIDS=()
bg_start() {
	"$@" &
	BG_LAST=$!
	BG_PIDS+=($BG_LAST)
}
bg_forget() {
	local p keep=()
	for p in "${BG_PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	BG_PIDS=("${keep[@]}")
}
bg_wait() {	# bg_wait PID: wait for it, return its status
	local rc=0
	wait "$1" || rc=$?
	bg_forget "$1"
	return $rc
}
bg_stop() {	# bg_stop PID: stop a poller
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	bg_forget "$1"
}

# latency percentiles (ms) from pgbench -l files; writes the sorted list
latency_stats() {	# latency_stats SORTED_OUT LOGFILE...
	local out=$1
	shift
	awk '{ print $3 / 1000 }' "$@" | sort -g >"$out"
	awk '{ v[NR] = $1; s += $1 }
		function q(p,  i) { i = int(p * NR); if (i < p * NR) i++; if (i < 1) i = 1; return v[i] }
		END { if (NR == 0) { print "n/a n/a n/a n/a 0"; exit }
			printf "%.3f %.3f %.3f %.3f %d\n", q(0.5), q(0.9), q(0.99), s / NR, NR }' "$out"
}

# mean and median of each column of a TSV (header line first)
column_stats() {	# column_stats FILE -> "name mean median" lines
	local f=$1 ncol c
	ncol=$(head -n 1 "$f" | awk -F'\t' '{ print NF }')
	for ((c = 1; c <= ncol; c++)); do
		{
			head -n 1 "$f" | cut -f "$c"
			tail -n +2 "$f" | cut -f "$c" | sort -g | awk '{ v[NR] = $1; s += $1 }
				END { if (NR == 0) { print "n/a n/a"; exit }
					m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
					printf "%.1f %.1f\n", s / NR, m }'
		} | paste -sd ' '
	done
}

# a CDF of at most 1000 points of a sorted latency list, for the plots
cdf_points() {	# cdf_points SORTED_LIST >DAT
	awk -v n="$(wc -l <"$1")" 'BEGIN { s = n > 1000 ? n / 1000 : 1 }
		NR == 1 || NR == n || (NR % s) < 1 { printf "%s %.5f\n", $1, NR / n }' "$1"
}
