/**
 * Strata's client in Node: the transports of @connectrpc/connect-node
 * (HTTP/1.1, as a browser would speak to the listener).
 *
 *     import { connect } from "./node.js";
 *     const client = connect("http://127.0.0.1:8080", "grpc-web");
 */
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";

import { StrataClient, transportName, type StrataClientOptions, type TransportName } from "./client.js";

export * from "./client.js";

/** A transport to the HTTP listener at `baseUrl` (`http://host:8080`). */
export function createTransport(baseUrl: string, name: TransportName = "connect"): Transport {
  switch (transportName(name)) {
    case "connect":
      return createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false });
    case "connect-proto":
      return createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true });
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
