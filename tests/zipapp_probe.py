"""What the release tests run a shipped plugin under: `python3 -c PROBE APP ARGS` runs APP (a zipapp, or the
script krew installs) as `python3 APP ARGS` does, then prints one line, `msgspec-core PATH DECODED`: the
compiled msgspec that process imports (the one the plugin's bootstrap put on sys.path, when nothing else
provides one: -I -S, or a venv without packages) and a value it decoded, `{'a': [1]}`."""

PROBE = """\
import atexit, runpy, sys
app = sys.argv[1]
sys.argv = [app] + sys.argv[2:]
reported = []

def report():  # at exit (the plugin ends its process itself, after running what was registered to run then)
    if reported:
        return
    reported.append(True)
    import msgspec, msgspec._core
    print("msgspec-core", msgspec._core.__file__, msgspec.json.decode(b'{"a": [1]}', type=dict[str, list[int]]))
    sys.stdout.flush()

register = atexit.register

def registered(func, *args, **kwargs):  # what the app registers (the zipapp's unpacked folder) goes after the report
    register(func, *args, **kwargs)
    register(report)
    return func

atexit.register = registered
register(report)
code = 0
try:
    runpy.run_path(app, run_name="__main__")
except SystemExit as e:
    code = e.code
sys.exit(code)
"""
