# SPDX-License-Identifier: MIT
# Bash completion of scope-run, scope-bench, scope-report, scope-merge, scope-symbolize and scope-writer.
#
# The options come from the command's own --help, so they are the ones of
# the installed version. Installed once per command under
# share/bash-completion/completions; sourcing it by hand works too.

# The long options of command $1, one a line.
_scope_options()
{
	"$1" --help 2>/dev/null | grep -oE -- '(^|[[:space:],])--[a-z][a-z0-9-]*' | grep -oE -- '--.*' | sort -u
}

# Whether option $2 of command $1 takes a value: its line of --help names one
# after the long option ("-o, --output FILE").
_scope_takes_value()
{
	"$1" --help 2>/dev/null | grep -E -- "^[[:space:]]+(-[a-zA-Z], )?$2[, ]" |
		grep -qE -- '--[a-z][a-z0-9-]* \[?[A-Z]'
}

_scope()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi
	local cmd=${words[0]} name=${words[0]##*/} i

	# scope-run, scope-bench: from the program on, the words are the program's
	if [[ $name == scope-run || $name == scope-bench ]]; then
		for ((i = 1; i < cword; i++)); do
			local w=${words[i]} before=${words[i - 1]}
			if [[ $w == -- ]]; then
				((i++))
			elif [[ $w == -* ]] || { ((i > 1)) && [[ $before == -* ]] &&
				_scope_takes_value "$cmd" "$before"; }; then
				continue
			fi
			if ((i == cword)); then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
			elif declare -F _command_offset >/dev/null; then
				_command_offset "$i"
			else
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			fi
			return
		done
	fi

	case $prev in
	--format) mapfile -t COMPREPLY < <(compgen -W 'text csv json' -- "$cur") && return ;;
	--sort) mapfile -t COMPREPLY < <(compgen -W 'self total calls mean min max std name' -- "$cur") && return ;;
	--compression) mapfile -t COMPREPLY < <(compgen -W 'auto none gzip gzip:1 gzip:4 gzip:9' -- "$cur") && return ;;
	-o | --output)
		if [[ $name == scope-bench ]]; then
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		return
		;;
	--stage | --bench) mapfile -t COMPREPLY < <(compgen -d -- "$cur") && return ;;
	--exe) mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u) && return ;;
	--parts | --otf2 | -d | --debug-dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur") && return ;;
	-*)
		if _scope_takes_value "$cmd" "$prev"; then
			COMPREPLY=()
			return
		fi
		;;
	esac

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_scope_options "$cmd")" -- "$cur")
		return
	fi
	case $name in
	scope-writer) mapfile -t COMPREPLY < <(compgen -f -X '!*.arena' -- "$cur"; compgen -d -- "$cur") ;;
	scope-run | scope-bench) mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u) ;;
	*) mapfile -t COMPREPLY < <(compgen -f -X '!*.h5' -- "$cur"; compgen -d -- "$cur") ;;
	esac
}

complete -F _scope scope-run scope-bench scope-report scope-merge scope-symbolize scope-writer
