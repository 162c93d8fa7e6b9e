"""Subcommands of the fuseflowc CLI, one module each, exporting a click command `cmd`."""
