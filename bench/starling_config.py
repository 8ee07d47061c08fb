"""starling_config.py: a Starling config as `starling config --json` resolves it.

The keys, their defaults and their checks are defined once, in Starling
(cli/config_schema.cpp); the PyTorch references ask the `starling` binary for the resolved
config, and for what else it derives from a config, rather than read the TOML themselves.
"""
import json
import subprocess


class StarlingError(RuntimeError):
    """A `starling` subcommand failed: `code` is its exit status (2: the config is bad), the
    message its errors."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def run_starling(starling, command, config, overrides=()):
    """The standard output of `starling COMMAND... --config CONFIG --set OVERRIDE...`."""
    cmd = [starling] + list(command) + ["--config", config]
    for o in overrides:
        cmd += ["--set", o]
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise StarlingError("cannot run %s (pass --starling, or build with `make`): %s" % (starling, e.strerror), 1)
    if done.returncode != 0:
        # Its log lines less their "[time] error " prefix.
        why = "; ".join(line.split("] error ", 1)[-1] for line in done.stderr.strip().splitlines())
        raise StarlingError("starling %s: %s" % (command[0], why or "exit status %d" % done.returncode),
                            done.returncode)
    return done.stdout


def resolved_config(starling, config, overrides=()):
    """{section: {key: value}} for `config` (a TOML path) with `overrides` (section.key=value):
    every key with its default filled in, paths relative to the config file resolved, the
    [[peer]] entries as a list under "peer" (absent without any)."""
    return json.loads(run_starling(starling, ["config", "--json"], config, overrides))
