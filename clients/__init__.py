"""Clients of Strata: the Python client library and the `strata` command."""
