"""Strata's benchmark: the service on PostgreSQL against its ceilings.

``python -m bench`` (see ``bench/run.py``) starts the real service on a
throwaway PostgreSQL database, drives it from separate client processes with
bots playing real games through the gRPC API, and measures, in the same run,
the ceilings the service is judged against: a no-op gRPC call on the same
server stack, PostgreSQL's own rate for the store's insert pattern, and the
``eventsourcing`` library doing the same work. Every claim is a ratio of two
figures from one run on one machine.
"""
