"""The service: use cases, servicers, the door every call comes through and
its transports, configuration, the serve entry point."""
