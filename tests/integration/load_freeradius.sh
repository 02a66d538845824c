# Sourced by tests/integration/test_load.sh and bench/gateway.sh: a
# FreeRADIUS 3.2 (Debian `freeradius`) configuration directory of its own,
# for EAP-SIM with COMP128 vectors from the users file (EAP-Sim-Ki, EAP-Sim-Algo-Version):
#   - radiusd.conf: loopback listen on PORT, one client 127.0.0.1 with
#     SECRET, logs to stderr, modules eap (default_eap_type = sim) and
#     files, a default server whose authorize runs files then eap;
#   - users: per subscriber of the twag CSV whose algo is comp128v1..v3
#     "1<IMSI>@REALM  EAP-Sim-Ki := 0x<KI>, EAP-Sim-Algo-Version := <v>".
#
# load_fr_config DIR CSV PORT SECRET REALM [THREADS]
load_fr_config() {
	local dir=$1 csv=$2 port=$3 secret=$4 realm=$5 threads=${6:-2}
	mkdir -p "$dir/log" "$dir/run" "$dir/mods-config/files" || return 1
	: >"$dir/dictionary"
	cat >"$dir/radiusd.conf" <<EOF
prefix = /usr
exec_prefix = /usr
sysconfdir = /etc
localstatedir = /var
sbindir = /usr/sbin
logdir = $dir/log
raddbdir = $dir
radacctdir = $dir/log
name = freeradius
confdir = \${raddbdir}
modconfdir = \${confdir}/mods-config
run_dir = $dir/run
db_dir = $dir
libdir = /usr/lib/freeradius
pidfile = \${run_dir}/\${name}.pid
max_request_time = 30
cleanup_delay = 5
max_requests = 1048576
hostname_lookups = no
log {
	destination = stderr
	colourise = no
	stripped_names = no
	auth = no
}
security {
	allow_core_dumps = no
	max_attributes = 200
	reject_delay = 0
	status_server = yes
}
thread pool {
	start_servers = $threads
	max_servers = $threads
	min_spare_servers = 1
	max_spare_servers = $threads
	max_queue_size = 65536
	max_requests_per_server = 0
}
client local {
	ipaddr = 127.0.0.1
	secret = $secret
	require_message_authenticator = yes
}
modules {
	files {
		moddir = \${modconfdir}/files
		filename = \${moddir}/authorize
	}
	eap {
		default_eap_type = sim
		timer_expire = 60
		ignore_unknown_eap_types = no
		max_sessions = 65536
		sim {
		}
	}
}
server default {
	listen {
		type = auth
		ipaddr = 127.0.0.1
		port = $port
	}
	authorize {
		files
		eap {
			ok = return
		}
	}
	authenticate {
		eap
	}
}
EOF
	# COMP128 subscribers of the CSV (header imsi,algo,ki,...)
	awk -F, -v realm="$realm" '
		NR == 1 && $1 == "imsi" { next }
		$2 ~ /^comp128v[123]$/ {
			v = substr($2, 9, 1)
			id = "1" $1 (realm != "" ? "@" realm : "")
			printf "\"%s\"\tEAP-Sim-Ki := 0x%s, EAP-Sim-Algo-Version := %s\n\n", id, $3, v
		}' "$csv" >"$dir/mods-config/files/authorize" || return 1
	chmod -R go-rwx "$dir"
}

# load_fr_start DIR LOGFILE: starts freeradius in the foreground (in the
# background of the shell); sets FR_PID; waits until it is ready.
load_fr_start() {
	local dir=$1 log=$2 i
	freeradius -f -d "$dir" >"$log" 2>&1 &
	FR_PID=$!
	for i in $(seq 1 100); do
		grep -q "Ready to process requests" "$log" 2>/dev/null && return 0
		kill -0 "$FR_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
