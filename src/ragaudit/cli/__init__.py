"""The ``ragaudit`` command line: one thin module per command."""
