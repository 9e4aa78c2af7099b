# SPDX-License-Identifier: Apache-2.0
# bash completion for srt(1): its options, file names for the options that take a file, example
# values for the limits, then the sandboxed command and its own arguments. Installed as
# share/bash-completion/completions/srt; tests/package checks it against `srt --help`.
# Works with or without the bash-completion package (it uses _command_offset when loaded).

# COMPREPLY from compgen's lines (no word splitting or globbing of the names it found).
_srt_reply() { mapfile -t COMPREPLY < <(compgen "$@"); }

# `srt proxy ...`: the proxy subcommand's options; descriptors for the ones that take one.
_srt_proxy() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local opts='--listen-fd --listen --listen-any-interface --decider-fd --decider-in --decider-out
              --lifeline-fd --ca-fd --strip-response-header --plaintext-header-set -d --debug
              --version -h --help'
  COMPREPLY=()
  case $prev in
    --listen-fd | --decider-fd | --decider-in | --decider-out | --lifeline-fd | --ca-fd)
      local fds=() fd
      for fd in "/proc/$$/fd/"*; do
        fd=${fd##*/}
        ((fd > 2)) && fds+=("$fd")
      done
      _srt_reply -W "${fds[*]}" -- "$cur"
      return
      ;;
    --listen) _srt_reply -W '127.0.0.1:0 [::1]:0 localhost:0' -- "$cur"; return ;;
    --strip-response-header) return ;;
  esac
  _srt_reply -W "$opts" -- "$cur"
}

_srt() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  if ((COMP_CWORD >= 2)) && [[ ${COMP_WORDS[1]} == proxy ]]; then
    _srt_proxy
    return
  fi
  local opts='-c -s --settings -d --debug --pass-fd --log-file --log-fd --control-fd --memory --cpus
              --pids --timeout --serve --attach -V --version -h --help --'
  # --opt=value: bash splits at '=' (COMP_WORDBREAKS), so the option is two words back.
  if [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
    prev=${COMP_WORDS[COMP_CWORD-2]}
  elif [[ $cur == =* ]]; then
    prev=${COMP_WORDS[COMP_CWORD-1]} cur=${cur#=}
  fi
  COMPREPLY=()
  case $prev in
    -s | --settings | --log-file | --serve | --attach)
      compopt -o filenames 2>/dev/null
      _srt_reply -f -- "$cur"
      return
      ;;
    --pass-fd | --log-fd | --control-fd)
      # The descriptors this shell has open, but for the three every command gets.
      local fds=() fd
      for fd in "/proc/$$/fd/"*; do
        fd=${fd##*/}
        ((fd > 2)) && fds+=("$fd")
      done
      _srt_reply -W "${fds[*]}" -- "$cur"
      return
      ;;
    --memory) _srt_reply -W '256M 512M 1G 2G 4G' -- "$cur"; return ;;
    --cpus) _srt_reply -W '0.5 1 2 4' -- "$cur"; return ;;
    --pids) _srt_reply -W '64 256 1024' -- "$cur"; return ;;
    --timeout) _srt_reply -W '30s 5m 1h' -- "$cur"; return ;;
    -c) return ;;  # a shell command of the user's own
  esac

  # Where the command starts: the first word that is not an option or an option's value.
  local i=1 word
  while ((i < COMP_CWORD)); do
    word=${COMP_WORDS[i]}
    case $word in
      --) ((i++)); break ;;
      -c) return ;;  # the rest are the shell command's $0, $1, ...
      -s | --settings | --log-file | --pass-fd | --log-fd | --control-fd | --memory | --cpus | --pids | --timeout | --serve | --attach)
        ((i += 2)); continue ;;
      -s?* | -c?* | --*=* | -*) ((i++)); continue ;;
      =) ((i++)); continue ;;
      *) break ;;
    esac
  done
  if ((i < COMP_CWORD)) || [[ $i -eq $COMP_CWORD && ${COMP_WORDS[i-1]} == -- ]]; then
    # The command and its arguments: its own completion when bash-completion is loaded.
    if declare -F _command_offset >/dev/null; then
      _command_offset "$i"
    elif ((i == COMP_CWORD)); then
      _srt_reply -c -- "$cur"
    else
      compopt -o filenames 2>/dev/null
      _srt_reply -f -- "$cur"
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    _srt_reply -W "$opts" -- "$cur"
  else
    _srt_reply -c -- "$cur"
    # The first word may also be the proxy subcommand.
    ((COMP_CWORD == 1)) && [[ proxy == "$cur"* ]] && COMPREPLY+=(proxy)
  fi
}
complete -F _srt srt
