"""Shell completion: `kubectl kcache completion bash|zsh|fish|powershell` prints a script that completes
`kubectl-kcache` run directly and `kubectl kcache` through kubectl (also kubectl older than 1.26, which does
not ask plugins: the script wraps kubectl's own completion for the `kcache` word). Every script asks the
plugin for the candidates, `kubectl-kcache __complete WORDS... CURRENT`, which answers as kubectl's plugin
hook `kubectl_complete-kcache` does: one candidate a line, then cobra's directive (`:4` no file names, `:0`
let the shell complete file names).

Offline, with `--from-file`, pods and captures come from the snapshot files instead of the cluster.
"""

from __future__ import annotations

from collections.abc import Iterable

SHELLS = ("bash", "zsh", "fish", "powershell")
PROG = "kubectl-kcache"
ISVC_LABEL = "serving.kserve.io/inferenceservice"


def names_from_files(paths: Iterable[str], what: str, namespace: str | None) -> list[str]:
    """Names for completion from snapshot files: InferenceService pods or captures (in `namespace`, or all),
    namespaces; [] when the files cannot be read (completion never fails loudly)."""
    from ..snapshot.files.from_files import load_files

    try:
        snap = load_files([p for p in paths if p != "-"])  # never wait on stdin in a completion
        if what == "namespaces":
            return sorted(
                {n.name for n in snap.namespaces}
                | {p.namespace for p in snap.pods}
                | {c.namespace for c in snap.captures}
            )
        objs: Iterable = (
            snap.pods_labelled(None, ISVC_LABEL)
            if what == "pods"
            else snap.kernel_caches
            if what == "kernelcaches"
            else snap.captures
        )
        return sorted({o.name for o in objs if namespace is None or o.namespace == namespace})
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return []


BASH = r"""# bash completion for kubectl-kcache: source <(kubectl kcache completion bash)
# Completes `kubectl-kcache ...` and `kubectl kcache ...` (wrapping kubectl's own completion, if loaded).
__kubectl_kcache_reply() {  # $1: the index in COMP_WORDS of the first word after the plugin's name
    local cur=${COMP_WORDS[COMP_CWORD]} out directive line
    local -a words=("${COMP_WORDS[@]:$1:COMP_CWORD-$1}")
    out=$(kubectl-kcache __complete "${words[@]}" "$cur" 2>/dev/null) || return 0
    directive=${out##*:}
    COMPREPLY=()
    while IFS= read -r line; do
        [[ -n $line && $line != :* ]] && COMPREPLY+=("${line%%$'\t'*}")  # bash shows no descriptions
    done <<< "$out"
    if ((${#COMPREPLY[@]} == 0)) && [[ $directive == 0 ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return 0
}
__kubectl_kcache() { __kubectl_kcache_reply 1; }
complete -F __kubectl_kcache kubectl-kcache
if [[ $(complete -p kubectl 2>/dev/null) == *" -F "* ]] && ! declare -F __kubectl_kcache_kubectl_orig >/dev/null; then
    eval "__kubectl_kcache_kubectl_orig() { $(complete -p kubectl | sed -E 's/.* -F ([^ ]+) .*/\1/') \"\$@\"; }"
    __kubectl_kcache_kubectl() {
        if [[ ${COMP_WORDS[1]} == kcache ]] && ((COMP_CWORD > 1)); then
            compopt +o default 2>/dev/null
            __kubectl_kcache_reply 2
        else
            __kubectl_kcache_kubectl_orig "$@"
        fi
    }
    complete -o default -F __kubectl_kcache_kubectl kubectl
fi
"""

ZSH = r"""#compdef kubectl-kcache
# zsh completion for kubectl-kcache: source <(kubectl kcache completion zsh) (after compinit)
# Completes `kubectl-kcache ...` and `kubectl kcache ...` (wrapping kubectl's own completion, if loaded).
__kubectl_kcache_reply() {  # $1: the index in $words of the first word after the plugin's name
    local out directive line word
    local -a lines candidates described
    out=$(kubectl-kcache __complete "${(@)words[$1,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null) || return 1
    lines=("${(@f)out}")
    directive=${lines[-1]#:}
    candidates=("${(@)lines[1,-2]}")
    candidates=(${candidates:#})
    for line in "${(@)candidates}"; do  # word<TAB>description, as cobra writes them: word:description
        word=${line%%$'\t'*}
        word=${word//:/\\:}
        if [[ $line == *$'\t'* ]]; then described+=("$word:${line#*$'\t'}"); else described+=("$word"); fi
    done
    if (( ${#described} )); then
        _describe -t kcache 'kubectl kcache' described -U
    elif [[ $directive == 0 ]]; then
        _files
    else
        return 1
    fi
}
_kubectl_kcache() { __kubectl_kcache_reply 2; }
compdef _kubectl_kcache kubectl-kcache
if (( $+functions[_kubectl] )) && (( ! $+functions[__kubectl_kcache_kubectl_orig] )); then
    functions[__kubectl_kcache_kubectl_orig]=$functions[_kubectl]
    __kubectl_kcache_kubectl() {
        if [[ ${words[2]} == kcache ]] && (( CURRENT > 2 )); then
            __kubectl_kcache_reply 3
        else
            __kubectl_kcache_kubectl_orig "$@"
        fi
    }
    compdef __kubectl_kcache_kubectl kubectl
fi
"""

FISH = r"""# fish completion for kubectl-kcache: kubectl kcache completion fish | source
# Completes `kubectl-kcache ...` and `kubectl kcache ...`.
function __kubectl_kcache_reply
    set -l tokens (commandline -opc)
    set -e tokens[1]
    if test "$argv[1]" = kubectl
        set -e tokens[1]
    end
    set -l out (kubectl-kcache __complete $tokens (commandline -ct) 2>/dev/null)
    set -l directive (string replace -r '^:' '' -- $out[-1])
    set -e out[-1]
    if test (count $out) -gt 0
        printf '%s\n' $out
    else if test "$directive" = 0
        __fish_complete_path (commandline -ct)
    end
end
complete -c kubectl-kcache -f -a '(__kubectl_kcache_reply)'
complete -c kubectl -n '__fish_seen_subcommand_from kcache' -f -a '(__kubectl_kcache_reply kubectl)'
"""

POWERSHELL = r"""# PowerShell completion for kubectl-kcache:
#   kubectl kcache completion powershell | Out-String | Invoke-Expression
# Completes `kubectl-kcache ...`; `kubectl kcache ...` completes through kubectl's own (1.26 and newer),
# which runs kubectl_complete-kcache.
$__kubectlKcacheReply = {
    param($wordToComplete, $commandAst, $cursorPosition)
    $words = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
    if ($commandAst.CommandElements[0].ToString() -eq 'kubectl') { $words = @($words | Select-Object -Skip 1) }
    if ($wordToComplete -ne '' -and $words.Count -gt 0) { $words = @($words | Select-Object -SkipLast 1) }
    $out = @(& kubectl-kcache __complete @words $wordToComplete 2>$null)
    if ($out.Count -eq 0) { return }
    $directive = $out[-1].TrimStart(':')
    $candidates = @($out | Select-Object -SkipLast 1 | Where-Object { $_ -ne '' })
    if ($candidates.Count -eq 0 -and $directive -eq '0') { return }  # PowerShell completes file names
    foreach ($line in $candidates) {
        $word, $text = $line -split "`t", 2
        if (-not $text) { $text = $word }
        [System.Management.Automation.CompletionResult]::new($word, $word, 'ParameterValue', $text)
    }
}
Register-ArgumentCompleter -Native -CommandName 'kubectl-kcache' -ScriptBlock $__kubectlKcacheReply
"""

SCRIPTS = {"bash": BASH, "zsh": ZSH, "fish": FISH, "powershell": POWERSHELL}


def script(shell: str) -> str:
    return SCRIPTS[shell]
