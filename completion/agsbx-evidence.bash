# bash completion for agsbx-evidence (installed to
# share/bash-completion/completions/agsbx-evidence). Options come from the
# option table of `agsbx-evidence COMMAND --help` (the lines that start
# with "  -"), never from its prose, so only options the command accepts
# are offered (tests/cli/conventions.sh checks each against the CLI).
_agsbx_evidence()
{
    local cur prev cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="probe providers checks collect verify report diff matrix attest keygen bench cleanup schema help"
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
        --host-policy)
            COMPREPLY=($(compgen -W "distro-bwrap-profile" -- "$cur"))
            return ;;
        --run-as)
            COMPREPLY=($(compgen -u -- "$cur"))
            return ;;
        -o|--output|--sign-key|--key|--allowed-signers|-f|--subject-repo|--work-dir)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        # the option column: up to the first two blanks after the option
        opts=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | sed -nE 's/^  (-.*)$/\1/p' | sed -E 's/  .*//' |
               grep -oE -- '(^|[ ,])--?[A-Za-z0-9][A-Za-z0-9-]*' | tr -d ' ,' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    case $cmd in
        help) COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
        schema) COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" schema --list 2>/dev/null)" -- "$cur")) ;;
        probe|providers|checks|bench|cleanup|keygen) COMPREPLY=() ;;   # no operands
        *) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
}
complete -o filenames -F _agsbx_evidence agsbx-evidence
