"""The gRPC service: servicers, interceptors, configuration, the serve entry point."""
