# SPDX-License-Identifier: Apache-2.0
# bash completion for srt-poller(8): its options, file and directory names for the options that
# take them, and the values of the enumerated ones. Installed as
# share/bash-completion/completions/srt-poller; tests/package checks it against `srt-poller --help`.

# COMPREPLY from compgen's lines (no word splitting or globbing of the names it found).
_srt_poller_reply() { mapfile -t COMPREPLY < <(compgen "$@"); }

_srt_poller() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local opts='--environment-id --environment-key-file --environment-key --base-url --worker-id --sessions-dir
              --concurrency --policy --max-idle --memory-sync-interval --on-work
              --script-gets-environment-key --script-env --no-lease-handoff --log-format --memory
              --cpus --pids --disk --no-limits --workspace-cleanup --workdir --unrestricted-paths --ca-file --toolbox --config
              --check -h --help -V --version'
  # --opt=value: bash splits at '=' (COMP_WORDBREAKS), so the option is two words back.
  if [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
    prev=${COMP_WORDS[COMP_CWORD-2]}
  elif [[ $cur == =* ]]; then
    cur=${cur#=}
  fi
  COMPREPLY=()
  case $prev in
    --environment-key-file | --policy | --on-work | --ca-file | --toolbox | --config)
      compopt -o filenames 2>/dev/null
      _srt_poller_reply -f -- "$cur"
      return
      ;;
    --sessions-dir)
      compopt -o filenames 2>/dev/null
      _srt_poller_reply -d -- "$cur"
      return
      ;;
    --log-format) _srt_poller_reply -W 'text json' -- "$cur"; return ;;
    --workdir) _srt_poller_reply -W '/workspace' -- "$cur"; return ;;
    --environment-key) return ;;
    --workspace-cleanup) _srt_poller_reply -W 'keep terminated' -- "$cur"; return ;;
    --base-url) _srt_poller_reply -W 'https://api.anthropic.com' -- "$cur"; return ;;
    --memory | --disk) _srt_poller_reply -W '0 1G 3G 10G' -- "$cur"; return ;;
    --max-idle | --memory-sync-interval) _srt_poller_reply -W '0 15s 60s 5m' -- "$cur"; return ;;
    --script-env)
      _srt_poller_reply -e -- "$cur"
      return
      ;;
    --environment-id | --worker-id | --concurrency | --cpus | --pids) return ;;
  esac
  _srt_poller_reply -W "$opts" -- "$cur"
}
complete -F _srt_poller srt-poller
