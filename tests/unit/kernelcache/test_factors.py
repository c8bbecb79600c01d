"""Runtime-config factors against KServe's tests: pkg/kernelcache/identity/factors_test.go,
runtimeoptions/resolver_test.go and the factor part of webhook sidecar_test.go. Args win over command
(`TestParseRuntimeConfigFactorsUsesArgsOverCommand`): see factors.py."""

from __future__ import annotations

import pytest

from kubectl_kcache.kernelcache import factors as f
from kubectl_kcache.kernelcache.gojson import hash_strings
from kubectl_kcache.objects import EnvVar


def env(**values: str) -> tuple[EnvVar, ...]:
    return tuple(EnvVar(k, v) for k, v in values.items())


def test_parse_runtime_config_factors():
    """TestParseRuntimeConfigFactors"""
    got = f.runtime_factors(
        env(
            VLLM_USE_AOT_COMPILE="1",
            VLLM_ENABLE_INDUCTOR_MAX_AUTOTUNE="true",
            VLLM_DISABLED_KERNELS="Marlin, ExLlama",
            VLLM_CACHE_ROOT="/tmp/vllm",
        ),
        ["python", "-m", "vllm.entrypoints.openai.api_server", "--dtype=bfloat16", "-tp", "2"],
        [
            "--max-model-len",
            "4096",
            "--quantization",
            "awq",
            "--compilation-config",
            '{"level":3}',
            "--enable-chunked-prefill",
            "--no-enable-chunked-prefill",
        ],
    )
    assert got == {
        "option.dtype": "bfloat16",
        "option.tensorParallelSize": "2",
        "option.maxModelLen": "4096",
        "option.quantization": "awq",
        "option.compilationConfigHash": hash_strings(['{"level":3}']),
        "option.enableChunkedPrefill": "false",
        "env.VLLM_USE_AOT_COMPILE": "true",
        "env.VLLM_ENABLE_INDUCTOR_MAX_AUTOTUNE": "true",
        "env.VLLM_DISABLED_KERNELS": "ExLlama,Marlin",
    }
    assert (
        got["option.compilationConfigHash"] == "sha256:3f3e18e2cecef672a7120e368df749dd0477f33e4cd359a5f658a48648a4621c"
    )


def test_canonicalizes_comma_separated_values():
    """TestParseRuntimeConfigFactorsCanonicalizesCommaSeparatedValues"""
    a = f.runtime_factors(env(VLLM_DISABLED_KERNELS="Marlin, ExLlama"), [], [])
    b = f.runtime_factors(env(VLLM_DISABLED_KERNELS="ExLlama,Marlin"), [], [])
    assert a == b == {"env.VLLM_DISABLED_KERNELS": "ExLlama,Marlin"}


def test_uses_args_over_command():
    """TestParseRuntimeConfigFactorsUsesArgsOverCommand (KServe's stored resolver disagrees; its tests win)"""
    got = f.runtime_factors((), ["--max-num-seqs=128", "--tensor_parallel_size=2"], ["--max-num-seqs", "256", "--tp=4"])
    assert got == {"option.maxNumSeqs": "256", "option.tensorParallelSize": "4"}


def test_preserves_json_value():
    """TestParseRuntimeConfigFactorsPreservesJSONValue"""
    value = '{"level": 3, "mode": "max-autotune"}'
    assert f.runtime_factors((), [], ["--compilation-config", value]) == {
        "option.compilationConfigHash": hash_strings([value])
    }


def test_extract_from_shell_container():
    """TestExtractRuntimeConfigFactorsFromShellContainer"""
    got = f.runtime_factors(
        env(VLLM_ADDITIONAL_ARGS="--dtype float16 --tensor-parallel-size 4"),
        ["/bin/bash", "-c", 'eval "exec vllm serve ${VLLM_ADDITIONAL_ARGS} $@"'],
        [],
    )
    assert got == {"option.dtype": "float16", "option.tensorParallelSize": "4"}


def test_ignores_unsupported_and_invalid_values():
    """TestParseRuntimeConfigFactorsIgnoresUnsupportedAndInvalidValues"""
    got = f.runtime_factors(
        (EnvVar("VLLM_USE_AOT_COMPILE", "not-a-bool"), EnvVar("VLLM_CACHE_ROOT", "/x")),
        ["--unknown-option=value", "--tensor-parallel-size=0"],
        [],
    )
    assert got == {}


def test_sidecar_runtime_identity_factors():
    """sidecar_test.go TestBuildRuntimeIdentityFactorsIncludesSupportedRuntimeConfigFactors"""
    got = f.runtime_factors(
        (
            EnvVar("VLLM_USE_AOT_COMPILE", "true"),
            EnvVar("VLLM_DISABLED_KERNELS", "Marlin, ExLlama"),
            EnvVar("VLLM_CACHE_ROOT", "/tmp/vllm"),
            EnvVar("VLLM_BATCH_INVARIANT", value_from=True),
        ),
        ["vllm", "--dtype", "bfloat16", "-tp", "2"],
        ["--max-model-len=4096", "--enforce-eager"],
    )
    assert got == {
        "option.dtype": "bfloat16",
        "option.tensorParallelSize": "2",
        "option.maxModelLen": "4096",
        "option.enforceEager": "true",
        "env.VLLM_USE_AOT_COMPILE": "true",
        "env.VLLM_DISABLED_KERNELS": "ExLlama,Marlin",
    }


# ---- resolver_test.go (generic specs) -------------------------------------------------------------------------


def raw(command=(), args=(), env_vars=()):
    return f.resolve_raw(tuple(env_vars), list(command), list(args))


def test_resolve_precedence_and_cli_forms():
    """TestResolvePrecedenceAndCLIForms"""
    got = raw(["runtime", "--dtype=fp8", "--tp", "8"], ["--dtype", "bfloat16", "--tp=2", "--tp", "4"])
    assert (got["option.dtype"], got["option.tensorParallelSize"]) == ("bfloat16", "4")


def test_resolve_preserves_tokenized_values():
    """TestResolvePreservesTokenizedValues"""
    assert raw(args=["--quantization-config", '{"a": 1}'])["option.quantizationConfigHash"] == '{"a": 1}'


def test_resolve_boolean_options():
    """TestResolveBooleanOptions"""
    assert raw(args=["--enforce-eager"])["option.enforceEager"] == "true"
    assert (
        raw(args=["--no-enable-chunked-prefill", "--enable-chunked-prefill=true"])["option.enableChunkedPrefill"]
        == "true"
    )
    assert raw(args=["--no-disable-sliding-window"])["option.disableSlidingWindow"] == "false"
    assert raw(args=["--enforce-eager", "0"])["option.enforceEager"] == "0"


def test_resolve_shell_command_and_environment_expansion():
    """TestResolveShellCommandAndEnvironmentExpansion"""
    script = 'eval "exec runtime serve ${RUNTIME_ADDITIONAL_ARGS} --dtype bfloat16 $@"'
    got = f.runtime_factors(
        env(RUNTIME_ADDITIONAL_ARGS="--dtype float16 --tp 4"), ["/bin/bash", "-c", script], ["--tp=2"]
    )
    assert got == {"option.dtype": "bfloat16", "option.tensorParallelSize": "2"}


def test_resolve_shell_command_ignores_long_flags_containing_c():
    """TestResolveShellCommandIgnoresLongFlagsContainingC"""
    got = raw(["/bin/bash", "--rcfile", "/etc/bashrc", "-c", "exec runtime --dtype float16"])
    assert got == {"option.dtype": "float16"}


def test_resolve_does_not_expand_single_quoted_references():
    """TestResolveDoesNotExpandSingleQuotedReferences"""
    assert raw(["/bin/sh", "-c", "exec runtime --dtype '$RUNTIME_DTYPE'"], env_vars=env(RUNTIME_DTYPE="half")) == {}


def test_resolve_ignores_indirect_environment_values():
    """TestResolveIgnoresIndirectEnvironmentValues"""
    assert raw(env_vars=(EnvVar("VLLM_USE_AOT_COMPILE", value_from=True),)) == {}
    assert raw(["/bin/sh", "-c", "exec runtime $DTYPE"], env_vars=(EnvVar("DTYPE", value_from=True),)) == {}


# ---- the rules of admission.md §3.2-§3.3 -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "raw_value", "normalised"),
    [
        (f.INTEGER, "+2", "2"),
        (f.INTEGER, "02", "2"),
        (f.INTEGER, "0", ""),
        (f.INTEGER, "-1", ""),
        (f.INTEGER, "2x", ""),
        (f.INTEGER, str(2**63), ""),
        (f.INTEGER, " '4' ", "4"),
        (f.BOOLEAN, "T", "true"),
        (f.BOOLEAN, "FALSE", "false"),
        (f.BOOLEAN, "yes", ""),
        (f.BOOLEAN, "tRUE", ""),
        (f.CSV, "b, a,,c", ",a,b,c"),
        (f.CSV, "Marlin", "Marlin"),
        (f.STRING, "BFloat16", "bfloat16"),
        (f.STRING, "\"'half'\"", "half"),
        (f.STRING, "  ", ""),
    ],
)
def test_normalise(kind, raw_value, normalised):
    assert f.normalise(kind, raw_value) == normalised


def test_a_later_invalid_value_removes_an_earlier_valid_one():
    assert f.runtime_factors((), [], ["--tp", "2", "--tp=abc"]) == {}


def test_value_flag_without_value_is_ignored():
    assert raw(args=["--dtype", "--tp", "2"]) == {"option.tensorParallelSize": "2"}
    assert raw(args=["-tp2"]) == {}


def test_sh_c_with_script_in_args_is_not_a_wrapper():
    assert f.shell_script(["/bin/sh", "-c"]) is None
    assert raw(["/bin/sh", "-c"], ["exec vllm --dtype half"]) == {}
    assert f.shell_script(["bash", "-lc", "x"]) == "x"
    assert f.shell_script(["python", "-c", "x"]) is None


def test_expansion_quirk_search_is_not_anchored():
    assert f.expand_env("serve $1 $FOO x", {"FOO": "--dtype half"}) == "serve --dtype halfFOO x"


@pytest.mark.parametrize(
    ("script", "tokens"),
    [
        ("a \"b c\" 'd e' f\\ g", ["a", "b c", "d e", "f g"]),
        ('a ""', ["a", ""]),
        ("a | b", None),
        ("a; b", None),
        ("a $(b)", None),
        ("a `b`", None),
        ('a "b', None),
        ("a \\", None),
        ('a "x|y"', ["a", "x|y"]),
        ("a\\\nb", ["ab"]),
    ],
)
def test_tokenize(script, tokens):
    assert f.tokenize(script) == tokens
