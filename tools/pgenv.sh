# tools/pgenv.sh: shell helpers shared by test/run and bench/run.
# Source it; it defines functions and changes nothing by itself.
#
#   PGMAJOR                   15 (default: Debian 12's packages) or 18
#                             (built from Debian's source package, cached)
#   pgenv_packages PKG...     apt-get install what is missing (update once)
#   pgenv_server_packages     what PGMAJOR needs: the postgresql-15 packages,
#                             or the tools and headers to build 18
#   pgenv_private_install DIR relocated copy of the PostgreSQL installation
#                             of PGMAJOR, with pgvector when it builds there;
#                             sets PGBIN and PG_CONFIG, prepends PGBIN to PATH,
#                             sets PGENV_PGVECTOR (its version, or empty)
#   pgenv_pg18                build PostgreSQL 18 into the cache unless there;
#                             sets PG18_PREFIX
#   pgenv_pg17_headers        PostgreSQL 17's server headers (binary package
#                             postgresql-server-dev-17, unpacked); sets PG17_INCLUDE
#   pgenv_free_port           prints a free TCP port on 127.0.0.1
#   pgenv_start DATADIR PORT LOG [postgres -c options...]
#                             initdb (if needed) and start a cluster as the
#                             `postgres` OS user when root, else as yourself
#   pgenv_stop DATADIR        pg_ctl stop -m fast (quiet, idempotent)
#
# PostgreSQL refuses to run as root, so under root the server, initdb and
# anything that starts servers run through "${PGENV_RUNAS[@]}".
#
# What Debian 12 does not have comes from Debian's archive through a
# private apt configuration under the cache directory (sources for sid
# and trixie, its own lists and download cache); the machine's apt sources
# are never touched.  The versions are pinned: when the archive no longer
# serves one, the helpers say so and which version it serves.
#   SPARSEVEC_CACHE           cache directory (default /var/cache/sparsevec,
#                             or ~/.cache/sparsevec when that is not writable)
# doc/versions.md "PostgreSQL versions" has the reasons.

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

# ------------------------------------------------------------ versions
# postgresql-18 from sid (source package; built from its upstream tarball),
# pgvector from trixie (source package), postgresql-server-dev-17 from
# trixie (binary package: headers only; its binaries need glibc 2.38).
PGENV_PG18_DEBIAN=${SPARSEVEC_PG18_DEBIAN:-18.6-3}
PGENV_PGVECTOR_DEBIAN=${SPARSEVEC_PGVECTOR_DEBIAN:-0.8.0-1}
PGENV_PG17DEV_DEBIAN=${SPARSEVEC_PG17DEV_DEBIAN:-17.12-0+deb13u1}

pgenv_cache_dir() {
	local c=${SPARSEVEC_CACHE:-}
	if [ -z "$c" ]; then
		c=/var/cache/sparsevec
		if ! mkdir -p "$c" 2>/dev/null || [ ! -w "$c" ]; then
			c=${XDG_CACHE_HOME:-$HOME/.cache}/sparsevec
		fi
	fi
	mkdir -p "$c" || return 1
	(cd "$c" && pwd)
}

# The private apt configuration: PGENV_APT holds apt-get's options.  The
# lists are fetched once (and again when a pinned version is not found in
# them: they may be old).
PGENV_APT=()
pgenv_apt_setup() {
	local d
	d=$(pgenv_cache_dir)/apt || return 1
	[ ${#PGENV_APT[@]} -gt 0 ] && return 0
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	cat >"$d/sources.list" <<-EOF
	deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
	deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
	EOF
	PGENV_APT=(-o "Dir::Etc::sourcelist=$d/sources.list" -o Dir::Etc::sourceparts=/nonexistent
		-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache")
	if ! compgen -G "$d/lists/*Sources" >/dev/null; then
		pgenv_apt_update || return 1
	fi
}
pgenv_apt_update() {
	echo "private apt: fetching the lists of sid and trixie (sources) and trixie (amd64)"
	apt-get "${PGENV_APT[@]}" -qq update >/dev/null ||
		{ echo "pgenv: apt-get update with the private configuration failed" >&2; return 1; }
}

# pgenv_apt_fetch DIR source|download NAME VERSION: the pinned version of
# a source package (its files) or a binary package (its .deb) into DIR.
pgenv_apt_fetch() {
	local dir=$1 kind=$2 name=$3 version=$4 try served
	pgenv_apt_setup || return 1
	mkdir -p "$dir"
	# apt downloads as the _apt user when it can write there
	[ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1 && chown _apt "$dir"
	for try in 1 2; do
		if [ "$kind" = source ]; then
			(cd "$dir" && apt-get "${PGENV_APT[@]}" -qq source --download-only "$name=$version") >/dev/null 2>&1 &&
				return 0
		else
			(cd "$dir" && apt-get "${PGENV_APT[@]}" -qq download "$name=$version") >/dev/null 2>&1 &&
				return 0
		fi
		[ $try = 1 ] && { pgenv_apt_update || return 1; }
	done
	if [ "$kind" = source ]; then
		served=$(apt-cache "${PGENV_APT[@]}" showsrc "$name" 2>/dev/null | sed -n 's/^Version: //p' | paste -sd, -)
	else
		served=$(apt-cache "${PGENV_APT[@]}" madison "$name" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' | paste -sd, -)
	fi
	echo "pgenv: Debian's archive no longer serves $name $version (it serves: ${served:-nothing})." >&2
	echo "pgenv: pin a served version in tools/pgenv.sh (PGENV_*_DEBIAN) or set SPARSEVEC_*_DEBIAN." >&2
	return 1
}

# Serialise cache builds between concurrent runs (fd 8 holds the lock).
pgenv_cache_lock() {
	local c
	c=$(pgenv_cache_dir) || return 1
	exec 8>"$c/.lock"
	flock 8
}
pgenv_cache_unlock() { exec 8>&-; }

# PostgreSQL 18 from Debian's source package postgresql-18 (its upstream
# tarball: Debian's patches are packaging), configured with the TAP tests
# (the Perl modules and pg_regress into the pgxs tree), built with contrib
# (pg_prewarm, postgres_fdw, pg_buffercache are used) and
# pg_isolation_regress.  Built once into the cache; .complete marks a
# finished installation, anything else there is thrown away and rebuilt.
pgenv_pg18() {
	local cache prefix src up t0 log
	cache=$(pgenv_cache_dir) || return 1
	prefix=$cache/pg18-$PGENV_PG18_DEBIAN
	PG18_PREFIX=$prefix
	[ -f "$prefix/.complete" ] && return 0
	pgenv_packages make gcc libc6-dev perl bzip2 bison flex zlib1g-dev libipc-run-perl || return 1
	pgenv_cache_lock || return 1
	if [ -f "$prefix/.complete" ]; then pgenv_cache_unlock; return 0; fi
	t0=$(date +%s)
	up=${PGENV_PG18_DEBIAN%-*}
	src=$cache/build-pg18
	log=$cache/pg18-$PGENV_PG18_DEBIAN.build.log
	rm -rf "$src" "$prefix"
	echo "PostgreSQL $up: building from Debian's source package postgresql-18 $PGENV_PG18_DEBIAN into $prefix (log $log)"
	if ! pgenv_apt_fetch "$src" source postgresql-18 "$PGENV_PG18_DEBIAN"; then
		pgenv_cache_unlock
		return 1
	fi
	if ! (
		set -e
		cd "$src"
		tar -xjf "postgresql-18_$up.orig.tar.bz2"
		cd "postgresql-$up"
		# no ICU, no readline: nothing here needs them, and fewer packages
		./configure --prefix="$prefix" --enable-tap-tests --without-icu --without-readline
		make -j2
		make -j2 -C contrib
		make install
		make -C contrib install
		# pg_isolation_regress and the TAP modules into the pgxs tree
		make -C src/test/isolation install
		make -C src/test/perl install
	) >"$log" 2>&1; then
		echo "pgenv: building PostgreSQL $up failed; the end of $log:" >&2
		tail -n 30 "$log" >&2
		rm -rf "$prefix"
		pgenv_cache_unlock
		return 1
	fi
	rm -rf "$src"
	echo "$up built in $(($(date +%s) - t0)) s" >"$prefix/.complete"
	echo "PostgreSQL $up built and installed in $(($(date +%s) - t0)) s"
	pgenv_cache_unlock
}

# pgvector from Debian's source package, built against one installation
# (pgenv_pgvector TAG PG_CONFIG) and installed into a stage directory
# (DESTDIR) in the cache, from which pgenv_private_install copies it.
# Sets PGENV_PGVECTOR_STAGE; a build that failed is remembered (.failed,
# with its log) and not tried again.
pgenv_pgvector() {
	local tag=$1 pgconfig=$2 cache base stage src up log
	cache=$(pgenv_cache_dir) || return 1
	base=$cache/pgvector-$PGENV_PGVECTOR_DEBIAN
	stage=$base/$tag
	PGENV_PGVECTOR_STAGE=$stage
	[ -f "$stage/.complete" ] && return 0
	[ -f "$stage.failed" ] && return 1
	pgenv_cache_lock || return 1
	if [ -f "$stage/.complete" ]; then pgenv_cache_unlock; return 0; fi
	up=${PGENV_PGVECTOR_DEBIAN%-*}
	src=$base/src
	log=$stage.build.log
	if [ ! -f "$src/pgvector_$up.orig.tar.gz" ]; then
		rm -rf "$src"
		pgenv_apt_fetch "$src" source pgvector "$PGENV_PGVECTOR_DEBIAN" || { pgenv_cache_unlock; return 1; }
	fi
	rm -rf "$stage" "$src/pgvector-$up"
	echo "pgvector $up: building from Debian's source package for $tag"
	# OPTFLAGS= as Debian builds it (no -march=native); no JIT bitcode
	if (
		set -e
		cd "$src"
		tar -xzf "pgvector_$up.orig.tar.gz"
		make -C "pgvector-$up" -j2 PG_CONFIG="$pgconfig" OPTFLAGS= with_llvm=no
		make -C "pgvector-$up" install PG_CONFIG="$pgconfig" OPTFLAGS= with_llvm=no DESTDIR="$stage"
	) >"$log" 2>&1; then
		touch "$stage/.complete"
		rm -rf "$src/pgvector-$up"
		pgenv_cache_unlock
		return 0
	fi
	rm -rf "$stage" "$src/pgvector-$up"
	mv "$log" "$stage.failed"
	echo "pgvector $up does not build for $tag (log: $stage.failed)"
	pgenv_cache_unlock
	return 1
}

# What PGMAJOR needs before pgenv_private_install.
pgenv_server_packages() {
	case $PGMAJOR in
	18) pgenv_packages make gcc libc6-dev perl bzip2 bison flex zlib1g-dev libipc-run-perl ;;
	*) pgenv_packages postgresql-$PGMAJOR postgresql-server-dev-$PGMAJOR ;;
	esac
}

# PostgreSQL finds its share and lib directories relative to its own
# binaries, so a copy of the installation under DIR works on its own: we
# install the extension there and never write into /usr or the cache.
# Each file keeps its path under DIR (DIR/usr/lib/postgresql/15/...,
# DIR/var/cache/sparsevec/pg18-.../...), so pgvector's stage (a DESTDIR
# install) is copied over it as it is.
pgenv_private_install() {
	local root=$1 pgvtag= sys_pgconfig
	case $PGMAJOR in
	18)
		pgenv_pg18 || return 1
		mkdir -p "$root$PG18_PREFIX"
		cp -a "$PG18_PREFIX/." "$root$PG18_PREFIX/"
		PGBIN=$root$PG18_PREFIX/bin
		sys_pgconfig=$PG18_PREFIX/bin/pg_config
		pgvtag=pg18-$PGENV_PG18_DEBIAN
		;;
	*)
		mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/usr/include/postgresql"
		cp -a "/usr/lib/postgresql/$PGMAJOR" "$root/usr/lib/postgresql/"
		cp -a "/usr/share/postgresql/$PGMAJOR" "$root/usr/share/postgresql/"
		cp -a "/usr/include/postgresql/$PGMAJOR" "$root/usr/include/postgresql/"
		PGBIN=$root/usr/lib/postgresql/$PGMAJOR/bin
		sys_pgconfig=/usr/lib/postgresql/$PGMAJOR/bin/pg_config
		pgvtag=pg$PGMAJOR
		;;
	esac
	PGENV_PGVECTOR=
	if [ "${PGENV_NO_PGVECTOR:-0}" != 1 ] && pgenv_pgvector "$pgvtag" "$sys_pgconfig"; then
		(cd "$PGENV_PGVECTOR_STAGE" && tar --exclude=./.complete -cf - .) | tar -xf - -C "$root"
		PGENV_PGVECTOR=${PGENV_PGVECTOR_DEBIAN%-*}
	fi
	rm -f "$root/.complete"
	PG_CONFIG=$PGBIN/pg_config
	PATH="$PGBIN:$PATH"
	export PATH
}

# PostgreSQL 17's server headers from the binary package
# postgresql-server-dev-17 (trixie), unpacked with dpkg -x into the cache
# (its pg_config and pgxs files are not in it, and its binaries cannot
# run here).  Sets PG17_INCLUDE (the include/postgresql/17 directory).
pgenv_pg17_headers() {
	local cache dir deb
	cache=$(pgenv_cache_dir) || return 1
	dir=$cache/pg17-dev-$PGENV_PG17DEV_DEBIAN
	PG17_INCLUDE=$dir/usr/include/postgresql/17
	[ -f "$dir/.complete" ] && return 0
	pgenv_cache_lock || return 1
	if [ ! -f "$dir/.complete" ]; then
		rm -rf "$dir"
		if ! pgenv_apt_fetch "$dir.deb" download postgresql-server-dev-17 "$PGENV_PG17DEV_DEBIAN"; then
			pgenv_cache_unlock
			return 1
		fi
		deb=$(ls "$dir.deb"/postgresql-server-dev-17_*.deb)
		dpkg -x "$deb" "$dir" && rm -rf "$dir.deb" && touch "$dir/.complete"
	fi
	pgenv_cache_unlock
	[ -f "$dir/.complete" ]
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
