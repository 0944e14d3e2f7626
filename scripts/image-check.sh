#!/usr/bin/env bash
# The Docker image's runtime stage, checked without a Docker engine (issue 52).
#
# Builds the runtime stage's root filesystem from Debian packages (debootstrap
# --variant=minbase of the suite the stage's FROM names), runs the stage's own
# instructions in it as the Dockerfile writes them (RUN in a chroot with /bin/sh -c,
# COPY, USER, WORKDIR, ENV: read from the Dockerfile, so the two cannot drift),
# then starts ENTRYPOINT + CMD as the image's user in a network, mount and PID
# namespace of its own and checks:
#   - the user and group are 10001, the state directory is 0700, owned by them, empty;
#   - the gateway runs as that user with no effective capability;
#   - the HEALTHCHECK command, as written, passes;
#   - a plain-http request through the proxy port reaches an origin in the namespace;
#   - `gateway ca export` prints the CA and keeps it in the state directory;
#   - an intercepted https request (CONNECT, TLS terminated with that CA) reaches an
#     https origin, with the image's config plus one intercepted upstream mounted
#     over /etc/gateway/gateway.yaml (as `docker run -v` would), state kept;
#   - the gateway stops on SIGTERM.
# The origins are the host's python3, started inside the namespace (the image has
# no python); every client is the image's own curl. Needs root, debootstrap (installed
# with apt-get when missing), unshare, chroot, openssl and python3 on the host.
#
#   scripts/image-check.sh                        # builds the release binary as the Dockerfile does
#   GATEWAY_BIN=path/to/gateway scripts/image-check.sh
# Environment: GATEWAY_BIN (a prebuilt release binary), IMAGE_CHECK_CACHE (root
# filesystems, default /var/tmp/gateway-image-check), IMAGE_CHECK_REFRESH=1 (debootstrap
# again), DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

SCRIPT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
ROOT=$(cd "$(dirname "$SCRIPT")/.." && pwd)
DOCKERFILE=$ROOT/Dockerfile
CACHE=${IMAGE_CHECK_CACHE:-/var/tmp/gateway-image-check}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What Docker puts in a container's environment before the image's ENV.
DEFAULT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The build stage's command; the Dockerfile must still say it (checked below).
BUILD_COMMAND=(swift build -c release --product gateway --static-swift-stdlib)

say() { printf '%s\n' "$*"; }
die() { printf 'image-check: %s\n' "$*" >&2; exit 2; }

# ---------------------------------------------------------------- the Dockerfile

# The Dockerfile's instructions, one a line: comments dropped, continuation lines
# joined (as Docker does: the backslash and newline go, indentation stays).
instructions() {
    awk '
        /^[[:space:]]*#/ { next }
        /^[[:space:]]*$/ { next }
        {
            line = $0
            if (line ~ /\\[[:space:]]*$/) { sub(/\\[[:space:]]*$/, "", line); buf = buf line; next }
            print buf line; buf = ""
        }
        END { if (buf != "") print buf }
    ' "$DOCKERFILE"
}

# The runtime stage: the instructions from the last FROM on.
STAGE=()
load_stage() {
    local all=() i last=-1
    mapfile -t all < <(instructions)
    for i in "${!all[@]}"; do
        [[ ${all[i]} =~ ^[[:space:]]*[Ff][Rr][Oo][Mm][[:space:]] ]] && last=$i
    done
    ((last >= 0)) || die "no FROM in $DOCKERFILE"
    STAGE=("${all[@]:last}")
}

keyword() { local w; read -r w _ <<<"$1"; printf '%s' "${w^^}"; }
arguments() { local _w rest; read -r _w rest <<<"$1"; printf '%s' "$rest"; }

# `["a", "b"]` -> one word a line (exec form without escapes only).
exec_form() {
    local text=$1
    [[ $text =~ ^\[.*\]$ && $text != *\\* ]] || die "only the exec form without escapes is supported: $text"
    text=${text#[}; text=${text%]}
    local IFS=,
    local word
    for word in $text; do
        word=${word#"${word%%[![:space:]]*}"}; word=${word%"${word##*[![:space:]]}"}
        [[ $word =~ ^\"(.*)\"$ ]] || die "not a JSON string: $word"
        printf '%s\n' "${BASH_REMATCH[1]}"
    done
}

# The Debian suite of `FROM debian:<suite>-slim` (or debian:<suite>).
stage_suite() {
    local from image
    from=$(arguments "${STAGE[0]}")
    read -r image _ <<<"$from"
    [[ $image =~ ^(docker\.io/)?(library/)?debian:([a-z]+)(-slim)?$ ]] \
        || die "the runtime stage is FROM $image: only debian:<suite>[-slim] can be built with debootstrap"
    printf '%s' "${BASH_REMATCH[3]}"
}

# The instructions before the first COPY: what the cached stage root holds.
cached_prefix_length() {
    local i
    for i in "${!STAGE[@]}"; do
        [[ $(keyword "${STAGE[i]}") == COPY ]] && { printf '%s' "$i"; return; }
    done
    printf '%s' "${#STAGE[@]}"
}

# ---------------------------------------------------------------- applying instructions

# State while the stage's instructions are applied.
CUR_USER=root
CUR_WORKDIR=/
ENV_VARS=("PATH=$DEFAULT_PATH")
HEALTH_CMD=
HEALTH_OPTS=
ENTRYPOINT=()
CMD=()

set_env() {
    local assignment=$1 name=${1%%=*} i
    for i in "${!ENV_VARS[@]}"; do
        [[ ${ENV_VARS[i]%%=*} == "$name" ]] && { ENV_VARS[i]=$assignment; return; }
    done
    ENV_VARS+=("$assignment")
}

env_value() {
    local name=$1 assignment
    for assignment in "${ENV_VARS[@]}"; do
        [[ ${assignment%%=*} == "$name" ]] && { printf '%s' "${assignment#*=}"; return 0; }
    done
    return 0
}

# uid:gid and the supplementary groups of USER, looked up in the image.
user_ids() {
    local rootfs=$1 user=$2 uid gid groups
    if [[ $user =~ ^[0-9]+(:[0-9]+)?$ ]]; then
        uid=${user%%:*}; gid=${user#*:}; [[ $user == *:* ]] || gid=$uid; groups=$gid
    else
        uid=$(chroot "$rootfs" /usr/bin/id -u "$user") || die "USER $user: no such user in the image"
        gid=$(chroot "$rootfs" /usr/bin/id -g "$user")
        groups=$(chroot "$rootfs" /usr/bin/id -G "$user")
    fi
    printf '%s %s %s\n' "$uid" "$gid" "${groups// /,}"
}

# The command line that runs a command in the image as a user, with the
# container's environment (chroot and env exec, so it keeps its pid): IMG_CMD.
# image_command ROOTFS USER WORKDIR command...
IMG_CMD=()
image_command() {
    local rootfs=$1 user=$2 workdir=$3 uid gid groups home
    shift 3
    read -r uid gid groups < <(user_ids "$rootfs" "$user")
    home=$(chroot "$rootfs" /usr/bin/getent passwd "$uid" | cut -d: -f6) || true
    IMG_CMD=(chroot --userspec="$uid:$gid" --groups="$groups" "$rootfs"
        /usr/bin/env -i -C "$workdir" "HOSTNAME=gateway-check" "HOME=${home:-/}" "${ENV_VARS[@]}" "$@")
}
in_image() {
    image_command "$@"
    "${IMG_CMD[@]}"
}

# apply ROOTFS MODE INSTRUCTION: MODE build changes the root filesystem; MODE replay
# only records the state (the cached root already has the changes).
apply() {
    local rootfs=$1 mode=$2 line=$3 kw args
    kw=$(keyword "$line")
    args=$(arguments "$line")
    case $kw in
    FROM | LABEL | EXPOSE | ARG) ;;
    RUN)
        [[ $args != \[* ]] || die "RUN in exec form is not supported: $args"
        [[ $mode == replay ]] && return
        say "  RUN $args"
        in_image "$rootfs" "$CUR_USER" "$CUR_WORKDIR" /bin/sh -c "$args"
        ;;
    COPY)
        local words=() src dest from=
        read -r -a words <<<"$args"
        [[ ${words[0]} == --from=* ]] && { from=${words[0]#--from=}; words=("${words[@]:1}"); }
        ((${#words[@]} == 2)) || die "COPY of one file only: $args"
        dest=${words[1]}
        [[ $dest == /* && $dest != */ ]] || die "COPY to an absolute file path only: $args"
        if [[ -n $from ]]; then
            # The build stage's output is the release binary built on this host.
            [[ ${words[0]} == /out/gateway ]] || die "COPY --from=$from ${words[0]}: only /out/gateway is known"
            src=$GATEWAY_BIN
        else
            src=$ROOT/${words[0]}
        fi
        [[ -f $src ]] || die "COPY: $src is not a file"
        [[ $mode == replay ]] && die "COPY before the cached prefix ends: $args"
        say "  COPY $src -> $dest"
        mkdir -p "$rootfs$(dirname "$dest")"
        cp "$src" "$rootfs$dest"
        chown 0:0 "$rootfs$dest"
        ;;
    USER) CUR_USER=$args ;;
    WORKDIR)
        [[ $args == /* ]] || args=$CUR_WORKDIR/$args
        CUR_WORKDIR=$args
        if [[ $mode == build && ! -d $rootfs$args ]]; then mkdir -p "$rootfs$args"; fi
        ;;
    ENV)
        local assignment
        for assignment in $args; do
            [[ $assignment == *=* && $assignment != *[\"\'\$]* ]] || die "ENV name=value without quotes only: $args"
            set_env "$assignment"
        done
        ;;
    HEALTHCHECK)
        [[ $args =~ ^(.*)[[:space:]]CMD[[:space:]]+(.*)$ ]] || die "HEALTHCHECK without CMD: $args"
        HEALTH_OPTS=${BASH_REMATCH[1]}
        HEALTH_CMD=${BASH_REMATCH[2]}
        [[ $HEALTH_CMD != \[* ]] || die "HEALTHCHECK CMD in exec form is not supported"
        ;;
    ENTRYPOINT) mapfile -t ENTRYPOINT < <(exec_form "$args") ;;
    CMD) mapfile -t CMD < <(exec_form "$args") ;;
    *) die "unsupported instruction in the runtime stage: $kw" ;;
    esac
}

# A HEALTHCHECK option's value in seconds (--interval=10s).
health_option() {
    local name=$1 default=$2 value
    value=$(grep -o -- "--$name=[0-9]*" <<<"$HEALTH_OPTS" | cut -d= -f2) || true
    printf '%s' "${value:-$default}"
}

# ---------------------------------------------------------------- phase: build the stage root

# Mounts what a RUN step sees (inside a private mount namespace: they go with it).
mount_runtime() {
    local rootfs=$1
    mount -t proc proc "$rootfs/proc"
    mount -t sysfs -o ro sysfs "$rootfs/sys" 2>/dev/null || true
    mount -t tmpfs -o mode=0755,nosuid dev "$rootfs/dev"
    local node
    for node in null zero full random urandom tty; do
        touch "$rootfs/dev/$node"
        mount --bind "/dev/$node" "$rootfs/dev/$node"
    done
    mkdir -p "$rootfs/dev/pts" "$rootfs/dev/shm"
    mount -t tmpfs -o mode=1777,nosuid,nodev shm "$rootfs/dev/shm"
    ln -s /proc/self/fd "$rootfs/dev/fd"
    ln -s /proc/self/fd/0 "$rootfs/dev/stdin"
    ln -s /proc/self/fd/1 "$rootfs/dev/stdout"
    ln -s /proc/self/fd/2 "$rootfs/dev/stderr"
}

phase_stage() {
    local rootfs=$1 count=$2 i
    load_stage
    mount_runtime "$rootfs"
    # A RUN step resolves names as the build host does (Docker copies its resolv.conf too).
    cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"
    for ((i = 0; i < count; i++)); do
        apply "$rootfs" build "${STAGE[i]}"
    done
}

# ---------------------------------------------------------------- phase: run and check

FAILURES=0
pass() { say "PASS  $1${2:+: $2}"; }
fail() { say "FAIL  $1${2:+: $2}"; FAILURES=$((FAILURES + 1)); }

PIDS=()
stop_all() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    PIDS=()
}

# The origins: plain http on 127.0.0.1:8000, https on 127.0.0.1:443 (certificate for
# localhost and 127.0.0.1 from its own CA); each answers 200 "origin <scheme> <path>".
start_origins() {
    local dir=$1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=image-check origin CA" -keyout "$dir/origin-ca-key.pem" -out "$dir/origin-ca.pem" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -subj "/CN=localhost" -keyout "$dir/origin-key.pem" -out "$dir/origin.csr" 2>/dev/null
    printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "extendedKeyUsage=serverAuth" \
        "basicConstraints=critical,CA:FALSE" >"$dir/origin.ext"
    openssl x509 -req -in "$dir/origin.csr" -CA "$dir/origin-ca.pem" -CAkey "$dir/origin-ca-key.pem" \
        -CAcreateserial -days 2 -extfile "$dir/origin.ext" -out "$dir/origin.pem" 2>/dev/null
    python3 - "$dir" >"$dir/origin.log" 2>&1 <<'PY' &
import http.server, ssl, sys, threading
d = sys.argv[1]
class Handler(http.server.BaseHTTPRequestHandler):
    scheme = "http"
    def do_GET(self):
        body = f"origin {self.scheme} {self.path} via={self.headers.get('Via', '-')}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
class TLSHandler(Handler):
    scheme = "https"
plain = http.server.ThreadingHTTPServer(("127.0.0.1", 8000), Handler)
tls = http.server.ThreadingHTTPServer(("127.0.0.1", 443), TLSHandler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(f"{d}/origin.pem", f"{d}/origin-key.pem")
tls.socket = context.wrap_socket(tls.socket, server_side=True)
threading.Thread(target=plain.serve_forever, daemon=True).start()
print("origins ready", flush=True)
tls.serve_forever()
PY
    PIDS+=($!)
    local _
    for _ in $(seq 50); do
        grep -q "origins ready" "$dir/origin.log" && return 0
        sleep 0.1
    done
    cat "$dir/origin.log" >&2
    die "the origins did not start"
}

# Starts ENTRYPOINT + CMD as the image's user; sets GATEWAY_PID.
GATEWAY_PID=
start_gateway() {
    local rootfs=$1 log=$2
    image_command "$rootfs" "$CUR_USER" "$CUR_WORKDIR" "${ENTRYPOINT[@]}" "${CMD[@]}"
    "${IMG_CMD[@]}" >"$log" 2>&1 &
    GATEWAY_PID=$!
    PIDS+=("$GATEWAY_PID")
}

# The gateway process itself (chroot and env exec into it, so it keeps the pid).
process_status() { { grep -E "^$2:" "/proc/$1/status" 2>/dev/null || true; } | cut -f2- | tr "\t" " "; }

# Runs the HEALTHCHECK as Docker would (as the image's user, /bin/sh -c, --timeout),
# every half second until it passes or start-period + retries x interval run out.
wait_healthy() {
    local rootfs=$1 timeout interval retries start deadline started now
    timeout=$(health_option timeout 30)
    interval=$(health_option interval 30)
    retries=$(health_option retries 3)
    start=$(health_option start-period 0)
    started=$(date +%s%N)
    deadline=$((started / 1000000000 + start + retries * interval))
    image_command "$rootfs" "$CUR_USER" "$CUR_WORKDIR" /bin/sh -c "$HEALTH_CMD"
    while :; do
        if HEALTH_OUT=$(timeout "$timeout" "${IMG_CMD[@]}" 2>&1); then
            now=$(date +%s%N)
            HEALTH_MS=$(((now - started) / 1000000))
            return 0
        fi
        (($(date +%s) < deadline)) || return 1
        kill -0 "$GATEWAY_PID" 2>/dev/null || return 1
        sleep 0.5
    done
}

# docker stop: SIGTERM, then 10 s. Returns the gateway's exit status.
stop_gateway() {
    local _ status=0
    kill -TERM "$GATEWAY_PID" 2>/dev/null || return 1
    for _ in $(seq 100); do
        if ! kill -0 "$GATEWAY_PID" 2>/dev/null; then
            wait "$GATEWAY_PID" || status=$?
            return "$status"
        fi
        sleep 0.1
    done
    return 1
}

phase_run() {
    local stage=$1 run=$2 prefix rootfs i
    load_stage
    prefix=$(cached_prefix_length)
    ip link set lo up
    hostname gateway-check  # the UTS namespace's own

    # The container's root: the cached stage root below, this run's changes above.
    rootfs=$run/root
    mkdir -p "$rootfs" "$run/upper" "$run/work"
    mount -t overlay overlay -o "lowerdir=$stage,upperdir=$run/upper,workdir=$run/work" "$rootfs"
    mount_runtime "$rootfs"
    # What Docker writes into every container.
    printf '%s\n' "127.0.0.1	localhost" "::1	localhost ip6-localhost ip6-loopback" \
        "127.0.1.1	gateway-check" >"$rootfs/etc/hosts"
    printf '%s\n' gateway-check >"$rootfs/etc/hostname"
    : >"$rootfs/etc/resolv.conf"

    say "== the runtime stage (cached root: $stage)"
    for ((i = 0; i < ${#STAGE[@]}; i++)); do
        if ((i < prefix)); then apply "$rootfs" replay "${STAGE[i]}"; else apply "$rootfs" build "${STAGE[i]}"; fi
    done
    ((${#ENTRYPOINT[@]} > 0)) || die "no ENTRYPOINT"
    [[ -n $HEALTH_CMD ]] || die "no HEALTHCHECK"
    say "  USER $CUR_USER, WORKDIR $CUR_WORKDIR, ENV ${ENV_VARS[*]}"
    say "  ENTRYPOINT ${ENTRYPOINT[*]} CMD ${CMD[*]}"
    say "  HEALTHCHECK $HEALTH_OPTS CMD $HEALTH_CMD"
    say "== checks"

    # The image's user, its group and its state directory.
    local uid gid groups passwd state config
    read -r uid gid groups < <(user_ids "$rootfs" "$CUR_USER")
    passwd=$(chroot "$rootfs" /usr/bin/getent passwd "$CUR_USER" || true)
    if [[ $uid == 10001 && $gid == 10001 && $groups == 10001 ]]; then
        pass "user" "$passwd; group $(chroot "$rootfs" /usr/bin/getent group "$gid")"
    else
        fail "user" "uid $uid gid $gid groups $groups, want 10001 10001 10001 ($passwd)"
    fi
    config=$(env_value GATEWAY_CONFIG)
    state=$(awk '/^state_dir:/ { print $2 }' "$rootfs$config")
    [[ -n $state ]] || state=$CUR_WORKDIR
    local listing
    listing=$(find "$rootfs$state" -mindepth 1 -printf '%P ' 2>/dev/null)
    local mode
    mode=$(stat -c '%a %u:%g' "$rootfs$state" 2>/dev/null || echo missing)
    if [[ $mode == "700 $uid:$gid" && -z $listing ]]; then
        pass "state directory" "$state mode 0700, owner $uid:$gid, empty (no skeleton files)"
    else
        fail "state directory" "$state: mode/owner $mode (want 700 $uid:$gid), contents: ${listing:-none}"
    fi
    if [[ $CUR_WORKDIR == "$state" ]]; then pass "workdir" "$CUR_WORKDIR is the config's state_dir"
    else fail "workdir" "WORKDIR $CUR_WORKDIR, state_dir $state"; fi

    start_origins "$run"

    # First run: the image as built, its baked config.
    start_gateway "$rootfs" "$run/gateway.log"
    local caps uids gids exe
    sleep 0.3
    caps=$(process_status "$GATEWAY_PID" CapEff)
    uids=$(process_status "$GATEWAY_PID" Uid)
    gids=$(process_status "$GATEWAY_PID" Gid)
    exe=$(readlink "/proc/$GATEWAY_PID/exe" || true)
    if [[ -z $uids ]]; then
        fail "process" "the gateway exited at once: $(head -c 2000 "$run/gateway.log")"
    elif [[ $uids == "$uid $uid $uid $uid" && $gids == "$gid $gid $gid $gid" && $caps == 0000000000000000 ]]; then
        pass "process" "$exe as uid $uid gid $gid groups $(process_status "$GATEWAY_PID" Groups | xargs), CapEff $caps"
    else
        fail "process" "$exe: Uid $uids Gid $gids CapEff $caps"
    fi
    HEALTH_OUT='' HEALTH_MS=''
    if wait_healthy "$rootfs"; then
        pass "HEALTHCHECK" "'$HEALTH_CMD' passed ${HEALTH_MS} ms after start: $HEALTH_OUT"
    else
        fail "HEALTHCHECK" "'$HEALTH_CMD' did not pass: $HEALTH_OUT"
        sed 's/^/    gateway: /' "$run/gateway.log"
    fi

    local out
    if out=$(in_image "$rootfs" "$CUR_USER" "$CUR_WORKDIR" /usr/bin/curl -sS --max-time 10 \
        -x http://127.0.0.1:8080 http://127.0.0.1:8000/plain?n=1 2>&1) && [[ $out == "origin http /plain?n=1 via="* && $out != *"via=-"* ]]; then
        pass "proxied http" "curl -x http://127.0.0.1:8080 http://127.0.0.1:8000/plain?n=1 -> $out"
    else
        fail "proxied http" "$out"
    fi

    local pem export_err
    if pem=$(in_image "$rootfs" "$CUR_USER" "$CUR_WORKDIR" "${ENTRYPOINT[@]}" ca export 2>"$run/ca-export.err") \
        && [[ $pem == "-----BEGIN CERTIFICATE-----"* ]] && printf '%s\n' "$pem" >"$run/ca.pem" \
        && openssl x509 -in "$run/ca.pem" -noout 2>/dev/null; then
        export_err=$(head -c 300 "$run/ca-export.err" | tr '\n' ' ')
        pass "ca export" "$(openssl x509 -in "$run/ca.pem" -noout -subject) ($(wc -c <"$run/ca.pem") bytes on stdout); stderr: ${export_err}..."
    else
        fail "ca export" "exit or output wrong: $(head -c 300 "$run/ca-export.err")"
    fi
    local files
    files=$(cd "$rootfs$state" && stat -c '%n %a %u:%g' ca.pem ca-key.pem 2>&1 | tr '\n' ';') || true
    if [[ $files == "ca.pem "*" $uid:$gid;ca-key.pem 600 $uid:$gid;" ]]; then
        pass "CA files" "$state: $files"
    else
        fail "CA files" "$state: $files"
    fi

    if stop_gateway; then pass "SIGTERM" "the gateway exited 0"; else fail "SIGTERM" "it did not exit 0 within 10 s"; fi

    # Second run: the image's config plus an intercepted upstream, mounted over the
    # baked one as `docker run -v my.yaml:/etc/gateway/gateway.yaml:ro` would; the
    # state directory (the CA) is the first run's, as a volume keeps it.
    grep -q '^upstreams:' "$rootfs$config" && die "$config already has upstreams: cannot append the intercepted one"
    cp "$run/origin-ca.pem" "$rootfs/etc/gateway/check-origin-ca.pem"
    {
        cat "$ROOT/config/docker.yaml"
        printf '%s\n' "# added by scripts/image-check.sh" "upstreams:" "  - name: origin" "    hosts: [localhost]" \
            "    intercept: true" "    tls:" "      ca_file: /etc/gateway/check-origin-ca.pem"
    } >"$run/intercept.yaml"
    mount --bind -o ro "$run/intercept.yaml" "$rootfs$config"
    start_gateway "$rootfs" "$run/gateway-intercept.log"
    if ! wait_healthy "$rootfs"; then
        fail "HEALTHCHECK (intercepting config)" "$HEALTH_OUT"
        sed 's/^/    gateway: /' "$run/gateway-intercept.log"
    fi
    cp "$run/ca.pem" "$rootfs/tmp/gateway-ca.pem" 2>/dev/null || : >"$rootfs/tmp/gateway-ca.pem"
    if out=$(in_image "$rootfs" "$CUR_USER" "$CUR_WORKDIR" /usr/bin/curl -sS -v --max-time 10 \
        --cacert /tmp/gateway-ca.pem -x http://127.0.0.1:8080 https://localhost/secure?n=2 2>"$run/curl-intercept.err") \
        && [[ $out == "origin https /secure?n=2 via="* && $out != *"via=-"* ]] \
        && grep -q "issuer:.*Gateway interception CA" "$run/curl-intercept.err"; then
        pass "intercepted https" "curl --cacert <ca export> -x http://127.0.0.1:8080 https://localhost/secure?n=2 -> $out; $(grep -m1 'issuer:' "$run/curl-intercept.err" | sed 's/^\* *//')"
    else
        fail "intercepted https" "$out $(grep -v '^[<>{}]' "$run/curl-intercept.err" | tail -n 8 | tr '\n' ' ')"
        sed 's/^/    gateway: /' "$run/gateway-intercept.log"
    fi
    stop_gateway || fail "SIGTERM (intercepting config)" "it did not exit 0 within 10 s"
    stop_all

    if ((FAILURES == 0)); then say "== all checks passed"; else say "== $FAILURES check(s) failed"; fi
    ((FAILURES == 0))
}

# ---------------------------------------------------------------- main

main() {
    [[ $(id -u) == 0 ]] || die "needs root (debootstrap, chroot, namespaces, mounts)"
    load_stage
    local suite prefix key base stage
    suite=$(stage_suite)
    prefix=$(cached_prefix_length)

    # The release binary, built as the Dockerfile's build stage builds it.
    grep -qF -- "RUN ${BUILD_COMMAND[*]}" "$DOCKERFILE" \
        || die "the Dockerfile's build stage no longer runs '${BUILD_COMMAND[*]}': update this script"
    if [[ -z ${GATEWAY_BIN:-} ]]; then
        say "== ${BUILD_COMMAND[*]}"
        (cd "$ROOT" && "${BUILD_COMMAND[@]}" 2>&1 | tail -n 3)
        GATEWAY_BIN=$(cd "$ROOT" && swift build -c release --show-bin-path)/gateway
    fi
    [[ -x $GATEWAY_BIN ]] || die "no gateway binary at $GATEWAY_BIN"
    GATEWAY_BIN=$(realpath "$GATEWAY_BIN")
    export GATEWAY_BIN
    say "== binary: $GATEWAY_BIN ($(stat -c %s "$GATEWAY_BIN") bytes, $(date -r "$GATEWAY_BIN" '+%F %T'))"

    mkdir -p "$CACHE"
    base=$CACHE/base-$suite
    if [[ ${IMAGE_CHECK_REFRESH:-} == 1 ]]; then rm -rf "$base" "$CACHE"/stage-*; fi
    if [[ ! -d $base ]]; then
        command -v debootstrap >/dev/null || {
            say "== apt-get install debootstrap"
            apt-get install -y --no-install-recommends debootstrap >/dev/null
        }
        say "== debootstrap --variant=minbase $suite $base"
        rm -rf "$base.tmp"
        debootstrap --variant=minbase "$suite" "$base.tmp" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
            || { tail -n 20 "$CACHE/debootstrap.log"; die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
        # The sources the official debian image lists (debootstrap writes only the suite).
        rm -f "$base.tmp/etc/apt/sources.list"
        printf '%s\n' "Types: deb" "URIs: $MIRROR" "Suites: $suite $suite-updates" "Components: main" \
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" "" \
            "Types: deb" "URIs: ${MIRROR%/debian}/debian-security" "Suites: $suite-security" "Components: main" \
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" >"$base.tmp/etc/apt/sources.list.d/debian.sources"
        rm -rf "$base.tmp/var/cache/apt/archives/"*.deb
        mv "$base.tmp" "$base"
    fi

    # The stage root: the base plus the instructions before the first COPY, cached by their text.
    key=$(printf '%s\n' "$suite" "$MIRROR" "${STAGE[@]:0:prefix}" | sha256sum | cut -c1-16)
    stage=$CACHE/stage-$key
    if [[ ! -d $stage ]]; then
        say "== the stage's first $prefix instructions on $base"
        rm -rf "$stage.tmp"
        cp -a "$base" "$stage.tmp"
        unshare --mount --propagation private "$BASH" "$SCRIPT" __stage "$stage.tmp" "$prefix" >"$CACHE/stage.log" 2>&1 \
            || { tail -n 20 "$CACHE/stage.log"; die "a RUN step failed (log: $CACHE/stage.log)"; }
        grep '^  RUN' "$CACHE/stage.log"
        rm -f "$stage.tmp/etc/resolv.conf"
        mv "$stage.tmp" "$stage"
        find "$CACHE" -maxdepth 1 -name 'stage-*' ! -name "stage-$key" -exec rm -rf {} +
    fi

    # This run: its own network, mount, PID and UTS namespaces (all mounts and
    # processes end with them); its overlay layers are removed afterwards.
    mkdir -p "$CACHE/runs"
    RUN_DIR=$(mktemp -d "$CACHE/runs/run.XXXXXX")
    trap 'cleanup_run' EXIT
    # Interrupted: the namespace's first process goes (SIGKILL: it is the PID namespace's
    # init), and every process and mount of the namespace with it.
    local status=0 unshare_pid
    unshare --net --mount --pid --uts --fork --mount-proc --propagation private \
        "$BASH" "$SCRIPT" __run "$stage" "$RUN_DIR" &
    unshare_pid=$!
    trap 'pkill -KILL -P "$unshare_pid" || true' INT TERM
    wait "$unshare_pid" || status=$?
    if ((status > 128)); then wait "$unshare_pid" 2>/dev/null || true; fi
    return "$status"
}

RUN_DIR=
cleanup_run() {
    [[ -n $RUN_DIR && -d $RUN_DIR ]] || return 0
    # Mounts lived in the run's own namespace; never delete through one that leaked.
    if findmnt -rn -o TARGET | grep -qF "$RUN_DIR"; then
        printf 'image-check: %s is still mounted; left in place\n' "$RUN_DIR" >&2
    else
        rm -rf "$RUN_DIR"
    fi
}

case ${1:-} in
__stage) shift; phase_stage "$@" ;;
__run)
    shift
    trap 'stop_all' EXIT
    phase_run "$@"
    ;;
*) main "$@" ;;
esac
