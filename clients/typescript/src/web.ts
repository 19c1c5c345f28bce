/**
 * Strata's client in a browser: the transports of @connectrpc/connect-web,
 * on fetch (Node 18 and newer have fetch too, which is how the tests run
 * it). A page served by another origin than the service's needs that
 * origin in the service's STRATA_CORS_ORIGINS.
 *
 *     import { connect } from "./web.js";
 *     const client = connect(window.location.origin, "connect");
 */
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";

import { StrataClient, transportName, type StrataClientOptions, type TransportName } from "./client.js";

export * from "./client.js";

/** A transport to the HTTP listener at `baseUrl` (`http://host:8080`). */
export function createTransport(baseUrl: string, name: TransportName = "connect"): Transport {
  switch (transportName(name)) {
    case "connect":
      return createConnectTransport({ baseUrl, useBinaryFormat: false });
    case "connect-proto":
      return createConnectTransport({ baseUrl, useBinaryFormat: true });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl, useBinaryFormat: true });
  }
}

/** A client of the service at `baseUrl` over `name`. */
export function connect(
  baseUrl: string,
  name: TransportName = "connect",
  options: StrataClientOptions = {},
): StrataClient {
  return new StrataClient(createTransport(baseUrl, name), options);
}
