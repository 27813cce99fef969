"""Who is on a connection and what they may do, as Kafka's SaslServerAuthenticator and authorizer decide.

`authentication` runs SASL before any other request on SASL listeners; `authorization` holds the
checks an API declares and the gate that applies them; `partial` splits a request by resource and
answers the refused part from the request. What each API needs authorized lives in that API's
module under `apis/`.
"""
