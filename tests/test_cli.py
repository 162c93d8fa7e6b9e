"""The CLI's conventions: help, version, exit codes for unknown commands."""

from golden import run_cli
from fuseflowc import __version__


def test_version():
    r = run_cli(["--version"])
    assert r.exit_code == 0 and __version__ in r.stdout


def test_help_lists_commands():
    r = run_cli(["--help"])
    assert r.exit_code == 0
    assert "Commands" in r.stdout


def test_unknown_command_is_usage_error():
    r = run_cli(["no-such-command"])
    assert r.exit_code == 2
    assert "No such command" in r.stderr
