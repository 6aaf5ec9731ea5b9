# bash completion for agsbx-evidence (installed to
# share/bash-completion/completions/agsbx-evidence).
_agsbx_evidence()
{
    local cur prev cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="probe providers collect verify report diff matrix attest keygen bench schema help"
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    case $prev in
        --format)
            case $cmd in
                report) COMPREPLY=($(compgen -W "text markdown junit tap" -- "$cur")) ;;
                diff) COMPREPLY=($(compgen -W "text markdown json" -- "$cur")) ;;
                matrix) COMPREPLY=($(compgen -W "markdown json badge" -- "$cur")) ;;
            esac
            return ;;
        --provider)
            COMPREPLY=($(compgen -W "bubblewrap landlock gvisor seatbelt trusted_local" -- "$cur"))
            return ;;
        --simulate)
            COMPREPLY=($(compgen -W "blocked-userns" -- "$cur"))
            return ;;
        --run-as)
            COMPREPLY=($(compgen -u -- "$cur"))
            return ;;
        -o|--output|--sign-key|--key|--allowed-signers|-f|--subject-repo|--work-dir)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
    esac
    if [[ $cmd == help ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        local opts
        opts=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -oE -- '(^|[[:space:]])--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' ' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _agsbx_evidence agsbx-evidence
