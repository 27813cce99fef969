// Package conformance names the client libraries whose own test suites check trafka (issue 41).
//
// Nothing here is run: go.mod pins the suites' versions (the one place they are pinned) and these
// imports keep them in the build list, so `go test github.com/twmb/franz-go/pkg/kgo` (and kafka-go's
// packages) run from this module, straight from the module cache. See tests/conformance/README.md.
package conformance

import (
	_ "github.com/segmentio/kafka-go"
	_ "github.com/twmb/franz-go/pkg/kgo"
)
