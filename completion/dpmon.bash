# SPDX-License-Identifier: BSD-3-Clause
# bash completion for dpmon, dpmon-gen and dpmonctl. Installed once per
# command name (bash-completion loads completions/NAME for NAME); plain
# bash (compgen), no helper of the bash-completion package needed.
# tests/integration/test_completion.py keeps the option lists equal to
# each program's --help.

# _dpmon_reply WORDS: complete the current word from WORDS.
_dpmon_reply()
{
	COMPREPLY=($(compgen -W "$1" -- "${COMP_WORDS[COMP_CWORD]}"))
}

# _dpmon_files [GLOB]: complete file names (and directories).
_dpmon_files()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	compopt -o filenames 2>/dev/null
	if [ -n "$1" ]; then
		COMPREPLY=($(compgen -f -X "!$1" -- "$cur") $(compgen -d -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}

_dpmon()
{
	local prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	--config | --check-config) _dpmon_files '*.json'; return ;;
	--http-port-file) _dpmon_files; return ;;
	--print-schema) _dpmon_reply "clickhouse"; return ;;
	--http-port | --duration | --cluster) COMPREPLY=(); return ;;
	esac
	_dpmon_reply "--config --http-port --http-port-file --duration --check-config
		--print-schema --cluster --version --help"
}

_dpmon_gen()
{
	local prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	-o | --output) _dpmon_files '*.pcap'; return ;;
	--profile) _dpmon_files; return ;;
	--labels) _dpmon_files; return ;;
	--attack) _dpmon_reply "dns-amp ntp-amp memcached syn frag ack udp-syn one-source
		spoofed"; return ;;
	--summary) _dpmon_reply "text json"; return ;;
	--size) _dpmon_reply "imix"; return ;;
	--mix) _dpmon_reply "tcp=40,udp=50,icmp=10,other=0"; return ;;
	-s | --subnet | --hosts | -n | --packets | --egress-percent | --internal-percent | \
		--peers | --vlan | --seed | --victim | --legit-percent) COMPREPLY=(); return ;;
	esac
	_dpmon_reply "-o --output -s --subnet --hosts -n --packets --mix --size
		--egress-percent --internal-percent --peers --vlan --seed --summary --profile
		--attack --victim --legit-percent --labels -h --help -V --version"
}

_dpmonctl()
{
	local prev=${COMP_WORDS[COMP_CWORD-1]} cur=${COMP_WORDS[COMP_CWORD]}
	local commands="summary top host subnets alerts blackhole flowspec health reload"
	local options="--url --token-file --cacert -o --output --watch --sort --direction
		--subnet -n --limit --active --pid-file --unit --source --protocol --source-ports
		--destination-ports --packet-length --tcp-flags --fragment --icmp-type --icmp-code
		--action -h --help -V --version"
	local i cmd="" sub=""

	case $prev in
	--token-file | --cacert | --pid-file) _dpmon_files; return ;;
	-o | --output) _dpmon_reply "table json"; return ;;
	--sort) _dpmon_reply "pps bps packets bytes avg_pps avg_bps syn_pps fragments_pps
			tcp_pps tcp_bps udp_pps udp_bps icmp_pps icmp_bps flows peers"; return ;;
	--direction) _dpmon_reply "ingress egress"; return ;;
	--url) _dpmon_reply "http://127.0.0.1:8080"; return ;;
	--unit) _dpmon_reply "dpmon"; return ;;
	--protocol) _dpmon_reply "tcp udp icmp icmpv6"; return ;;
	--action) _dpmon_reply "discard rate-limit redirect mark"; return ;;
	--tcp-flags) _dpmon_reply "fin syn rst push ack urgent"; return ;;
	--subnet | -n | --limit | --watch | --source | --source-ports | --destination-ports | \
		--packet-length | --icmp-type | --icmp-code) COMPREPLY=(); return ;;
	esac
	# The command and its first word, skipping options and their values.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--url | --token-file | --cacert | -o | --output | --sort | --direction | \
			--subnet | -n | --limit | --pid-file | --unit | --source | --protocol | \
			--source-ports | --destination-ports | --packet-length | --tcp-flags | \
			--icmp-type | --icmp-code | --action) ((i++)) ;;
		-*) ;;
		*) if [ -z "$cmd" ]; then cmd=${COMP_WORDS[i]}; elif [ -z "$sub" ]; then
			sub=${COMP_WORDS[i]}; fi ;;
		esac
	done
	if [[ $cur == -* ]]; then
		_dpmon_reply "$options"
	elif [ -z "$cmd" ]; then
		_dpmon_reply "$commands"
	elif [ "$cmd" = blackhole ] && [ -z "$sub" ]; then
		_dpmon_reply "list add del"
	elif [ "$cmd" = flowspec ] && [ -z "$sub" ]; then
		_dpmon_reply "list add del"
	else
		COMPREPLY=()
	fi
}

complete -F _dpmon dpmon
complete -F _dpmon_gen dpmon-gen
complete -F _dpmonctl dpmonctl
