// Command kfake runs franz-go's fake Kafka cluster (github.com/twmb/franz-go/pkg/kfake, the version
// pinned in go.mod) as a peer for trafka's benchmarks: one broker on a random 127.0.0.1 port, in
// memory, and prints "kfake listening on HOST:PORT" once it accepts connections; SIGINT or SIGTERM
// stops it. `python bench/throughput.py --spawn kfake` builds and starts it (ADR 77).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
	defer cluster.Close()
	fmt.Printf("kfake listening on %s\n", cluster.ListenAddrs()[0])
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}
