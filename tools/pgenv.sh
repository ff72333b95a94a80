# tools/pgenv.sh: shell helpers shared by test/run and bench/run.
# Source it; it defines functions and changes nothing by itself.
#
#   pgenv_packages PKG...     apt-get install what is missing (update once)
#   pgenv_private_install DIR relocated copy of the PostgreSQL installation;
#                             sets PGBIN and PG_CONFIG, prepends PGBIN to PATH
#   pgenv_free_port           prints a free TCP port on 127.0.0.1
#   pgenv_start DATADIR PORT LOG [postgres -c options...]
#                             initdb (if needed) and start a cluster as the
#                             `postgres` OS user when root, else as yourself
#   pgenv_stop DATADIR        pg_ctl stop -m fast (quiet, idempotent)
#
# PostgreSQL refuses to run as root, so under root the server, initdb and
# anything that starts servers run through "${PGENV_RUNAS[@]}".

PGMAJOR=${PGMAJOR:-15}
PGENV_RUNAS=()
if [ "$(id -u)" -eq 0 ]; then
	PGENV_RUNAS=(runuser -u postgres --)
fi

pgenv_packages() {
	local p sudo= missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null 2>&1; then
			sudo=sudo
		else
			echo "need root or sudo to install: ${missing[*]}" >&2
			return 1
		fi
	fi
	echo "installing ${missing[*]}"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# PostgreSQL finds its share and lib directories relative to its own
# binaries, so a copy of the installation under DIR works on its own: we
# install the extension there and never write into /usr.
pgenv_private_install() {
	local root=$1
	mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/usr/include/postgresql"
	cp -a "/usr/lib/postgresql/$PGMAJOR" "$root/usr/lib/postgresql/"
	cp -a "/usr/share/postgresql/$PGMAJOR" "$root/usr/share/postgresql/"
	cp -a "/usr/include/postgresql/$PGMAJOR" "$root/usr/include/postgresql/"
	PGBIN=$root/usr/lib/postgresql/$PGMAJOR/bin
	PG_CONFIG=$PGBIN/pg_config
	PATH="$PGBIN:$PATH"
	export PATH
}

pgenv_free_port() {
	local p
	for p in $(shuf -i 20000-60000 -n 200); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

pgenv_start() {
	local data=$1 port=$2 logfile=$3 opts="" o
	shift 3
	for o in "$@"; do opts="$opts -c $o"; done
	if [ ! -f "$data/PG_VERSION" ]; then
		mkdir -p "$data"
		[ "$(id -u)" -eq 0 ] && chown postgres "$data" "$(dirname "$data")"
		"${PGENV_RUNAS[@]}" "$PGBIN/initdb" -D "$data" -A trust -U postgres --no-sync >/dev/null
	fi
	"${PGENV_RUNAS[@]}" "$PGBIN/pg_ctl" -D "$data" -l "$logfile" -w \
		-o "-p $port -k $(dirname "$data") -c listen_addresses=127.0.0.1$opts" start >/dev/null
}

pgenv_stop() {
	local data=$1
	[ -f "$data/postmaster.pid" ] || return 0
	"${PGENV_RUNAS[@]}" "$PGBIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
}
