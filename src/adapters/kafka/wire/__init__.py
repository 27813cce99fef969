"""The wire: Kafka's frames and messages as bytes.

`framing` cuts size-prefixed frames out of a byte stream (size-checked before the body is buffered);
`codec` decodes a request header and body with kafka-python's schema-driven classes and encodes
responses; `fast_produce` and `fast_fetch` (with `fast_fetch_request`) are the two measured hand-written
paths (Produce's one-partition requests and responses, Fetch requests and responses from stored bytes), proven
equal to their references by differential tests; `primitives` are the struct and varint pieces both share.
"""
