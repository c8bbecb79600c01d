"""The runtime-config factors of a runtime container (KServe's pkg/kernelcache/identity/factors.go and
runtimeoptions/): the vLLM options and environment variables that change compiled kernels, read from the
container's env, command and args, normalised, and folded into the compatibility footprint.

Values are found in three sources applied one after the other, a later source replacing an earlier value:
**env, then command, then args** (`resolve_raw`). KServe's sources disagree here: its stored resolver and
README apply the command last, while every stored test (`TestParseRuntimeConfigFactorsUsesArgsOverCommand`,
`TestResolvePrecedenceAndCLIForms`, `TestResolveShellCommandAndEnvironmentExpansion`) expects the args to
win; we follow the tests. It only matters when one option is set in both command and args.

The raw value found last for a key is normalised afterwards, so a later invalid value removes an earlier
valid one (`--tp 2 --tp=abc` gives no tensorParallelSize), as in KServe.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from ..objects import EnvVar
from .gojson import hash_strings
from .gostrings import trim_space

INTEGER, STRING, BOOLEAN, HASH, CSV = "integer", "string", "boolean", "hash", "comma-separated"


class Option(msgspec.Struct, frozen=True):
    key: str
    flags: tuple[str, ...]
    type: str


OPTIONS = (
    Option("option.tensorParallelSize", ("--tensor-parallel-size", "--tensor_parallel_size", "-tp", "--tp"), INTEGER),
    Option(
        "option.pipelineParallelSize", ("--pipeline-parallel-size", "--pipeline_parallel_size", "-pp", "--pp"), INTEGER
    ),
    Option("option.maxModelLen", ("--max-model-len", "--max_model_len"), INTEGER),
    Option("option.dtype", ("--dtype",), STRING),
    Option("option.quantization", ("--quantization", "-q"), STRING),
    Option("option.quantizationConfigHash", ("--quantization-config", "--quantization_config"), HASH),
    Option("option.kvCacheDtype", ("--kv-cache-dtype", "--kv_cache_dtype"), STRING),
    Option("option.blockSize", ("--block-size", "--block_size"), INTEGER),
    Option("option.maxNumBatchedTokens", ("--max-num-batched-tokens", "--max_num_batched_tokens"), INTEGER),
    Option("option.maxNumSeqs", ("--max-num-seqs", "--max_num_seqs"), INTEGER),
    Option("option.enableChunkedPrefill", ("--enable-chunked-prefill", "--enable_chunked_prefill"), BOOLEAN),
    Option("option.disableSlidingWindow", ("--disable-sliding-window", "--disable_sliding_window"), BOOLEAN),
    Option("option.enforceEager", ("--enforce-eager", "--enforce_eager"), BOOLEAN),
    Option("option.attentionBackend", ("--attention-backend", "--attention_backend"), STRING),
    Option("option.compilationConfigHash", ("--compilation-config", "--compilation_config", "-cc"), HASH),
)
ENV_FACTORS: dict[str, str] = {
    **{
        f"env.{n}": BOOLEAN
        for n in (
            "VLLM_USE_AOT_COMPILE",
            "VLLM_USE_MEGA_AOT_ARTIFACT",
            "VLLM_USE_STANDALONE_COMPILE",
            "VLLM_ENABLE_PREGRAD_PASSES",
            "VLLM_ENABLE_INDUCTOR_MAX_AUTOTUNE",
            "VLLM_ENABLE_INDUCTOR_COORDINATE_DESCENT_TUNING",
            "VLLM_BATCH_INVARIANT",
            "VLLM_TRITON_USE_TD",
        )
    },
    "env.VLLM_FLOAT32_MATMUL_PRECISION": STRING,
    "env.VLLM_PP_LAYER_PARTITION": STRING,
    "env.VLLM_DISABLED_KERNELS": CSV,
}
FACTOR_TYPES: dict[str, str] = {**{o.key: o.type for o in OPTIONS}, **ENV_FACTORS}
# (flag, option), longest flag first; the sort is stable, so equal lengths keep the table's order
_FLAGS = sorted(((f, o) for o in OPTIONS for f in o.flags), key=lambda fo: -len(fo[0]))
_BOOL_VALUES = ("true", "false", "1", "0")
_SHELLS = ("sh", "bash", "dash", "zsh")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_SEPARATORS = frozenset(b"\t\n\v\f\r \x85\xa0")  # Go's unicode.IsSpace of a single byte
_SHELL_META = frozenset(b"|;&<>`")


# ---- token scan ------------------------------------------------------------------------------------


def _unresolved(token: str) -> bool:
    return "$" in token or "{{" in token or "`" in token


def _match(token: str) -> tuple[Option, str | None] | None:
    """The option a token sets and its inline value (None for a bare flag)."""
    for flag, opt in _FLAGS:
        if opt.type == BOOLEAN and flag.startswith("--") and token == "--no-" + flag[2:]:
            return opt, "false"
        if token == flag:
            return opt, None
        if token.startswith(flag + "="):
            return opt, token[len(flag) + 1 :]
    return None


def scan_tokens(tokens: Sequence[str], skip_unresolved: bool, out: dict[str, str]) -> None:
    """Set `out[key]` to the raw value of each option the tokens give (a later one wins)."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        found = None if skip_unresolved and _unresolved(token) else _match(token)
        if found is None:
            i += 1
            continue
        opt, value = found
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if value is None and opt.type == BOOLEAN:
            value = "true"
            if nxt in _BOOL_VALUES:
                value, i = nxt, i + 1
        elif value is None:
            if nxt is None or nxt.startswith("-") or (skip_unresolved and _unresolved(nxt)):
                i += 1  # a value flag without its value is ignored
                continue
            value, i = nxt, i + 1
        out[opt.key] = value
        i += 1


# ---- shell wrappers ---------------------------------------------------------------------------------


def _basename(path: str) -> str:
    """Go's path.Base."""
    if not path:
        return "."
    stripped = path.rstrip("/")
    return stripped.rsplit("/", 1)[-1] if stripped else "/"


def shell_script(command: Sequence[str]) -> str | None:
    """The script of `sh|bash|dash|zsh ... -c SCRIPT` (a `-c`-like flag such as -lc or -ec), else None.
    `["/bin/sh", "-c"]` with the script in args is not a wrapper: the args are then scanned as they are."""
    if len(command) < 3 or _basename(command[0]) not in _SHELLS:
        return None
    for i in range(1, len(command) - 1):
        arg = command[i]
        if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg):
            return command[i + 1]
    return None


def expand_env(script: str, env: Mapping[str, str]) -> str:
    """`$NAME`/`${NAME}` replaced by literal env values, as KServe does it, quirks included: the pattern is
    searched over the rest of the script from each `$` (not anchored) and the scan then skips the match's
    length from that `$`; single quotes (toggled by every `'`, double quotes ignored) and a backslash stop
    expansion."""
    out: list[str] = []
    i, escaped, in_single = 0, False, False
    while i < len(script):
        ch = script[i]
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\" and not in_single:
            out.append(ch)
            escaped = True
        elif ch == "'":
            in_single = not in_single
            out.append(ch)
        elif ch == "$" and not in_single:
            m = _ENV_REF.search(script, i)
            if m is None:
                out.append(ch)
            else:
                name = m.group(1) or m.group(2)
                out.append(env.get(name, m.group(0)))
                i += len(m.group(0))
                continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def tokenize(script: str) -> list[str] | None:
    """Shell words of a script, on UTF-8 bytes; None when it uses pipes, lists, redirections or command
    substitution outside quotes, or ends inside a quote or after a lone backslash."""
    data = script.encode("utf-8", "surrogateescape")
    tokens: list[str] = []
    cur = bytearray()
    started = False
    quote = 0
    i = 0
    while i < len(data):
        c = data[i]
        if quote == 0x27 or (quote == 0x22 and c != 0x5C):  # inside '...', or inside "..." but a backslash
            if c == quote:
                quote = 0
            else:
                cur.append(c)
            i += 1
            continue
        if c == 0x5C:  # backslash
            if i + 1 >= len(data):
                return None
            if data[i + 1] != 0x0A:
                cur.append(data[i + 1])
                started = True
            i += 2
            continue
        if c in _SEPARATORS:
            if started:
                tokens.append(cur.decode("utf-8", "surrogateescape"))
                cur, started = bytearray(), False
        elif c in _SHELL_META or (c == 0x24 and data[i + 1 : i + 2] == b"("):
            return None
        elif c in (0x22, 0x27):
            quote, started = c, True
        else:
            cur.append(c)
            started = True
        i += 1
    if quote:
        return None
    if started:
        tokens.append(cur.decode("utf-8", "surrogateescape"))
    return tokens


def extract_shell_command(script: str, env: Mapping[str, str]) -> list[str] | None:
    """The words of the command a shell script runs: after the last `exec ` (dropping the quote that wraps
    an `eval "exec ..."`), env references expanded; None when the script cannot be read this way."""
    at = script.rfind("exec ")
    if at >= 0:
        prefix = trim_space(script[:at])
        wrapper = '"' if prefix.endswith('"') else "'" if prefix.endswith("'") else ""
        script = trim_space(script[at + 5 :])
        if wrapper and script.endswith(wrapper):
            script = trim_space(script[:-1])
    return tokenize(expand_env(trim_space(script), env))


# ---- resolution and normalisation -------------------------------------------------------------------


def literal_env(env: Iterable[EnvVar]) -> dict[str, str]:
    """Env entries with a literal value (valueFrom ones are unknown at admission); a later duplicate wins."""
    return {e.name: e.value for e in env if not e.value_from}


def resolve_raw(env: Sequence[EnvVar], command: Sequence[str], args: Sequence[str]) -> dict[str, str]:
    """The last raw value of each factor: env, then command, then args (args win; see the module doc)."""
    out: dict[str, str] = {}
    literal = literal_env(env)
    for e in env:
        if not e.value_from and f"env.{e.name}" in ENV_FACTORS:
            out[f"env.{e.name}"] = e.value
    if command:
        script = shell_script(command)
        if script is None:
            scan_tokens(command, False, out)
        else:
            tokens = extract_shell_command(script, literal)
            if tokens is not None:
                scan_tokens(tokens, True, out)
    scan_tokens(args, False, out)
    return out


_INT = re.compile(r"[+-]?[0-9]+")
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def normalise(kind: str, raw: str) -> str:
    """A factor's value as KServe records it, or "" when it is dropped."""
    value = trim_space(raw).strip("\"'")
    if not value:
        return ""
    if kind == INTEGER:
        if not _INT.fullmatch(value):
            return ""
        number = int(value)
        return str(number) if 0 < number < 2**63 else ""
    if kind == BOOLEAN:
        return "true" if value in _TRUE else "false" if value in _FALSE else ""
    if kind == CSV:
        return ",".join(sorted((trim_space(p) for p in value.split(",")), key=lambda p: p.encode("utf-8")))
    if kind == HASH:
        return hash_strings([value])
    return value.lower()


def runtime_factors(env: Sequence[EnvVar], command: Sequence[str], args: Sequence[str]) -> dict[str, str]:
    """Every runtime-config factor with a non-empty normalised value, keys sorted."""
    raw = resolve_raw(env, command, args)
    out = {key: normalise(FACTOR_TYPES[key], value) for key, value in raw.items()}
    return {k: v for k, v in sorted(out.items()) if v}
