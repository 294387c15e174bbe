"""The command lines behind ``scripts/``: each module parses one script's flags and calls the library."""
