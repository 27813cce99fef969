"""A client connection, from accept to close.

`server` runs the listeners and one reader task per connection (TLS handshake, SASL, then requests
through each API's pipeline); `transport` reads and writes the socket; `outbox` sends responses in
request order; `tls` wraps SSL listeners; `faults` holds the fault switches the embedded broker
exposes to tests (pause, dropped connections, injected errors).
"""
