"""A client connection, from accept to close.

`server` runs the listeners and one task per connection; `session` is that task (TLS handshake,
the reader, the end), `reader` reads frames and serves requests through each API's pipeline (SASL
first), `waiting` answers the requests that wait; `transport` reads and writes the socket; `outbox` sends responses in
request order; `tls` wraps SSL listeners; `faults` holds the fault switches the embedded broker
exposes to tests (pause, dropped connections, injected errors).
"""
